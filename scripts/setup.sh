#!/bin/sh
# Fresh Debian machine -> jig installed with a signed snapshot, then the main
# job. Run as root (it installs Debian packages): sudo scripts/setup.sh
# PREFIX (default /opt/jig) and BUILD (default ./build) may be set.
set -eu
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-/opt/jig}
BUILD=${BUILD:-build}
scripts/deps.sh
# jig is rootless: the main job and the tests run it as this user.
id jigtest >/dev/null 2>&1 || useradd -m -s /bin/sh jigtest
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
# The pinned Bun runtime (npm @oven/bun-linux-x64, version and integrity in
# scripts/bun.sh).
scripts/bun.sh "$BUILD/bun"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
echo "== jig installed in $PREFIX"
runuser -u jigtest -- "$PREFIX/bin/jig" modules list
runuser -u jigtest -- "$PREFIX/bin/jig" modules verify
set +e
runuser -u jigtest -- "$PREFIX/bin/jig" host check
rc=$?
set -e
[ $rc -eq 0 ] || echo "== jig host check exited $rc: this host cannot run Flows (see above)"
