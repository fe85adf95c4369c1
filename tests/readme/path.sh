#!/bin/sh
# The README's two-minute path (issue 35, must-show 10), supported-host
# lane, as the unprivileged user: the commands between the README's
# "<!-- readme-path: begin -->" and "<!-- readme-path: end -->" markers
# ("$ " lines of that block), run as written, one after another, in an
# empty directory with the installed jig first on PATH. Each must exit 0;
# every line the README shows as its output that holds no digit (digests,
# ports, sizes and times differ from Run to Run) and is not "…" must be a
# line of what it printed. A command with `--display web` is the last: it
# runs until its link is printed, the view answers on loopback, and
# SIGINT (the README's Ctrl-C) ends it with exit 0.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
if [ "${ROOT_MODE:-}" = 1 ]; then exit 0; fi
T=$(mktemp -d /tmp/jig-readme.XXXXXX)
BG=""
trap '[ -z "$BG" ] || kill -KILL "$BG" 2>/dev/null || true; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The block: "C <command>" and "O <output line>" lines, in order.
awk '/<!-- readme-path: begin -->/ {on=1; next} /<!-- readme-path: end -->/ {on=0}
	on && /^```/ {next}
	on && /^\$ / {sub(/^\$ /, ""); print "C " $0; next}
	on {print "O " $0}' "$JIG_SOURCE/README.md" >"$T/block"
grep -q '^C ' "$T/block" || fail "no readme-path block with commands in README.md"
grep -q '^C jig init' "$T/block" || fail "the README's path does not start a project with jig init"

case_two_minute_path() {
	mkdir "$T/w"
	PATH="$JIG_TEST_PREFIX/bin:$PATH"
	export PATH
	dir="$T/w"
	n=0
	cmd=""
	# Commands are run one at a time from the directory the previous one
	# left (a "cd" changes it for the rest of the path).
	while IFS= read -r line; do
		kind=${line%% *}
		text=${line#? }
		if [ "$kind" = C ]; then
			[ -z "$cmd" ] || check_output "$cmd" "$n"
			n=$((n + 1))
			cmd=$text
			: >"$T/want.$n"
			t0=$(date +%s%N)
			case "$cmd" in
			cd\ *) dir=$(cd "$dir" && eval "$cmd" && pwd) || fail "$cmd"; : >"$T/out.$n" ;;
			*--display\ web*) web "$cmd" "$dir" "$n" ;;
			*)
				(cd "$dir" && eval "$cmd") >"$T/out.$n" 2>&1 || { cat "$T/out.$n"; fail "\"$cmd\" exited $?"; }
				;;
			esac
			echo "\$ $cmd    [$((($(date +%s%N) - t0) / 1000000)) ms]"
			sed 's/^/  /' "$T/out.$n"
		else
			printf '%s\n' "$text" >>"$T/want.$n"
		fi
	done <"$T/block"
	check_output "$cmd" "$n"
	echo "ran $n commands of the README's path"
}

# check_output CMD N: the README's digit-free output lines of command N are
# lines of what it printed.
check_output() {
	while IFS= read -r w; do
		case "$w" in "" | "…" | *[0-9]*) continue ;; esac
		grep -qxF -- "$w" "$T/out.$2" || fail "\"$1\" did not print the README's line: $w"
	done <"$T/want.$2"
}

# web CMD DIR N: runs the --display web command until its link, reads the
# page over loopback, ends it with SIGINT.
web() {
	(cd "$2" && eval "exec $1") >"$T/out.$3" 2>&1 </dev/null &
	BG=$!
	i=0
	until grep -q '^display: http' "$T/out.$3"; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "no display link printed"
		kill -0 "$BG" 2>/dev/null || { cat "$T/out.$3"; fail "\"$1\" ended before its link"; }
		sleep 0.05
	done
	link=$(sed -n 's/^display: \(http[^ ]*\).*/\1/p' "$T/out.$3")
	base=${link%%#*}
	curl -sf --max-time 20 "$base" >"$T/page.html" && grep -qi '<html' "$T/page.html" || fail "the view at $base did not answer"
	kill -INT "$BG"
	set +e
	wait "$BG"
	rc=$?
	set -e
	BG=""
	[ $rc -eq 0 ] || { cat "$T/out.$3"; fail "\"$1\" exited $rc after SIGINT"; }
	grep -q '^display: closed' "$T/out.$3" || fail "no 'display: closed' line"
}

"case_$1"
echo "PASS: $1"
