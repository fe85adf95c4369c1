#!/bin/sh
# Fetches the pinned Bun runtime from the npm registry, checks the package's
# integrity (sha512, as the registry publishes it) and unpacks bin/bun.
# usage: scripts/bun.sh DESTDIR   ->  DESTDIR/bun
set -eu
BUN_PACKAGE=@oven/bun-linux-x64
BUN_VERSION=1.4.5
BUN_INTEGRITY=sha512-IWX9BELoGHAUtMonkeSaNaZwXzRk+oDw6Mk+HBFXd3KHYIBNBsIGRupMZPcgNoDbJpLu6gAJjIoIVPZtt1aJ1g==

dest=${1:?usage: scripts/bun.sh DESTDIR}
mkdir -p "$dest"
if [ -x "$dest/bun" ] && [ "$(cat "$dest/bun.integrity" 2>/dev/null)" = "$BUN_INTEGRITY" ]; then
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$BUN_PACKAGE@$BUN_VERSION" >/dev/null)
tgz=$(ls "$work"/*.tgz)
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$got" != "$BUN_INTEGRITY" ]; then
	echo "bun.sh: $BUN_PACKAGE@$BUN_VERSION has integrity $got, expected $BUN_INTEGRITY; refusing it" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$work" package/bin/bun
install -m 0755 "$work/package/bin/bun" "$dest/bun"
echo "$BUN_INTEGRITY" >"$dest/bun.integrity"
"$dest/bun" --version >/dev/null
