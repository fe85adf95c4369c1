#!/bin/sh
# The command line a new user meets (issue 35), plain lane: jig list, the
# "no such Flow" and "not a jig project" messages, jig help against
# docs/cli.md, bash and zsh completion (man jig: install.sh). Each case_* is one ctest
# (cli.<case>); jig runs as the unprivileged user.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-cli.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
JIG=$JIG_TEST_PREFIX/bin/jig
jig() { runuser -u "$USER_NAME" -- "$JIG" "$@"; }
in_p() { (cd "$T/p" && jig "$@"); }
# project: root (child x -> a, a Project Command), a, and caller (HTTP and
# Agent routes), as jigtest's.
project() {
	rm -rf "$T/p"
	sh "$JIG_SOURCE/tests/flow/binding/mkproject.sh" "$T/p" '{"root":{"bindings":{"x":{"flow":"a"}},"commands":true},"a":{}}'
	cp -r "$JIG_SOURCE/tests/flow/agent/caller" "$T/p/caller"
	jq '.flows.caller = "caller"' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"
	chown -R "$USER_NAME" "$T/p"
}
# one_line CODE PATTERN CMD...: CMD exits CODE with one line on stderr
# matching PATTERN, nothing on stdout; with --json added, jig-error/1.
one_line() {
	code=$1 pat=$2
	shift 2
	set +e; "$@" >"$T/out" 2>"$T/err"; rc=$?; set -e
	[ "$rc" -eq "$code" ] || fail "$*: exit $rc, expected $code: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ] || fail "$*: not one line: $(cat "$T/out" "$T/err")"
	grep -q -- "$pat" "$T/err" || fail "$*: $(cat "$T/err") does not match /$pat/"
	set +e; "$@" --json >"$T/out" 2>/dev/null; set -e
	jq -e --argjson c "$code" '.schema == "jig-error/1" and .exit == $c' "$T/out" >/dev/null || fail "$* --json: $(cat "$T/out")"
}

case_list_flows() {
	# jig list: each Flow's inputs, outputs and effects (HTTP, Agents,
	# Commands, children), text and jig-list/1; the same for one FLOW.
	project
	in_p list --json >"$T/list.json"
	jq -e '.schema == "jig-list/1" and .admitted_plan == null and ([.flows[].name] == ["a", "root", "caller"])
		and ([.flows[].admission] | unique == ["not-reviewed"])' "$T/list.json" >/dev/null || fail "list: $(cat "$T/list.json")"
	jq -e '.flows[] | select(.name == "root") | .effects.children == [{"binding": "x", "flow": "a"}]
		and .effects.commands == [{"route": "run"}] and .inputs == ["plan"] and .kind == "code"' "$T/list.json" >/dev/null || fail "root: $(cat "$T/list.json")"
	jq -e '.flows[] | select(.name == "caller") | ([.effects.http[].route] == ["llm", "msgs", "plain"])
		and (.effects.agents[] | select(.route == "ask") | .provider == "fake" and .model == "fake-model-1")
		and (.effects.agents[] | select(.route == "chat") | .api == "openai-chat" and .http == "llm")
		and .outputs == ["result.json", "dump.txt"]' "$T/list.json" >/dev/null || fail "caller: $(cat "$T/list.json")"
	in_p list >"$T/text"
	cat "$T/text"
	grep -q "^root (code): not reviewed$" "$T/text" && grep -q "^  effects  command run$" "$T/text" &&
		grep -q "^           child x -> flow a$" "$T/text" &&
		grep -q "^  effects  http llm POST http://127.0.0.1:18090/v1/chat/completions$" "$T/text" &&
		grep -q "^           agent ask provider=fake model=fake-model-1$" "$T/text" &&
		grep -q "^  inputs   steps$" "$T/text" && grep -q "^no admitted Plan: jig review admits one$" "$T/text" || fail "list text"
	jig list caller --json --project "$T/p" | jq -e '[.flows[].name] == ["caller"]' >/dev/null || fail "list FLOW --project"
	[ ! -e "$T/p/.jig/admission.json" ] && [ -z "$(find "$T/p/.jig" -type f)" ] || fail "list stored or admitted something: $(find "$T/p/.jig" -type f)"
}
case_list_admission() {
	# Decision 162: admitted; changed since review (its package) for the
	# edited Flow only; not reviewed for a Flow the admitted Plan lacks.
	rm -rf "$T/p"
	sh "$JIG_SOURCE/tests/flow/binding/mkproject.sh" "$T/p" '{"a":{},"b":{}}'
	chown -R "$USER_NAME" "$T/p"
	in_p review --yes >/dev/null
	in_p list --json | jq -e '(.admitted_plan | test("^[0-9a-f]{64}$")) and ([.flows[].admission] == ["admitted", "admitted"])
		and ([.flows[].why] == [null, null])' >/dev/null || fail "not admitted after review"
	printf '// edited\n' >>"$T/p/b/main.ts"
	sh "$JIG_SOURCE/tests/flow/binding/mkproject.sh" "$T/n" '{"c":{}}'
	cp -r "$T/n/c" "$T/p/c"
	jq '.flows.c = "c"' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"
	chown -R "$USER_NAME" "$T/p"
	in_p list --json >"$T/list.json"
	jq -e '[.flows[] | [.name, .admission, .why]] == [["a", "admitted", null], ["b", "changed", "its package changed"], ["c", "not-reviewed", null]]' \
		"$T/list.json" >/dev/null || fail "coverage: $(jq -c '[.flows[] | [.name, .admission, .why]]' "$T/list.json")"
	in_p list >"$T/text"
	grep -q "^a (code): admitted$" "$T/text" && grep -q "^b (code): changed since review (its package changed)$" "$T/text" &&
		grep -q "^c (code): not reviewed$" "$T/text" || { cat "$T/text"; fail "list text"; }
}
case_no_such_flow() {
	# Every "no such Flow" names the project's Flows (jig_cli_known_flows).
	project
	msg='^jig: project \. has no Flow "nosuch"; its Flows: a, root, caller$'
	one_line 2 "$msg" in_p list nosuch
	one_line 2 "$msg" in_p run nosuch --output "$T/out.pkt"
	[ ! -e "$T/out.pkt" ] || fail "a packet was published"
}
case_not_a_project() {
	# Outside a project: "not a jig project here (jig init creates one)",
	# exit 2, one line, for review, run and list; a named directory too.
	mkdir "$T/empty"
	chown "$USER_NAME" "$T/empty"
	msg='^jig: not a jig project here (jig init creates one)$'
	for c in "review" "review --yes" "list" "run x --output $T/o"; do
		# shellcheck disable=SC2086
		(cd "$T/empty" && one_line 2 "$msg" jig $c)
	done
	one_line 2 "^jig: $T/empty: not a jig project (jig init $T/empty creates one)$" jig list --project "$T/empty"
	[ -z "$(ls -A "$T/empty")" ] || fail "something was written outside a project: $(ls -A "$T/empty")"
}
case_help_lists_doc_flags() {
	# jig help lists every flag docs/cli.md's command table does, and
	# nothing the docs do not; every exit status 0-6 is in both.
	grep '^| `jig ' "$JIG_SOURCE/docs/cli.md" | cut -d'|' -f2 | grep -o -- '--[a-z][a-z-]*' | sort -u >"$T/doc"
	"$JIG" help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$T/help"
	[ "$(wc -l <"$T/doc")" -ge 12 ] || fail "the docs' table lists too few flags to be read right"
	missing=$(comm -23 "$T/doc" "$T/help" | tr '\n' ' ')
	[ -z "$missing" ] || fail "jig help omits $missing"
	extra=$(comm -13 "$T/doc" "$T/help" | while read -r f; do grep -q -- "$f" "$JIG_SOURCE/docs/cli.md" || printf '%s ' "$f"; done)
	[ -z "$extra" ] || fail "docs/cli.md omits $extra"
	for n in 0 1 2 3 4 5 6; do
		"$JIG" help | grep -q "^  $n  " || fail "jig help: no exit status $n"
		grep -q "\`$n\` " "$JIG_SOURCE/docs/cli.md" || fail "docs/cli.md: no exit status $n"
	done
	"$JIG" help | grep -q "allow-resolution-network" || fail "the issue's missing flag"
}
# compl_bash LINE: what bash completion offers for "jig LINE" in $T/p.
compl_bash() {
	runuser -u "$USER_NAME" -- bash -c '
		. "$1/share/bash-completion/completions/jig"
		complete -p jig | grep -q -- "-F _jig" || exit 9
		read -ra COMP_WORDS <<<"$1/bin/jig $2"
		case "$2" in *" "|"") COMP_WORDS+=("");; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		cd "$3" && _jig && printf "%s\n" "${COMPREPLY[@]}"' sh "$JIG_TEST_PREFIX" "$1" "$T/p"
}
case_completion_bash() {
	project
	[ "$(compl_bash 'run ' | tr '\n' ' ')" = "a root caller " ] || fail "run: $(compl_bash 'run ')"
	[ "$(compl_bash 'list c')" = caller ] || fail "list c: $(compl_bash 'list c')"
	[ "$(compl_bash 'run caller --input ')" = "steps=" ] || fail "--input: $(compl_bash 'run caller --input ')"
	compl_bash '' | grep -qx list && compl_bash 're' | grep -qx review || fail "commands: $(compl_bash '')"
	compl_bash 'review --' | grep -qx -- --allow-resolution-network || fail "review's flags: $(compl_bash 'review --')"
	[ "$(compl_bash "run --project $T/p ro")" = root ] || fail "--project"
}
# compl_zsh WORDS...: what the zsh function offers for "jig WORDS" in $T/p
# (compadd stubbed to print what it is given).
compl_zsh() {
	runuser -u "$USER_NAME" -- zsh -fc '
		fpath=("$1/share/zsh/site-functions" $fpath)
		autoload -Uz _jig
		compadd() { while (( $# )); do case $1 in -a) shift; print -rl -- ${(P)1};; -S) shift;; *) print -r -- $1;; esac; shift; done }
		words=("$1/bin/jig" "${@:3}"); CURRENT=${#words}
		cd "$2" && _jig' zsh "$JIG_TEST_PREFIX" "$T/p" "$@"
}
case_completion_zsh() {
	project
	# It loads as zsh's completion for jig (compinit finds it on fpath).
	runuser -u "$USER_NAME" -- zsh -fc 'fpath=("$1/share/zsh/site-functions" $fpath); autoload -Uz compinit && compinit -u -D
		[[ $_comps[jig] == _jig ]]' zsh "$JIG_TEST_PREFIX" || fail "compinit does not load _jig for jig"
	[ "$(compl_zsh run '' | tr '\n' ' ')" = "a root caller " ] || fail "run: $(compl_zsh run '')"
	[ "$(compl_zsh run caller --input '')" = steps ] || fail "--input: $(compl_zsh run caller --input '')"
	compl_zsh '' | grep -qx list || fail "commands: $(compl_zsh '')"
	compl_zsh review -- | grep -qx -- --allow-resolution-network || fail "review's flags"
}

"case_$1"
echo "PASS: $1"
