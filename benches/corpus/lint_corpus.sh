#!/usr/bin/env bash
# Lints every file of the shared tool-definition corpus with `toolgate lint --from`, one JSON
# report per file, and prints the findings per rule (the table in docs/lint-corpus.md).
#
# Usage: benches/corpus/lint_corpus.sh [CORPUS_DIR] [OUT_DIR]
#   CORPUS_DIR  default: ../shared/corpus (relative to the repository)
#   OUT_DIR     default: target/lint-corpus
# TOOLGATE may name the binary (default: target/release/toolgate, built if missing).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
corpus="${1:-$repo/../shared/corpus}"
out="${2:-$repo/target/lint-corpus}"
toolgate="${TOOLGATE:-$repo/target/release/toolgate}"
[ -x "$toolgate" ] || (cd "$repo" && cargo build --release --quiet)
mkdir -p "$out"

# The format each source ships its list in. The records share one shape, which every importer
# reads; the format decides only provider-specific readings (Anthropic typed tools).
format_of() {
  case "$1" in
    anthropic-* | cline-sdk) echo anthropic ;;
    openai-codex | continue | langchain-community | openhands | swe-agent) echo openai ;;
    *) echo mcp ;;
  esac
}

for f in "$corpus"/*.json; do
  name="$(basename "$f" .json)"
  set +e
  "$toolgate" lint --from "$(format_of "$name")" "$f" --format json --fail-on error >"$out/$name.json"
  code=$?
  set -e
  if [ "$code" -gt 1 ]; then
    echo "toolgate exited $code on $f" >&2
    exit 1
  fi
done

python3 - "$out" <<'PY'
import collections, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
by_rule = collections.Counter()
by_sev = collections.Counter()
files = collections.defaultdict(set)
tools = 0
for p in sorted(out.glob("*.json")):
    doc = json.loads(p.read_text())
    tools += doc["summary"]["tools"]
    for d in doc["diagnostics"]:
        key = (d["code"] or "-", d["rule"] or "load-error", d["severity"])
        by_rule[key] += 1
        files[key].add(p.stem)
        by_sev[d["severity"]] += 1
print(f"{tools} tools in {len(list(out.glob('*.json')))} files: "
      f"{by_sev['error']} errors, {by_sev['warning']} warnings, {by_sev['info']} infos")
print()
print("| rule | name | severity | findings | files |")
print("|---|---|---|---:|---:|")
for (code, rule, sev), n in sorted(by_rule.items()):
    print(f"| {code} | {rule} | {sev} | {n} | {len(files[(code, rule, sev)])} |")
PY
