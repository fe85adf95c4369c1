#!/bin/sh
# The same set-up as scripts/setup.sh, then every test: the plain build
# (with valgrind over loader and parsers), the ASan+UBSan build, a short
# libFuzzer run over every parser of untrusted bytes (scripts/fuzz.sh), and the
# supported-host tests inside the cgroup-v2 VM (tests/vm/).
set -eu
cd "$(dirname "$0")/.."
# Debian's own tools first: a developer's PATH may start with version
# managers' shims (pyenv's python3 shim costs ~0.1-1 s of bash per call,
# and the tests call python3 hundreds of times); every tool here is a
# Debian package or installed by these scripts.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
# The test build compiles in the fault points (host/util/fault.h); a release
# build (scripts/setup.sh alone) does not.
JIG_CMAKE_FLAGS=-DJIG_FAULT_POINTS=ON scripts/setup.sh
jobs=$(nproc)
echo "== tests: plain build"
(cd build && ctest --output-on-failure -j "$jobs" -LE supported-host)
echo "== tests: ASan+UBSan build"
cmake -S . -B build-asan -DJIG_SANITIZE=ON -DJIG_FAULT_POINTS=ON -DCMAKE_BUILD_TYPE=Debug -DJIG_BUN_DIR="$PWD/build/bun" >/dev/null
cmake --build build-asan -j "$jobs"
# Not the checks that only read sources and docs (label sources-only:
# layout.*, docs.*): no C code of ours runs in them, the plain lane has them;
# nor the two that wait out a minute or two (label long-wait: the 60 s
# settlement and the default expiry, whose code the short expiry cases run).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" -LE 'supported-host|sources-only|long-wait')
# The fuzz smoke fuzzes each target for 5 s of wall time, one core a
# target: beside the VM lane (which keeps two cores busy) only when there
# are at least two more cores for it, else before the lane, on all of them.
fuzz_bg=
if [ "$jobs" -ge 4 ]; then
	echo "== tests: fuzz smoke (libFuzzer, clang, ASan+UBSan; 5 s a target, 21 targets, $((jobs - 2)) at a time) beside the VM lane"
	JIG_FUZZ_JOBS=$((jobs - 2)) scripts/fuzz.sh 5 >build/fuzz-smoke.log 2>&1 &
	fuzz_bg=$!
else
	echo "== tests: fuzz smoke (libFuzzer, clang, ASan+UBSan; 5 s a target, 21 targets, about 110 s in all, two at a time)"
	scripts/fuzz.sh 5
fi
echo "== tests: supported host (VM lane; JIG_SUPPORTED_HOST=native runs them on this host)"
(cd build && ctest --output-on-failure -j 2 -L supported-host)
if [ -n "$fuzz_bg" ]; then
	fuzz_ok=0
	wait "$fuzz_bg" || fuzz_ok=1
	echo "== tests: fuzz smoke (its output)"
	cat build/fuzz-smoke.log
	[ "$fuzz_ok" = 0 ] || { echo "FAIL: the fuzz smoke"; exit 1; }
fi
echo "== all tests passed"
