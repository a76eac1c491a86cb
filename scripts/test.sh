#!/usr/bin/env bash
# `swift test` for `make test` and CI: the whole log (Swift Testing's verbose events included)
# goes to .build/test.log, the console gets it without the "started" lines, and a failed run
# ends with what a reader of its last lines needs: the failed tests, the tests that had started
# and not ended (what was running when a test process crashed), and the crashed thread's frames.
# A crash is reported compactly (the crashed thread only, no registers or images), so its frames
# are not pushed out of view by fifty threads of a thread pool.
set -uo pipefail
swift=${SWIFT:-swift}
log=.build/test.log
mkdir -p .build
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=yes,interactive=no,threads=crashed,registers=none,images=none,sanitize=yes}

# SwiftPM's --verbose also echoes the manifests' compiler commands: not worth a reader's time.
noise='^(warning: .[^ ]*.: /opt/|/opt/|Swift version|Target: |clang version|Thread model|InstalledDir|Found candidate|Selected (GCC|multilib)|Candidate multilib| "/usr/bin/ld)'
"$swift" test --skip-build --verbose "$@" 2>&1 | tee "$log" | grep -a -v -E "$noise|^◇ (Test|Suite) .* started\.$|^✔ Test case passing "
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && exit 0

echo
echo "=== swift test failed (exit $status); the whole log: $log"
failed=$(grep -a -E '^✘ Test [^ ]+ (with [0-9]+ test cases? )?failed after' "$log" | sed -E 's/ failed after .*//')
[ -n "$failed" ] && { echo "--- failed tests:"; echo "$failed"; }
# A name started more often than it ended (passed, failed or skipped) was running at the end.
# (A parameterized test ends as "Test NAME with N test cases passed".)
unfinished=$(grep -a -E '^◇ Test [^ ]+ started\.$|^(✔|✘|➜) Test [^ ]+ ((with [0-9]+ test cases? )?(passed|failed)|skipped)' "$log" \
  | grep -a -v -E '^. Test run ' \
  | sed -E 's/^◇ Test ([^ ]+) started\.$/+ \1/; s/^(✔|✘|➜) Test ([^ ]+) .*$/- \2/' \
  | awk '{ sign = $1; $1 = ""; name = substr($0, 2); count[name] += (sign == "+") ? 1 : -1 }
         END { for (name in count) if (count[name] > 0) print name }')
if [ -n "$unfinished" ]; then
  echo "--- started and never ended ($(echo "$unfinished" | wc -l); all of them in $log.unfinished):"
  echo "$unfinished" | sort >"$log.unfinished"
  head -12 "$log.unfinished"
fi
crash=$(sed -n '/\*\*\* Program crashed/,/^Backtrace took/p' "$log" | head -80)
[ -n "$crash" ] && { echo "--- the crash:"; echo "$crash"; }
# Last, where a reader of the final lines sees it: how a test process that did not finish ended.
# `swift test` says nothing of a signal; the test process names one it can catch, and its sender
# (Tests/CTestStartup); a SIGKILL leaves only the kernel's word, if it was the OOM killer.
if [ -n "$unfinished" ] && [ -z "$crash" ]; then
  echo "--- how the test process ended:"
  sent=$(grep -a -F '*** The test process was sent signal' "$log" | tail -2)
  echo "${sent:-no crash report and no catchable signal: a SIGKILL, or an exit() in the process}"
  dmesg 2>/dev/null | grep -i -E 'out of memory|killed process|oom-kill' | tail -3
fi
exit "$status"
