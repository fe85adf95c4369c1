#!/bin/sh
# Fresh Debian machine -> jig installed with a signed snapshot, then the main
# job. Run as root (it installs Debian packages): scripts/setup.sh (no sudo
# needed; from a user with sudo: sudo scripts/setup.sh)
# PREFIX (default /opt/jig) and BUILD (default ./build) may be set. jig,
# its man page and completions are linked into /usr/local (scripts/link.sh).
set -eu
cd "$(dirname "$0")/.."
# Debian's own tools first: a developer's PATH may start with version
# managers' shims (pyenv's python3 shim costs ~0.1-1 s of bash per call,
# and the tests call python3 hundreds of times); every tool here is a
# Debian package or installed by these scripts.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
PREFIX=${PREFIX:-/opt/jig}
BUILD=${BUILD:-build}
scripts/deps.sh
# jig is rootless: the main job and the tests run it as this user.
id jigtest >/dev/null 2>&1 || useradd -m -s /bin/sh jigtest
# A second unprivileged user for the consent tests (issue 44): another
# operator, with an operator key of its own (tests/integration/consent.sh,
# tests/flow/consent.sh).
id jigconsent >/dev/null 2>&1 || useradd -m -s /bin/sh jigconsent
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${JIG_CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
# The pinned Bun runtime (npm @oven/bun-linux-x64, version and integrity in
# scripts/bun.sh).
scripts/bun.sh "$BUILD/bun"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
echo "== jig installed in $PREFIX"
# jig, man jig and its completion for every new shell (decision 270).
scripts/link.sh "$PREFIX"
runuser -u jigtest -- "$PREFIX/bin/jig" modules list
runuser -u jigtest -- "$PREFIX/bin/jig" modules verify
set +e
runuser -u jigtest -- "$PREFIX/bin/jig" host check
rc=$?
set -e
[ $rc -eq 0 ] || echo "== jig host check exited $rc: this host cannot run Flows (see above)"

# The main job: review an example project and run one of its Flows.
EX=$(mktemp -d /tmp/jig-example.XXXXXX)
cp -r examples "$EX/project"
chown -R jigtest "$EX" && chmod 755 "$EX"
review_example='cd '"$EX"'/project && '"$PREFIX"'/bin/jig review --yes'
run_example='cd '"$EX"'/project && '"$PREFIX"'/bin/jig run csv-report --input data=csv-report/sample.csv --output "$OUT" && '"$PREFIX"'/bin/jig inspect "$OUT" && cat "$OUT/files/report.md"'
if [ $rc -eq 0 ]; then
	echo "== jig review --yes (examples/)"
	runuser -u jigtest -- sh -c "$review_example"
	echo "== jig run csv-report (natively: this host is supported)"
	runuser -u jigtest -- env OUT="$EX/report" sh -c "$run_example"
else
	# An admission is the operator's, on the machine where it was made:
	# its MAC is the operator key's over the project's place (decision
	# 190), and the guest has its own home, key and mount of the project.
	# So the review is made where the Run is.
	echo "== this host is not supported, so jig review --yes (examples/) and jig run csv-report run inside the supported-host VM (tests/vm/run)"
	JIG_OUT=/tmp/report tests/vm/run --timeout 300 --share "$EX" -- sh -c "OUT=\$JIG_OUT; echo '== jig review --yes (examples/)'; $review_example && echo '== jig run csv-report' && $run_example"
fi
rm -rf "$EX"
