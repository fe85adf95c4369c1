#!/bin/sh
# What the README's set-up leaves for a new shell (issue 46, must-show 4;
# decisions 270, 271), plain lane, as root (CI runs .ci/run as root): jig
# on PATH, man jig and bash completion for the user jigtest in a new login
# shell; the hand-written man page against `jig help`. Each case_* is one
# ctest (install.<case>).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
if [ "${1#_namespace}" != "$1" ]; then
	T=${JIG_INSTALL_T:?}
else
	T=$(mktemp -d /var/tmp/jig-install.XXXXXX)
	chmod 755 "$T"
	trap 'rm -rf "$T"' EXIT
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
JIG=$JIG_TEST_PREFIX/bin/jig

# What a new login shell of jigtest's finds (env -i: nothing inherited; -i:
# interactive, as a terminal's shell is, so /etc/profile.d/bash_completion.sh
# loads bash-completion). It prints: where jig is and its version, man
# jig's page, the completion bash has for jig on a first Tab (loaded then
# by its default loader, complete -D, if none is defined yet) and what it
# offers for "jig re".
LOGIN_CHECK='
	echo "path: $(command -v jig)"
	echo "version: $(jig --version | head -1)"
	MANWIDTH=100 man -P cat jig 2>&1 | col -bx | sed "s/^/man: /"
	loader=$(complete -p -D 2>/dev/null | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
	echo "loader: $loader"
	complete -p jig >/dev/null 2>&1 || { [ -n "$loader" ] && "$loader" jig; }
	echo "complete: $(complete -p jig 2>&1)"
	COMP_WORDS=(jig re); COMP_CWORD=1; COMP_LINE="jig re"; COMP_POINT=6
	fn=$(complete -p jig 2>/dev/null | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
	[ -n "$fn" ] && "$fn" jig re jig
	echo "offers: ${COMPREPLY[*]}"'

# login_shell [HOME]: the checks above in a new login shell of jigtest's
# (with HOME, that home instead of its own), output in $T/login.
login_shell() {
	runuser -u "$USER_NAME" -- env -i ${1:+HOME="$1"} TERM=dumb bash --login -i -c "$LOGIN_CHECK" >"$T/login" 2>"$T/login.err" </dev/null || true
	cat "$T/login"
}
# found PATH: the login shell found jig at PATH, its page and completion.
found() {
	grep -qx "path: $1" "$T/login" || fail "jig is not on the new shell's PATH as $1: $(grep '^path:' "$T/login"; cat "$T/login.err")"
	grep -q "^version: jig " "$T/login" || fail "jig on PATH did not run: $(grep '^version:' "$T/login")"
	grep -qx "man: SYNOPSIS" "$T/login" && grep -q "^man: *jig review \[--yes\]" "$T/login" ||
		fail "man jig shows no SYNOPSIS: $(grep '^man:' "$T/login" | head -5)"
	grep -q "^complete: complete -F _jig jig$" "$T/login" || fail "no completion for jig: $(grep '^complete:' "$T/login")"
	grep -qx "offers: review" "$T/login" || fail "jig re<Tab> does not complete to review: $(grep '^offers:' "$T/login")"
}

case_login_shell() {
	# In a private mount namespace whose /usr/local is empty (this host's
	# stays as it is): scripts/link.sh, as scripts/setup.sh runs it, links
	# the test prefix there; a new login shell then finds jig, man jig and
	# its completion. Without the links it finds none of them.
	grep -q '^scripts/link.sh "\$PREFIX"$' "$JIG_SOURCE/scripts/setup.sh" || fail "scripts/setup.sh does not run scripts/link.sh \"\$PREFIX\""
	[ -r /usr/share/bash-completion/bash_completion ] || fail "bash-completion is not installed (scripts/deps.sh installs it)"
	JIG_INSTALL_T=$T unshare -m sh "$0" _namespace
	cat "$T/links"
	cat "$T/login"
	found /usr/local/bin/jig
	[ "$(wc -l <"$T/links")" -eq 4 ] || fail "not the four links: $(cat "$T/links")"
	grep -q "^path: $" "$T/before" && ! grep -q "^man: SYNOPSIS" "$T/before" && grep -qx "offers: " "$T/before" ||
		fail "without the links the shell already found jig: $(cat "$T/before")"
}
# Inside the private mount namespace: /usr/local an empty tmpfs, a login
# shell without the links, scripts/link.sh (twice: the same links), a login
# shell with them.
_namespace() {
	mount --make-rprivate /
	mount -t tmpfs -o mode=755 tmpfs /usr/local
	login_shell >/dev/null
	cp "$T/login" "$T/before"
	sh "$JIG_SOURCE/scripts/link.sh" "$JIG_TEST_PREFIX" >/dev/null
	sh "$JIG_SOURCE/scripts/link.sh" "$JIG_TEST_PREFIX" >/dev/null
	login_shell >/dev/null
	find /usr/local -type l -printf "%p -> %l\n" | sort >"$T/links"
}
case_readme_prefix_line() {
	# The README's line for a jig installed by hand elsewhere, without the
	# links, in a home's .bashrc (which Debian's .profile reads), with an
	# empty /usr/local as above: the new login shell finds jig, its page and
	# completion; without the line, none of them.
	line=$(sed -n 's/^    \(PATH=.*bash-completion.*\)$/\1/p' "$JIG_SOURCE/README.md")
	[ -n "$line" ] || fail "the README has no line for another PREFIX"
	echo "README: $line"
	mkdir "$T/home"
	cp /etc/skel/.profile /etc/skel/.bashrc "$T/home/"
	chown -R "$USER_NAME" "$T/home"
	JIG_INSTALL_T=$T unshare -m sh "$0" _namespace_empty
	cp "$T/login" "$T/before"
	printf '%s\n' "$line" | sed "s|\$HOME/jig|$JIG_TEST_PREFIX|g" >>"$T/home/.bashrc"
	tail -1 "$T/home/.bashrc"
	JIG_INSTALL_T=$T unshare -m sh "$0" _namespace_empty
	cat "$T/login"
	found "$JIG_TEST_PREFIX/bin/jig"
	grep -q "^path: $" "$T/before" || fail "without the line the shell already found jig: $(cat "$T/before")"
}
# A login shell with $T/home as its home and an empty /usr/local.
_namespace_empty() {
	mount --make-rprivate /
	mount -t tmpfs -o mode=755 tmpfs /usr/local
	login_shell "$T/home" >/dev/null
}

case_man_synopsis() {
	# The hand-written page renders without a warning, has the sections a
	# man page has, a synopsis line for every command of `jig help`, every
	# exit status it lists and every flag it names.
	page=$JIG_TEST_PREFIX/share/man/man1/jig.1.gz
	[ -f "$page" ] || fail "no $page"
	MANWIDTH=80 man --warnings -l "$page" 2>"$T/warn" | col -bx >"$T/man.txt"
	[ ! -s "$T/warn" ] || fail "man warns: $(cat "$T/warn")"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
		grep -qx "$s" "$T/man.txt" || fail "no section $s"
	done
	sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$T/man.txt" | grep '^       jig ' | sed 's/^ *//' >"$T/synopsis"
	cat "$T/synopsis"
	# jig help's commands: "  NAME [SUB] ..." lines of its commands block,
	# before the description's column (a two-word command's second word is
	# lower case, not an argument).
	"$JIG" help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ {
		l = substr($0, 3); sub(/  .*/, "", l); n = split(l, w, " ")
		c = w[1]; if (n > 1 && w[2] ~ /^[a-z]+$/) c = c " " w[2]; print c }' >"$T/commands"
	[ "$(wc -l <"$T/commands")" -ge 15 ] || fail "too few commands read from jig help: $(cat "$T/commands")"
	while read -r c; do
		grep -q "^jig $c\( \|$\)" "$T/synopsis" || fail "the SYNOPSIS lacks jig $c"
	done <"$T/commands"
	grep -q "^jig --version$" "$T/synopsis" && grep -q "^jig session --evidence" "$T/synopsis" || fail "the SYNOPSIS lacks --version or session --evidence"
	sed -n '/^EXIT STATUS$/,/^ENVIRONMENT$/p' "$T/man.txt" >"$T/exit"
	"$JIG" help | sed -n '/^exit status:/,/^$/p' | awk '/^  [0-9]/ { print $1 }' | while read -r n; do
		grep -Eq "^ +$n( |$)" "$T/exit" || fail "EXIT STATUS lacks $n"
	done
	"$JIG" help | grep -o -- '--[a-z][a-z-]*' | sort -u | while read -r f; do
		grep -q -- "$f" "$T/man.txt" || fail "the man page does not name $f"
	done
	grep -q '^ *\$ jig run hello --input text=hello/sample.txt --output hello-out$' "$T/man.txt" || fail "no example"
	grep -q '^ *JIG_VERIFICATION$' "$T/man.txt" && grep -q '^ *XDG_CONFIG_HOME$' "$T/man.txt" || fail "ENVIRONMENT"
}

case $1 in
_namespace|_namespace_empty) "$1"; exit 0 ;;
esac
"case_$1"
echo "PASS: $1"
