#!/bin/sh
# Integration tests of the signed snapshot and the verified loader, against
# an installed prefix. Each case_* is one ctest (snapshot.<case>); jig runs as
# the unprivileged user jigtest, the distributor tool as root.
# Requirements: R-P02 (trusted pre-sandbox code from a signed snapshot),
# R-P08 (fail closed on malformed input), R-P14 (staged cutover), R-T02.
set -eu
: "${JIG_BUILD:?}" "${JIG_SOURCE:?}" "${JIG_TEST_PREFIX:?}" "${JIG_DEV_KEY:?}"
USER_NAME=jigtest
T=$(mktemp -d /tmp/jig-it.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cp -a "$JIG_TEST_PREFIX" "$P"
LIB="$P/lib/jig"
ID=$(readlink "$LIB/current" | sed 's,^snapshots/,,')
SNAP="$LIB/snapshots/$ID"
SEQ=$(jq -r .sequence "$SNAP/manifest.json")
TOOL="$P/bin/jig-snapshot"
MODS="$JIG_BUILD/testmods"

fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$P/bin/jig" "$@"; }

# expect CODE PATTERN -- CMD...: CMD exits CODE and its stderr (one line) matches PATTERN.
expect() {
	code=$1 pat=$2; shift 3
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq "$code" ] || fail "exit $rc, expected $code: $*"
	[ -z "$pat" ] || grep -Eq -- "$pat" "$T/err" || fail "stderr does not match /$pat/: $*"
}
refused() { expect 4 "$1" -- jig modules verify; }

# Re-sign the installed snapshot's manifest with the development key.
resign() { "$TOOL" sign --dir "${1:-$SNAP}" --key "$JIG_DEV_KEY" >/dev/null; }
# Signs the manifest's raw bytes with the development key, bypassing the
# tool's own validation, as a hostile or broken distributor channel would.
rawsign() {
	printf 'jig-snapshot-manifest/1\000' >"$T/msg" && cat "$SNAP/manifest.json" >>"$T/msg"
	sig=$(openssl pkeyutl -sign -inkey "$JIG_DEV_KEY" -rawin -in "$T/msg" | od -An -tx1 -v | tr -d ' \n')
	kid=$(cut -d' ' -f3 "$SNAP/manifest.sig")
	printf 'jig-signature/1 ed25519 %s %s\n' "$kid" "$sig" >"$SNAP/manifest.sig"
}
# Edits the installed manifest with a jq program; the signing tool must
# refuse the result, so it is signed raw.
edit_manifest() {
	jq "$1" "$SNAP/manifest.json" >"$T/m" && cat "$T/m" >"$SNAP/manifest.json"
	if resign 2>/dev/null; then fail "jig-snapshot sign accepted an invalid manifest"; fi
	rawsign
}
# Edits the installed file list with a shell filter and pins the result in
# the manifest (with an optional jq program for the rest), signed raw.
edit_files() {
	sh -c "$1" <"$SNAP/manifest.files" >"$T/f" && cat "$T/f" >"$SNAP/manifest.files"
	sha=$(sha256sum "$SNAP/manifest.files" | cut -d' ' -f1)
	size=$(stat -c %s "$SNAP/manifest.files")
	edit_manifest ".files_sha256 = \"$sha\" | .files_size = $size${2:+ | $2}"
}
# A new snapshot dir: mksnap DIR ID SEQ NAME:KIND:SOFILE[:ABI]...
mksnap() {
	d=$1 id=$2 seq=$3; shift 3
	mkdir -p "$d/modules"
	args=""
	for spec in "$@"; do
		name=${spec%%:*} rest=${spec#*:}
		kind=${rest%%:*} rest=${rest#*:}
		so=${rest%%:*} abi=""
		[ "$so" = "$rest" ] || abi=":${rest#*:}"
		cp "$so" "$d/modules/$name.so"
		args="$args --module $name:$kind:modules/$name.so$abi"
	done
	# shellcheck disable=SC2086
	"$TOOL" create --dir "$d" --id "$id" --sequence "$seq" $args >/dev/null
	"$TOOL" sign --dir "$d" --key "$JIG_DEV_KEY" >/dev/null
	chmod -R go-w "$d"
}
install_snap() { "$TOOL" install --dir "$1" --prefix "$P" >/dev/null; }

case_verify_ok() {
	jig modules verify >"$T/out"
	cat "$T/out"
	grep -q "ok .*sandbox-linux .*sandbox .*abi 1.6" "$T/out" || fail "sandbox-linux not verified"
	grep -q "DEVELOPMENT" "$T/out" || fail "development key not marked"
	jig modules verify --json >"$T/j"
	[ "$(jq -r .verified "$T/j")" = true ] || fail "json: verified is not true"
	[ "$(jq -r .snapshot.development_key "$T/j")" = true ] || fail "json: development_key"
	[ "$(jq -r '.modules[0].sha256' "$T/j")" = "$(sha256sum "$SNAP/modules/sandbox-linux.so" | cut -d' ' -f1)" ] || fail "json: digest"
	jq -e '.launch_identity | test("^[0-9a-f]{64}$")' "$T/j" >/dev/null || fail "json: launch identity"
}
case_list() {
	jig modules list | grep -q "sandbox-linux" || fail "list"
	jig modules list --json | jq -e '.schema == "jig-modules/1" and ([.modules[] | "\(.name):\(.kind)"] | sort) == ["acp:acp", "display:display", "http:http", "sandbox-linux:sandbox"]' >/dev/null || fail "list --json"
}
case_cli() {
	jig --version | grep -Eq "^jig [0-9.]+ \(module ABI 1\.6, trusts a DEVELOPMENT key" || fail "--version"
	jig help | grep -q "host check" || fail help
	# --help after a command is the help, with status 0; after a scope's
	# "--" it belongs to the program.
	for c in "run --help" "scope run p.json -h" "review --help" "inspect x --help"; do
		# shellcheck disable=SC2086
		jig $c | grep -q "^usage: jig <command>" || fail "jig $c"
	done
	expect 2 "cannot open the scope policy" -- jig scope run "$T/none.json" -- /bin/echo --help
	! grep -q "^usage: jig <command>" "$T/out" || fail "the program's --help was taken as jig's"
	expect 2 "unknown command" -- jig frobnicate
	expect 2 "unknown argument" -- jig modules list --yaml
}
case_flipped_byte() {
	printf '\377' | dd of="$SNAP/modules/sandbox-linux.so" bs=1 seek=4000 conv=notrunc 2>/dev/null
	refused "module sandbox-linux .*sha256 [0-9a-f]{64}, expected [0-9a-f]{64}"
	expect 4 "sandbox-linux" -- jig host check
}
case_mix_and_match() {
	# A module validly signed in another snapshot is not this snapshot's module.
	mksnap "$T/other" other 1 sandbox-linux:sandbox:"$MODS/testmod-b.so"
	"$TOOL" verify --dir "$T/other" >/dev/null || fail "other snapshot should verify on its own"
	cp "$T/other/modules/sandbox-linux.so" "$SNAP/modules/sandbox-linux.so"
	refused "sandbox-linux.*(size|sha256)"
}
case_manifest_edited() {
	sed -i 's/"sequence": /"sequence":  /' "$SNAP/manifest.json"
	refused "signature by key [0-9a-f]{16} does not match the manifest bytes"
}
case_unknown_key() {
	"$TOOL" keygen --out "$T/evil.key" >/dev/null
	"$TOOL" sign --dir "$SNAP" --key "$T/evil.key" >/dev/null
	refused "signed by key [0-9a-f]{16}, which is not a trusted key"
	expect 4 "not a trusted key" -- "$TOOL" verify --dir "$SNAP"
}
case_rollback() {
	mksnap "$T/old" old1 1 sandbox-linux:sandbox:"$SNAP/modules/sandbox-linux.so"
	expect 4 "rollback refused: sequence 1 is lower than the accepted sequence $SEQ" -- "$TOOL" install --dir "$T/old" --prefix "$P"
	cp -a "$T/old" "$LIB/snapshots/old1"
	ln -sfn snapshots/old1 "$LIB/current"
	refused "rollback refused: sequence 1 is lower than the accepted sequence $SEQ"
}
case_same_sequence() {
	mksnap "$T/twin" twin "$SEQ" sandbox-linux:sandbox:"$SNAP/modules/sandbox-linux.so"
	expect 4 "sequence $SEQ was accepted with manifest sha256 [0-9a-f]{64}, this one is" -- "$TOOL" install --dir "$T/twin" --prefix "$P"
	cp -a "$T/twin" "$LIB/snapshots/twin"
	ln -sfn snapshots/twin "$LIB/current"
	refused "sequence $SEQ was accepted with manifest sha256"
}
case_higher_sequence_not_installed() {
	mksnap "$T/next" next $((SEQ + 1)) sandbox-linux:sandbox:"$SNAP/modules/sandbox-linux.so"
	cp -a "$T/next" "$LIB/snapshots/next"
	ln -sfn snapshots/next "$LIB/current"
	refused "was not installed through 'jig-snapshot install'"
	install_snap "$T/next"
	jig modules verify >/dev/null || fail "after install, the higher sequence must verify"
}
case_symlink_module() {
	mv "$SNAP/modules/sandbox-linux.so" "$T/real.so"
	ln -s "$T/real.so" "$SNAP/modules/sandbox-linux.so"
	refused "sandbox-linux.so: is a symbolic link"
}
case_symlink_manifest() {
	mv "$SNAP/manifest.json" "$T/m.json"
	ln -s "$T/m.json" "$SNAP/manifest.json"
	refused "manifest.json: is a symbolic link"
}
case_group_writable() {
	chmod g+w "$SNAP/modules/sandbox-linux.so"
	refused "sandbox-linux.so: writable by group or others"
}
case_world_writable() {
	chmod o+w "$SNAP/modules/sandbox-linux.so"
	refused "sandbox-linux.so: writable by group or others"
}
case_writable_directory() {
	chmod o+w "$SNAP/modules"
	refused "modules.*writable by group or others"
}
case_foreign_owner() {
	chown nobody "$SNAP/modules/sandbox-linux.so"
	refused "sandbox-linux.so: owned by uid [0-9]+, not root or the installing user"
}
case_unlisted_file() {
	cp "$MODS/testmod.so" "$SNAP/modules/extra.so"
	refused "modules/extra.so: not listed in the manifest"
}
case_path_outside_modules() {
	mkdir -p "$SNAP/lib" && cp "$SNAP/modules/sandbox-linux.so" "$SNAP/lib/x.so"
	edit_files "awk 'NR == 1 { print; sub(/ [^ ]*\$/, \" lib/x.so\") } { print }' | LC_ALL=C sort -t' ' -k3,3" \
		'.modules[0].path = "lib/x.so"'
	refused "path \"lib/x.so\" must be a plain file directly under modules/"
}
case_path_dotdot() {
	edit_files "sed '1s| [^ ]*\$| modules/../modules/sandbox-linux.so|'" \
		'.modules[0].path = "modules/../modules/sandbox-linux.so"'
	refused "is not a normalised relative path"
}
case_path_absolute() {
	edit_files "sed '1s| [^ ]*\$| /usr/lib/x.so|'"
	refused "is not a normalised relative path"
}
case_files_list_altered() {
	# The file list is pinned by the signed manifest: a line added or a
	# digit changed is refused before any line is believed.
	cp "$SNAP/manifest.files" "$T/f"
	sed '1s/^./f/' "$T/f" >"$SNAP/manifest.files"
	cmp -s "$T/f" "$SNAP/manifest.files" && sed '1s/^./0/' "$T/f" >"$SNAP/manifest.files"
	refused "manifest.files: sha256 does not match the manifest's files_sha256"
	{ cat "$T/f"; head -n1 "$T/f"; } >"$SNAP/manifest.files"
	refused "manifest.files: [0-9]+ bytes, the manifest lists [0-9]+"
	rm "$SNAP/manifest.files"
	refused "manifest.files"
	ln -s "$T/f" "$SNAP/manifest.files"
	refused "manifest.files: is a symbolic link"
}
case_abi_major() {
	mksnap "$T/s" abi2 $((SEQ + 1)) testmod:sandbox:"$MODS/testmod-abi2.so":2.0
	install_snap "$T/s"
	refused "module testmod: built for module ABI 2.0, this jig speaks 1.6"
}
case_abi_major_lie() {
	# The manifest claims 1.0, the descriptor says 2.0: caught after dlopen.
	mksnap "$T/s" abi2 $((SEQ + 1)) testmod:sandbox:"$MODS/testmod-abi2.so"
	install_snap "$T/s"
	refused "module testmod: descriptor says module ABI 2.6, this jig speaks 1.6"
}
case_abi_minor_newer() {
	mksnap "$T/s" minor9 $((SEQ + 1)) testmod:sandbox:"$MODS/testmod-minor9.so":1.9
	install_snap "$T/s"
	refused "module testmod: built for module ABI 1.9, this jig speaks 1.6"
}
case_kind_mismatch() {
	mksnap "$T/s" kind $((SEQ + 1)) testmod:http:"$MODS/testmod.so"
	install_snap "$T/s"
	refused "module testmod: descriptor kind is sandbox, manifest says http"
}
case_name_mismatch() {
	mksnap "$T/s" name $((SEQ + 1)) other:sandbox:"$MODS/testmod.so"
	install_snap "$T/s"
	refused "module other: descriptor name is \"testmod\", manifest says \"other\""
}
case_truncated_manifest() {
	head -c 100 "$SNAP/manifest.json" >"$T/m" && cat "$T/m" >"$SNAP/manifest.json"
	refused "does not match the manifest bytes"
	rawsign # a signed but truncated manifest still fails: as JSON
	refused "manifest: not valid JSON"
}
case_garbage_manifest() {
	head -c 3000 /dev/urandom >"$SNAP/manifest.json"
	rawsign
	refused "manifest: not valid JSON"
}
case_empty_manifest() {
	: >"$SNAP/manifest.json"
	refused "does not match the manifest bytes"
}
case_truncated_signature() {
	head -c 60 "$SNAP/manifest.sig" >"$T/s" && cat "$T/s" >"$SNAP/manifest.sig"
	refused "manifest.sig: malformed"
}
case_garbage_signature() {
	head -c 170 /dev/urandom >"$SNAP/manifest.sig"
	refused "manifest.sig: malformed"
}
case_flipped_signature() {
	# One hex digit of the signature changed, the line still well-formed.
	line=$(cat "$SNAP/manifest.sig")
	case "$line" in *0) new=1 ;; *) new=0 ;; esac
	printf '%s%s\n' "${line%?}" "$new" >"$SNAP/manifest.sig"
	refused "signature by key [0-9a-f]{16} does not match the manifest bytes"
}
case_duplicate_keys() {
	sed -i '0,/"sequence": \([0-9]*\)/s//"sequence": \1, "sequence": \1/' "$SNAP/manifest.json"
	resign 2>"$T/sign.err" || true
	grep -q "duplicate" "$T/sign.err" || fail "the signing tool must refuse duplicate keys too"
	rawsign
	refused "manifest: not valid JSON .*duplicate"
}
case_unknown_manifest_key() {
	edit_manifest '. + {"extra": 1}'
	refused "manifest: unknown key \"extra\""
}
case_missing_state() {
	rm "$LIB/state.json"
	refused "state.json: missing, so rollback cannot be checked"
}
case_host_check_refuses() {
	# R-T02, R-C02: this development machine binds cgroup controllers to v1.
	expect 3 "" -- jig host check
	grep -q "MISSING   cgroup2 .*not a cgroup v2 file system" "$T/out" || fail "cgroup2 reason"
	grep -q "jig refuses to run Flows here" "$T/out" || fail "verdict"
	set +e; jig host check --json >"$T/j"; rc=$?; set -e
	[ $rc -eq 3 ] || fail "--json exit $rc"
	jq -e '.schema == "jig-host-check/1" and .supported == false and
	       ([.mechanisms[].name] == ["rootless","userns","bwrap","seccomp","cgroup2","cgroup2.delegated","cgroup2.memory","cgroup2.pids","cgroup2.cpu"]) and
	       ([.mechanisms[] | select(.name == "cgroup2") | .available] == [false])' "$T/j" >/dev/null || fail "json shape"
}
case_host_check_as_root_refuses() {
	set +e; "$P/bin/jig" host check >"$T/out"; rc=$?; set -e
	[ $rc -eq 3 ] || fail "exit $rc"
	grep -q "MISSING   rootless" "$T/out" || fail "root must be refused"
}
case_out_of_tree_module() {
	# R-P06: a maintainer builds one module against the installed SDK alone.
	cmake -S "$JIG_SOURCE/tests/oot-module" -B "$T/oot" -DCMAKE_PREFIX_PATH="$P" >/dev/null
	cmake --build "$T/oot" >/dev/null
	nm -D --defined-only "$T/oot/hello.so" | awk '{print $3}' | grep -vx jig_module_v1 | grep . && fail "exports more than the descriptor"
	mksnap "$T/s" oot $((SEQ + 1)) sandbox-linux:sandbox:"$SNAP/modules/sandbox-linux.so" hello:display:"$T/oot/hello.so"
	install_snap "$T/s"
	jig modules verify >"$T/out"; cat "$T/out"
	grep -q "ok .*hello .*display .*version 0.0.1" "$T/out" || fail "out-of-tree module not loaded"
}
case_install_cutover() {
	# R-P14: staged, verified, then current switched by rename; no staging left.
	mksnap "$T/s" next $((SEQ + 1)) sandbox-linux:sandbox:"$SNAP/modules/sandbox-linux.so"
	install_snap "$T/s"
	[ "$(readlink "$LIB/current")" = snapshots/next ] || fail "current not switched"
	[ "$(jq -r .sequence "$LIB/state.json")" = $((SEQ + 1)) ] || fail "state"
	ls -a "$LIB/snapshots" | grep -q staging && fail "staging left behind"
	install_snap "$T/s" # reinstalling the same snapshot is fine
	chmod o+w "$T/s/modules/sandbox-linux.so"
	expect 4 "writable by group or others" -- "$TOOL" install --dir "$T/s" --prefix "$P"
}

"case_$1"
echo "ok $1"
