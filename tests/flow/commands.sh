#!/bin/sh
# Project Commands end to end (issue 17): a Flow's jig.command, run with the
# installed Bun in the route's own scope, its output collected outside it.
# Each case_* is one ctest (command.<case>) in the supported-host lane, run
# as the unprivileged user.
# Requirements: R-K01, R-K02, R-K03, R-K04, R-S02 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
CALLER="$JIG_SOURCE/tests/flow/command"
. "$JIG_SOURCE/tests/flow/scope_plan.sh"

T=$(mktemp -d /tmp/jig-command.XXXXXX)
PEERS=""
trap 'for p in $PEERS; do kill "$p" 2>/dev/null || true; done; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CANARY=CANARY-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$T/data"
printf 'attached %s\n' "data" >"$T/data/a.txt"

# project [FLOW_JQ]: a private copy of the test project, its flow.json
# edited by FLOW_JQ, reviewed.
project() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	cp -r "$CALLER" "$T/p"
	jq "${1:-.}" "$CALLER/caller/flow.json" >"$T/p/caller/flow.json"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
}
# steps JSON: jig run of the caller with those steps; $rc, $took, $T/out, $T/err.
# A credential-looking canary is in jig's own environment.
steps() {
	printf '%s\n' "$1" >"$T/steps"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	start=$(date +%s)
	(cd "$T/p" && GITHUB_TOKEN="$CANARY" MY_API_KEY="$CANARY" "$JIG" run caller --output "$T/pkt" --input steps="$T/steps" \
		--input data="${DATA:-$T/data}" --timeout "${RUN_TIMEOUT:-120s}") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	took=$(($(date +%s) - start))
	set -e
	echo "--- jig run caller (exit $rc, ${took} s)"
	cat "$T/out" "$T/err"
	[ ! -f "$T/pkt/files/result.json" ] || jq -c '[.[] | {ok, error, outcome, exitCode, stdoutBytes, stdoutTruncated}]' "$T/pkt/files/result.json"
	[ ! -f "$T/pkt/record.json" ] || jq -c '.effects' "$T/pkt/record.json"
	return 0
}
rec() { jq -r ".$1" "$T/pkt/record.json"; }
res() { jq -r ".[$1]$2" "$T/pkt/files/result.json"; }
ev() { jq -r ".effects[$1]$2" "$T/pkt/record.json"; }
succeeded() { [ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] || fail "the Run did not succeed"; }
expect_ok() { [ "$(res "$1" .ok)" = true ] || fail "step $1 failed: $(res "$1" .error)"; }
expect_refused() { # expect_refused STEP PATTERN: refused before launch
	[ "$(res "$1" .ok)" = false ] || fail "step $1 was not refused"
	res "$1" .error | grep -q -- "$2" || fail "step $1: error does not match /$2/: $(res "$1" .error)"
	[ "$(ev "$1" .outcome)" = refused ] && [ "$(ev "$1" .wall_ms)" = null ] || fail "step $1: launched: $(ev "$1" '')"
}
# step ROUTE JS [EXTRA_JQ]: one step running JS as main.js.
step() { jq -cn --arg r "$1" --arg js "$2" "{route: \$r, files: {\"main.js\": \$js}, entry: \"main.js\"} | ${3:-.}"; }

case_runs() {
	# R-K01, R-K04: a command runs with its args and stdin; its stdout,
	# stderr and exit code come back; the record keeps the digest and
	# sizes of what was supplied, never the text.
	project
	js='const s = await Bun.stdin.text(); console.log("MARK-" + process.argv.slice(2).join(",") + "-" + s); console.error("err"); process.exit(3)'
	steps "[$(step run "$js" '.args = ["a", "b c"] | .stdin = "in" | .files["lib/x.js"] = "export const x = 1"')]"
	succeeded
	expect_ok 0
	[ "$(res 0 .outcome)" = exited ] && [ "$(res 0 .exitCode)" = 3 ] || fail "outcome $(res 0 .outcome) exit $(res 0 .exitCode)"
	[ "$(res 0 .stdout)" = "MARK-a,b c-in" ] && [ "$(res 0 .stderr)" = err ] || fail "output: $(res 0 '')"
	sum=$(printf '%s' "$js" | sha256sum | cut -d' ' -f1) sum2=$(printf '%s' "export const x = 1" | sha256sum | cut -d' ' -f1)
	digest=$(jq -cjn --arg a "$sum" --arg b "$sum2" '{"lib/x.js": $b, "main.js": $a}' | sha256sum | cut -d' ' -f1)
	pol=$(cd "$T/p" && "$JIG" review --json | jq -r '.plan.flows[0].commands[] | select(.route == "run") | .command_scope.policy_sha256')
	jq -e --arg d "$digest" --arg pol "$pol" '.effects[0] | .effect == "command" and .route == "run" and .outcome == "exited"
		and .exit_code == 3 and .scope_policy_sha256 == $pol and .files.count == 2 and .files.sha256 == $d
		and .args == 2 and .stdin_bytes == 2 and .stdout_bytes == 14 and .stderr_bytes == 4 and .stdout_truncated == false
		and .cleanup_confirmed == true' "$T/pkt/record.json" >/dev/null || fail "evidence: $(ev 0 '')"
	! grep -q "MARK-\|Bun.stdin" "$T/pkt/record.json" || fail "the record holds the command's text or output"
	[ ! -e "$T/pkt/files/command" ] || fail "the command's files were published"
	(cd "$T/p" && "$JIG" inspect "$T/pkt") | grep -q "command run exited exit 3" || fail "inspect does not show the command"
}
case_caps() {
	# R-K04: each cap at the cap runs, one over is refused before launch
	# with a message naming it.
	project
	js='console.log(process.argv.length - 2, (await Bun.stdin.arrayBuffer()).byteLength)'
	steps "[$(step run "$js" '.nFiles = 64'), $(step run "$js" '.nFiles = 65'),
		$(step run "$js" '.textBytes = 262144'), $(step run "$js" '.textBytes = 262145'),
		$(step run "$js" '.stdinBytes = 16384'), $(step run "$js" '.stdinBytes = 16385'),
		$(step run "$js" '.nArgs = 32'), $(step run "$js" '.nArgs = 33'),
		$(step run "$js" '.files["../x.js"] = ""'), $(step run "$js" '.entry = "none.js"'),
		$(step run "$js" '.args = [1]'), $(step nope "$js"),
		$(step run "$js" '.args = ["a" * 4096]'), $(step run "$js" '.args = ["a" * 4097]'),
		$(step run "$js" '.args = [range(4) | "a" * 4096]'), $(step run "$js" '.args = [(range(4) | "a" * 4096), "a"]')]"
	succeeded
	for i in 0 2 4 6; do expect_ok $i; done
	[ "$(res 4 .stdout)" = "0 16384" ] && [ "$(res 6 .stdout)" = "32 0" ] || fail "stdin or args did not arrive"
	[ "$(ev 2 .files.bytes)" = 262144 ] && [ "$(ev 0 .files.count)" = 64 ] || fail "sizes in the evidence"
	expect_refused 1 "65 files, over the cap of 64"
	expect_refused 3 "over the cap of 262144 bytes"
	expect_refused 5 "stdin is over the cap of 16384 bytes"
	expect_refused 7 "33 arguments, over the cap of 32"
	expect_refused 8 "not a normalised relative path"
	expect_refused 9 "entry must name one of the files"
	expect_refused 10 "must be a string"
	expect_refused 11 "no reviewed command route \"nope\""
	# One argument at 4,096 bytes and all of them at 16 KiB run; a byte over either is refused.
	expect_ok 12
	expect_ok 14
	[ "$(res 12 .stdout)" = "1 0" ] && [ "$(res 14 .stdout)" = "4 0" ] || fail "arguments at the cap did not arrive"
	expect_refused 13 "an argument is at most 4096 bytes, all of them 16384"
	expect_refused 15 "an argument is at most 4096 bytes, all of them 16384"
}
case_input_tree_caps() {
	# R-K04, R-S02 (audit #190): a route's named input tree is the bounded,
	# read-only copy the Flow has. The caps hold across all of a Run's
	# attachments (here "steps" and "data"): at them (64 files, 8 MiB
	# together) the command reads the whole tree and writes none of it; one
	# file or one byte over, the Run is refused before anything starts,
	# with one line, nothing published.
	project
	js='import fs from "node:fs";
const names = fs.readdirSync("/input/data"); let bytes = 0;
for (const n of names) bytes += fs.readFileSync("/input/data/" + n).length;
let w; try { fs.writeFileSync("/input/data/f0", "x"); w = "written"; } catch (e) { w = e.code; }
console.log(names.length, bytes, w)'
	json="[$(step tests "$js")]"
	left=$((8388608 - $(printf '%s\n' "$json" | wc -c) - 62 * 131072)) # the last file's bytes at the cap
	mkdir -p "$T/d63" "$T/d64" "$T/dbig"
	i=0; while [ $i -lt 62 ]; do head -c 131072 /dev/zero | tr '\0' x >"$T/d63/f$i"; i=$((i + 1)); done
	head -c "$left" /dev/zero | tr '\0' x >"$T/d63/last"
	i=0; while [ $i -lt 64 ]; do echo $i >"$T/d64/f$i"; i=$((i + 1)); done
	cp "$T/d63"/* "$T/dbig/" && echo >>"$T/dbig/last"
	DATA="$T/d63" steps "$json"
	succeeded
	expect_ok 0
	res 0 .stdout | grep -q "^63 $((62 * 131072 + left)) E" || fail "the command did not read the whole tree read-only: $(res 0 .stdout)"
	for over in d64:"more than 64 files" dbig:"more than 8388608 bytes"; do
		DATA="$T/${over%%:*}" steps "$json"
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "attachment data: ${over#*:}" "$T/err" || fail "${over%%:*} was not refused"
		[ ! -e "$T/pkt" ] || fail "a packet was published"
	done
}
case_output_drained() {
	# R-K04: output beyond 64 KiB per pipe is drained and counted, not
	# kept; the command is not blocked and exits normally; invalid UTF-8 is
	# decoded with replacement.
	project
	big='import { writeSync } from "node:fs"; const b = Buffer.alloc(1 << 20, 120); for (let i = 0; i < 8; i++) writeSync(1, b); writeSync(2, Buffer.alloc(300000, 121)); process.exit(0)'
	bad='import { writeSync } from "node:fs"; writeSync(1, Buffer.from([0x66, 0xff, 0xfe, 0x6f, 0xe2, 0x82]))'
	at='import { writeSync } from "node:fs"; writeSync(1, Buffer.alloc(65536, 97)); writeSync(2, Buffer.alloc(65537, 98))'
	steps "[$(step run "$big"), $(step run "$bad"), $(step run "$at")]"
	succeeded
	expect_ok 0
	[ "$(res 0 .outcome)" = exited ] && [ "$(res 0 .exitCode)" = 0 ] || fail "the command did not exit normally"
	jq -e '.[0] | .stdoutBytes == 8388608 and .stderrBytes == 300000 and .stdoutTruncated and .stderrTruncated
		and .stdoutRawLength == 65536 and (.stdout | length) == 65536' "$T/pkt/files/result.json" >/dev/null || fail "drain: $(res 0 '| del(.stdout, .stderr)')"
	jq -e '.effects[0] | .stdout_bytes == 8388608 and .stdout_truncated and .stderr_truncated and .cleanup_confirmed' "$T/pkt/record.json" >/dev/null || fail "evidence"
	expect_ok 1
	[ "$(res 1 .stdout)" = "$(printf 'f\357\277\275\357\277\275o\357\277\275')" ] || fail "invalid UTF-8: $(res 1 .stdout | od -c)"
	[ "$(res 1 .stdoutBytes)" = 6 ] || fail "raw count"
	# Exactly 64 KiB is all kept; one byte more is drained (truncated).
	expect_ok 2
	jq -e '.[2] | .stdoutBytes == 65536 and .stdoutRawLength == 65536 and (.stdoutTruncated | not)
		and .stderrBytes == 65537 and .stderrTruncated' "$T/pkt/files/result.json" >/dev/null || fail "at the retain cap: $(res 2 '| del(.stdout, .stderr)')"
}
case_contained() {
	# R-K01, R-K02: the candidate has no network (a loopback listener on the host
	# is unreachable), no credentials in its environment, no Flow package,
	# its attachment and its own files read-only.
	project
	python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(8); open(sys.argv[1],"w").write(str(s.getsockname()[1])); time.sleep(600)' "$T/port" &
	PEERS="$PEERS $!"
	i=0; while [ ! -s "$T/port" ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "no listener"; sleep 0.1; done
	port=$(cat "$T/port")
	probe='import fs from "node:fs"; import net from "node:net";
const r = { env: process.env, flow: fs.existsSync("/flow"), root: fs.readdirSync("/").sort(), input: fs.readdirSync("/input"),
  data: fs.readFileSync("/input/data/a.txt", "utf8"), cwd: process.cwd() };
const tryw = (p) => { try { fs.writeFileSync(p, "x"); return "written"; } catch (e) { return e.code; } };
r.inputWrite = tryw("/input/data/new.txt"); r.inputOverwrite = tryw("/input/data/a.txt"); r.commandWrite = tryw("/command/new.js");
r.commandOverwrite = tryw("/command/main.js"); r.tmpWrite = tryw("/tmp/x");
r.connect = await new Promise((res) => { const s = net.connect(Number(process.argv[2]), "127.0.0.1");
  s.on("connect", () => { s.destroy(); res("connected"); }); s.on("error", (e) => res(e.code)); setTimeout(() => res("timeout"), 3000); });
console.log(JSON.stringify(r));'
	steps "[$(step tests "$probe" ".args = [\"$port\"]"), $(step run 'import fs from "node:fs"; console.log(JSON.stringify(fs.readdirSync("/")))')]"
	succeeded
	expect_ok 0
	out=$(res 0 .stdout)
	printf "%s\n" "$out"
	printf "%s\n" "$out" | jq -e '.env | keys == ["HOME", "LANG", "NO_COLOR", "TMPDIR"]' >/dev/null || fail "environment: $(printf "%s\n" "$out" | jq -c .env)"
	printf "%s\n" "$out" | jq -e '.flow == false and (.root | index("flow") == null and index("output") == null and index("scratch") == null) and .input == ["data"] and .data == "attached data\n" and .cwd == "/command"
		and .inputWrite != "written" and .inputOverwrite != "written" and .commandWrite != "written"
		and .commandOverwrite != "written" and .tmpWrite == "written" and .connect != "connected"' >/dev/null || fail "containment: $out"
	res 1 .stdout | jq -e 'index("input") == null and index("flow") == null' >/dev/null || fail "a route without an input sees /input: $(res 1 .stdout)"
	! grep -rqa -- "$CANARY" "$T/pkt" || fail "the canary reached the packet"
}
case_deadline() {
	# R-K01: a command that hangs ends at its route's deadline (3 s) and is
	# fenced; the Flow goes on; nothing of it is left.
	project
	steps "[$(step quick 'setInterval(() => {}, 1000); console.log("started")'), $(step run 'console.log("after")')]"
	succeeded
	expect_ok 0
	[ "$(res 0 .outcome)" = timeout ] && [ "$(res 0 .stdout)" = started ] || fail "outcome $(res 0 .outcome): $(res 0 .stdout)"
	[ "$(res 0 .exitCode)" = null ] || fail "a timed-out command has an exit code"
	jq -e '.effects[0] | .outcome == "timeout" and .cleanup_confirmed and .wall_ms >= 3000 and .wall_ms < 15000' "$T/pkt/record.json" >/dev/null || fail "evidence"
	[ "$(res 1 .stdout)" = after ] || fail "the Flow did not go on"
	! pgrep -f "/command/main.js" >/dev/null || fail "a command outlived its scope"
}
case_without_grant() {
	# R-K01: a Flow without a command route cannot call one: the operation
	# is unknown to its Run/0, which ends the Run.
	project 'del(.commands)'
	steps "[$(step run 'console.log(1)')]"
	[ "$rc" -ne 0 ] && [ "$(rec status)" = failed ] || fail "the Run did not fail"
	rec error | grep -q "unknown or malformed operation" || fail "error: $(rec error)"
}

case_capture() {
	# R-K03: a route with "capture": true has a held /capture tmpfs; after
	# the scope is fenced jig reads it from outside (bounded, only regular
	# files and directories) and hands it to the Flow as data, never run.
	# The candidate can write nowhere else that lasts. Five commands: the
	# tree at exactly the byte cap, one byte over, a symlink, a socket,
	# 65 files.
	project
	js='import { writeFileSync, mkdirSync } from "node:fs";
		mkdirSync("/capture/sub");
		writeFileSync("/capture/report.json", JSON.stringify({passed: 3, failed: 1}));
		writeFileSync("/capture/sub/code.js", "globalThis.PWNED = 1; export default 1;");
		writeFileSync("/capture/pad", Buffer.alloc(262144 - 62, 97));
		const tried = [];
		for (const p of ["/escape", "/command/x", "/.jig/x", "/usr/lib/x86_64-linux-gnu/x", "/output/x", "/flow/x", "/input/x"])
			try { writeFileSync(p, "x"); tried.push(p + ":written"); } catch (e) { tried.push(p + ":" + e.code); }
		console.log(tried.join(" "))'
	big='require("node:fs").writeFileSync("/capture/big", Buffer.alloc(262145, 97))'
	link='require("node:fs").symlinkSync("/etc/passwd", "/capture/l")'
	sock='require("node:net").createServer().listen("/capture/s", () => process.exit(0))'
	many='for (let i = 0; i < 65; i++) require("node:fs").writeFileSync("/capture/f" + i, "")'
	steps "[$(step capt "$js"), $(step capt "$big"), $(step capt "$link"), $(step capt "$sock"), $(step capt "$many")]"
	succeeded
	for i in 0 1 2 3 4; do expect_ok $i; done
	echo "checking the captured tree"
	jq -e '.[0] | .captureRefused == null and (.captured | keys) == ["pad", "report.json", "sub/code.js"]
		and (.captured["report.json"].text | fromjson) == {passed: 3, failed: 1} and .captured.pad.dataLength == 262082
		and .captured["sub/code.js"].text == "globalThis.PWNED = 1; export default 1;"' "$T/pkt/files/result.json" >/dev/null ||
		fail "the captured tree: $(res 0 '.captureRefused')"
	sum=$(printf '%s' '{"passed":3,"failed":1}' | sha256sum | cut -d' ' -f1)
	[ "$(res 0 '.captured["report.json"].sha256')" = "$sum" ] && [ "$(res 0 '.captured["report.json"].bytes')" = 23 ] ||
		fail "the captured file's digest or size"
	for w in /escape /command/x /.jig/x /usr/lib/x86_64-linux-gnu/x /output/x /flow/x /input/x; do
		res 0 .stdout | grep -q "$w:E" || fail "the candidate wrote $w: $(res 0 .stdout)"
	done
	echo "checking the refusals"
	res 1 .captureRefused | grep -q "capture refused, nothing returned: capture: more than 262144 bytes" || fail "over the bytes cap: $(res 1 .captureRefused)"
	res 2 .captureRefused | grep -q "capture l: is a symbolic link; refused" || fail "a symlink: $(res 2 .captureRefused)"
	res 3 .captureRefused | grep -q "capture s: is a special file" || fail "a socket: $(res 3 .captureRefused)"
	res 4 .captureRefused | grep -q "more than 64 files" || fail "over the files cap: $(res 4 .captureRefused)"
	for i in 1 2 3 4; do [ "$(res $i .captured)" = null ] || fail "step $i returned a tree"; done
	echo "checking the record"
	jq -e '.effects[0].capture | .files == 3 and .bytes == 262144' "$T/pkt/record.json" >/dev/null || fail "evidence: $(ev 0 .capture)"
	ev 1 .capture_refused | grep -q "more than 262144 bytes" || fail "evidence of the refusal: $(ev 1 .capture_refused)"
	! grep -q "PWNED\|passed" "$T/pkt/record.json" || fail "the record holds captured bytes"
	[ ! -e "$T/pkt/files/capture" ] || fail "the capture was published"
}

case_fault_killed() {
	# Issue 18's fault matrix, during a Project Command (it runs): SIGKILL
	# the command's process (the worker of this effect), the coordinator
	# or the outer command (docs/reliability.md). The command's loss is its
	# outcome (signaled) and the Run goes on; the coordinator's publishes
	# nothing; the outer command's cancels. Every time: nothing left.
	project
	printf '%s\n' "[$(step run 'setInterval(() => {}, 1000);')]" >"$T/steps"
	for what in worker coordinator outer; do
		chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt"
		(cd "$T/p" && exec "$JIG" run caller --output "$T/pkt" --input steps="$T/steps" --input data="$T/data" --timeout 120s) \
			>"$T/out" 2>"$T/err" </dev/null &
		outer=$!
		# The command's own process (bwrap's and the launcher's command lines
		# name it too, after their own).
		i=0; until pgrep -f '^/\.jig/bun /command/main\.js' >/dev/null; do i=$((i+1)); [ $i -lt 600 ] || fail "the command did not start"; sleep 0.1; done
		coord=$(pgrep -P "$outer" -x jig)
		case $what in
		worker) pkill -KILL -f '^/\.jig/bun /command/main\.js' ;;
		coordinator) kill -KILL "$coord" ;;
		outer) kill -KILL "$outer" ;;
		esac
		set +e; wait "$outer"; rc=$?; set -e
		echo "--- $what killed: exit $rc"; cat "$T/out" "$T/err"
		[ ! -f "$T/pkt/record.json" ] || jq -c '{status, effects}' "$T/pkt/record.json"
		i=0; while kill -0 "$coord" 2>/dev/null; do i=$((i+1)); [ $i -lt 600 ] || fail "the coordinator did not end"; sleep 0.1; done
		case $what in
		worker) [ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] && [ "$(ev 0 .outcome)" = signaled ] && [ "$(ev 0 .signal)" = 9 ] ||
			fail "command killed: not its outcome" ;;
		coordinator) [ "$rc" -eq 1 ] && [ ! -e "$T/pkt" ] && grep -q "killed by signal 9 before it finished; nothing was published; its scope was fenced" "$T/err" ||
			fail "coordinator killed: published or unreported" ;;
		outer) [ "$(rec status)" = cancelled ] || fail "outer killed: not cancelled" ;;
		esac
		! pgrep -f '/.jig/' >/dev/null || fail "$what killed: a command or Flow survived: $(pgrep -af /.jig/)"
		! pgrep -f /command/main.js >/dev/null || fail "$what killed: the command survived"
		[ -z "$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)" ] || fail "$what killed: cgroups left"
		[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*')" ] || fail "$what killed: a run directory was left"
	done
}

case_bwrap_killed() {
	# Issue 31: the command's bwrap SIGKILLed while the command runs: it
	# ran, so the call resolves "killed" (not "could not be run"), with what
	# it wrote and the supervisor's reason; the Flow goes on.
	project
	printf '%s\n' "[$(step run 'console.log("started"); setInterval(() => {}, 1000)'), $(step run 'console.log("after")')]" >"$T/steps"
	chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt"
	(cd "$T/p" && exec "$JIG" run caller --output "$T/pkt" --input steps="$T/steps" --input data="$T/data" --timeout 120s) \
		>"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	i=0; until pgrep -f '^/\.jig/bun /command/main\.js' >/dev/null; do i=$((i+1)); [ $i -lt 600 ] || fail "the command did not start"; sleep 0.1; done
	sleep 0.5 # its first line written
	coord=$(pgrep -P "$outer" -x jig)
	b=$(pgrep -P "$coord" -f 'bwrap .*/command/main\.js') || fail "no bwrap of the command under the coordinator"
	kill -KILL "$b"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/out" "$T/err"; jq -c . "$T/pkt/files/result.json"; jq -c .effects "$T/pkt/record.json"
	succeeded
	expect_ok 0
	[ "$(res 0 .outcome)" = killed ] && [ "$(res 0 .exitCode)" = null ] && [ "$(res 0 .signal)" = null ] || fail "outcome $(res 0 '')"
	[ "$(res 0 .stdout)" = started ] || fail "stdout $(res 0 .stdout)"
	res 0 .error | grep -q "the scope was killed while its payload ran (bwrap killed by signal 9)" || fail "error: $(res 0 .error)"
	jq -e '.effects[0] | .outcome == "killed" and .payload_started == true and .cleanup_confirmed == true and (.error | test("killed while its payload ran"))
		and (has("exit_code") | not)' "$T/pkt/record.json" >/dev/null || fail "evidence: $(ev 0 '')"
	[ "$(res 1 .stdout)" = after ] && [ "$(ev 1 .payload_started)" = true ] || fail "the Flow did not go on"
	! pgrep -f /command/main.js >/dev/null || fail "the command survived"
	[ -z "$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)" ] || fail "cgroups left"
}

# Issue 32, R-P12: what runs is the Plan, for all four command kinds
# (command, command-input, command-capture, command-input-capture): each
# route's candidate reads its argv, environment, mounts and descriptors
# (tests/flow/inside.js) and they are its command_scope's, the Plan's argv
# followed by the entry and the call's args; the launch's policy digest
# (which covers the limits) is the Plan's. Then the comparison is shown
# to see a difference: one environment entry or one argv entry more in
# the Plan, and it fails.
case_scope_is_the_plan() {
	project '.commands.both = {"input": "data", "capture": true, "timeout_ms": 30000}'
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	js=$(cat "$JIG_SOURCE/tests/flow/inside.js")
	routes="run tests capt both"
	s=
	for r in $routes; do s="$s${s:+, }$(jq -cn --arg r "$r" --arg js "$js" '{route: $r, files: {"inside.js": $js}, entry: "inside.js", args: ["a", "b c", ""]}')"; done
	steps "[$s]"
	succeeded
	i=0
	for r in $routes; do
		expect_ok $i
		jq --arg r "$r" '.plan.flows[0].commands[] | select(.route == $r) | .command_scope' "$T/plan.json" >"$T/scope-$r.json"
		res $i .stdout >"$T/inside-$r.json"
		kind=$(jq -r '.permission_plan.scope' "$T/scope-$r.json")
		echo "--- route $r (scope $kind)"
		scope_is_plan "$T/scope-$r.json" "$T/inside-$r.json" /command/inside.js a "b c" "" || fail "route $r: its scope is not its Plan's"
		[ "$(ev $i .scope_policy_sha256)" = "$(jq -r .policy_sha256 "$T/scope-$r.json")" ] || fail "route $r: the launch's policy digest is not the Plan's"
		i=$((i + 1))
	done
	echo "--- the comparison sees one environment entry more in the Plan"
	jq '.permission_plan.env.EXTRA = "1"' "$T/scope-run.json" >"$T/mut.json"
	! scope_is_plan "$T/mut.json" "$T/inside-run.json" /command/inside.js a "b c" "" || fail "a changed environment went unseen"
	echo "--- ... and one argv entry more"
	jq '.argv += ["--smol"]' "$T/scope-run.json" >"$T/mut.json"
	! scope_is_plan "$T/mut.json" "$T/inside-run.json" /command/inside.js a "b c" "" || fail "a changed argv went unseen"
}

# Issue 32, R-P12: a catalog whose command kind has one more argv entry
# (Bun's --smol) is followed by the launch (a command's argv was once the
# kind's argv[0] alone, then the call's), and the comparison with the old
# Plan sees it. A test snapshot in a scratch prefix.
scratch_argv_follows_the_catalog() {
	cp -a "$JIG_TEST_PREFIX" /var/tmp/prefix && chown -R jigtest /var/tmp/prefix
	cp "$JIG_DEV_KEY" /var/tmp/devkey && chown jigtest /var/tmp/devkey
}
case_argv_follows_the_catalog() {
	JIG=/var/tmp/prefix/bin/jig
	project
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[0].commands[] | select(.route == "run") | .command_scope' >"$T/old.json"
	snapshot_with '.kinds.command.argv += ["--smol"]'
	project
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[0].commands[] | select(.route == "run") | .command_scope' >"$T/new.json"
	[ "$(jq -c .argv "$T/new.json")" = '["/.jig/bun","--smol"]' ] || fail "the Plan does not show the catalog's argv: $(jq -c .argv "$T/new.json")"
	steps "[$(jq -cn --arg js "$(cat "$JIG_SOURCE/tests/flow/inside.js")" '{route: "run", files: {"inside.js": $js}, entry: "inside.js", args: ["a"]}')]"
	succeeded
	expect_ok 0
	res 0 .stdout >"$T/inside.json"
	scope_is_plan "$T/new.json" "$T/inside.json" /command/inside.js a || fail "the launch did not follow the catalog's argv"
	! scope_is_plan "$T/old.json" "$T/inside.json" /command/inside.js a || fail "the comparison did not see the catalog's argv"
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
