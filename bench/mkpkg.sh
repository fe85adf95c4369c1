#!/bin/sh
# mkpkg.sh DIR NFILES BYTES_EACH: a project with one Flow "big" of NFILES files
set -eu
d=$1; n=$2; sz=$3
rm -rf "$d"; mkdir -p "$d/big"
cat >"$d/jig.json" <<J
{"format":"jig-project/1","flows":{"big":"big"}}
J
cat >"$d/big/flow.json" <<J
{"format":"jig-flow/1","name":"big","entry":"main.ts","inputs":[],"outputs":[]}
J
echo 'export default async function main() { return {}; }' >"$d/big/main.ts"
python3 - "$d/big" "$n" "$sz" <<'P'
import os,sys
d,n,sz=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
for i in range(n):
    sub=os.path.join(d,"d%02d"%(i%40))
    os.makedirs(sub,exist_ok=True)
    with open(os.path.join(sub,"f%05d.bin"%i),"wb") as f: f.write(os.urandom(sz))
P
