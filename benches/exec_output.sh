#!/usr/bin/env bash
# Output volume through a command tool: a tool prints SIZE_MIB (default 1024) MiB and toolgate
# captures it. Reports toolgate's peak RSS (/usr/bin/time -v; goal ≤ 64 MiB) and throughput
# against `cat file > /dev/null`, for two output policies:
#   cat_file_head_tail  head + tail only (the whole stream is still hashed and counted), run in
#                       a project whose per-call artifact budget is 0: a cut output is
#                       otherwise kept as an artifact within the budgets
#   cat_file            the whole stream also streamed into the artifact store (write + fsync)
# Usage: benches/exec_output.sh   (SIZE_MIB=256 for a quicker run)
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MIB=${SIZE_MIB:-1024}
BYTES=$((SIZE_MIB * 1024 * 1024))
# Both binaries: the runtime uses the `toolgate-shim` beside `toolgate`, which must be of this build.
cargo build --release --bin toolgate --bin toolgate-shim -q
BIN=$PWD/target/release/toolgate

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-exec-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# The bench project in the scratch folder, so its state (artifacts) lands there too.
cp benches/fixtures/*.yaml "$WORK/"
mkdir "$WORK/head_tail"
cat > "$WORK/head_tail/toolgate.yaml" <<'YAML'
specs: ["../cat_file_head_tail.yaml"]
workspace: ..
defaults:
  timeout: 60s
contexts:
  ci: {ask: deny}
budgets: {call_artifacts: 0}
targets: [anthropic]
YAML
# `yes` ends by SIGPIPE when head has enough; that is not a failure.
set +o pipefail
yes 'INFO [build] compiling module core::exec::capture (lines are 64 bytes long)' |
  head -c "$BYTES" > "$WORK/big.log"
set -o pipefail

seconds() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f}')" "$1"; }
mibps() { python3 -c "import sys; print(f'{$BYTES / 1048576 / float(sys.argv[1]):.0f}')" "$1"; }

# Warm the page cache, then time plain cat.
cat "$WORK/big.log" > /dev/null
start=$(date +%s.%N)
cat "$WORK/big.log" > /dev/null
end=$(date +%s.%N)
cat_s=$(python3 -c "print($end - $start)")

printf '%-22s %10s %12s %14s\n' "run" "seconds" "MiB/s" "peak RSS MiB"
printf '%-22s %10s %12s %14s\n' "cat > /dev/null" "$(seconds "$cat_s")" "$(mibps "$cat_s")" "-"
for tool in cat_file_head_tail cat_file; do
  config="$WORK/toolgate.yaml"
  [ "$tool" = cat_file_head_tail ] && config="$WORK/head_tail/toolgate.yaml"
  /usr/bin/time -v -o "$WORK/time.txt" "$BIN" call "$tool" \
    --config "$config" --workspace "$WORK" --context ci \
    --args '{"path": "big.log"}' --format json > "$WORK/out.json"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt" |
    python3 -c "import sys; p = sys.stdin.read().strip().split(':'); print(sum(float(x) * 60 ** i for i, x in enumerate(reversed(p))))")
  rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
  status=$(python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(r['status'], [(a['size'], a['lines']) for a in r.get('artifacts', [])])" "$WORK/out.json")
  printf '%-22s %10s %12s %14s   %s\n' "toolgate $tool" "$(seconds "$wall")" "$(mibps "$wall")" "$((rss_kib / 1024))" "$status"
done
