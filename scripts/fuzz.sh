#!/bin/sh
# The libFuzzer harnesses (fuzz/, issue 18): builds them with clang and
# ASan+UBSan in build-fuzz, makes seed corpora from the test fixtures, runs
# every regression input, then fuzzes each target for SECONDS (default 5:
# the smoke run .ci/run does; docs/reliability.md has the longer one).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# JIG_FUZZ_JOBS: how many targets at a time (and build jobs); default nproc.
# Fails on any crash, leak, sanitizer report or timeout; the input is kept
# in build-fuzz/crashes/ (add it to fuzz/regressions/TARGET/ once fixed).
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-5}
[ $# -gt 0 ] && shift
B=build-fuzz
CC=clang cmake -S . -B "$B" -DJIG_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DJIG_MODULE_SANDBOX_LINUX=OFF -DJIG_MODULE_HTTP=OFF \
	-DJIG_MODULE_ACP=OFF -DJIG_MODULE_DISPLAY=OFF -DJIG_BUN_DIR="$PWD/build/bun" >/dev/null
par=${JIG_FUZZ_JOBS:-$(nproc)}
cmake --build "$B" -j "$par" >/dev/null
TARGETS=${*:-manifest catalog scope_policy schema0 url tarball deps acp_request record project agents timeout run0 recipe checkpoint worker_http worker_agent
	worker_command acp_message run0_effects resolved_lock connect session_map gitcmd}

# The corpus of each target: the committed one (fuzz/corpus/TARGET, the
# coverage-minimal set of the longer runs, seeded from the tests' inputs),
# copied so that a run never writes into the source tree, plus the seeds
# made below from the test fixtures.
C=$B/corpus
for d in fuzz/corpus/*/; do
	mkdir -p "$C/$(basename "$d")" && cp "$d"* "$C/$(basename "$d")/"
done
# seed TARGET NAME: stdin as a seed input.
seed() { mkdir -p "$C/$1"; cat >"$C/$1/$2"; }
nul() { printf '\000'; }
snap=$(ls -d build/test-prefix/lib/jig/snapshots/*/ 2>/dev/null | head -1)
if [ -n "$snap" ]; then { cat "$snap/manifest.json"; nul; cat "$snap/manifest.files"; } | seed manifest installed; fi
{ printf '{"format":"jig-snapshot-manifest/3","id":"a","sequence":1,"platform":"linux-x86_64","files_sha256":"'
  printf '0000000000000000000000000000000000000000000000000000000000000000 1 modules/a.so\n' | sha256sum | cut -d' ' -f1 | tr -d '\n'
  printf '","files_size":79,"modules":[{"name":"a","kind":"sandbox","path":"modules/a.so","abi_major":1,"abi_minor":0,"platform":"linux-x86_64"}]}'
  nul; printf '0000000000000000000000000000000000000000000000000000000000000000 1 modules/a.so\n'; } | seed manifest small
seed catalog catalog <policy/catalog.json
for f in tests/fixtures/policy/*.json; do seed scope_policy "$(basename "$f")" <"$f"; done
{ printf '{"type":"object","required":["a"],"properties":{"a":{"type":"string","maxLength":8},"n":{"type":"integer","minimum":0}},"additionalProperties":false}'
  nul; printf '{"a":"x","n":3}'; } | seed schema0 object
{ printf '{"type":"array","items":{"enum":["a","b"]},"maxItems":3}'; nul; printf '["a","b"]'; } | seed schema0 array
for u in "https://example.com/a?b=c" "http://127.0.0.1:8080/x" "https://user:pw@host/#f" "http://[::1]:1/" "HTTPS://EXAMPLE.com:443/%2e%2e/"; do
	printf '%s' "$u" | seed url "$(printf '%s' "$u" | sha256sum | cut -c1-12)"
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/package/lib" && cp tests/flow/deps/uses/package.json "$T/package/" && cp tests/flow/deps/uses/main.ts "$T/package/lib/"
(cd "$T" && tar -czf pkg.tgz package) && seed tarball pkg <"$T/pkg.tgz"
seed tarball csv-parse <tests/fixtures/npm/csv-parse-5.5.6.tgz
{ printf 'sha512-%s' "$(openssl dgst -sha512 -binary "$T/pkg.tgz" | base64 -w0)"; nul; cat "$T/pkg.tgz"; } | seed tarball integrity
{ cat tests/flow/deps/uses/package.json; nul; cat tests/flow/deps/uses/bun.lock; } | seed deps fixture
jq -cn '{format: "jig-acp-request/1", argv: ["/bin/agent", "x"], env: {HOME: "/home/agent", K: "v"}, secrets: ["s3cret"],
	cwd: "/work", expect: {name: "a", version: "1"}, prompt: [{type: "text", text: "hi"}],
	limits: {deadline_ms: 1000, cancel_grace_ms: 10, exit_grace_ms: 10, max_line_bytes: 1024, max_messages: 10, max_transcript_bytes: 100},
	history: {dir: ".codex/sessions", max_bytes: 100},
	restore: {session_id: "s1", path: "2026/rollout-x-s1.jsonl", rollout: "{}\n"}}' | seed acp_request full
printf '{"format":"jig-run-record/1","status":"succeeded","outputs":[{"path":"a.txt","bytes":1,"sha256":"00"}],"effects":[]}' | seed record small
{ printf '{"format":"jig-project/1","flows":{"f":"f"}}'; nul
  printf '{"format":"jig-flow/1","name":"f","entry":"main.ts","inputs":["in"],"outputs":["o.txt"],'
  printf '"http":{"h":{"method":"POST","url":"http://127.0.0.1:9/x","timeout_ms":1000}},'
  printf '"agents":{"a":{"provider":"p","model":"m","retain_sessions":true},"b":{"api":"openai-chat","http":"h","model":"m"}}}'; } | seed project flow
printf '{"format":"jig-agents/1","providers":{"fake":{"client":"codex","command":["/usr/bin/true","--x"],"trees":["/usr/bin/true"],"version":"1.0.0","model_env":"M","env":{"A":"b"},"credential":{"env":"K","value":"v"}}}}' | seed agents codex
printf '{"op":"log","text":"one"}\n{"op":"checkpoint","files":{"a":"b"},"state":1}\n{"op":"http","route":"r","body":"x"}\n{"op":"agent","route":"a","input":"x"}\n{"op":"fail","text":"e"}\n{"op":"done"}\n' | seed run0 lines
printf '{"op":"checkpoint","files":{"notes/a.txt":"one\\n","b.md":"# \\u00e9"},"state":{"step":2,"done":["x"],"f":1.5}}' | seed checkpoint two
printf '{"op":"checkpoint","state":null}' | seed checkpoint empty
for t in 30s 1m 500ms 2h 0s 99999999999999999999s; do printf '%s' "$t" | seed timeout "$t"; done
seed recipe example <examples/markdown/meeting-actions/recipe.md
# jig session's map (with one endpoint after the NUL) and the brokered git's argv.
{ printf '{"format":"jig-sessions/1","clients":{"fake":{"command":["/opt/a/agent"],"trees":["/opt/a","/usr/bin"]}},'
  printf '"providers":{"local":{"client":"fake","endpoint":"127.0.0.1:1234"},"far":{"client":"fake","endpoint":"api.example.test:443"}},'
  printf '"repositories":{"repo":{"root":"/home/u/repo","mode":"rw","context":"personal","default_provider":"local",'
  printf '"providers":["local","far"],"git_remotes":["/home/u/remote.git"]}}}'; nul; printf '127.0.0.1:1234'; } | seed session_map map
for ep in '[::1]:80' '0177.0.0.1:1' 'localhost.:9' 'a.example:65536' '2130706433:1'; do printf '{}\000%s' "$ep" | seed session_map "ep$(printf '%s' "$ep" | cksum | cut -d' ' -f1)"; done
{ printf 'commit'; nul; printf -- '-m'; nul; printf 'msg'; } | seed gitcmd commit
{ printf -- '-c'; nul; printf 'core.fsmonitor=x'; nul; printf 'status'; } | seed gitcmd config
{ printf 'push'; nul; printf 'ext::sh -c x'; nul; printf 'main'; } | seed gitcmd ext
{ printf 'fetch'; nul; printf 'origin'; } | seed gitcmd fetch
{ printf 'P\n'; cat policy/git-command.json; } | seed gitcmd policy
# Worker results: what plugins/http and plugins/acp write (their formats
# in sdk/include/jig/http.h, acp.h), and a command's streams.
printf '{"format":"jig-http-result/1","outcome":"response","status":200,"headers":[["content-type","text/plain"]],"body_base64":"aGk=","request_bytes":10,"response_bytes":2,"header_bytes":30,"connect_ms":1,"total_ms":2,"redirect_not_followed":false}' | seed worker_http response
printf '{"format":"jig-http-result/1","outcome":"failed","error":"connect: refused","connect_ms":0,"total_ms":1}' | seed worker_http failed
printf '{"format":"jig-http-result/1","outcome":"refused","error":"the response is over 1048576 bytes"}' | seed worker_http refused
printf '{"format":"jig-acp-result/1","outcome":"answer","text":"hello \u00e9","stop_reason":"end_turn","agent":{"name":"a","version":"1"},"counts":{"messages":3},"timing":{"total_ms":5},"exit":{"code":0},"history":{"rollout":"{}\\n"}}' | seed worker_agent answer
printf '{"format":"jig-acp-result/1","outcome":"answer","text":"the key is s3cret-k","stop_reason":"end_turn"}' | seed worker_agent credential
printf '{"format":"jig-acp-result/1","outcome":"timeout","error":"the agent did not answer in time","history_error":"none"}' | seed worker_agent timeout
{ printf '\000hello\n'; nul; printf 'warn\n'; } | seed worker_command exited
{ printf '\013'; head -c 70000 /dev/zero | tr '\0' a; nul; printf '\377\376'; } | seed worker_command over
# What an ACP agent writes to the worker (plugins/acp/message.c): a turn
# as tests/acp/fake_agent.c answers it, and the lines the worker refuses.
{ printf '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[],"agentInfo":{"name":"fake-agent","version":"1.0.0"}}}\n'
  printf '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-fake-1"}}\n'
  printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-fake-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ANSWER:\\ud83d\\ude00"}}}}\n'
  printf '{"jsonrpc":"2.0","id":100,"method":"session/request_permission","params":{"options":[{"optionId":"r","kind":"reject_once"}]}}\n'
  printf 'noise line: this is not JSON {\n[{"jsonrpc":"2.0"}]\n'
  printf '{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}'; } | seed acp_message turn
printf '{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"a\\u0000b"}}}}\n' | seed acp_message nul
printf '{"jsonrpc":"2.0","id":5,"result":{"stopReason":"x\\ud800"}}\n{"jsonrpc":"2.0","id":5,"result":{"stopReason":"a\377"}}\n' | seed acp_message not_text
printf '{"jsonrpc":"1.0","id":5,"result":{"stopReason":"end_turn"}}\n{"id":5,"result":{"stopReason":"paused"}}\n{"jsonrpc":2.0}\n' | seed acp_message not_2_0

mkdir -p "$B/crashes"
# fuzz_one TARGET: its regression inputs, then SECS of fuzzing; one target
# is one libFuzzer process on one core, so $par targets run at a time.
fuzz_one() {
	t=$1
	echo "== fuzz $t (${SECS} s)"
	mkdir -p "$C/$t" "$B/work/$t"
	if [ -d "fuzz/regressions/$t" ] && [ -n "$(ls -A "fuzz/regressions/$t")" ]; then
		"$B/fuzz/fuzz_$t" -runs=0 "fuzz/regressions/$t"/* >"$B/work/$t/regressions.log" 2>&1 ||
			{ tail -30 "$B/work/$t/regressions.log"; echo "FAIL: a regression input of $t fails again"; return 1; }
	fi
	(cd "$B/work/$t" && ASAN_OPTIONS=detect_leaks=1 "../../fuzz/fuzz_$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
		-max_len=1048576 -artifact_prefix="../../crashes/$t-" -print_final_stats=1 ../../corpus/"$t" >log 2>&1) ||
		{ tail -40 "$B/work/$t/log"; echo "FAIL: fuzz_$t found a crash (build-fuzz/crashes/)"; return 1; }
	grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$B/work/$t/log" | tail -1
}
failed=0
set -- $TARGETS
while [ $# -gt 0 ]; do
	batch=
	i=0
	while [ $# -gt 0 ] && [ "$i" -lt "$par" ]; do
		mkdir -p "$B/work/$1"
		fuzz_one "$1" >"$B/work/$1.out" 2>&1 &
		batch="$batch $!:$1"
		i=$((i + 1))
		shift
	done
	for pt in $batch; do
		wait "${pt%%:*}" || failed=1
		cat "$B/work/${pt#*:}.out"
	done
done
[ "$failed" = 0 ] || exit 1
echo "== fuzz: no crash"
