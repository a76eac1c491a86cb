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
# A test process that dies of a fault leaves a core (the kernel's pattern here is "core", in its
# working folder: the package's), read below when the backtracer printed nothing.
ulimit -c unlimited 2>/dev/null
rm -f core core.[0-9]*
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
  dmesg 2>/dev/null | grep -i -E 'out of memory|killed process|oom-kill|segfault' | tail -3
fi
# "exited with unexpected signal code 11" and no report: the faulting thread's frames from the core.
core=$(ls -t core core.[0-9]* 2>/dev/null | head -1)
if [ -n "$core" ]; then
  tests=$(ls -t .build/*/debug/*PackageTests.xctest .build/debug/*PackageTests.xctest 2>/dev/null | head -1)
  echo "--- the faulting thread, from $core (${tests:-no test binary found}):"
  # gdb: the toolchain's lldb needs a libpython this machine may lack. Swift's names demangled.
  if command -v gdb >/dev/null; then
    timeout 300 gdb -batch -ex bt "$tests" "$core" 2>&1 | grep -a -E '^#' | head -40 | "$swift" demangle --simplified
  else
    echo "(no gdb to read it: apt-get install gdb)"
  fi
fi
exit "$status"
