#!/bin/sh
# Prepared npm dependencies end to end (issue 16): jig review fetches and
# inspects the lock's tarballs from the suite's own loopback registry
# (tests/flow/registry.py: packages it builds itself, hostile ones
# included), installs them with the pinned Bun in the installer scope, and
# jig run uses the prepared installation offline. The registry's log is the
# listener: every request anything made during review or Run is in it.
# Each case_* is one ctest (prepare.<case>) in the supported-host lane, run
# as the unprivileged user. The checks before any fetch are also in the
# plain lane (tests/integration/deps.sh).
set -eu
. "${JIG_SOURCE:?}/tests/lib/store.sh"
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
REGISTRY="$JIG_SOURCE/tests/flow/registry.py"
. "$JIG_SOURCE/tests/flow/registry.sh"
. "$JIG_SOURCE/tests/flow/scope_plan.sh"
EMPTY={}

T=$(mktemp -d /tmp/jig-prep.XXXXXX)
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export XDG_CONFIG_HOME="$T/config"
mkdir -p "$XDG_CONFIG_HOME/jig" "$T/reg"
chmod 700 "$XDG_CONFIG_HOME/jig"

# serve [STALL]: the registry on a free loopback port ($PORT), log $T/log.
serve() { registry_serve "$XDG_CONFIG_HOME/jig" "$@"; }
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""; }
# project SPEC: the test project with package.json and bun.lock for SPEC
# (registry.py's), its packages packed into the registry.
project() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p" "$T/reg" && mkdir -p "$T/reg"
	cp -r "$JIG_SOURCE/tests/flow/npm" "$T/p"
	python3 "$REGISTRY" make "$T/reg" "$T/p/uses" "$1"
}
review() {
	set +e
	(cd "$T/p" && "$JIG" review --yes "$@") >"$T/review.out" 2>"$T/review.err"
	rc=$?
	set -e
	echo "--- jig review (exit $rc)"; cat "$T/review.err"
}
# refused PATTERN [CODE]: the review refused (exit CODE, default 2) with one
# line matching PATTERN; nothing admitted, nothing prepared.
refused() {
	review ${3:+"$3"}
	[ "$rc" -eq "${2:-2}" ] || fail "exit $rc, expected ${2:-2}"
	[ "$(wc -l <"$T/review.err")" -eq 1 ] || fail "not one line"
	grep -q -- "$1" "$T/review.err" || fail "error does not match /$1/"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
	[ -z "$(find "$T/p/.jig/store/prepared" -type f 2>/dev/null)" ] || fail "something was prepared"
}
# Only the lock's tarballs were asked for (never a script's or an import's
# request), N of them.
only_tarballs() {
	cat "$T/log"
	[ "$(grep -c '\.tgz$' "$T/log" || true)" -eq "$1" ] || fail "expected $1 tarball requests"
	! grep -v '\.tgz$' "$T/log" | grep -q . || fail "a request that is not a lock's tarball was made"
}
# The prepared tree's paths, from the Plan's digest and the store.
tree_paths() {
	tree=$(cd "$T/p" && "$JIG" review --json 2>/dev/null | jq -r '.plan.flows[0].dependencies.tree')
	jq -r '.files[].path' "$T/p/.jig/store/packages/$tree.json"
}
pkg() { # pkg NAME VERSION [EXTRA_JSON]: one package of a SPEC
	jq -cn --arg n "$1" --arg v "$2" --argjson x "${3:-$EMPTY}" '{name: $n, version: $v} + $x'
}
spec() { # spec ROOT_DEPS_JSON PACKAGE... : a SPEC
	deps=$1; shift
	printf '%s\n' "$@" | jq -cs --argjson d "$deps" '{name: "demo", dependencies: $d, packages: .}'
}
GREET_JS='const pad = require("jig-fixture-pad"); module.exports = (s) => pad("hello " + s, 12) + "!";'
PAD_JS='module.exports = (s, n) => s.padStart(n, ".");'
greet_spec() { # greet_spec [EXTRA_GREET_JSON]
	spec '{"jig-fixture-greet": "^1.0.0"}' \
		"$(pkg jig-fixture-greet 1.0.0 "$(jq -cn --arg js "$GREET_JS" --argjson x "${1:-$EMPTY}" '{dependencies: {"jig-fixture-pad": "^1.0.0"}, files: {"index.js": $js}} + $x')")" \
		"$(pkg jig-fixture-pad 1.0.0 "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")"
}

case_example_runs_offline() {
	# R-E01 R-E09: reviewed with the loopback registry, run offline.
	serve
	project "$(greet_spec)"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	only_tarballs 2
	grep -q "npm dependencies: prepared installation sha256 [0-9a-f]\{64\} (2 packages" "$T/review.out" || fail "the Plan does not show the installation"
	grep -q "in the installer scope" "$T/review.out" && grep -q "its policy sha256 [0-9a-f]\{64\}" "$T/review.out" || fail "no installer policy"
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	jq -e '.plan.flows[0].dependencies | (.tree | length) == 64 and (.installer_policy_sha256 | length) == 64 and .packages == 2' "$T/plan.json" >/dev/null ||
		fail "the Plan's dependencies: $(jq -c '.plan.flows[0].dependencies' "$T/plan.json")"
	tree_paths | tee "$T/paths"
	grep -qx "jig-fixture-greet/index.js" "$T/paths" && grep -qx "jig-fixture-pad/package.json" "$T/paths" || fail "the tree is not the installation"
	! grep -q '\.bin\|^\.' "$T/paths" || fail "links or dot files in the installation"
	: >"$T/log"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
	cat "$T/pkt/files/write.txt"
	! grep -q "done" "$T/pkt/files/write.txt" && grep -qx "chmod EROFS" "$T/pkt/files/write.txt" ||
		fail "the Flow could change its installation"
	[ ! -s "$T/log" ] || fail "the Run made a request: $(cat "$T/log")"
	# An unchanged re-review reuses the preparation: no network at all.
	stop
	sha=$(jq -r .plan_sha256 "$T/plan.json")
	review --json
	[ "$rc" -eq 0 ] || fail "the re-review needed the registry"
	[ "$(jq -r .plan_sha256 "$T/review.out")" = "$sha" ] || fail "the re-review's Plan differs"
}
case_stale_run_no_dependency_phantom() {
	# Issue 44: jig run prepares nothing, so after an edit of a Flow with
	# prepared dependencies its Plan has none for the changed package; the
	# stale-Plan refusal (and jig why) name the edited file, never a
	# "dependencies ... -> nothing" that review would not show.
	serve
	project "$(greet_spec)"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	printf '\n// edited\n' >>"$T/p/uses/main.ts"
	set +e; (cd "$T/p" && "$JIG" run uses --output "$T/pkt") >"$T/run.out" 2>"$T/run.err"; rc=$?; set -e
	cat "$T/run.err"
	[ "$rc" -eq 4 ] && grep -q "^jig: flow uses: main.ts changed since review" "$T/run.err" || fail "run: exit $rc"
	! grep -q "dependencies\|-> nothing" "$T/run.err" || fail "the refusal names a dependency change"
	(cd "$T/p" && "$JIG" why uses --json) >"$T/why.json" || true
	jq -e '[.explanations[] | .cause] | length > 0 and (map(test("dependencies|-> nothing")) | any | not)' "$T/why.json" >/dev/null ||
		fail "jig why lists a phantom: $(jq -c '[.explanations[].cause]' "$T/why.json")"
	# What review shows for the same edit: the file, no dependency change.
	(cd "$T/p" && "$JIG" review --json) >"$T/rv.json"
	jq -e '[.changes[] | .subject] == ["main.ts"]' "$T/rv.json" >/dev/null || fail "review: $(jq -c '[.changes[].text]' "$T/rv.json")"
}
case_progress_terminal() {
	# Issue 35: jig review on a pseudo-terminal (script(1)) says how the
	# dependencies are prepared: checked, how many packages are installed
	# in the installer scope, then packages, files and bytes prepared; an
	# unchanged re-review says they were reused. Each status is erased
	# before the next (the plain lane's progress.* cases check the rest).
	# (script(1) by "command": this file has a function of that name.)
	serve
	project "$(greet_spec)"
	for pass in 1 2; do
		command script -qec "cd $T/p && $JIG review --yes" /dev/null </dev/null >"$T/tty" 2>&1 || fail "review $pass failed: $(cat "$T/tty")"
		tr '\r' '\n' <"$T/tty" | sed 's/\x1b\[K/<K>/g' >"$T/rows.$pass"
		cat "$T/rows.$pass"
	done
	p='^<K>jig: \[ *[0-9]*\.[0-9]s\] flow uses: '
	for s in "checking its dependencies" "installing 2 packages in the installer scope" "prepared 2 packages: [0-9]* files, [0-9.]* [KM]\{0,1\}i\{0,1\}B"; do
		grep -q "$p$s\$" "$T/rows.1" || fail "first review: no progress \"$s\""
	done
	grep -q "${p}its 2 dependencies were prepared before: reused\$" "$T/rows.2" || fail "the re-review does not say the preparation was reused"
	! grep -q "installing" "$T/rows.2" || fail "the re-review installed again"
}
case_real_example() {
	# R-E01 R-E09: examples/npm-csv, its real bun.lock made by the pinned
	# Bun, reviewed against the real csv-parse tarball (vendored in
	# tests/fixtures/npm, served on loopback) and run offline.
	rm -rf "$T/reg" && mkdir -p "$T/reg/csv-parse/-"
	cp "$JIG_SOURCE/tests/fixtures/npm/csv-parse-5.5.6.tgz" "$T/reg/csv-parse/-/"
	serve
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p" && cp -r "$JIG_SOURCE/examples/npm-csv" "$T/p"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	cat "$T/review.out"
	only_tarballs 1
	grep -q "npm dependencies: prepared installation sha256 [0-9a-f]\{64\} (1 package," "$T/review.out" || fail "no installation in the Plan"
	: >"$T/log"
	(cd "$T/p" && "$JIG" run csv-columns --input data="$T/p/csv-columns/sample.csv" --output "$T/pkt") || fail "the Run failed"
	cat "$T/pkt/files/columns.json"
	jq -e '.rows == 4 and .columns.city.distinct == 4 and .columns["population, millions"].filled == 3' "$T/pkt/files/columns.json" >/dev/null ||
		fail "csv-parse did not parse"
	[ ! -s "$T/log" ] || fail "the Run made a request"
}
# script WHICH: a dependency whose WHICH lifecycle script (or, for
# "import", its main module) would write a marker in its directory and
# reach the listener; neither happens during review.
script() {
	serve
	probe="touch MARK-$1; bun -e \"await fetch('http://127.0.0.1:$PORT/script-$1')\"; curl -s http://127.0.0.1:$PORT/curl-$1"
	if [ "$1" = import ]; then
		extra=$(jq -cn --arg js "require('node:fs').writeFileSync('MARK-import', 'x'); fetch('http://127.0.0.1:$PORT/import'); $GREET_JS" '{files: {"index.js": $js}}')
	else
		extra=$(jq -cn --arg w "$1" --arg p "$probe" --arg js "$GREET_JS" '{scripts: {($w): $p}, files: {"index.js": $js}}')
	fi
	project "$(greet_spec "$extra")"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	sleep 1
	only_tarballs 2
	tree_paths >"$T/paths"
	! grep -q MARK "$T/paths" || fail "it ran: $(grep MARK "$T/paths")"
}
case_script_preinstall() { script preinstall; }
case_script_install() { script install; }
case_script_postinstall() { script postinstall; }
case_script_prepare() { script prepare; }
case_code_on_import() { script import; }
case_only_manifests_reach_installer() {
	# R-E07: the project's other configuration (bunfig.toml, .npmrc, a
	# foreign lockfile) would send Bun to another registry path; it never
	# reaches the installer, so only jig's own two fetches are made.
	serve
	project "$(greet_spec)"
	printf '[install]\nregistry = "http://127.0.0.1:%s/bunfig/"\n' "$PORT" >"$T/p/uses/bunfig.toml"
	printf 'registry=http://127.0.0.1:%s/npmrc/\n' "$PORT" >"$T/p/uses/.npmrc"
	echo '{"lockfileVersion": 3, "packages": {}}' >"$T/p/uses/package-lock.json"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	only_tarballs 2
	! grep -q "bunfig\|npmrc" "$T/log" || fail "the installer read the project's configuration"
}
case_patch_applied() {
	# R-E08: a declared patch is captured with the sources, checked against
	# the lock, and applied by Bun in the same script-disabled scope.
	serve
	project "$(greet_spec)"
	mkdir "$T/p/uses/patches"
	printf '%s\n' 'diff --git a/index.js b/index.js' '--- a/index.js' '+++ b/index.js' '@@ -1 +1 @@' \
		'-module.exports = (s, n) => s.padStart(n, ".");' '\ No newline at end of file' \
		'+module.exports = (s, n) => s.padStart(n, "*");' '\ No newline at end of file' >"$T/p/uses/patches/pad.patch"
	for f in package.json bun.lock; do
		jq '.patchedDependencies = {"jig-fixture-pad@1.0.0": "patches/pad.patch"}' "$T/p/uses/$f" >"$T/x" && mv "$T/x" "$T/p/uses/$f"
	done
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	# The Plan lists the patch: name@version, path, SHA-256 (issue 31).
	sha=$(sha256sum "$T/p/uses/patches/pad.patch" | cut -d' ' -f1)
	grep -q "patch for jig-fixture-pad@1.0.0: patches/pad.patch (sha256 $sha)" "$T/review.out" || fail "the Plan does not list the patch"
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	jq -e --arg s "$sha" '.plan.flows[0].dependencies.patches == [{"package": "jig-fixture-pad@1.0.0", "path": "patches/pad.patch", "sha256": $s}]' \
		"$T/plan.json" >/dev/null || fail "the Plan's patches: $(jq -c '.plan.flows[0].dependencies' "$T/plan.json")"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "***hello jig!" ] || fail "the patch was not applied: $(cat "$T/pkt/files/out.txt")"
}
case_bin_and_links_dropped() {
	# R-E09: a package's bin entries become no links in the installation.
	serve
	project "$(greet_spec '{"bin": {"greet": "index.js"}}')"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	tree_paths >"$T/paths"
	! grep -q '\.bin' "$T/paths" || fail "bin links in the installation"
}
# hostile KIND PATTERN: a package whose tarball is KIND (registry.py's)
# is refused by jig's own reader before Bun unpacks it.
hostile() {
	serve
	project "$(spec '{"jig-fixture-evil": "1.0.0"}' "$(pkg jig-fixture-evil 1.0.0 "{\"hostile\": \"$1\"}")")"
	refused "preparing its dependencies refused: jig-fixture-evil@1.0.0: .*$2"
	only_tarballs 1
}
case_hostile_dotdot() { hostile dotdot 'its path has a "\.\." component'; }
case_hostile_absolute() { hostile absolute "is not below one top directory"; }
case_hostile_device() { hostile device "is a device, FIFO or socket"; }
case_hostile_fifo() { hostile fifo "is a device, FIFO or socket"; }
case_hostile_symlink() { hostile symlink "is a link"; }
case_hostile_hardlink() { hostile hardlink "is a link"; }
case_hostile_40mib_file() { hostile big "takes the preparation over 33554432 bytes"; }
case_hostile_5000_files() { hostile many "more than 4096 files (the entries of all the Flow.s dependency tarballs together.*depend on fewer or smaller packages"; }
case_legal_npm_names() {
	# R-E09 (issue 46, decision 261): every name npm packages legally ship —
	# brackets, a space, "#", "~", a comma, non-ASCII UTF-8, a 300-byte
	# path (a GNU long name in the tarball) — is inspected, installed,
	# stored and materialised, and the Flow imports each.
	long=lib/long
	while [ ${#long} -lt 296 ]; do long="$long/abcdefghijklmnopqrstuvwxyz0123456789"; done
	long=$(printf '%s' "$long" | cut -c1-297).js
	[ "$(printf '%s' "$long" | wc -c)" -eq 300 ] || fail "the long path is $(printf '%s' "$long" | wc -c) bytes"
	names=$(jq -cn --arg long "$long" '["pages/[id].js", "lib/a b.js", "array/#/index.js", "lib/~util.js", "lib/a,b.js", "lib/é.js", $long]')
	files=$(printf '%s' "$names" | jq -c 'map({key: ., value: ("module.exports = " + (. | tojson) + ";\n")}) | from_entries')
	serve
	project "$(spec '{"jig-fixture-names": "1.0.0"}' "$(pkg jig-fixture-names 1.0.0 "{\"files\": $files}")")"
	printf '%s' "$names" | jq -r 'to_entries[] | "import n\(.key) from \("jig-fixture-names/" + .value | tojson);"' >"$T/p/uses/main.ts"
	printf '%s' "$names" | jq -r '"export default async function (jig) {\n  jig.write(\"out.txt\", [" + ([range(length)] | map("n\(.)") | join(", ")) + "].join(\"\\n\") + \"\\n\");\n}"' >>"$T/p/uses/main.ts"
	cat "$T/p/uses/main.ts"
	review
	[ "$rc" -eq 0 ] || fail "review failed: $(cat "$T/review.err")"
	# one package is "1 package" (issue 46)
	grep -q "npm dependencies: prepared installation sha256 [0-9a-f]\{64\} (1 package, [0-9]* files" "$T/review.out" || fail "the Plan's count: $(grep 'npm dependencies' "$T/review.out")"
	tree_paths >"$T/paths"
	printf '%s' "$names" | jq -r '.[]' | while IFS= read -r n; do
		grep -qxF "jig-fixture-names/$n" "$T/paths" || fail "the installation lacks $n"
	done
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "$(printf '%s' "$names" | jq -r '.[]')" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
}
case_integrity_mismatch() {
	# R-E02: the lock's integrity is checked by jig against the bytes fetched.
	serve
	other=$(printf 'x' | openssl dgst -sha512 -binary | base64 -w0)
	project "$(spec '{"jig-fixture-pad": "1.0.0"}' "$(pkg jig-fixture-pad 1.0.0)" | jq -c --arg i "sha512-$other" '.lock.integrity = {"jig-fixture-pad": $i}')"
	refused "jig-fixture-pad@1.0.0: the tarball does not match the lock's sha512 integrity"
	only_tarballs 1
}
case_record_not_written() {
	# Issue 32: the preparation's record cannot be written (the test
	# build's JIG_FAULT_FAIL, host/util/fault.h): the review fails with
	# that line, admits nothing and leaves no preparation directory.
	serve
	project "$(greet_spec)"
	before=$(find /tmp -maxdepth 1 -name 'jig-prepare-*' | sort)
	set +e
	(cd "$T/p" && JIG_FAULT_FAIL="prepared record" "$JIG" review --yes) >"$T/review.out" 2>"$T/review.err"
	rc=$?
	set -e
	cat "$T/review.err"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1"
	grep -q 'store/prepared/.*: not written (fault point "prepared record")' "$T/review.err" || fail "not the record's error"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
	after=$(find /tmp -maxdepth 1 -name 'jig-prepare-*' | sort)
	[ "$after" = "$before" ] || fail "a preparation directory was left: $after"
}
case_lock_refused_before_fetch() {
	# R-E02: sources and integrities are checked before the first fetch.
	serve
	for change in '.lock.source = {"jig-fixture-pad": "jig-fixture-pad@git+https://127.0.0.1/x.git"}@@' \
		'.lock.source = {"jig-fixture-pad": "jig-fixture-pad@file:../x"}@@' \
		'.lock.integrity = {"jig-fixture-pad": ""}@@integrity' \
		'.lock.source = {"jig-fixture-pad": "jig-fixture-pad@link:../x"}@@' \
		'.lock.source = {"jig-fixture-pad": "jig-fixture-pad@https://127.0.0.1/x.tgz"}@@' \
		'.dependencies = {"jig-fixture-pad": "file:../pad"}@@file:'; do
		project "$(spec '{"jig-fixture-pad": "1.0.0"}' "$(pkg jig-fixture-pad 1.0.0)" | jq -c "${change%%@@*}")"
		refused "flow uses: .*${change#*@@}"
		[ ! -s "$T/log" ] || fail "a request was made: $(cat "$T/log")"
	done
	# A lock naming a package the manifest does not.
	project "$(spec '{"jig-fixture-pad": "1.0.0"}' "$(pkg jig-fixture-pad 1.0.0)" "$(pkg jig-fixture-extra 1.0.0)")"
	refused "jig-fixture-extra"
	[ ! -s "$T/log" ] || fail "a request was made: $(cat "$T/log")"
}
case_resolution_network() {
	# R-E03 R-E06: no lock: refused without the flag (no request made); with it,
	# the warning, metadata requests, then the same checks and install.
	serve
	project "$(greet_spec)"
	rm "$T/p/uses/bun.lock"
	refused "there is no bun.lock; resolving them needs jig review --allow-resolution-network"
	[ ! -s "$T/log" ] || fail "a request was made without the flag"
	review --allow-resolution-network
	[ "$rc" -eq 0 ] || fail "review with resolution failed"
	grep -q "not egress filtering" "$T/review.err" || fail "no warning"
	cat "$T/log"
	grep -qx "GET /jig-fixture-greet" "$T/log" && grep -qx "GET /jig-fixture-pad" "$T/log" || fail "no resolution requests"
	[ "$(grep -c '\.tgz$' "$T/log")" -eq 2 ] || fail "the tarballs were not fetched once each"
	grep -q "its lock was resolved at review" "$T/review.out" || fail "the Plan does not say the lock was resolved"
	[ ! -e "$T/p/uses/bun.lock" ] || fail "jig wrote into the project"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
	stop
	review
	[ "$rc" -eq 0 ] || fail "the re-review of the resolved package needed the flag or the registry"
}
case_r_e03_resolution_permission_one_review() {
	# R-E03 (audit #28): --allow-resolution-network lasts only for the review
	# that has it. After a review that resolved, a review without the flag
	# of a changed package (a new package, no lock) does not resolve: it is
	# refused with one line naming the flag and makes no request (review
	# passes --yes: admission approval is not the flag either).
	# The flag on a later review resolves again, for that review only.
	serve
	project "$(greet_spec)"
	rm "$T/p/uses/bun.lock"
	review --allow-resolution-network
	[ "$rc" -eq 0 ] || fail "review with resolution failed"
	grep -qx "GET /jig-fixture-greet" "$T/log" || fail "no resolution request"
	n=$(wc -l <"$T/log")
	printf '// changed after the review that resolved\n' >>"$T/p/uses/main.ts"
	review
	[ "$rc" -eq 2 ] || fail "exit $rc: a review without the flag went on"
	[ "$(wc -l <"$T/review.err")" -eq 1 ] || fail "not one line"
	grep -q "there is no bun.lock; resolving them needs jig review --allow-resolution-network" "$T/review.err" || fail "the refusal does not name the flag"
	[ "$(wc -l <"$T/log")" -eq "$n" ] || fail "a review without the flag made requests: $(tail -n +$((n + 1)) "$T/log")"
	# The flag again: this review may resolve, and does.
	review --allow-resolution-network
	[ "$rc" -eq 0 ] && [ "$(wc -l <"$T/log")" -gt "$n" ] || fail "the flag on the next review did not resolve"
	n=$(wc -l <"$T/log")
	# And the next one without it is refused again.
	printf '// changed again\n' >>"$T/p/uses/main.ts"
	review
	[ "$rc" -eq 2 ] && grep -q "needs jig review --allow-resolution-network" "$T/review.err" || fail "exit $rc: resolved without the flag"
	[ "$(wc -l <"$T/log")" -eq "$n" ] || fail "requests without the flag: $(tail -n +$((n + 1)) "$T/log")"
}
case_resolved_lock_outside_registry() {
	# R-E06: a registry whose metadata points a tarball elsewhere: the
	# resolved lock is refused before any tarball is fetched.
	serve
	project "$(greet_spec)"
	rm "$T/p/uses/bun.lock"
	printf '{"format": "jig-npm/1", "registry": "http://localhost:%s/"}\n' "$PORT" >"$XDG_CONFIG_HOME/jig/npm.json"
	refused_flag() {
		review --allow-resolution-network
		[ "$rc" -eq 2 ] || fail "exit $rc"
		grep -q "$1" "$T/review.err" || fail "not /$1/"
	}
	refused_flag "not the registry's own"
	! grep -q '\.tgz$' "$T/log" || fail "a tarball was fetched"
}
case_config_dir_unreadable() {
	# Issue 44, R-E06 (dependency confusion): npm.json names the private
	# (loopback) registry; a configuration directory the operator cannot
	# read is refused with one line naming npm.json and the error, at
	# preparation and at resolution, never read as "no configuration"
	# (which would resolve from the public registry): no registry is asked
	# anything. Readable again, the same review asks the private one.
	serve
	project "$(greet_spec)"
	chmod 000 "$XDG_CONFIG_HOME/jig"
	refused "^jig: $XDG_CONFIG_HOME/jig/npm.json: Permission denied: cannot read the operator configuration; fix its permissions or remove it\$"
	rm "$T/p/uses/bun.lock"
	review --allow-resolution-network
	[ "$rc" -eq 2 ] || fail "resolution: exit $rc"
	[ "$(tail -n 1 "$T/review.err")" = "jig: $XDG_CONFIG_HOME/jig/npm.json: Permission denied: cannot read the operator configuration; fix its permissions or remove it" ] ||
		fail "resolution: not the one line"
	! grep -q "registry.npmjs.org\|resolving its dependencies" "$T/review.err" || fail "resolution went to another registry"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "admitted"
	[ ! -s "$T/log" ] || fail "a registry request was made: $(cat "$T/log")"
	chmod 700 "$XDG_CONFIG_HOME/jig"
	review --allow-resolution-network
	[ -s "$T/log" ] || fail "readable again, the private registry was not asked"
}
# flows N SPEC_FN: a project of N Flows f01..fNN, each importing
# jig-fixture-pad, with the package.json and bun.lock `SPEC_FN I` makes.
flows() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p" "$T/reg" && mkdir -p "$T/p" "$T/reg"
	names=""
	for i in $(seq 1 "$1"); do
		f=$(printf 'f%02d' "$i")
		mkdir "$T/p/$f"
		jq --arg n "$f" '.name = $n' "$JIG_SOURCE/tests/flow/npm/uses/flow.json" >"$T/p/$f/flow.json"
		printf 'import pad from "jig-fixture-pad";\nexport default async function (jig) { jig.write("out.txt", pad("x", 3)); }\n' >"$T/p/$f/main.ts"
		python3 "$REGISTRY" make "$T/reg" "$T/p/$f" "$($2 "$i")"
		names="$names${names:+,}\"$f\": \"$f\""
	done
	printf '{"format": "jig-project/1", "flows": {%s}}\n' "$names" >"$T/p/jig.json"
}
pad_version() { spec '{"jig-fixture-pad": "1.0.'"$1"'"}' "$(pkg jig-fixture-pad "1.0.$1" "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")"; }
pad_30mib() { spec '{"jig-fixture-pad": "1.0.'"$1"'"}' "$(pkg jig-fixture-pad "1.0.$1" "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}, hostile: "big30"}')")"; }
case_phase_bytes_256mib() {
	# R-E10 (part): one review prepares at most 256 MiB: eight Flows of
	# 30 MiB each are prepared (240 MiB), the ninth (270 MiB) is refused.
	serve
	flows 9 pad_30mib
	review
	[ "$rc" -eq 2 ] || fail "exit $rc"
	grep -q "flow f09: the review's prepared dependencies exceed 256 MiB" "$T/review.err" || fail "not the phase's byte cap"
	[ "$(grep -c '\.tgz$' "$T/log")" -eq 9 ] || fail "not nine preparations"
}
case_phase_deadline_180s() {
	# R-E10 (part): the dependency phase has one 180 s deadline: a registry
	# that answers each request after 30 s lets three to six Flows prepare
	# (each well inside its own 60 s deadline even on a loaded TCG host,
	# where the installer itself may take 20 s more); the one running when
	# the phase's time is up is cut off.
	serve 30
	flows 7 pad_version
	start=$(date +%s)
	review
	took=$(($(date +%s) - start))
	[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "exit $rc"
	grep -q "flow f0[3-7]: .*\(the 180 s phase deadline: this review's dependency preparations together\|deadline of 180 s passed\)" "$T/review.err" || fail "not the phase deadline"
	[ "$took" -ge 175 ] && [ "$took" -lt 240 ] || fail "took $took s"
}
case_phase_at_most_16() {
	# R-E10 (part): one review runs the installer at most 16 times: 17
	# Flows with distinct locks — the first 16 prepared (at the cap), the
	# 17th refused before it launches (over it).
	serve
	flows 17 pad_version
	refused_phase() {
		review
		[ "$rc" -eq 2 ] || fail "exit $rc"
		grep -q "flow f17: a review runs the installer at most 16 times" "$T/review.err" || fail "not the preparation cap"
	}
	refused_phase
	[ "$(grep -c '\.tgz$' "$T/log")" -eq 16 ] || fail "not 16 preparations: $(grep -c '\.tgz$' "$T/log")"
}
case_registry_stalls() {
	# R-E10 (part): a registry that never answers ends the preparation at its
	# deadline (60 s); nothing is admitted.
	serve 600
	project "$(spec '{"jig-fixture-pad": "1.0.0"}' "$(pkg jig-fixture-pad 1.0.0)")"
	start=$(date +%s)
	review
	took=$(($(date +%s) - start))
	[ "$rc" -eq 2 ] || fail "exit $rc"
	# The message says which deadline fired (issue 31).
	grep -q "the 60 s per-preparation deadline: this one preparation took longer" "$T/review.err" || fail "not the per-preparation deadline"
	! grep -q "180 s" "$T/review.err" || fail "the message names the phase deadline too"
	[ "$took" -lt 120 ] || fail "took $took s"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "admitted"
}
case_registry_redirect_refused() {
	# Issue 32 (decision 106): the installer's fetcher follows no redirect
	# (the SDK's one set of libcurl options): a registry that answers a
	# tarball with 302 fails the preparation; the target is never asked for.
	# Issue 35 (decision 161): a registry that cannot be reached or used is
	# exit 6, not a usage error, naming what to check (npm.json, the flag).
	serve redirect
	project "$(spec '{"jig-fixture-pad": "1.0.0"}' "$(pkg jig-fixture-pad 1.0.0)")"
	refused "jig-fixture-pad@1.0.0: fetching http://127.0.0.1:$PORT/jig-fixture-pad/-/jig-fixture-pad-1.0.0.tgz: the registry answered HTTP 302" 6
	grep -q "^jig: flow uses: preparing its dependencies failed: the registry http://127.0.0.1:$PORT/ could not be reached or used; not admitted; check the registry in the operator's npm.json (.*jig/npm.json) and that this host reaches it; a Flow without bun.lock is resolved only with jig review --allow-resolution-network; the installer said: jig-fixture-pad@1.0.0: fetching .*HTTP 302$" \
		"$T/review.err" || fail "not the registry's message: $(cat "$T/review.err")"
	only_tarballs 1
	! grep -q 'moved' "$T/log" || fail "the redirect was followed"
	# Nothing listening (the issue's unreachable registry): exit 6 again.
	stop
	refused "npm.json.*the installer said: jig-fixture-pad@1.0.0: fetching http://127.0.0.1:$PORT/.*: Could.*connect" 6
	# Resolution of a Flow without bun.lock from that registry: exit 6.
	rm "$T/p/uses/bun.lock"
	# (the flag's warning comes first, the refusal is the last line)
	review --allow-resolution-network
	[ "$rc" -eq 6 ] || fail "resolution: exit $rc, expected 6"
	tail -n 1 "$T/review.err" | grep -q "^jig: flow uses: resolving its dependencies failed: the registry .* could not be reached or used; .*the installer said: bun install --lockfile-only exited" ||
		fail "resolution: not the registry's message"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
# pinned_bun_lock: bun.lock for the test project written by the pinned
# Bun itself (bun install --lockfile-only) against the loopback registry:
# for a registry other than npm's, Bun records full tarball URLs.
pinned_bun_lock() {
	bun=$(find "$JIG_TEST_PREFIX/lib/jig/snapshots" -path '*/libexec/bun' -type f | head -n 1)
	[ -x "$bun" ] || fail "no pinned Bun in $JIG_TEST_PREFIX"
	rm -f "$T/p/uses/bun.lock"
	(cd "$T/p/uses" && HOME="$T/home" BUN_INSTALL_CACHE_DIR="$T/bun-cache" "$bun" install --lockfile-only --ignore-scripts \
		--registry "http://127.0.0.1:$PORT/") >"$T/bun.out" 2>&1 || fail "the pinned Bun: $(cat "$T/bun.out")"
	cat "$T/p/uses/bun.lock"
	: >"$T/log"
}
case_pinned_bun_lock_full_urls() {
	# Issue 31 (must-show 3): a lock the pinned Bun wrote against the
	# suite's loopback registry (full tarball URLs, a scoped package
	# included) is accepted and prepared; the same lock with one URL at
	# another port is refused before any request, naming the registry.
	serve
	project "$(spec '{"@jig-fixture/greet": "^1.0.0"}' \
		"$(pkg @jig-fixture/greet 1.0.0 "$(jq -cn --arg js "$GREET_JS" '{dependencies: {"jig-fixture-pad": "~1.0.0"}, files: {"index.js": $js}}')")" \
		"$(pkg jig-fixture-pad 1.0.0 "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")")"
	sed -i 's|"jig-fixture-greet"|"@jig-fixture/greet"|' "$T/p/uses/main.ts"
	pinned_bun_lock
	grep -q "\"http://127.0.0.1:$PORT/@jig-fixture/greet/-/greet-1.0.0.tgz\"" "$T/p/uses/bun.lock" &&
		grep -q "\"http://127.0.0.1:$PORT/jig-fixture-pad/-/jig-fixture-pad-1.0.0.tgz\"" "$T/p/uses/bun.lock" ||
		fail "the pinned Bun did not write full tarball URLs"
	cp "$T/p/uses/bun.lock" "$T/bun.lock.orig"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	only_tarballs 2
	: >"$T/log"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
	[ ! -s "$T/log" ] || fail "the Run made a request"
	# One URL at another port: refused before any request (a fresh
	# project state: nothing admitted or prepared before).
	chmod -R u+w "$T/p/.jig" && rm -rf "$T/p/.jig"
	other=$((PORT == 65535 ? PORT - 1 : PORT + 1))
	sed "s|http://127.0.0.1:$PORT/jig-fixture-pad/|http://127.0.0.1:$other/jig-fixture-pad/|" "$T/bun.lock.orig" >"$T/p/uses/bun.lock"
	refused "bun.lock: packages.jig-fixture-pad: its tarball \"http://127.0.0.1:$other/jig-fixture-pad/-/jig-fixture-pad-1.0.0.tgz\" is not the configured registry's (http://127.0.0.1:$PORT/)"
	[ ! -s "$T/log" ] || fail "a request was made: $(cat "$T/log")"
}
case_platform_skipped() {
	# Issue 31: packages the pinned Bun skips on this host (os, cpu, or
	# libc for an optional dependency; and what only they need) are neither
	# fetched nor stored, and the Plan says so.
	serve
	other_cpu=$([ "$(uname -m)" = x86_64 ] && echo arm64 || echo x64)
	project "$(spec '{"jig-fixture-greet": "^1.0.0", "jig-fixture-mac": "1.0.0"}' \
		"$(pkg jig-fixture-greet 1.0.0 "$(jq -cn --arg js "$GREET_JS" '{dependencies: {"jig-fixture-pad": "^1.0.0"}, optionalDependencies: {"jig-fixture-musl": "1.0.0", "jig-fixture-cpu": "1.0.0", "jig-fixture-glibc": "1.0.0"}, files: {"index.js": $js}}')")" \
		"$(pkg jig-fixture-pad 1.0.0 "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")" \
		"$(pkg jig-fixture-mac 1.0.0 '{"os": ["darwin"], "dependencies": {"jig-fixture-macdep": "1.0.0"}}')" \
		"$(pkg jig-fixture-macdep 1.0.0)" \
		"$(pkg jig-fixture-musl 1.0.0 '{"libc": ["musl"]}')" \
		"$(pkg jig-fixture-cpu 1.0.0 "{\"cpu\": [\"$other_cpu\"]}")" \
		"$(pkg jig-fixture-glibc 1.0.0 '{"os": ["!darwin"], "libc": ["glibc"]}')")"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	only_tarballs 3
	for n in mac macdep musl cpu; do
		! grep -q "jig-fixture-$n/" "$T/log" || fail "jig-fixture-$n was fetched"
	done
	grep -q "skipped for this platform, neither fetched nor installed: jig-fixture-mac@1.0.0 (its os is not this host's)" "$T/review.out" &&
		grep -q "jig-fixture-macdep@1.0.0 (needed only by skipped packages)" "$T/review.out" &&
		grep -q "jig-fixture-musl@1.0.0 (its libc is not this host's)" "$T/review.out" &&
		grep -q "jig-fixture-cpu@1.0.0 (its cpu is not this host's)" "$T/review.out" || fail "the Plan does not list the skipped packages"
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	jq -e '.plan.flows[0].dependencies.platform_skipped | map(.package) | sort ==
		["jig-fixture-cpu@1.0.0", "jig-fixture-mac@1.0.0", "jig-fixture-macdep@1.0.0", "jig-fixture-musl@1.0.0"]' "$T/plan.json" >/dev/null ||
		fail "the Plan's skipped packages: $(jq -c '.plan.flows[0].dependencies' "$T/plan.json")"
	tree_paths >"$T/paths"
	grep -qx "jig-fixture-glibc/package.json" "$T/paths" || fail "the glibc package was not installed"
	! grep -q "jig-fixture-\(mac\|macdep\|musl\|cpu\)/" "$T/paths" || fail "a skipped package was stored"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
}

# Issue 32, R-P12: the installer's Bun runs with its scope's environment
# exactly (the catalog's installer-work fragment, which the Plan's
# installer_policy_sha256 covers), its binds, writable mounts and
# descriptors 0-2. A test snapshot's install.js reports what Bun reads of
# itself into the prepared tree. The Plan shows the installer's digest,
# not its permission plan, so the expected side is the installed
# catalog's installer kind (what that digest covers); the argv is the
# worker's start of Bun on install.js. Then a catalog with one more
# installer-work variable: Bun's environment follows it (the worker once
# gave Bun four variables of its own), and the comparison with the old
# catalog sees the difference.
scratch_installer_scope_is_the_plan() {
	cp -a "$JIG_TEST_PREFIX" /var/tmp/prefix && chown -R jigtest /var/tmp/prefix
	cp "$JIG_DEV_KEY" /var/tmp/devkey && chown jigtest /var/tmp/devkey
}
# installer_inside_expected NAME: the installed catalog's installer kind as
# a Plan scope ($T/NAME.scope); installer_inside NAME: that, and what the
# installer's Bun read of itself ($T/NAME.inside), from a fresh project's
# review.
installer_inside_expected() {
	jq '.kinds.installer.fragments as $f | [.fragments[$f[]]] | {argv: ["/.jig/bun", "/.jig/runtime/install.js"],
		permission_plan: {env: (map(.env // {}) | add), binds: (map(.binds // []) | add),
			writable: (map(.tmpfs // [] | map({at: .target, size_bytes})) | add), descriptors: (map(.descriptors // []) | add)}}' \
		"/var/tmp/prefix/lib/jig/$(readlink /var/tmp/prefix/lib/jig/current)/libexec/catalog.json" >"$T/$1.scope"
}
installer_inside() {
	installer_inside_expected "$1"
	project "$(greet_spec)"
	review
	[ "$rc" -eq 0 ] || fail "review failed"
	tree=$(cd "$T/p" && "$JIG" review --json 2>/dev/null | jq -r '.plan.flows[0].dependencies.tree')
	sha=$(jq -r '.files[] | select(.path == "jig-inside/report.json") | .sha256' "$T/p/.jig/store/packages/$tree.json")
	blob_cat "$T/p/.jig/store" "$sha" >"$T/$1.inside" || fail "no blob $sha"
}
INSIDE_INSTALL="$JIG_SOURCE/tests/flow/inside-install.js runtime/install.js $JIG_SOURCE/tests/flow/inside.js runtime/inside.js"
case_installer_scope_is_the_plan() {
	JIG=/var/tmp/prefix/bin/jig
	serve
	# shellcheck disable=SC2086
	snapshot_with . $INSIDE_INSTALL
	installer_inside plan
	scope_is_plan "$T/plan.scope" "$T/plan.inside" || fail "the installer's scope is not its catalog kind's"
}
# The mutation (a case of its own: two snapshots and preparations do not
# fit one guest's time under TCG): the kind as installed is the expected
# side of the old catalog.
scratch_installer_env_follows_the_catalog() { scratch_installer_scope_is_the_plan; }
case_installer_env_follows_the_catalog() {
	JIG=/var/tmp/prefix/bin/jig
	serve
	installer_inside_expected plan
	# shellcheck disable=SC2086
	snapshot_with '.fragments["installer-work"].env.PLAN_PROBE = "1"' $INSIDE_INSTALL
	installer_inside edited
	jq -e '.permission_plan.env.PLAN_PROBE == "1"' "$T/edited.scope" >/dev/null || fail "the edit is not in the catalog"
	scope_is_plan "$T/edited.scope" "$T/edited.inside" || fail "the installer's environment did not follow the catalog's edit"
	! scope_is_plan "$T/plan.scope" "$T/edited.inside" || fail "the comparison did not see the catalog's edit"
}

# lock ARGS...: jig lock in the test project, with a PATH that has no Bun.
lock() {
	set +e
	t0=$(date +%s)
	(cd "$T/p" && PATH=/usr/bin:/bin "$JIG" lock "$@") >"$T/lock.out" 2>"$T/lock.err"
	rc=$?
	set -e
	echo "--- jig lock (exit $rc, $(($(date +%s) - t0)) s)"; cat "$T/lock.out" "$T/lock.err"
}
case_lock_then_review() {
	# Issue 35 must-show 3: with no Bun of the user's own (none on PATH),
	# jig lock writes the Flow's bun.lock with the pinned Bun in the
	# installer scope against the operator's (loopback) registry: its Plan
	# first (the very installer scope review's Plan names), metadata
	# requests only, nothing but uses/bun.lock written; jig review then
	# prepares from that lock without --allow-resolution-network, and the
	# Flow runs.
	serve
	project "$(greet_spec)"
	rm "$T/p/uses/bun.lock"
	! env PATH=/usr/bin:/bin sh -c 'command -v bun' >/dev/null || fail "a Bun on PATH"
	(cd "$T/p" && find . -type f | sort) >"$T/files.before"
	lock uses
	[ "$rc" -eq 0 ] || fail "jig lock failed"
	grep -q "^jig lock: flow uses: the pinned Bun resolves the dependencies of uses/package.json against the registry http://127.0.0.1:$PORT/" "$T/lock.out" &&
		grep -q "It writes only uses/bun.lock" "$T/lock.out" || fail "no Plan before the lock"
	policy=$(sed -n 's/^  in the installer scope, its policy sha256 \([0-9a-f]\{64\}\):$/\1/p' "$T/lock.out")
	[ -n "$policy" ] || fail "the Plan names no installer policy"
	grep -q "^wrote uses/bun.lock: 2 packages, [0-9]* bytes$" "$T/lock.out" || fail "what it wrote"
	grep -qx "GET /jig-fixture-greet" "$T/log" && ! grep -q '\.tgz$' "$T/log" || fail "not metadata requests only"
	(cd "$T/p" && find . -type f | sort) >"$T/files.after"
	echo ./uses/bun.lock | sort -m - "$T/files.before" | cmp -s - "$T/files.after" ||
		fail "not only uses/bun.lock was written: $(diff "$T/files.before" "$T/files.after")"
	! ls -a "$T/p/uses" | grep -q '^\.bun\.lock\.jig' || fail "a temporary file was left"
	: >"$T/log"
	review --json
	[ "$rc" -eq 0 ] || fail "review of the written lock failed"
	! grep -q "not egress filtering" "$T/review.err" || fail "review resolved again"
	only_tarballs 2
	jq -e --arg p "$policy" '.plan.flows[0].dependencies | .installer_policy_sha256 == $p and .resolved != true and .packages == 2' "$T/review.out" >/dev/null ||
		fail "the lock's installer scope is not the one review's Plan names, or review resolved: $(jq -c '.plan.flows[0].dependencies' "$T/review.out")"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt") || fail "the Run failed"
	[ "$(cat "$T/pkt/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt/files/out.txt")"
}
case_lock_refresh_unreachable() {
	# jig lock refreshes a lock that passes review's checks (its pins kept
	# though the registry has a newer pad); with the registry unreachable
	# a lock that still holds is "unchanged", never "(refreshed)"; one that
	# needs the registry exits 6 naming the operator's npm.json, and
	# bun.lock is unchanged.
	serve
	project "$(greet_spec)"
	python3 "$REGISTRY" make "$T/reg" "$(mktemp -d "$T/x.XXXXXX")" "$(spec '{"jig-fixture-pad": "1.0.1"}' "$(pkg jig-fixture-pad 1.0.1 "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")")"
	lock uses
	[ "$rc" -eq 0 ] || fail "jig lock failed"
	grep -q "the existing bun.lock passes review's checks: it is refreshed" "$T/lock.out" || fail "not a refresh"
	grep -q '"jig-fixture-pad@1.0.0"' "$T/p/uses/bun.lock" && ! grep -q '1\.0\.1' "$T/p/uses/bun.lock" || fail "the refresh moved a pin"
	cp "$T/p/uses/bun.lock" "$T/lock.before"
	stop
	# Issue 46: the lock still holds and Bun needs no registry to say so;
	# nothing was refreshed, and the line does not claim it was.
	lock uses
	[ "$rc" -eq 0 ] || fail "jig lock of a lock that holds failed (exit $rc)"
	grep -q "^unchanged uses/bun.lock: 2 packages, [0-9]* bytes$" "$T/lock.out" || fail "the result line: $(tail -n 1 "$T/lock.out")"
	cmp -s "$T/p/uses/bun.lock" "$T/lock.before" || fail "bun.lock changed"
	jq '.dependencies["jig-fixture-pad"] = "^1.0.1"' "$T/p/uses/package.json" >"$T/x" && mv "$T/x" "$T/p/uses/package.json"
	lock uses --json
	[ "$rc" -eq 6 ] || fail "exit $rc, expected 6"
	[ "$(grep -c '^jig: ' "$T/lock.err")" -eq 1 ] && tail -n 1 "$T/lock.err" | grep -q "^jig: flow uses: " || fail "not one error line"
	grep -q "the existing bun.lock is resolved anew" "$T/lock.err" || fail "no Plan on stderr with --json"
	jq -e '.schema == "jig-error/1" and .exit == 6 and (.error | test("^flow uses: resolving its dependencies failed: the registry http://127.0.0.1:[0-9]+/ could not be reached.*check the registry in the operator.s npm.json.*the installer said: .*ConnectionRefused"))' "$T/lock.out" >/dev/null || fail "the error"
	cmp -s "$T/p/uses/bun.lock" "$T/lock.before" || fail "bun.lock changed"
	! ls -a "$T/p/uses" | grep -q '^\.bun\.lock\.jig' || fail "a temporary file was left"
}
case_gc_keeps_admitted_runnable() {
	# Issue 35 must-show 6: after several reviews of a changing project (an
	# edited entry, then another pad version: a new preparation), jig gc
	# frees the superseded packages, prepared trees and records; the
	# admitted Plan still runs offline and the earlier packet still
	# inspects.
	serve
	project "$(greet_spec)"
	review
	[ "$rc" -eq 0 ] || fail "review 1"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt1") || fail "the first Run failed"
	printf '// edited\n' >>"$T/p/uses/main.ts"
	review
	[ "$rc" -eq 0 ] || fail "review 2"
	python3 "$REGISTRY" make "$T/reg" "$T/p/uses" "$(spec '{"jig-fixture-greet": "^1.0.0"}' \
		"$(pkg jig-fixture-greet 1.0.0 "$(jq -cn --arg js "$GREET_JS" '{dependencies: {"jig-fixture-pad": "^1.0.0"}, files: {"index.js": $js}}')")" \
		"$(pkg jig-fixture-pad 1.0.1 "$(jq -cn --arg js "$PAD_JS" '{files: {"index.js": $js}}')")")"
	review
	[ "$rc" -eq 0 ] || fail "review 3"
	stop
	find "$T/p/.jig/store" -type f | sort >"$T/before"
	(cd "$T/p" && "$JIG" gc --dry-run --json) | tee "$T/dry.json"
	find "$T/p/.jig/store" -type f | sort | cmp -s - "$T/before" || fail "--dry-run freed something"
	(cd "$T/p" && "$JIG" gc --json) | tee "$T/gc.json"
	jq -e --slurpfile g "$T/gc.json" '.freed == $g[0].freed' "$T/dry.json" >/dev/null || fail "the dry run said otherwise"
	# The first Run's last-Run entry (.jig/runs/uses.json, jig why's;
	# decision 167) still names review 1's package: only review 2's
	# capture is superseded and unnamed.
	pkg1=$(jq -r .record.package_sha256 "$T/p/.jig/runs/uses.json")
	[ -f "$T/p/.jig/store/packages/$pkg1.json" ] || fail "the package the last Run names was freed"
	jq -e '.freed.packages >= 1 and .freed.records >= 1' "$T/gc.json" >/dev/null || fail "review 2's capture was not freed"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt3") || fail "the admitted Plan does not run after gc"
	[ "$(cat "$T/pkt3/files/out.txt")" = "...hello jig!" ] || fail "out.txt: $(cat "$T/pkt3/files/out.txt")"
	"$JIG" inspect "$T/pkt1" >"$T/inspect.out" || fail "the earlier packet does not inspect after gc"
	# The new Run's entry names the admitted package: now review 1's
	# artifacts are unnamed too, and the two collections together freed
	# the superseded packages (2 captures, a tree and its sources) and
	# records (2 by package, 1 by identity).
	(cd "$T/p" && "$JIG" gc --json) | tee "$T/gc2.json"
	[ ! -f "$T/p/.jig/store/packages/$pkg1.json" ] || fail "review 1's package outlived the last Run that named it"
	jq -e --slurpfile a "$T/gc.json" '(.freed.packages + $a[0].freed.packages) == 4 and (.freed.records + $a[0].freed.records) == 3
		and (.freed.blobs + $a[0].freed.blobs) > 0 and .kept.records == 2' "$T/gc2.json" >/dev/null ||
		fail "not the superseded packages and records over the two collections"
	(cd "$T/p" && "$JIG" run uses --output "$T/pkt4") || fail "the admitted Plan does not run after the second gc"
	"$JIG" inspect "$T/pkt1" >"$T/inspect.out" || fail "the earlier packet does not inspect after the second gc"
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
