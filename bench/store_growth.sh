#!/bin/sh
# Issue 36: store growth over N reviews, one file changed each time.
#   sh bench/store_growth.sh USER PROJECT N JIG
# PROJECT (made by bench/mkpkg.sh) is copied to PROJECT-growth, owned by
# USER; each step overwrites one .bin file with as many new random bytes
# and reviews (--yes). Prints the totals: the changed bytes, what the
# store's blobs and package manifests grew by, and the admitted Plans.
set -eu
user=$1 src=$2 n=$3 jig=$4
p=$src-growth
rm -rf "$p"; cp -r "$src" "$p"; rm -rf "$p/.jig"; chown -R "$user" "$p"
bytes() { find "$p/.jig/$1" -maxdepth 1 -type f ! -name '.*' -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
review() { (cd "$p" && runuser -u "$user" -- "$jig" review --yes >/dev/null); }
review
b0=$(bytes store/blobs) m0=$(bytes store/packages) a0=$(bytes admitted)
files=$(find "$p" -name '*.bin' | sort)
count=$(echo "$files" | wc -l)
changed=0 i=0 t0=$(date +%s%N)
while [ $i -lt "$n" ]; do
	f=$(echo "$files" | sed -n "$((i % count + 1))p")
	sz=$(stat -c %s "$f")
	runuser -u "$user" -- sh -c "head -c $sz /dev/urandom >'$f'"
	changed=$((changed + sz))
	review
	i=$((i + 1))
done
t1=$(date +%s%N)
echo "steps $n, changed $changed bytes"
echo "blobs grew $(( $(bytes store/blobs) - b0 )) bytes"
echo "package manifests grew $(( $(bytes store/packages) - m0 )) bytes ($(( ($(bytes store/packages) - m0) / n )) a step)"
echo "admitted Plans grew $(( $(bytes admitted) - a0 )) bytes"
echo "review time: mean $(( (t1 - t0) / n / 1000000 )) ms a step (the machine's load included)"
