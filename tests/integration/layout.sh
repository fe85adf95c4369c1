#!/bin/sh
# The shape of the house (issue 13, docs/architecture.md): checked on the
# sources, plain lane. Each case_* is one ctest (layout.<case>).
set -eu
: "${JIG_SOURCE:?}"
cd "$JIG_SOURCE"
fail() { echo "FAIL: $*" >&2; exit 1; }

# A struct jig_scope is assembled only in host/policy/ (jig_scope_describe).
case_scope_assembled_only_in_policy() {
	found=$(grep -rnE '(struct jig_scope|\(struct jig_scope\)) *[a-z_]* *=? *\{|\(struct jig_scope\)\{|\.binds *= *[a-z]' host \
		--include='*.c' | grep -v '^host/policy/' || true)
	[ -z "$found" ] || fail "a struct jig_scope is assembled outside host/policy/: $found"
	grep -q '^int jig_scope_describe' host/policy/scope_runtime.c || fail "no jig_scope_describe"
}
# No file outside the sandbox door names a backend.
case_backend_named_only_by_the_door() {
	found=$(grep -rnE 'sandbox-(linux|darwin)' host --include='*.c' --include='*.h' | grep -v '^host/sandbox/' || true)
	[ -z "$found" ] || fail "a backend is named outside host/sandbox/: $found"
}
# CLI files stay thin.
case_cli_files_small() {
	for f in host/cli/*.c; do
		n=$(wc -l <"$f")
		[ "$n" -le 200 ] || fail "$f has $n lines (at most 200)"
	done
}
# No function in host/ over 120 lines without a /* long: why */ comment.
case_functions_small() {
	bad=$(for f in $(find host -name '*.c'); do
		awk -v F="$f" '
			/^[a-z_].*\(/ && !/;$/ { sig = $0; line = NR; long = (prev ~ /long:/) }
			$0 == "{" && sig != "" { start = NR }
			$0 == "}" && start { if (NR - start > 120 && !long) print F ":" line ": " sig " (" NR - start " lines)"; start = 0; sig = "" }
			{ prev = $0 }' "$f"
	done)
	[ -z "$bad" ] || fail "functions over 120 lines: $bad"
}
# R-T03: a vulnerability is reported privately; the README points there.
case_security_policy() {
	[ -f SECURITY.md ] || fail "no SECURITY.md"
	grep -q "Do not open a public issue" SECURITY.md || fail "SECURITY.md does not ask for a private report"
	grep -q "private vulnerability form" SECURITY.md || fail "SECURITY.md names no private channel"
	grep -q "Never include secrets" SECURITY.md || fail "SECURITY.md does not warn against sending secrets"
	grep -q "SECURITY.md" README.md || fail "the README does not link SECURITY.md"
}

"case_$1"
echo "PASS: $1"
