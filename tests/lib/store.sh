# Test helpers for the Package/0 store (docs/store.md): where a blob's bytes
# are, loose (store/blobs/<sha>) or in a pack (an entry of an index in
# store/packs), read and altered in place. Sourced by the tests; STORE is
# a project's .jig/store.

# blob_where STORE SHA: "FILE OFFSET LENGTH", or nothing (status 1).
blob_where() {
	if [ -f "$1/blobs/$2" ]; then
		echo "$1/blobs/$2 0 $(stat -c %s "$1/blobs/$2")"
		return 0
	fi
	for i in "$1"/packs/*.idx; do
		[ -f "$i" ] || continue
		l=$(grep -m1 "^$2 " "$i") || continue
		echo "$1/packs/$(sed -n '2s/^pack \([0-9a-f]*\) .*/\1/p' "$i").pack ${l#* }"
		return 0
	done
	return 1
}
# blob_cat STORE SHA: the blob's bytes on stdout.
blob_cat() {
	_w=$(blob_where "$1" "$2") || return 1
	set -- $_w
	tail -c +$(($2 + 1)) "$1" | head -c "$3"
}
# blob_write STORE SHA OFFSET STRING: STRING over the blob's bytes at
# OFFSET, in place (same size; the file's time kept).
blob_write() {
	_w=$(blob_where "$1" "$2") || return 1
	set -- $_w "$3" "$4"
	touch -r "$1" "$1.stamp.$$"
	chmod u+w "$1"
	printf '%s' "$5" | dd of="$1" bs=1 seek=$(($2 + $4)) conv=notrunc 2>/dev/null
	touch -r "$1.stamp.$$" "$1"
	rm -f "$1.stamp.$$"
}
# blobs_all STORE: every blob the store holds, "SHA" a line (loose and packed).
blobs_all() {
	{ ls "$1/blobs" 2>/dev/null; for i in "$1"/packs/*.idx; do [ -f "$i" ] && sed -n '3,$s/ .*//p' "$i"; done; } | sort -u
}
