#!/usr/bin/env bash
# Times `cargo build` of the crate `toolgate build` generates for 100 tools.
#
# Usage: benches/generated_crate_compile.sh [TOOLS]   (default 100)
#
# Prints three wall times: `toolgate build` itself; a first `cargo build` of the generated crate
# (its dependencies — toolgate's runtime, serde, schemars — come from the shared target folder
# target/generated-crates if an earlier run or `cargo test` built them, else they are built too);
# and a rebuild of the generated crate alone after touching its lib.rs (dependencies cached).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
tools="${1:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/tool-specs"
for i in $(seq -w 1 "$tools"); do
  cat > "$work/tool-specs/tool_$i.yaml" <<SPEC
name: tool_$i
version: 1
description: Look up record $i by key. Use when the user names a record. Returns its fields.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties:
    key: {type: string, minLength: 1, maxLength: 128, description: The record key.}
    limit: {type: integer, minimum: 1, maximum: 100}
    mode: {type: string, enum: [fast, full]}
    filter:
      type: object
      properties:
        field: {type: string, maxLength: 64}
        values: {type: array, maxItems: 20, items: {type: string}}
      required: [field]
      additionalProperties: false
  required: [key]
  additionalProperties: false
result:
  type: object
  properties:
    fields: {type: array, items: {type: string}}
    archived: {type: boolean}
  required: [fields, archived]
  additionalProperties: false
exec: {handler: rust}
SPEC
done

cargo build --quiet --manifest-path "$repo/Cargo.toml" --bin toolgate
toolgate="$repo/target/debug/toolgate"

now() { date +%s%N; }
elapsed() { local ms=$((($2 - $1) / 1000000)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }

t0=$(now)
(cd "$work" && "$toolgate" build --out "$work/out" --toolgate-path "$repo" 2>/dev/null)
t1=$(now)
cp "$repo/Cargo.lock" "$work/out/rust/Cargo.lock"
export CARGO_TARGET_DIR="$repo/target/generated-crates"
(cd "$work/out/rust" && cargo build --quiet)
t2=$(now)
touch "$work/out/rust/src/lib.rs"
(cd "$work/out/rust" && cargo build --quiet)
t3=$(now)

lines=$(wc -l < "$work/out/rust/src/lib.rs")
echo "tools: $tools, generated lib.rs: $lines lines"
echo "toolgate build:                         $(elapsed "$t0" "$t1") s"
echo "cargo build (first, shared deps):       $(elapsed "$t1" "$t2") s"
echo "cargo build (generated crate only):     $(elapsed "$t2" "$t3") s"
