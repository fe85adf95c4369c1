# Sourced by ssh_refusals.sh and https_refusals.sh: jig session as
# $USER_NAME with the test's $T/home bound over its password-database home
# $H, in $T/repo (XDG_RUNTIME_DIR $RT).
# j ARGS...: jig session ARGS; $rc, $T/out, $T/err (printed).
j() {
	set +e
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$T/home" "$H" \
		runuser -u "$USER_NAME" -- env -C "$T/repo" HOME="$H" XDG_RUNTIME_DIR="$RT" TERM=xterm \
		"$JIG_TEST_PREFIX/bin/jig" session "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	return 0
}
# refused PATTERN: a dry run refused with exactly one line matching PATTERN.
refused() {
	j --dry-run
	[ "$rc" -ge 2 ] && [ "$rc" -le 4 ] || fail "exit $rc, expected a refusal /$1/"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
	grep -Eq -- "$1" "$T/err" || fail "error does not match /$1/"
	[ ! -s "$T/out" ] || fail "something was printed on stdout"
}
