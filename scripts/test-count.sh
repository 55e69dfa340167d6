#!/usr/bin/env bash
# The closing line of scripts/test.sh: `tests: P passed, F failed, S skipped` over every test
# binary in cargo's output LOG, where a test that skipped at run time (it called
# racehorse_testkit::skip!, which appended "BINARY<TAB>TEST<TAB>REASON" to SKIPLOG) counts as
# skipped, not passed, and each such test is listed with its reason after the line. A skip
# counts only when the same binary's same test ended "ok" (a test that skipped and then
# failed is a failure). Usage: bash scripts/test-count.sh LOG SKIPLOG
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bash scripts/test-count.sh CARGO_TEST_LOG SKIP_LOG" >&2
  exit 2
fi
log=$1 skips=$2
[ -f "$skips" ] || skips=/dev/null
awk -F'\t' '
  FILENAME == ARGV[1] { if (NF >= 3) why[$1 "\t" $2] = $3; next }
  /^ *Running .*\(.*\)$/ { b = $0; sub(/.*\(/, "", b); sub(/\)$/, "", b); sub(/.*\//, "", b); next }
  /^ *Doc-tests / { b = ""; next }
  /^test .* \.\.\. ok$/ {
    t = substr($0, 6, length($0) - 5 - 7); k = b "\t" t
    if ((k in why) && !(k in seen)) { seen[k] = 1; n++; name = b; sub(/-[0-9a-f]+$/, "", name); list[n] = name " " t ": " why[k] }
    next
  }
  /^test result:/ {
    c = split($0, w, " ")
    for (i = 2; i <= c; i++) {
      if (w[i] ~ /^passed;?$/) p += w[i-1]; if (w[i] ~ /^failed;?$/) f += w[i-1]; if (w[i] ~ /^ignored;?$/) s += w[i-1]
    }
  }
  END {
    printf "tests: %d passed, %d failed, %d skipped\n", p - n, f, s + n
    for (i = 1; i <= n; i++) printf "  skipped: %s\n", list[i]
  }
' "$skips" "$log"
