#!/bin/sh
# Installs the npm test tools (test-only) exactly as a package-lock.json
# pins them (versions and sha512 integrity of every package), without
# running any package script: by default the real ACP clients the Agent
# tests use (tests/acp/clients); LOCKDIR names another set (the display
# tests' playwright-core, tests/display/browser).
# usage: scripts/acp-clients.sh SOURCE_DIR DESTDIR [LOCKDIR]  ->  DESTDIR/node_modules
set -eu
src=${1:?usage: scripts/acp-clients.sh SOURCE_DIR DESTDIR}
dest=${2:?usage: scripts/acp-clients.sh SOURCE_DIR DESTDIR}
dir=${3:-tests/acp/clients}
lock="$src/$dir/package-lock.json"
stamp=$(sha256sum "$lock" | cut -d' ' -f1)
if [ -d "$dest/node_modules" ] && [ "$(cat "$dest/.lock-sha256" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
rm -rf "$dest"
mkdir -p "$dest"
cp "$src/$dir/package.json" "$lock" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
chmod -R go-w "$dest"
echo "$stamp" >"$dest/.lock-sha256"
