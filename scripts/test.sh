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
# The rooms first (seconds; decisions 321-324): an arrow, a circle, a
# print or a picture out of place fails before anything builds. The plain
# lane runs it again (layout.room_graph) with its self-test.
echo "== tests: rooms (scripts/rooms.sh)"
sh scripts/rooms.sh
JIG_CMAKE_FLAGS=-DJIG_FAULT_POINTS=ON scripts/setup.sh
jobs=$(nproc)
# The ASan+UBSan build compiles beside the plain lane, at a lower priority:
# the plain lane's cases wait (on peers, browsers, deadlines) for much of
# their time, and the compiler takes only what they leave (decision 152).
echo "== tests: ASan+UBSan build (beside the plain lane, nice 10; its output in build-asan/build.log)"
mkdir -p build-asan
( cmake -S . -B build-asan -DJIG_SANITIZE=ON -DJIG_FAULT_POINTS=ON -DCMAKE_BUILD_TYPE=Debug -DJIG_BUN_DIR="$PWD/build/bun" >/dev/null &&
	nice -n 10 cmake --build build-asan -j "$jobs" ) >build-asan/build.log 2>&1 &
asan_build=$!
echo "== tests: plain build"
# At most $jobs cases compute at once (each holds a "cpu" slot of
# build/vm-lanes.json); the two long-wait cases sleep beside them (decision 152).
plain_ok=0
(cd build && ctest --output-on-failure -j "$((jobs + 2))" -LE supported-host) || plain_ok=1
asan_ok=0
wait "$asan_build" || asan_ok=1
[ "$plain_ok" = 0 ] || { echo "FAIL: the plain lane"; exit 1; }
[ "$asan_ok" = 0 ] || { cat build-asan/build.log; echo "FAIL: the ASan+UBSan build"; exit 1; }
# A sample of the mutation campaign over the trusted side (decision 300):
# here, with the ASan build finished and the plain lane over, nothing else
# reads the sources; each mutant recompiles one object in build/, relinks
# jig or one unit test and runs only the plain-lane cases named to kill it
# (about 10-30 s a mutant). A surviving mutant fails the run; the sources
# are restored on any exit. The whole campaign: scripts/mutate.sh.
echo "== tests: mutation sample (scripts/mutate.sh --sample 4; all of them: scripts/mutate.sh)"
scripts/mutate.sh --sample 4
# Not the checks that only read sources and docs (label sources-only:
# layout.*, docs.*): no C code of ours runs in them, the plain lane has them;
# nor the two that wait out a minute or two (label long-wait: the 60 s
# settlement and the default expiry, whose code the short expiry cases run).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" -LE 'supported-host|sources-only|long-wait')
# The fuzz smoke fuzzes each target for 5 s of wall time, on every core,
# before the VM lane: the lane's pool takes every core (one 1-vCPU lane VM
# a core, tests/CMakeLists.txt JIG_VM_LANES), so beside it the fuzzers would
# only take CPU from the lane (decision 151).
echo "== tests: fuzz smoke (libFuzzer, clang, ASan+UBSan; 5 s a target, 24 targets, $jobs at a time)"
scripts/fuzz.sh 5
# The supported-host cases: the pool's JIG_VM_LANES lanes (default: one a
# core) side by side, one case a lane at a time (ctest's resource
# allocation, build/vm-lanes.json), and the idle lane beside them.
lanes=$(sed -n 's/^JIG_VM_LANES:STRING=//p' build/CMakeCache.txt)
echo "== tests: supported host (VM lane: ${lanes:-$jobs} lane VMs and the idle lane; JIG_SUPPORTED_HOST=native runs them on this host)"
(cd build && ctest --output-on-failure -j "$((${lanes:-$jobs} + 1))" -L supported-host)
echo "== all tests passed"
