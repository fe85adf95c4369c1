#!/bin/sh
# The Debian package and the README's set-up command (issue 35), plain
# lane; each case_* is one ctest (package.<case>). Requirements: R-C01
# (docs/requirements.md), issue 35's must-show items 8 and 10.
set -eu
: "${JIG_SOURCE:?}" "${JIG_BUILD:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }

# `cpack -G DEB` makes the package from this build; lintian finds no error
# in it; it installs into an empty root with dpkg (no package there, so
# --force-depends: its dependencies are checked against this host instead,
# each a Debian package installed here); the installed jig, run as an
# unprivileged user, finds its snapshot under <root>/usr/lib/jig,
# `jig modules verify` exits 0 and `jig init` writes a project; a changed module byte in the installed root
# is refused (exit 4); dpkg removes every file it installed.
case_deb() {
	command -v lintian >/dev/null || fail "lintian is not installed (scripts/deps.sh installs it)"
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	chmod 755 "$t"
	(cd "$JIG_BUILD" && cpack -G DEB -B "$t/out" >"$t/cpack.log" 2>&1) || { cat "$t/cpack.log"; fail "cpack -G DEB failed"; }
	deb=$(ls "$t"/out/jig_*.deb)
	[ -f "$deb" ] || fail "no jig_*.deb made"
	echo "made $(basename "$deb"): $(du -h "$deb" | cut -f1)"
	dpkg-deb --field "$deb" Package Version Architecture Depends Recommends Maintainer

	dpkg-deb --contents "$deb" | awk '{print $6}' >"$t/files"
	for f in ./usr/bin/jig ./usr/bin/jig-snapshot ./usr/libexec/jig-evidence ./usr/include/jig/module.h \
		./usr/share/jig/sdk/jig-module.map ./usr/lib/jig/current ./usr/lib/jig/state.json \
		./usr/share/doc/jig/copyright ./usr/share/doc/jig/changelog.gz \
		./usr/share/man/man1/jig.1.gz ./usr/share/bash-completion/completions/jig ./usr/share/zsh/site-functions/_jig; do
		grep -qx "$f" "$t/files" || fail "$f is not in the package"
	done
	grep -q '^\./usr/lib/jig/snapshots/s[0-9]*/manifest\.sig$' "$t/files" || fail "no signed snapshot in the package"
	grep -q '^\./usr/lib/jig/snapshots/s[0-9]*/libexec/bun$' "$t/files" || fail "the pinned Bun is not in the snapshot"
	if grep -q '\.stage\|\.staging-\|^\./usr/local\|^\./opt' "$t/files"; then
		fail "staging or non-/usr paths in the package: $(grep '\.stage\|\.staging-\|^\./usr/local\|^\./opt' "$t/files" | head -3)"
	fi

	# R-C01, no installed privileged helper: no setuid or setgid file, and
	# no maintainer script that could add one or a file capability.
	suid=$(dpkg-deb --contents "$deb" | awk '$1 ~ /^-..[sS]|^-.....[sS]/ {print $6}')
	[ -z "$suid" ] || fail "setuid/setgid files in the package: $suid"
	ctrl=$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | sed 's|^\./||' | grep -v '^$' | sort | tr '\n' ' ')
	[ "$ctrl" = "control md5sums " ] || fail "the package's control files are not just control and md5sums: $ctrl"

	deps=$(dpkg-deb --field "$deb" Depends)
	for want in bubblewrap libc6; do
		echo "$deps" | grep -q "\\b$want\\b" || fail "Depends does not name $want: $deps"
	done
	# Every declared dependency is a Debian package (installed on this host,
	# which built and runs jig).
	echo "$deps" | tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g' | while read -r p; do
		[ -n "$p" ] || continue
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			fail "dependency $p is not an installed Debian package here"
	done

	lintian --fail-on error --tag-display-limit 0 "$deb" >"$t/lintian" 2>&1 || {
		cat "$t/lintian"
		fail "lintian reports errors"
	}
	echo "lintian: $(grep -c '^E:' "$t/lintian" || true) errors, $(grep -c '^W:' "$t/lintian" || true) warnings"
	sed 's/^/  /' "$t/lintian"

	R="$t/root"
	mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
	: >"$R/var/lib/dpkg/status"
	chmod 755 "$R"
	dpkg --root="$R" --log=/dev/null --force-depends --force-script-chrootless -i "$deb" >"$t/dpkg.log" 2>&1 || {
		cat "$t/dpkg.log"
		fail "dpkg -i into an empty root failed"
	}
	[ -x "$R/usr/bin/jig" ] || fail "no $R/usr/bin/jig after dpkg -i"
	# Issue 46: the package's man page is the hand-written one (its
	# synopsis names each command), and its completion is jig's.
	MANWIDTH=100 man -l "$R/usr/share/man/man1/jig.1.gz" 2>/dev/null | col -bx | grep -q '^ *jig review \[--yes\]' ||
		fail "the package's man page has no synopsis of jig review"
	grep -q '^complete -F _jig jig$' "$R/usr/share/bash-completion/completions/jig" || fail "the package's bash completion is not jig's"
	runuser -u jigtest -- "$R/usr/bin/jig" modules verify || fail "the installed package's jig modules verify exited $?"
	runuser -u jigtest -- "$R/usr/bin/jig" modules list --json >"$t/list.json"
	grep -q "\"$R/usr/lib/jig" "$t/list.json" || grep -q "$R/usr/lib/jig" "$t/list.json" ||
		fail "jig did not use the installation it was installed with: $(head -c 400 "$t/list.json")"

	# The package is usable as installed: jig init writes a project from the
	# templates in the package's snapshot.
	mkdir "$t/proj"
	chown jigtest "$t/proj"
	runuser -u jigtest -- "$R/usr/bin/jig" init "$t/proj" >/dev/null || fail "the installed jig init exited $?"
	[ -f "$t/proj/jig.json" ] && [ -f "$t/proj/hello/main.ts" ] && [ -f "$t/proj/jig.d.ts" ] ||
		fail "the installed jig init wrote no project"

	# The package's snapshot is really checked: one changed byte in an
	# installed module is refused.
	so=$(ls "$R"/usr/lib/jig/snapshots/s*/modules/http.so 2>/dev/null || ls "$R"/usr/lib/jig/snapshots/s*/modules/*.so | head -1)
	cp "$so" "$t/saved.so"
	printf 'X' | dd of="$so" bs=1 seek=100 conv=notrunc status=none
	set +e
	runuser -u jigtest -- "$R/usr/bin/jig" modules verify --verification strict 2>"$t/err" >/dev/null
	rc=$?
	set -e
	cat "$t/err"
	[ $rc -eq 4 ] || fail "a changed module byte: exit $rc, want 4"
	cp "$t/saved.so" "$so"

	dpkg --root="$R" --log=/dev/null --force-script-chrootless --purge jig >"$t/dpkg.log" 2>&1 || {
		cat "$t/dpkg.log"
		fail "dpkg --purge failed"
	}
	left=$(find "$R/usr" -mindepth 1 ! -type d 2>/dev/null | head -5)
	[ -z "$left" ] || fail "dpkg --purge left files behind: $left"
}

# The README's first command runs as root on a machine without sudo: it is
# scripts/setup.sh itself (no sudo in front), and no script it runs calls
# sudo; deps.sh, run as root with a PATH that has no sudo, succeeds.
case_readme_first_command() {
	# The first command anywhere in the README: an indented code line or a
	# "$ " line of a fenced block.
	first=$(awk '/^    [^ -]/ {sub(/^    /, ""); print; exit} /^\$ / {sub(/^\$ /, ""); print; exit}' "$JIG_SOURCE/README.md")
	echo "README's first command: $first"
	[ -n "$first" ] || fail "no command in the README's set-up section"
	case "$first" in
	sudo\ * | *\ sudo\ *) fail "the README's first command uses sudo: $first" ;;
	esac
	[ "$first" = "scripts/setup.sh" ] || fail "the first command is not scripts/setup.sh: $first"
	grep -q '^As root' "$JIG_SOURCE/README.md" || fail "the README does not say the first command runs as root"
	for s in setup.sh deps.sh bun.sh test.sh; do
		if sed 's/#.*//' "$JIG_SOURCE/scripts/$s" | grep -v 'echo ' | grep -qw sudo; then
			fail "scripts/$s calls sudo"
		fi
	done
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	for c in sh dpkg-query grep id npm; do
		if command -v "$c" >/dev/null; then ln -s "$(command -v "$c")" "$t/$c"; fi
	done
	# Nothing is installed from here: a missing package is this host's
	# problem, named, not something the test fixes.
	printf '#!/bin/sh\necho "apt-get $*: not run by this test" >&2\nexit 1\n' >"$t/apt-get"
	chmod +x "$t/apt-get"
	[ ! -e "$t/sudo" ] || fail "sudo in the test PATH"
	(cd "$JIG_SOURCE" && PATH="$t" sh scripts/deps.sh) || fail "scripts/deps.sh as root without sudo exited $?"
}

"case_$1"
echo "PASS: $1"
