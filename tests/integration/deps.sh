#!/bin/sh
# A Flow's npm dependencies at review (issue 16, first part; plain lane):
# package.json's root declarations and bun.lock's sources, integrities and
# closure are checked before anything is fetched, each refusal one line.
# The checks read the captured bytes; a lock that passes them reaches the
# preparation (the installer scope, tested in the supported-host lane:
# tests/flow/deps.sh). Each case_* is one ctest (deps.<case>); jig runs as
# the unprivileged user. No network is used: the operator's registry is a
# closed loopback port.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-deps.XXXXXX)
chmod 755 "$T"
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$T/config/jig"
printf '{"format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$T/config/jig/npm.json"
chown -R "$USER_NAME" "$T/config"
jig() { runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" "$JIG_TEST_PREFIX/bin/jig" "$@"; }
FIX=$JIG_SOURCE/tests/flow/deps
. "$JIG_SOURCE/tests/flow/registry.sh"
# listen: the operator's registry is the suite's loopback registry
# (tests/flow/registry.py, serving nothing), whose log $T/log holds every
# request made to it; quiet: none was.
listen() { registry_serve "$T/config/jig"; }
quiet() { [ ! -s "$T/log" ] || fail "a registry request was made: $(cat "$T/log")"; }
# project [MANIFEST_JQ] [LOCK_JQ]: a private copy of the fixture, its
# package.json and bun.lock (as plain JSON) edited.
project() {
	rm -rf "$T/p"; cp -r "$FIX" "$T/p"
	jq "${1:-.}" "$FIX/uses/package.json" >"$T/p/uses/package.json"
	if [ -n "${2:-}" ]; then
		python3 -c 'import re,sys; sys.stdout.write(re.sub(r",(\s*[}\]])", r"\1", open(sys.argv[1]).read()))' "$FIX/uses/bun.lock" |
			jq "$2" >"$T/p/uses/bun.lock"
	fi
	chown -R "$USER_NAME" "$T/p"
}
# bad PATTERN: review exits 2 with one line matching PATTERN; nothing is
# admitted or prepared.
bad() {
	set +e; (cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$1" "$T/err" || fail "error does not match /$1/"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
	[ -z "$(find "$T/p/.jig/store/prepared" -type f 2>/dev/null)" ] || fail "something was prepared"
}

# reaches_preparation: every check passed; the review went on to prepare
# (refused here for the host or the closed registry), admitting nothing.
reaches_preparation() {
	set +e; (cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "exit $rc"
	grep -q "^jig: flow uses: preparing its dependencies" "$T/err" || fail "not refused at the preparation"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
case_valid_lock_checked() {
	# Bun's own text lock (trailing commas) passes every check and reaches
	# the preparation: on this host the installer scope is refused (no
	# cgroup v2; exit 3), on a supported one the registry is closed.
	project
	reaches_preparation
}
case_node_modules_never_captured() {
	# A developer's own node_modules (links and all) is not part of the
	# package: jig prepares dependencies itself.
	project
	mkdir -p "$T/p/uses/node_modules/.bin" && ln -s /etc/passwd "$T/p/uses/node_modules/.bin/x"
	chown -R "$USER_NAME" "$T/p"
	set +e; (cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"; set -e
	! grep -q "symbolic link" "$T/err" || fail "node_modules was walked: $(cat "$T/err")"
	grep -q "preparing its dependencies" "$T/err" || fail "$(cat "$T/err")"
}
case_registry_config_refused() {
	project
	for reg in 'http://example.com/' 'https://user:pw@registry.example/' 'ftp://x/' 'http://127.0.0.1.evil.example/' 'https://r.example/?q=1'; do
		printf '{"format": "jig-npm/1", "registry": "%s"}\n' "$reg" >"$T/config/jig/npm.json"
		bad "npm.json: registry"
	done
	printf '{"format": "jig-npm/1", "registry": "https://r.example/", "token": "x"}\n' >"$T/config/jig/npm.json"
	bad "npm.json"
	printf '{"format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$T/config/jig/npm.json"
	chmod 666 "$T/config/jig/npm.json"
	bad "npm.json must be yours and not writable by others"
	chmod 644 "$T/config/jig/npm.json"
}
case_config_dir_unreadable() {
	# Issue 44, R-E06 (dependency confusion): npm.json names a private
	# registry; a configuration directory the operator cannot read (EACCES
	# on it or on its parent, ENOTDIR) is never "no configuration", which
	# would mean the public registry: review, resolution and jig lock
	# refuse with one line naming the file and the error, and no registry
	# is asked anything.
	listen
	unreadable() { # unreadable WHAT: each command refused naming npm.json and WHAT
		project
		bad "npm.json: $1: cannot read the operator configuration; fix its permissions or remove it"
		quiet
		rm "$T/p/uses/bun.lock"
		set +e; (cd "$T/p" && jig review --yes --allow-resolution-network) >"$T/out" 2>"$T/err"; rc=$?; set -e
		cat "$T/err"
		[ "$rc" -eq 2 ] && [ "$(tail -n 1 "$T/err")" = "jig: $T/config/jig/npm.json: $1: cannot read the operator configuration; fix its permissions or remove it" ] ||
			fail "resolution: exit $rc"
		! grep -q "registry.npmjs.org\|resolving its dependencies" "$T/err" || fail "went on to another registry"
		set +e; (cd "$T/p" && jig lock) >"$T/out" 2>"$T/err"; rc=$?; set -e
		cat "$T/err"
		[ "$rc" -eq 2 ] && grep -q "npm.json: $1: cannot read" "$T/err" || fail "jig lock: exit $rc"
		[ ! -e "$T/p/uses/bun.lock" ] || fail "jig lock wrote a lock"
		quiet
	}
	chmod 000 "$T/config/jig"
	unreadable "Permission denied"
	chmod 755 "$T/config/jig" && chmod 000 "$T/config"
	unreadable "Permission denied"
	chmod 755 "$T/config"
	mv "$T/config/jig" "$T/config/real" && touch "$T/config/jig" && chown "$USER_NAME" "$T/config/jig"
	unreadable "Not a directory"
	rm "$T/config/jig" && mv "$T/config/real" "$T/config/jig"
	# Readable again: the review goes on to the private registry.
	project
	reaches_preparation
}
case_no_dependencies_no_check() {
	# A package.json without dependencies (type: module, say) needs nothing.
	project '{name: "x", type: "module", scripts: {test: "true", postinstall: "touch /tmp/x"}}'
	rm "$T/p/uses/bun.lock"
	(cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err" || fail "refused: $(cat "$T/err")"
}
case_refuse_root_declarations() {
	for change in '.trustedDependencies = ["left-pad"]@@trustedDependencies: jig never runs package scripts' \
		'.workspaces = ["../other"]@@workspaces: a Flow is one package' \
		'.scripts = {postinstall: "node x.js"}@@scripts.postinstall would run while installing' \
		'.scripts = {preinstall: "x"}@@scripts.preinstall would run' '.scripts = {install: "x"}@@scripts.install would run' \
		'.scripts = {prepare: "x"}@@scripts.prepare would run' \
		'.bundledDependencies = ["left-pad"]@@bundledDependencies'; do
		project "${change%%@@*}"
		bad "flow uses: package.json: ${change#*@@}"
	done
}
case_refuse_sources() {
	# git, GitHub shorthand, file, link, workspace and tarball URLs are
	# refused in the manifest, before the lock is read.
	for spec in "git+https://github.com/a/b.git" "github:a/b" "a/b" "file:../x" "link:../x" "workspace:*" \
		"https://example.invalid/x.tgz" "portal:../x" "npm:left-pad@file:x"; do
		project ".dependencies[\"left-pad\"] = \"$spec\""
		bad "dependencies.left-pad: .* is not a registry version; git, GitHub, file, link, workspace and URL sources are not allowed"
	done
	project '.overrides = {"left-pad": "github:a/b"}'
	bad "overrides.left-pad: only a registry version"
	project '.dependencies["Bad Name"] = "1.0.0"'
	bad "is not an npm package name"
}
case_no_lock() {
	# R-P: without a lock, resolution needs the network: the message
	# names --allow-resolution-network.
	project
	rm "$T/p/uses/bun.lock"
	bad "declares dependencies but there is no bun.lock; resolving them needs jig review --allow-resolution-network"
	ln -s /etc/passwd "$T/p/uses/bun.lock"
	bad "bun.lock: is a symbolic link"
}
case_resolution_warns() {
	# With --allow-resolution-network the warning says what it grants
	# before anything is resolved (here the installer scope is then
	# refused for the host, or the closed registry fails it).
	project
	rm "$T/p/uses/bun.lock"
	set +e; (cd "$T/p" && jig review --yes --allow-resolution-network) >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "exit $rc"
	for w in "dependency-selected\|selected by the dependencies" "private-network and loopback" "not egress filtering" \
		"for this review only" "cannot undo requests already made"; do
		grep -q "$w" "$T/err" || fail "the warning does not say: $w"
	done
	grep -q "^jig: flow uses: resolving its dependencies" "$T/err" || fail "not refused at resolution"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
case_prepare_dir_removed() {
	# Issue 32: the preparation's /tmp/jig-prepare-* directory, made but
	# then not opened (the test build's JIG_FAULT_FAIL, host/util/fault.h),
	# is removed all the same.
	project
	set +e
	(cd "$T/p" && runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" JIG_FAULT_FAIL="prepare open" \
		"$JIG_TEST_PREFIX/bin/jig" review --yes) >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1"
	dir=$(sed -n 's|^jig: \(/tmp/jig-prepare-[A-Za-z0-9]*\): .*|\1|p' "$T/err")
	[ -n "$dir" ] || fail "the error does not name the directory"
	[ ! -e "$dir" ] || fail "$dir was left"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
case_refuse_lock_entries() {
	for change in \
		'.packages["left-pad"][0] = "left-pad@github:a/b#c"@@is not a registry version' \
		'.packages["left-pad"][0] = "left-pad@file:../x"@@is not a registry version' \
		'.packages["left-pad"][0] = "left-pad@https://example.invalid/x.tgz"@@is not a registry version' \
		'.packages["left-pad"] = ["left-pad@link:x", {}]@@not a registry package' \
		'.packages["left-pad"][3] = ""@@needs a sha512 integrity' \
		'.packages["left-pad"][3] = "sha1-IKuDM2bbUWQi/2DDv3akctxt0lQ="@@needs a sha512 integrity' \
		'.packages["left-pad"] |= .[0:3]@@not a registry package' \
		'.packages["left-pad"][1] = "https://registry.example.invalid/"@@only the configured registry' \
		'.packages["is-odd"][2].dependencies["is-number"] = "git://x"@@is-number is not a registry version' \
		'.packages["extra"] = .packages["left-pad"]@@package extra is not reached from package.json' \
		'del(.packages["is-number"])@@does not resolve package is-odd.s dependency is-number; update bun.lock with the pinned Bun: jig lock FLOW' \
		'del(.packages["csv-parse"])@@does not resolve the manifest.s dependency csv-parse; update bun.lock with the pinned Bun: jig lock FLOW' \
		'.workspaces[""].dependencies["left-pad"] = "^1.0.0"@@its dependencies differ from package.json.s; update bun.lock with the pinned Bun: jig lock FLOW' \
		'.workspaces["other"] = {}@@workspaces must hold exactly the root' \
		'.lockfileVersion = 0@@lockfileVersion must be 1 or 2' \
		'.trustedDependencies = ["left-pad"]@@unknown key' \
		'.packages["left-pad"][0] = "left-pad@1.03.0"@@is not a registry version'; do
		project . "${change%%@@*}"
		bad "flow uses: bun.lock.*${change#*@@}"
	done
}
case_lock_at_caps() {
	# A lock over 16 MiB and a package.json over 1 MiB are refused unread.
	project . '.'
	head -c $((16 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >>"$T/p/uses/bun.lock"
	bad "bun.lock: .*16777216"
	project
	head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >>"$T/p/uses/package.json"
	bad "package.json: .*1048576"
	# 4,096 packages at most.
	project . '.packages = ([range(4097)] | map({key: "p\(.)", value: ["p\(.)@1.0.0", "", {}, ("sha512-" + ("A" * 86) + "==")]}) | from_entries)'
	bad "packages must be an object of at most 4096 packages"
}
case_sources_at_cap() {
	# R-E10: what one preparation reads (package.json, bun.lock, patches)
	# is at most 16 MiB together: at the cap it reaches the preparation,
	# one byte over it is refused.
	project '.patchedDependencies = {"left-pad@1.3.0": "p.patch"}' '.patchedDependencies = {"left-pad@1.3.0": "p.patch"}'
	head -c $((1024 * 1024)) /dev/zero | tr '\0' 'x' >"$T/p/uses/p.patch"
	have=$(($(wc -c <"$T/p/uses/package.json") + $(wc -c <"$T/p/uses/bun.lock") + 1024 * 1024))
	head -c $((16 * 1024 * 1024 - have)) /dev/zero | tr '\0' ' ' >>"$T/p/uses/bun.lock"
	chown -R "$USER_NAME" "$T/p"
	reaches_preparation
	printf ' ' >>"$T/p/uses/bun.lock"
	bad "its dependency sources (package.json, bun.lock and the declared patches) are 16777217 bytes, over the 16 MiB"
}
case_patches() {
	# Declared patch files must be regular files inside the package,
	# bounded, and the lock must declare the same patches.
	project '.patchedDependencies = {"left-pad@1.3.0": "../outside.patch"}'
	bad "patchedDependencies.left-pad@1.3.0: the patch must be a file inside the package"
	project '.patchedDependencies = {"left-pad@1.3.0": "patches/left-pad.patch"}'
	bad "patchedDependencies.left-pad@1.3.0: .*cannot open"
	mkdir -p "$T/p/uses/patches" && echo "--- a" >"$T/p/uses/patches/left-pad.patch" && chown -R "$USER_NAME" "$T/p"
	bad "bun.lock: its patchedDependencies differ from package.json's"
	project '.patchedDependencies = {"left-pad@1.3.0": "patches/left-pad.patch"}' '.patchedDependencies = {"left-pad@1.3.0": "patches/left-pad.patch"}'
	mkdir -p "$T/p/uses/patches" && echo "--- a" >"$T/p/uses/patches/left-pad.patch" && chown -R "$USER_NAME" "$T/p"
	reaches_preparation
	head -c $((1024 * 1024 + 1)) /dev/zero >"$T/p/uses/patches/left-pad.patch"
	bad "patchedDependencies.left-pad@1.3.0: .*1048576"
	ln -sf /etc/passwd "$T/p/uses/patches/left-pad.patch"
	bad "patches/left-pad.patch: is a symbolic link"
}

case_lock_keys() {
	# Every key is a node_modules path of npm names, bounded; nested and
	# scoped keys are accepted.
	for change in \
		'.packages["Left-Pad"] = .packages["left-pad"]@@packages.Left-Pad: the key is not a node_modules path' \
		'.packages["@s"] = .packages["left-pad"]@@packages.@s: the key is not' \
		'.packages["is-odd/"] = .packages["is-number"]@@packages.is-odd/: the key is not' \
		'.packages["is-odd//is-number"] = .packages["is-number"]@@packages.is-odd//is-number: the key is not' \
		'.packages["../is-number"] = .packages["is-number"]@@packages.../is-number: the key is not' \
		'.packages[([range(33)] | map("a") | join("/"))] = .packages["is-number"]@@packages.a/a/.*: the key .*at most 32 names and 1024 bytes' \
		'.packages[([range(6)] | map("a" * 200) | join("/"))] = .packages["is-number"]@@packages.aaa.*: the key .*at most 32 names and 1024 bytes'; do
		project . "${change%%@@*}"
		bad "flow uses: bun.lock: ${change#*@@}"
	done
	# 32 names deep is accepted by the key check (then not reached).
	project . '.packages[([range(32)] | map("a") | join("/"))] = .packages["is-number"]'
	bad "package a/a/.*/a is not reached"
	project . '.packages["is-odd/is-number"] = .packages["is-number"] | del(.packages["is-number"])'
	reaches_preparation
	project . '.packages["is-odd"][2].dependencies = {"@t/n": "^6.0.0"} | .packages["is-odd/@t/n"] = (.packages["is-number"] | .[0] = "@t/n@6.0.0") | del(.packages["is-number"])'
	reaches_preparation
}
case_lock_names() {
	# A key installs the package its dependents name, or their npm:
	# alias's target; dependency names are npm names.
	project . '.packages["left-pad"][0] = "right-pad@1.3.0"'
	bad "flow uses: bun.lock: packages.left-pad is right-pad@1.3.0, but the manifest's dependency left-pad (^1.3.0) asks for left-pad"
	project . '.packages["is-number"][0] = "is-even@6.0.0"'
	bad "bun.lock: packages.is-number is is-even@6.0.0, but package is-odd's dependency is-number (^6.0.0) asks for is-number"
	project '.dependencies["left-pad"] = "npm:right-pad@^1.3.0"' '.workspaces[""].dependencies["left-pad"] = "npm:right-pad@^1.3.0"'
	bad "bun.lock: packages.left-pad is left-pad@1.3.0, but the manifest's dependency left-pad (npm:right-pad@^1.3.0) asks for right-pad"
	# An alias to the package the key holds is accepted.
	project '.dependencies = {"csv-parse": "5.5.6", "pad": "npm:left-pad@^1.3.0"}' \
		'.workspaces[""].dependencies = {"csv-parse": "5.5.6", "pad": "npm:left-pad@^1.3.0"} | .packages["pad"] = .packages["left-pad"] | del(.packages["left-pad"])'
	reaches_preparation
	project . '.packages["is-odd"][2].dependencies["Bad Name"] = "1.0.0"'
	bad "bun.lock: packages.is-odd: dependencies: \"Bad Name\" is not an npm package name"
	project . '.packages["is-odd"][2].peerDependencies = "is-number"'
	bad "bun.lock: packages.is-odd: peerDependencies must be an object"
}
case_lock_dependency_caps() {
	# 1,024 dependencies a package, 65,536 in all.
	project . '.packages["is-odd"][2].optionalDependencies = ([range(1023)] | map({key: "o\(.)", value: "1.0.0"}) | from_entries)'
	reaches_preparation
	project . '.packages["is-odd"][2].optionalDependencies = ([range(1024)] | map({key: "o\(.)", value: "1.0.0"}) | from_entries)'
	bad "bun.lock: packages.is-odd: more than 1024 dependencies"
	project . '([range(1024)] | map({key: "o\(.)", value: "1.0.0"}) | from_entries) as $o |
		.packages += ([range(65)] | map({key: "p\(.)", value: ["p\(.)@1.0.0", "", {optionalDependencies: $o}, ("sha512-" + ("A" * 86) + "==")]}) | from_entries)'
	bad "bun.lock: packages.p[0-9]*: the lock's packages declare more than 65536 dependencies in all"
}
case_refuse_tarball_specs() {
	# A tarball path is no registry version, with or without a scheme.
	for spec in left-pad-1.3.0.tgz x.tar x.tar.gz X.TGZ "npm:left-pad@x.tgz"; do
		project ".dependencies[\"left-pad\"] = \"$spec\""
		bad "dependencies.left-pad: .* is not a registry version"
	done
	project '.overrides = {"left-pad": "left-pad-1.3.0.tgz"}'
	bad "package.json: overrides.left-pad: only a registry version"
	project . '.packages["is-odd"][2].dependencies["is-number"] = "is-number-6.0.0.tgz"'
	bad "bun.lock: packages.is-odd: dependencies.is-number is not a registry version"
}
case_lock_overrides() {
	# The lock's overrides follow package.json's rules.
	project . '.overrides = {"left-pad": "1.3.0"}'
	reaches_preparation
	for change in '.overrides = {"left-pad": "github:a/b"}@@overrides.left-pad: only a registry version may override' \
		'.overrides = {"left-pad": "x.tgz"}@@overrides.left-pad: only a registry version may override' \
		'.overrides = {"left-pad": {"is-number": "1.0.0"}}@@overrides.left-pad: only a registry version may override' \
		'.overrides = "github:a/b"@@overrides must be an object'; do
		project . "${change%%@@*}"
		bad "flow uses: bun.lock: ${change#*@@}"
	done
	project '.overrides = "github:a/b"'
	bad "package.json: overrides must be an object"
}
case_lock_outside_range() {
	# R-E02 (issue 31): each locked version satisfies package.json's range
	# (npm's grammar, unit.semver), checked before any registry request;
	# the message names the dependency, the range and the locked version
	# and says how to update the lock.
	listen
	both() { printf '.dependencies["left-pad"] = "%s"@@.workspaces[""].dependencies["left-pad"] = "%s" | .packages["left-pad"][0] = "left-pad@%s"' "$1" "$1" "$2"; }
	for c in "1.3.0 1.2.0" "^1.3.0 2.0.0" "^1.3.0 1.2.9" "~1.3.0 1.4.0" "^1.3.0 1.3.1-beta.1" "1.x 2.0.0" ">=1.3.0 <1.4.0 1.4.0" \
		"1.0.0 - 1.2.0 1.3.0" "<1 || >=2 1.3.0"; do
		range=${c% *} version=${c##* }
		change=$(both "$range" "$version")
		project "${change%%@@*}" "${change#*@@}"
		bad "flow uses: bun.lock locks left-pad at $version, outside package.json's range \"$range\" (dependencies.left-pad); update bun.lock with the pinned Bun: jig lock FLOW"
		quiet
	done
	# Inside the range, prereleases included where the range allows them:
	# the checks pass and the review reaches the preparation.
	for c in "~1.3.0 1.3.9" "^1.3.0-beta.1 1.3.0-beta.2" "1.3.0 - 2 2.9.0" "<1 || >=1.3 1.3.0"; do
		range=${c% *} version=${c##* }
		change=$(both "$range" "$version")
		project "${change%%@@*}" "${change#*@@}"
		reaches_preparation
	done
	# An npm: alias's range is its own.
	project '.dependencies = {"csv-parse": "5.5.6", "pad": "npm:left-pad@^1.4.0"}' \
		'.workspaces[""].dependencies = {"csv-parse": "5.5.6", "pad": "npm:left-pad@^1.4.0"} | .packages["pad"] = .packages["left-pad"] | del(.packages["left-pad"])'
	bad "bun.lock locks pad at 1.3.0, outside package.json's range \"npm:left-pad@^1.4.0\""
	quiet
	# The devDependencies' ranges too.
	project '.devDependencies["is-odd"] = "^3.1.0"' '.workspaces[""].devDependencies["is-odd"] = "^3.1.0"'
	bad "bun.lock locks is-odd at 3.0.1, outside package.json's range \"^3.1.0\" (devDependencies.is-odd)"
	quiet
}
case_unreadable_range_refused() {
	# R-E02 (issue 31): a range jig cannot read is refused, never guessed.
	listen
	for range in latest next "1.2.3.4" ">>1" "~1.2.3 beta" "1.2.3 | 2"; do
		project ".dependencies[\"left-pad\"] = \"$range\"" ".workspaces[\"\"].dependencies[\"left-pad\"] = \"$range\""
		bad "flow uses: package.json: dependencies.left-pad: \"$range\" is not a version range jig can read (a version, ^, ~, 1.x, \*, comparators, a hyphen range or ||); jig never guesses what a tag such as latest means"
		quiet
	done
	project '.dependencies["pad"] = "npm:left-pad@latest"'
	bad "dependencies.pad: \"npm:left-pad@latest\" is not a version range jig can read"
	quiet
}
case_patch_not_in_lock() {
	# R-E08 (issue 31): a patch for a version or a package the lock does
	# not hold would be silently unused: refused before any request.
	listen
	for c in "left-pad@1.2.0@@bun.lock has left-pad at 1.3.0, not 1.2.0, so the patch would be silently unused; patch the locked version (bun patch) or update bun.lock" \
		"right-pad@1.3.0@@bun.lock has no package right-pad, so the patch would be silently unused; remove the patch, or add the dependency and update bun.lock" \
		"left-pad@@not name@version"; do
		key=${c%%@@*}
		project ".patchedDependencies = {\"$key\": \"p.patch\"}" ".patchedDependencies = {\"$key\": \"p.patch\"}"
		echo "--- a" >"$T/p/uses/p.patch" && chown "$USER_NAME" "$T/p/uses/p.patch"
		bad "flow uses: package.json: patchedDependencies.$key: ${c#*@@}"
		quiet
	done
}
case_lock_comments_refused() {
	# bun.lock with a comment: the message says comments are not allowed
	# and why, not only that the JSON is invalid.
	project . '.'
	sed -i '3i\  // pinned by hand' "$T/p/uses/bun.lock"
	bad "flow uses: bun.lock: line 3: a comment; comments are not allowed: jig reads bun.lock exactly as the pinned Bun writes it (JSON with trailing commas, no comments)"
	project . '.'
	sed -i '3i\  /* pinned */' "$T/p/uses/bun.lock"
	bad "bun.lock: line 3: a comment; comments are not allowed"
	# Slashes inside strings are no comment.
	project '.description = "a // b"' '.'
	reaches_preparation
}
case_registry_tarball_urls() {
	# Issue 31: the configured registry's own tarball URLs (what Bun writes
	# for a registry other than npm's) are accepted; any other scheme,
	# host, port or path is refused before any request, naming the
	# configured registry.
	listen
	url() { printf 'http://127.0.0.1:%s/%s' "$PORT" "$1"; }
	project . ".packages[\"left-pad\"][1] = \"$(url left-pad/-/left-pad-1.3.0.tgz)\" | .packages[\"is-odd\"][1] = \"$(url is-odd/-/is-odd-3.0.1.tgz)\""
	reaches_preparation
	quiet
	# A scoped package: @s/n/-/n-VERSION.tgz.
	project . ".packages[\"is-odd\"][2].dependencies = {\"@t/n\": \"^6.0.0\"} | .packages[\"@t/n\"] = (.packages[\"is-number\"] | .[0] = \"@t/n@6.0.0\" | .[1] = \"$(url @t/n/-/n-6.0.0.tgz)\") | del(.packages[\"is-number\"])"
	reaches_preparation
	quiet
	other=$((PORT == 65535 ? PORT - 1 : PORT + 1))
	for u in "http://127.0.0.1:$other/left-pad/-/left-pad-1.3.0.tgz" "https://127.0.0.1:$PORT/left-pad/-/left-pad-1.3.0.tgz" \
		"http://localhost:$PORT/left-pad/-/left-pad-1.3.0.tgz" "$(url left-pad/-/left-pad-1.2.0.tgz)" "$(url right-pad/-/left-pad-1.3.0.tgz)" \
		"$(url left-pad/-/left-pad-1.3.0.tgz?x=1)" "$(url x/../left-pad/-/left-pad-1.3.0.tgz)" "$(url left-pad/-/left-pad-1.3.0.tar.gz)" \
		"ftp://127.0.0.1:$PORT/left-pad/-/left-pad-1.3.0.tgz" "left-pad/-/left-pad-1.3.0.tgz" "HTTP://127.0.0.1:$PORT/left-pad/-/left-pad-1.3.0.tgz"; do
		project . ".packages[\"left-pad\"][1] = \"$u\""
		bad "flow uses: bun.lock: packages.left-pad: its tarball \"$u\" is not the configured registry's (http://127.0.0.1:$PORT/); only the configured registry is allowed, at exactly $(url left-pad/-/left-pad-1.3.0.tgz)"
		quiet
	done
	project . '.packages["left-pad"][1] = "http://127.0.0.1/a b.tgz"'
	bad "bun.lock: packages.left-pad: from \"http://127.0.0.1/a b.tgz\", not a URL; only the configured registry is allowed"
	quiet
}
case_r_c14_lock_credentials_refused() {
	# R-C14 (audit #51-55, the lock part): a credential in a lock or a
	# manifest (a URL with a user name or password, an npm credential
	# setting) is refused at review with one line that names the line and
	# never prints the credential; nothing is fetched.
	listen
	secret=SECRET-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	for change in ".packages[\"left-pad\"][1] = \"https://u:$secret@registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\"" \
		".packages[\"left-pad\"][1] = \"http://$secret@127.0.0.1:$PORT/left-pad/-/left-pad-1.3.0.tgz\"" \
		".packages[\"left-pad\"][2]._authToken = \"$secret\"" \
		".packages[\"left-pad\"][2][\"//registry.npmjs.org/:_password\"] = \"$secret\"" \
		".packages[\"left-pad\"][0] = \"left-pad@git+https://u:$secret@github.com/x/left-pad.git\""; do
		project . "$change"
		bad "flow uses: bun.lock: line [0-9]*: a URL with a user name or password\\|flow uses: bun.lock: line [0-9]*: an npm credential setting"
		grep -q "a credential never belongs in a lock or manifest.*nothing captured" "$T/err" || fail "the refusal does not say why"
		! grep -q "$secret" "$T/err" "$T/out" || fail "the refusal printed the credential"
		! grep -rqa "$secret" "$T/p/.jig" || fail "the store holds the credential"
		quiet
	done
	# In the manifest too (a git dependency with a token).
	project ".dependencies[\"left-pad\"] = \"git+https://x-access-token:$secret@github.com/x/left-pad.git\"" '.'
	bad "flow uses: package.json: line [0-9]*: a URL with a user name or password"
	! grep -q "$secret" "$T/err" "$T/out" || fail "the refusal printed the credential"
	! grep -rqa "$secret" "$T/p/.jig" || fail "the store holds the credential"
	quiet
	# Not a credential: an @ after the host (a scoped package's path), a
	# name that merely contains "auth".
	project . ".packages[\"left-pad\"][2].bin = {\"authtoken-cli\": \"x@y\"}"
	reaches_preparation
}
case_platform_metadata() {
	# A lock's os, cpu and libc are strings or arrays of strings; a lock
	# whose packages are all for other platforms still passes the checks.
	project . '.packages["left-pad"][2].os = {"linux": true}'
	bad "bun.lock: packages.left-pad: os, cpu and libc must each be a string or an array of at most 32 strings"
	project . '.packages["left-pad"][2].cpu = [range(33) | "x64"]'
	bad "bun.lock: packages.left-pad: os, cpu and libc must each"
	project . '.packages["left-pad"][2].os = "darwin" | .packages["is-odd"][2].cpu = ["!x64", "!arm64"]'
	reaches_preparation
}

"case_$1"
echo "PASS: $1"
