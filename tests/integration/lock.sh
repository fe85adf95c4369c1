#!/bin/sh
# jig lock's refusals before any scope (plain lane, issue 35): an unknown
# Flow (the message lists the project's Flows), a Flow without
# dependencies, a bad argument; the project's files are untouched. The
# lock itself, a registry that cannot be reached and the review that
# prepares from the lock are the VM lane's (tests/flow/lock.sh).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-lock.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
# refused CODE PATTERN ARGS...: jig lock ARGS exits CODE with one line
# matching PATTERN, and no file of the project changed.
refused() {
	code=$1 pat=$2; shift 2
	(cd "$T/p" && find . -path ./.jig -prune -o -type f -print | sort | xargs sha256sum) >"$T/before"
	set +e
	(cd "$T/p" && runuser -u "$USER_NAME" -- env ${CONFIG:+XDG_CONFIG_HOME="$CONFIG"} "$JIG_TEST_PREFIX/bin/jig" lock "$@") >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq "$code" ] || fail "exit $rc, expected $code"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$pat" "$T/err" || fail "error does not match /$pat/"
	(cd "$T/p" && find . -path ./.jig -prune -o -type f -print | sort | xargs sha256sum) | cmp -s - "$T/before" ||
		fail "a project file changed"
}

case_unknown_flow_lists_known() {
	fresh
	refused 2 'project \. has no Flow "nosuch"; its Flows: csv-report, notes-index, service-check' nosuch
	refused 2 'has no Flow "nosuch"' nosuch --json
	jq -e '.schema == "jig-error/1" and .exit == 2 and (.error | test("its Flows: csv-report, notes-index, service-check"))' "$T/out" >/dev/null ||
		fail "--json: $(cat "$T/out")"
}
case_no_dependencies() {
	fresh
	refused 2 "flow csv-report: csv-report/package.json: no such file; a bun.lock is made from it" csv-report
	printf '{"name": "x", "dependencies": {}}\n' >"$T/p/csv-report/package.json"
	chown "$USER_NAME" "$T/p/csv-report/package.json"
	refused 2 "flow csv-report: csv-report/package.json declares no dependencies; there is nothing to lock" csv-report
	refused 2 "no Flow declares npm dependencies (a package.json with dependencies); nothing to lock"
}
case_bad_arguments() {
	fresh
	refused 2 "lock: unknown argument \"--bogus\"; usage: jig lock \[FLOW\]" --bogus
	refused 2 'lock: unknown argument "b"' a b
}
case_refused_source_before_network() {
	# A manifest review would refuse (a git dependency) is refused by lock
	# too, with review's words, before any scope or request.
	fresh
	printf '{"name": "x", "dependencies": {"a": "github:a/b"}}\n' >"$T/p/csv-report/package.json"
	chown "$USER_NAME" "$T/p/csv-report/package.json"
	refused 2 "flow csv-report: package.json: dependencies.a" csv-report
}

case_unsupported_host_refused_before_plan() {
	# Issue 46: on a host that cannot contain the installer scope (this
	# lane's: no cgroup v2), jig lock refuses with exit 3 naming the
	# problem and jig host check, before it prints any Plan; nothing is
	# written. (On a supported host the Plan comes first: prepare.lock_*.)
	rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/deps" "$T/p"
	CONFIG="$T/config"; mkdir -p "$CONFIG/jig"
	printf '{"format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$CONFIG/jig/npm.json"
	chmod 700 "$CONFIG/jig"; chmod 600 "$CONFIG/jig/npm.json"; chown -R "$USER_NAME" "$T/p" "$CONFIG"
	refused 3 "^jig: this host cannot contain the installer scope jig lock runs the pinned Bun in (.*); jig host check says what is missing; nothing was resolved or written$" uses
	[ ! -s "$T/out" ] || fail "something was printed before the refusal: $(head -3 "$T/out")"
	CONFIG=""
}

"case_$1"
echo "PASS: $1"
