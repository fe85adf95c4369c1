#!/bin/sh
# Verification modes (issue 7, item 4), as root on any host (no sandbox):
#   sudo sh bench/verify.sh [build]
# (after `make bench_open` in the build). A generated installation: the installed snapshot plus 10,000 files of
# 20 KiB (200 MiB), signed and installed into a private prefix. One paired
# hyperfine run: `jig modules verify --verification strict` (hashes every
# byte) against `openssl dgst -sha256` and `sha256sum` over the same files,
# and `--verification cached` with a warm cache. All from the page cache.
set -eu
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /var/tmp/jig-bench-verify.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
cp -a "$B/test-prefix" "$T/prefix"
P=$T/prefix
SNAP=$P/lib/jig/$(readlink "$P/lib/jig/current")
SEQ=$(jq -r .sequence "$SNAP/manifest.json")
cp -a "$SNAP" "$T/s"
rm -f "$T/s/manifest.json" "$T/s/manifest.files" "$T/s/manifest.sig"
mkdir "$T/s/gen"
i=0
while [ $i -lt 100 ]; do
	mkdir "$T/s/gen/$i"
	head -c $((100 * 20480)) /dev/urandom | split -b 20480 -a 2 -d - "$T/s/gen/$i/f"
	i=$((i + 1))
done
chmod -R go-w "$T/s"
mods=$(jq -r '.modules[] | "--module \(.name):\(.kind):\(.path)"' "$SNAP/manifest.json")
# shellcheck disable=SC2086
"$P/bin/jig-snapshot" create --dir "$T/s" --id bench-verify --sequence $((SEQ + 1)) $mods >/dev/null
"$P/bin/jig-snapshot" sign --dir "$T/s" --key "${JIG_DEV_KEY:-$B/keys/development.key}" >/dev/null
"$P/bin/jig-snapshot" install --dir "$T/s" --prefix "$P" >/dev/null
NEW=$P/lib/jig/$(readlink "$P/lib/jig/current")
(cd "$NEW" && find . -type f ! -name 'manifest.*' | sort) >"$T/files"
files=$(wc -l <"$T/files")
bytes=$(cd "$NEW" && xargs cat <"$T/files" | wc -c)
echo "installation: $files files, $bytes bytes"
# Opening it, as every command does (signature, install record, manifest):
# in-process, 50 opens (target: <= 5 ms).
"$B/bench/bench_open" "$P/lib/jig" 50
mkdir "$T/home" && chown jigtest "$T/home"
as_user="runuser -u jigtest -- env HOME=$T/home XDG_CACHE_HOME="
$as_user "$P/bin/jig" modules verify --verification cached >/dev/null
$as_user "$P/bin/jig" modules verify --verification cached --json | jq -e '.ok // true' >/dev/null
cd "$NEW"
hyperfine -N --warmup 2 --runs 10 --export-json "$T/verify.json" \
	"$as_user $P/bin/jig modules verify --verification strict" \
	"sh -c 'xargs openssl dgst -sha256 <$T/files >/dev/null'" \
	"sh -c 'xargs sha256sum <$T/files >/dev/null'" \
	"$as_user $P/bin/jig modules verify --verification cached" \
	"$as_user $P/bin/jig modules verify --verification fast"
# The verification itself (in-process, `verification.elapsed_ms`: cache
# load, stats, hashing, the cache write; not opening the snapshot, loading
# modules or walking for unlisted files), median of 10 warm runs each.
for mode in cached strict; do
	for i in 1 2 3 4 5 6 7 8 9 10; do
		$as_user "$P/bin/jig" modules verify --verification $mode --json | jq .verification.elapsed_ms
	done | sort -n | sed -n 5p >"$T/$mode.ms"
done
echo "in-process verification (median of 10): cached $(cat "$T/cached.ms") ms; strict $(cat "$T/strict.ms") ms = $(awk -v b="$bytes" -v ms="$(cat "$T/strict.ms")" 'BEGIN { printf "%.2f", b / ms / 1e6 }') GB/s"
jq -r --argjson b "$bytes" '.results | "strict: \(.[0].median*1000|floor) ms = \($b/.[0].median/1e9*100|floor/100) GB/s; openssl dgst: \(.[1].median*1000|floor) ms = \($b/.[1].median/1e9*100|floor/100) GB/s; sha256sum: \(.[2].median*1000|floor) ms = \($b/.[2].median/1e9*100|floor/100) GB/s; strict/openssl speed \((.[1].median/.[0].median)*100|floor/100)x; cached (warm): \(.[3].median*1000|floor) ms; fast: \(.[4].median*1000|floor) ms"' "$T/verify.json"
