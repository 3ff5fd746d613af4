#!/usr/bin/env bash
# Runs the e2e suite (go test -v), and when it fails, repeats at the end what
# each failed test said from its own _test.go file: with eight tests in
# parallel and a failed test's dump of sidecar and controller logs, the
# lines that say why are otherwise far up the output.
#
#   hack/e2e.sh [go test flags and packages]
set -uo pipefail

log=$(mktemp "${TMPDIR:-/tmp}/sparkplug-e2e.XXXXXX.log")
trap 'rm -f "$log"' EXIT

"${GO:-go}" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "=== e2e failures: each failed test's own lines (the last 12), then its result ==="
	awk '
		/^(=== (RUN|CONT|PAUSE|NAME)|--- (PASS|FAIL|SKIP):) / {
			name = ($1 == "---") ? $3 : $3
			sub(/:$/, "", name)
			cur = name
		}
		/^--- FAIL: / { failed[cur] = $0; order[++n] = cur }
		cur != "" && /^[ \t]+[A-Za-z0-9_]+_test\.go:[0-9]+: / {
			k = ++count[cur]
			said[cur, k] = $0
		}
		END {
			for (i = 1; i <= n; i++) {
				t = order[i]
				from = count[t] > 12 ? count[t] - 11 : 1
				for (k = from; k <= count[t]; k++) print said[t, k]
				print failed[t]
			}
			if (n == 0) print "(no failed test named: the suite itself failed to start or stop; see above)"
		}' "$log"
fi
exit "$rc"
