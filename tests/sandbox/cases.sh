#!/bin/sh
# Containment tests of sandbox-linux scopes (issue 4). Each case_* is one
# ctest (sandbox.<case>), run in the supported-host lane (the cgroup v2 VM)
# as the unprivileged user; root_<case>, where defined, is that case's
# root-only preparation of the guest (tests/vm/run --root-setup, a guest of
# its own); scratch_<case> is one that changes only what the lane VM undoes
# between cases (files in /tmp, /var/tmp and /run, mounts, processes, the
# user-namespace limit, the delegated cgroup), run in the lane
# (--lane-root-setup).
# Every attempt runs /probe (tests/sandbox/probe.c, static) in a scope built
# from the base policy below, and checks both the attempt's own report and
# the supervisor's record.
# Requirements: R-C01..R-C12, R-P05, R-P06 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_PROBE:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"

T=$(mktemp -d /tmp/jig-sb.XXXXXX)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
MIB=1048576

# The base policy: the probe at /probe, a 4 MiB scratch tmpfs, stdio only.
policy() {
	jq -n --arg probe "$JIG_PROBE" '{
	  format: "jig-scope-policy/1", scope: "probe",
	  binds: [{source: $probe, target: "/probe"}],
	  tmpfs: [{target: "/scratch", size_bytes: 4194304}],
	  symlinks: [], env: {}, cwd: "/scratch", network: "none",
	  descriptors: [{source: 0, target: 0}, {source: 1, target: 1}, {source: 2, target: 2}],
	  limits: {memory_bytes: 134217728, tasks: 32, cpu_quota_us: 100000, wall_ms: 30000}
	}' | jq "${1:-.}" >"$T/policy.json"
}

# scope ARGS...: runs /probe ARGS in the scope; $rc, $T/out, $T/err, $T/rec.json.
scope() {
	set +e
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /probe "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	echo "--- /probe $* (exit $rc)"
	cat "$T/out" "$T/err"
	[ -s "$T/rec.json" ] && jq -c '{outcome,exit_status,signal,core_dumped,fenced,cleanup_confirmed,oom_kills,pids_max_hits,memory_peak_bytes,cpu_usec,cpu_throttled_usec,wall_ms}' "$T/rec.json"
	return 0
}
rec() { jq -r ".$1" "$T/rec.json"; }
want() { [ "$(rec "$1")" = "$2" ] || fail "record $1 is $(rec "$1"), expected $2"; }
contained() { # the probe reported every attempt denied, and the scope ended cleanly
	[ "$rc" -eq 0 ] || fail "probe exit $rc"
	! grep -q 'ESCAPE\|ALLOWED' "$T/out" || fail "an attempt succeeded"
	want outcome exited
	want cleanup_confirmed true
}
# After a run: the run's cgroups are gone.
no_residue() {
	cg=$(rec cgroup)
	[ ! -e "$cg" ] || fail "$cg still exists"
	[ ! -e "${cg%/*}" ] || fail "${cg%/*} still exists"
}

# --- 1. files ---------------------------------------------------------------
case_read_shadow() { policy; scope read /etc/shadow; contained; }
case_read_passwd() { policy; scope read /etc/passwd; contained; }
case_read_project() { policy; scope read "$JIG_SOURCE/README.md"; contained; }
case_read_home() {
	echo secret >"$HOME/jig-home-canary"
	policy; scope read "$HOME/jig-home-canary"; contained
}
case_write_ro_bind() {
	policy; scope write /probe; contained
	policy; scope write /newfile; contained
}
case_tmpfs_cap() {
	policy; scope fill /scratch/big $((64 * MIB)); contained
	grep -q "No space left" "$T/out" || fail "the 4 MiB cap did not stop the writer"
}
case_bind_refused_symlink() {
	ln -s /etc "$T/etc-link"
	policy ".binds += [{source: \"$T/etc-link\", target: \"/x\"}]"
	scope read /x/passwd
	[ "$rc" -eq 2 ] && grep -q "symbolic link" "$T/err" || fail "a symlinked bind source was accepted"
}

# Issue 12: every writable mount seen inside is in the permission plan with
# its cap; the root, /dev, /dev/pts and /proc are read-only (R-P05).
# writable_is_plan: compares the scope's rw mounts ($T/out of "/probe
# mounts") with the plan's "writable" list (target and size).
writable_is_plan() {
	"$JIG" scope plan "$T/policy.json" --json | jq -r '.writable[] | "\(.at) size=\(.size_bytes / 1024)k"' | sort >"$T/want"
	# The plan's devices are character devices, not storage.
	"$JIG" scope plan "$T/policy.json" --json | jq -r '.always.devices[]' >"$T/devices"
	awk -v devs="$(tr '\n' ' ' <"$T/devices")" 'BEGIN { split(devs, d, " "); for (k in d) dev[d[k]] = 1 }
	     $1 == "mount" && $3 == "rw" && !($2 in dev) { n = split($5, o, ","); s = ""; for (i = 1; i <= n; i++) if (o[i] ~ /^size=/) s = o[i]; print $2, s }' "$T/out" | sort >"$T/got"
	echo "writable in the plan:"; cat "$T/want"; echo "writable inside:"; cat "$T/got"
	cmp -s "$T/want" "$T/got" || fail "the scope's writable mounts are not the plan's"
	for m in / /dev /dev/pts /proc; do
		grep -q "^mount $m ro " "$T/out" || fail "$m is not mounted read-only"
	done
}
case_writable_mounts_are_the_plan() {
	policy '.tmpfs += [{target: "/work", size_bytes: 2097152}]'
	scope mounts; [ "$rc" -eq 0 ] || fail "probe exit $rc"
	writable_is_plan
	policy '.network = "host" | .tmpfs = [] | .cwd = "/"'
	scope mounts; [ "$rc" -eq 0 ] || fail "probe exit $rc"
	writable_is_plan
}
# Issue 34: a writable bind ("write": true) is the host's own directory,
# bound read/write: what the payload writes there the host sees; a
# read-only bind beside it still refuses writes (EROFS); the plan lists it
# as writable and the scope has nothing else writable (R-P05).
case_writable_bind() {
	mkdir "$T/work" "$T/ro"
	policy ".binds += [{source: \"$T/work\", target: \"/work\", write: true}, {source: \"$T/ro\", target: \"/ro\"}]"
	scope write /work/out
	[ "$rc" -eq 1 ] && grep -q "ESCAPE: /work/out" "$T/out" || fail "the payload could not write through the writable bind"
	[ "$(cat "$T/work/out")" = x ] || fail "the host does not see what the payload wrote"
	want cleanup_confirmed true
	scope write /ro/out; contained
	grep -q "Read-only file system" "$T/out" || fail "the read-only bind was not refused with EROFS"
	[ ! -e "$T/ro/out" ] || fail "a file appeared in the read-only bind's source"
	"$JIG" scope plan "$T/policy.json" --json | jq -e --arg w "$T/work" '[.writable[] | select(.bind)] == [{at: "/work", bind: $w}]' \
		|| fail "the plan does not list the writable bind"
	"$JIG" scope plan "$T/policy.json" | grep -q "/work .*<- $T/work (read/write)" || fail "the text plan does not show it read/write"
	scope mounts; [ "$rc" -eq 0 ] || fail "probe exit $rc"
	grep -q "^mount /work rw " "$T/out" || fail "/work is not mounted read/write"
	grep -q "^mount /ro ro " "$T/out" || fail "/ro is not mounted read-only"
	# Refused live: a file, a symbolic link, another owner's directory.
	echo data >"$T/file"
	policy ".binds += [{source: \"$T/file\", target: \"/work\", write: true}]"
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "not a directory" "$T/err" || fail "a writable bind of a file was accepted"
	ln -s "$T/work" "$T/work-link"
	policy ".binds += [{source: \"$T/work-link\", target: \"/work\", write: true}]"
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "symbolic link" "$T/err" || fail "a symlinked writable bind was accepted"
	policy '.binds += [{source: "/usr/share", target: "/work", write: true}]'
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "not the caller" "$T/err" || fail "a writable bind of root's directory was accepted"
}
# Bind mounts are recursive: a writable bind whose source has another
# file system mounted below it is refused (that mount would be writable
# too); the mount point itself may be bound.
scratch_writable_bind_submount() {
	mkdir -p /var/tmp/rwsub/inner && chown -R jigtest /var/tmp/rwsub && mount -t tmpfs -o mode=0700,uid=$(id -u jigtest) tmpfs /var/tmp/rwsub/inner
}
case_writable_bind_submount() {
	policy '.binds += [{source: "/var/tmp/rwsub", target: "/work", write: true}]'
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "mounted below it at /var/tmp/rwsub/inner" "$T/err" || fail "a writable bind holding another mount was accepted"
	policy '.binds += [{source: "/var/tmp/rwsub/inner", target: "/work", write: true}]'
	scope write /work/out
	[ "$rc" -eq 1 ] && grep -q "ESCAPE: /work/out" "$T/out" || fail "the mount itself could not be bound for writing"
}
# A session's private TMPDIR (decision 145) is the one writable bind below
# /run: exactly the caller's /run/user/UID/jig/sessions/<32 hex>/tmp; a
# read-only bind of it, or its session directory, stays refused.
SESSION_ID=0123456789abcdef0123456789abcdef
scratch_writable_bind_session_tmp() {
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u/jig/sessions/$SESSION_ID/tmp" && chown -R jigtest "/run/user/$u" && chmod -R 0700 "/run/user/$u"
}
case_writable_bind_session_tmp() {
	tmp="/run/user/$(id -u)/jig/sessions/$SESSION_ID/tmp"
	policy ".binds += [{source: \"$tmp\", target: \"/stmp\", write: true}]"
	scope write /stmp/out
	[ "$rc" -eq 1 ] && grep -q "ESCAPE: /stmp/out" "$T/out" || fail "the payload could not write to the session's TMPDIR"
	[ "$(cat "$tmp/out")" = x ] || fail "the host does not see the file in the session's TMPDIR"
	policy ".binds += [{source: \"$tmp\", target: \"/stmp\"}]"
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "never granted" "$T/err" || fail "a read-only bind of the session's TMPDIR was accepted"
	policy ".binds += [{source: \"${tmp%/tmp}\", target: \"/stmp\", write: true}]"
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "never granted" "$T/err" || fail "a writable bind of the session's directory was accepted"
}
case_dev_shm_not_writable() {
	policy; scope fill /dev/shm/big $((64 * MIB)); contained
	grep -q "Read-only file system" "$T/out" || fail "/dev/shm was writable"
	policy; scope write /dev/newfile; contained
	policy; scope write /proc/self/comm; contained
	# A device node itself is still usable.
	policy; scope write /dev/null
	grep -q "ESCAPE: /dev/null" "$T/out" || fail "/dev/null is not writable"
}
# The payload cannot re-tune pid 1, the trusted launcher (same uid inside
# the user namespace), and modify_ldt is denied; on itself the same calls
# still work.
case_launcher_not_tunable() { policy; scope tune-pid1; contained; }

# Standard streams reach the scope as pipes that jig relays: nothing inside
# resolves them to a host path or the caller's terminal (issue 12).
case_stdio_are_pipes() {
	policy
	head -c 200000 /dev/urandom | base64 >"$T/in"
	set +e
	"$JIG" scope run "$T/policy.json" -- /probe stdio <"$T/in" >"$T/out" 2>"$T/err"; rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	cmp -s "$T/in" "$T/out" || fail "stdin was not relayed to stdout intact"
	[ "$(grep -c '^fd [0-2] -> pipe:\[' "$T/err")" -eq 3 ] || fail "a standard stream is not a pipe"
	! grep -q "$T" "$T/err" || fail "a host path is visible"
	# From a terminal: still pipes, and no /dev/console (bwrap adds one
	# bound to the caller's terminal when its stdout is one).
	script -qec "'$JIG' scope run '$T/policy.json' -- /probe stdio </dev/null; '$JIG' scope run '$T/policy.json' -- /probe mounts" "$T/typescript" >"$T/tty" 2>&1 </dev/null || true
	cat "$T/tty"
	[ "$(grep -c '^fd [0-2] -> pipe:\[' "$T/tty")" -eq 3 ] || fail "a standard stream is the terminal"
	grep -q '^mount /proc ' "$T/tty" || fail "no mount table"
	! grep -q '/dev/console\|/dev/pts/[0-9]' "$T/tty" || fail "the caller's terminal is visible"
}

# --- 2. network ---------------------------------------------------------------
listener() {
	"$JIG_PROBE" listen 47123 jig-abstract-test "$T/listen.log" &
	LPID=$!
	i=0; until grep -q listening "$T/listen.log" 2>/dev/null; do i=$((i+1)); [ $i -lt 100 ] || fail "listener"; sleep 0.05; done
}
no_contact() {
	sleep 0.3
	kill "$LPID"
	! grep -q contact "$T/listen.log" || fail "the host listener was reached: $(cat "$T/listen.log")"
}
case_net_tcp_loopback() { listener; policy; scope tcp 47123; contained; no_contact; }
case_net_udp_loopback() { listener; policy; scope udp 47123; contained; no_contact; }
case_net_abstract_unix() { listener; policy; scope abstract jig-abstract-test; contained; no_contact; }
case_net_vsock() { policy; scope vsock; contained; }
case_net_raw() { policy; scope raw; contained; }
case_net_host_raw_still_denied() { policy '.network = "host"'; scope raw; contained; }
# The host network shares the host's abstract unix names: still unreachable.
case_net_host_abstract_unix_denied() { listener; policy '.network = "host"'; scope abstract jig-abstract-test; contained; no_contact; }

# --- 3. system calls ------------------------------------------------------------
case_syscalls_denied() { policy; scope syscalls; contained; }
# Negative evidence: the same attempts outside a scope are not denied the
# same way, so the probe can tell a filter from an unfiltered kernel.
case_syscalls_control_unfiltered() {
	set +e; "$JIG_PROBE" syscalls >"$T/out" 2>&1; rc=$?; set -e
	cat "$T/out"
	[ "$rc" -eq 1 ] || fail "unfiltered run reported everything denied"
	[ "$(grep -c '^ALLOWED' "$T/out")" -ge 20 ] || fail "fewer than 20 attempts behave differently without the filter"
}
case_tiocsti() {
	policy; scope tiocsti; contained
	policy; scope tiocsti-high; contained
}
case_tiocsti_tty() {
	# A real controlling terminal on the caller's side: script(1) gives jig a
	# pty as stdin; nothing may be injected into it.
	policy
	script -qec "'$JIG' scope run '$T/policy.json' --record '$T/rec.json' -- /probe tiocsti-high" "$T/typescript" >"$T/out" 2>&1 </dev/null || true
	cat "$T/out"
	grep -q "denied TIOCSTI" "$T/out" || fail "TIOCSTI not denied on a terminal"
	! grep -q ESCAPE "$T/out" || fail "TIOCSTI injected"
}
# Issue 34: jig scope run --terminal gives the scope jig's own pty ("@terminal")
# as descriptors 0-2 and its controlling terminal, never the operator's;
# tests/sandbox/pty_drive.py plays the operator at a terminal of its own.
# tpolicy: a shell (/usr) with the terminal at 0, 1 and 2.
tpolicy() {
	policy '.binds += [{source: "/usr", target: "/usr"}]
	  | .symlinks = [{target: "/bin", link: "usr/bin"}, {target: "/lib", link: "usr/lib"}, {target: "/lib64", link: "usr/lib64"}]
	  | .env = {PATH: "/usr/bin", LANG: "C"}
	  | .descriptors = [{source: "@terminal", target: 0}, {source: "@terminal", target: 1}, {source: "@terminal", target: 2}]'
}
DRIVE="python3 $JIG_SOURCE/tests/sandbox/pty_drive.py"
# Typed input reaches the program, its output comes back, a resize of the
# operator's window reaches it as SIGWINCH with the new size (its
# controlling terminal is jig's pty), and after it is SIGKILLed the
# operator's terminal mode is restored.
case_terminal_relay() {
	tpolicy
	cat >"$T/agent.sh" <<'SH'
trap 'echo "WINCH:$(stty size)"; w=1' WINCH
echo "SIZE0:$(stty size)"
[ -t 0 ] && [ -t 1 ] && echo "TTY:yes"
echo READY
read line
echo "GOT:$line"
echo RESIZE-ME
while [ -z "$w" ]; do sleep 0.1; done
read k
kill -KILL $$
SH
	jq --arg a "$T/agent.sh" '.binds += [{source: $a, target: "/agent.sh"}]' "$T/policy.json" >"$T/p2.json" && mv "$T/p2.json" "$T/policy.json"
	$DRIVE expect:SIZE0:24\ 80 expect:TTY:yes expect:READY raw send:hello\\r expect:GOT:hello expect:RESIZE-ME \
		resize:30:100 expect:WINCH:30\ 100 send:k\\r exit:137 restored \
		-- "$JIG" scope run --terminal "$T/policy.json" --record "$T/rec.json" -- sh /agent.sh \
		|| fail "the terminal relay"
	want outcome signaled
	want signal 9
	want cleanup_confirmed true
}
# jig itself gets SIGTERM, SIGINT or SIGHUP while the program runs: the
# scope is fenced and the operator's terminal mode restored.
case_terminal_sigterm_restores() {
	tpolicy
	for sig in TERM INT HUP; do
		$DRIVE expect:READY raw kill:$sig exit:1 restored \
			-- "$JIG" scope run --terminal "$T/policy.json" --record "$T/rec.json" -- sh -c 'echo READY; sleep 60' \
			|| fail "the terminal after SIG$sig"
		want cleanup_confirmed true
		want outcome failed
	done
}
# stdin not a terminal: relayed without raw mode; the program still has
# the pty, and the end of the input reaches it as an end of file.
case_terminal_stdin_not_a_tty() {
	tpolicy
	set +e
	printf 'one\ntwo\n' | "$JIG" scope run --terminal "$T/policy.json" -- sh -c 'while read l; do echo "GOT:$l"; done; [ -t 0 ] && echo TTY0; echo DONE' >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -q "GOT:one" "$T/out" && grep -q "GOT:two" "$T/out" && grep -q TTY0 "$T/out" && grep -q DONE "$T/out" \
		|| fail "the piped input did not reach the program through its terminal"
}
# TIOCSTI on the scope's controlling terminal (jig's pty) is refused by
# the seccomp filter; "@terminal" without --terminal is refused.
case_terminal_tiocsti_denied() {
	policy '.descriptors = [{source: "@terminal", target: 0}, {source: "@terminal", target: 1}, {source: "@terminal", target: 2}]'
	$DRIVE expect:TIOCLINUX exit:0 restored \
		-- "$JIG" scope run --terminal "$T/policy.json" -- /probe tiocsti-high >"$T/out" 2>&1 || { cat "$T/out"; fail "tiocsti on the terminal"; }
	cat "$T/out"
	grep -q "denied TIOCSTI" "$T/out" || fail "TIOCSTI was not denied on the scope's terminal"
	! grep -q "ESCAPE\|ALLOWED" "$T/out" || fail "TIOCSTI or TIOCLINUX went through"
	scope exit 0
	[ "$rc" -eq 2 ] && grep -q "runtime slot" "$T/err" || fail "@terminal without --terminal was accepted"
}
case_abi_int80_killed() {
	policy; scope int80
	want outcome crashed; want signal 31
	! grep -q ESCAPE "$T/out" || fail "int 0x80 returned"
}
case_abi_x32_killed() {
	policy; scope x32
	want outcome crashed; want signal 31
	! grep -q ESCAPE "$T/out" || fail "x32 syscall returned"
}

# --- 4. descriptors ---------------------------------------------------------------
case_fds_only_selected() {
	policy
	set +e
	"$JIG_PROBE" hold "$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /probe fds >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$(cat "$T/out")" = "0 1 2" ] || fail "descriptors in the scope: $(cat "$T/out"), expected 0 1 2"
}
case_fds_others_unopenable() {
	policy; scope procs; contained
	# The launcher (PID 1) is visible, so the attempt on it was real.
	grep -q "other processes visible: [1-9]" "$T/out" || fail "no other process was visible to try"
	grep -q "denied: /proc/1/fd" "$T/out" || fail "/proc/1/fd was not tried"
}

# --- 5. environment ---------------------------------------------------------------
case_env_canary() {
	policy '.env = {PATH: "/usr/bin", LANG: "C"}'
	JIG_CANARY_SECRET=canary-7f3a9 OPENAI_API_KEY=canary-7f3a9 scope env
	contained
	! grep -q canary-7f3a9 "$T/out" "$T/err" "$T/rec.json" || fail "the canary leaked into the scope"
	[ "$(grep -c '^env ' "$T/out")" -eq 2 ] || fail "environment is not exactly the policy's"
}
case_env_credential_refused() {
	policy '.env = {OPENAI_API_KEY: "x"}'
	scope env
	[ "$rc" -eq 2 ] && grep -q "credentials never enter" "$T/err" || fail "a credential variable was accepted"
}

# --- 6. limits --------------------------------------------------------------------
case_limit_memory_oom() {
	policy '.limits.memory_bytes = 67108864'
	scope hog
	want outcome oom; want cleanup_confirmed true
	[ "$(rec oom_kills)" -ge 1 ] || fail "no OOM kill recorded"
	[ "$rc" -eq 125 ] || fail "exit $rc, expected 125"
}
case_limit_forkbomb() {
	policy '.limits.tasks = 16'
	scope forkbomb
	grep -q "fork stopped" "$T/out" || fail "the fork bomb was not stopped"
	[ "$(rec pids_max_hits)" -ge 1 ] || fail "no pids.max hit recorded"
	want cleanup_confirmed true
	"$JIG" --version >/dev/null || fail "the host cannot fork after the bomb"
}
case_limit_cpu_throttled() {
	policy '.limits.cpu_quota_us = 20000'
	scope spin 3000
	contained
	share=$(sed -n 's/.*share \([0-9.]*\)/\1/p' "$T/out")
	echo "cpu share with a 20% quota: $share"
	awk -v s="$share" 'BEGIN { exit !(s < 0.35) }' || fail "cpu share $share above the 20% quota"
	[ "$(rec cpu_throttled_usec)" -gt 0 ] || fail "no throttling recorded"
}

# --- 7. descendants -----------------------------------------------------------------
case_detached_writer_fenced() {
	: >"$T/ticks"
	exec 3>>"$T/ticks"
	policy '.descriptors += [{source: 3, target: 3}]'
	scope detach
	exec 3>&-
	want outcome exited; want cleanup_confirmed true
	no_residue
	n1=$(wc -l <"$T/ticks"); sleep 0.5; n2=$(wc -l <"$T/ticks")
	[ "$n1" -eq "$n2" ] || fail "the detached writer survived ($n1 -> $n2 ticks)"
}
case_supervisor_killed() {
	: >"$T/ticks"
	policy '.descriptors += [{source: 3, target: 3}]'
	sh -c "exec 3>>'$T/ticks'; '$JIG' scope run '$T/policy.json' -- /probe detach-wait" >"$T/out" 2>&1 </dev/null &
	parent=$!
	i=0; until [ -s "$T/ticks" ]; do i=$((i+1)); [ $i -lt 200 ] || fail "writer did not start"; sleep 0.05; done
	sup=$(pgrep -P "$parent" -x jig || echo "$parent")
	# The supervisor's parent dies, then the supervisor itself, without warning.
	kill -KILL "$parent" 2>/dev/null || true
	kill -KILL "$sup" 2>/dev/null || true
	sleep 1
	n1=$(wc -l <"$T/ticks"); sleep 0.5; n2=$(wc -l <"$T/ticks")
	[ "$n1" -eq "$n2" ] || fail "the scope survived its supervisor ($n1 -> $n2 ticks)"
	! pgrep -u "$(id -u)" -f '/probe detach' || fail "probe processes survive"
	# Issue 18: its reaper removed the empty cgroups, and said so.
	i=0; while [ -n "$(find /sys/fs/cgroup -name "jig-$sup-*" 2>/dev/null)" ]; do
		i=$((i+1)); [ $i -lt 100 ] || fail "cgroups left: $(find /sys/fs/cgroup -name "jig-$sup-*")"; sleep 0.05; done
	i=0; until grep -q "supervisor (pid $sup) was lost; its scope was fenced and its cgroups removed" "$T/out"; do
		i=$((i+1)); [ $i -lt 100 ] || { cat "$T/out"; fail "no report from the reaper"; }; sleep 0.05; done
	! pgrep -x jig-reaper >/dev/null || fail "the reaper did not end"
}
case_parent_killed_supervisor_finishes() {
	: >"$T/ticks"
	policy '.descriptors += [{source: 3, target: 3}] | .limits.wall_ms = 2000'
	sh -c "exec 3>>'$T/ticks'; '$JIG' scope run '$T/policy.json' --record '$T/rec.json' -- /probe detach-wait; echo done >'$T/sup-done'" >"$T/out" 2>&1 </dev/null &
	parent=$!
	i=0; until [ -s "$T/ticks" ]; do i=$((i+1)); [ $i -lt 200 ] || fail "writer did not start"; sleep 0.05; done
	i=0; until sup=$(pgrep -P "$parent" -x jig); do i=$((i+1)); [ $i -lt 100 ] || fail "no jig process under the parent shell"; sleep 0.05; done
	kill -KILL "$parent"
	# The orphaned supervisor still fences at its deadline and cleans up.
	i=0; while kill -0 "$sup" 2>/dev/null; do i=$((i+1)); [ $i -lt 200 ] || fail "supervisor hangs"; sleep 0.05; done
	want outcome timeout; want cleanup_confirmed true
	no_residue
	n1=$(wc -l <"$T/ticks"); sleep 0.5; n2=$(wc -l <"$T/ticks")
	[ "$n1" -eq "$n2" ] || fail "writer survived"
}

# --- 8. crash and deadline ------------------------------------------------------------
case_crash_abort_core() {
	ulimit -c unlimited
	policy; scope abort
	want outcome crashed; want signal 6; want core_dumped true; want cleanup_confirmed true
	[ "$rc" -eq 134 ] || fail "exit $rc, expected 134"
}
case_crash_fenced_before_deadline() {
	ulimit -c unlimited
	policy '.limits.wall_ms = 20000'
	scope crash-orphan
	want outcome crashed; want signal 6; want core_dumped true; want fenced true
	want cleanup_confirmed true
	[ "$(rec wall_ms)" -lt 10000 ] || fail "fenced only after $(rec wall_ms) ms"
}
case_deadline_timeout() {
	policy '.limits.wall_ms = 1000'
	scope sleep 60
	want outcome timeout; want fenced true; want cleanup_confirmed true
	[ "$rc" -eq 124 ] || fail "exit $rc, expected 124"
	[ "$(rec wall_ms)" -lt 8000 ] || fail "took $(rec wall_ms) ms"
	no_residue
}

# --- 9. fail closed ----------------------------------------------------------------------
refused() {
	[ "$rc" -eq 3 ] || fail "exit $rc, expected 3 (refused)"
	grep -q "$1" "$T/err" || fail "reason does not say /$1/"
	[ ! -s "$T/out" ] || fail "the payload ran"
}
scratch_no_delegation() { chown -R root:root /sys/fs/cgroup/jig-test; }
case_no_delegation() { policy; scope exit 0; refused "not a delegated cgroup"; }
scratch_userns_disabled() { echo 0 >/proc/sys/user/max_user_namespaces; }
case_userns_disabled() { policy; scope exit 0; refused "user namespaces are disabled"; }
scratch_bwrap_missing() {
	mkdir -p /run/orig-bin && mount --bind /usr/bin /run/orig-bin &&
	mount -t tmpfs tmpfs /usr/bin &&
	for f in /run/orig-bin/*; do [ "${f##*/}" = bwrap ] || ln -s "$f" "/usr/bin/${f##*/}"; done
}
case_bwrap_missing() { policy; scope exit 0; refused "bwrap: No such file"; }

# No delegated cgroup, but a systemd user manager: jig obtains a transient
# scope with Delegate=yes (systemd-run --user --scope) and runs there. The VM
# has no systemd, so root_ stands in for it: a fake systemd-run at the
# fixed path, a user bus socket, and a root loop playing PID 1's
# AttachProcessesToUnit.
root_systemd_transient_scope() {
	uid=$(id -u jigtest)
	cg=/sys/fs/cgroup/jig-test
	chown -R root:root "$cg"
	mkdir "$cg/user-scopes" && echo "+memory +pids +cpu" >"$cg/user-scopes/cgroup.subtree_control"
	chown "$uid" "$cg/user-scopes" "$cg/user-scopes/cgroup.procs" "$cg/user-scopes/cgroup.subtree_control" "$cg/user-scopes/cgroup.threads"
	mkdir -p "/run/user/$uid" && "$JIG_PROBE" mksock "/run/user/$uid/bus" && chown -R "$uid" "/run/user/$uid"
	mkfifo /run/jig-attach && chmod 622 /run/jig-attach
	( while :; do
		read -r pid unit </run/jig-attach || continue
		d=$cg/user-scopes/$unit
		mkdir "$d" && chown "$uid" "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads" &&
			echo "$pid" >"$d/cgroup.procs"
	done ) >/dev/null 2>&1 &
	cat >/run/fake-systemd-run <<-'EOF'
	#!/bin/sh
	unit=
	while [ "$1" != -- ]; do [ "$1" = --unit ] && { unit=$2; shift; }; shift; done
	shift
	echo "fake systemd-run: $unit" >&2
	echo "$$ $unit" >/run/jig-attach
	i=0
	until grep -q "user-scopes/$unit\$" /proc/self/cgroup; do i=$((i+1)); [ $i -lt 200 ] || exit 99; sleep 0.05; done
	exec "$@"
	EOF
	chmod 755 /run/fake-systemd-run && mount --bind /run/fake-systemd-run /usr/bin/systemd-run
}
case_systemd_transient_scope() {
	policy; scope fds
	grep -q "fake systemd-run: jig-" "$T/err" || fail "jig did not ask for a transient scope"
	want outcome exited; want cleanup_confirmed true
	[ "$(head -1 "$T/out")" = "0 1 2" ] || fail "descriptors changed across the re-exec: $(head -1 "$T/out")"
	case $(rec cgroup) in */user-scopes/jig-*.scope/jig-*/probe) ;; *) fail "not in the transient scope: $(rec cgroup)" ;; esac
	no_residue
}
case_no_delegation_no_systemd() {
	policy; scope exit 0; refused "no transient scope either: no systemd user manager"
}
scratch_no_delegation_no_systemd() { chown -R root:root /sys/fs/cgroup/jig-test; }

# --- 10. privileges ---------------------------------------------------------------------
case_no_privileges() {
	policy; scope status; contained
	grep -q "^CapEff:.*0000000000000000" "$T/out" || fail "effective capabilities"
	grep -q "^CapPrm:.*0000000000000000" "$T/out" || fail "permitted capabilities"
	grep -q "^CapBnd:.*0000000000000000" "$T/out" || fail "bounding set"
	grep -q "^NoNewPrivs:.*1" "$T/out" || fail "no_new_privs"
	grep -q "^Seccomp:.*2" "$T/out" || fail "seccomp filter mode"
	n=$(sed -n 's/^pids //p' "$T/out")
	[ "$n" -le 2 ] || fail "$n processes visible"
}
scratch_setuid_copy() { mkdir -p /var/tmp/suid && cp "$JIG_PROBE" /var/tmp/suid/probe && chmod 4755 /var/tmp/suid/probe; }
case_setuid_copy() {
	ls -l /var/tmp/suid/probe
	policy '.binds += [{source: "/var/tmp/suid/probe", target: "/suid-probe"}]'
	set +e
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /suid-probe euid >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	contained
	grep -q "euid $(id -u)" "$T/out" || fail "setuid raised privileges"
}
case_mknod() { policy; scope mknod /scratch/null; contained; }

# --- Bun's JIT under the filter --------------------------------------------------------
case_bun_jit() {
	: "${JIG_BUN:?}"
	policy '.binds = [{source: "/usr", target: "/usr"}, {source: $ENV.JIG_BUN, target: "/bun"}]
	  | .symlinks = [{target: "/lib", link: "usr/lib"}, {target: "/lib64", link: "usr/lib64"}, {target: "/bin", link: "usr/bin"}]
	  | .env = {PATH: "/usr/bin", TMPDIR: "/scratch", HOME: "/scratch"}
	  | .limits.memory_bytes = 1073741824 | .limits.tasks = 64 | .limits.cpu_quota_us = 200000'
	set +e
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /bun -e '
	  function f(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
	  const t0 = performance.now(); const r = f(2e7); const ms = performance.now() - t0;
	  console.log("bun", Bun.version, "result", r, "ms", Math.round(ms));' >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] || fail "bun exited $rc"
	grep -q "^bun 1\..* result [0-9]" "$T/out" || fail "bun did not run"
	want outcome exited; want cleanup_confirmed true
	# The JIT is really on: the same loop with JavaScriptCore's JIT switched
	# off (same scope, one more variable) is several times slower.
	jit=$(sed -n 's/.* ms \([0-9]*\)$/\1/p' "$T/out")
	jq '.env.BUN_JSC_useJIT = "0"' "$T/policy.json" >"$T/nojit.json"
	"$JIG" scope run "$T/nojit.json" -- /bun -e '
	  function f(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
	  const t0 = performance.now(); const r = f(2e7); console.log("ms", Math.round(performance.now() - t0));' >"$T/out2" </dev/null
	nojit=$(sed -n 's/^ms \([0-9]*\)$/\1/p' "$T/out2")
	echo "loop: $jit ms with the JIT, $nojit ms without"
	[ "$nojit" -gt $((jit * 3)) ] || fail "the JIT does not seem to be active in the scope"
}

# --- the launch itself ---------------------------------------------------------------------
case_exit_status() {
	policy; scope exit 7
	want outcome exited; want exit_status 7; want cleanup_confirmed true
	[ "$rc" -eq 7 ] || fail "exit $rc"
	no_residue
}
case_exec_missing() {
	policy
	set +e
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /nonexistent >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/err"
	want outcome failed; want cleanup_confirmed true
	grep -q "cannot start /nonexistent" "$T/err" || fail "no reason"
	want payload_started false
}
# Issue 31: the launcher's report of the payload's start tells a scope
# whose bwrap was killed half-way from one that never ran.
case_bwrap_killed_while_running() {
	policy
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /probe sleep 60 >"$T/out" 2>"$T/err" </dev/null &
	sup=$!
	i=0; until pgrep -u "$(id -u)" -f '^/probe sleep 60' >/dev/null; do i=$((i+1)); [ $i -lt 400 ] || fail "the payload did not start"; sleep 0.05; done
	b=$(pgrep -P "$sup" -x bwrap) || fail "no bwrap under the supervisor"
	kill -KILL "$b"
	set +e; wait "$sup"; rc=$?; set -e
	cat "$T/err"
	want outcome failed; want payload_started true; want cleanup_confirmed true
	grep -q "the scope was killed while its payload ran (bwrap killed by signal 9); the payload's end was not reported" "$T/err" ||
		fail "the message does not say the payload ran"
	! grep -q "before its payload started" "$T/err" || fail "recorded as never started"
	! pgrep -u "$(id -u)" -f '^/probe sleep 60' >/dev/null || fail "the payload survived"
	no_residue
}
case_bwrap_killed_before_start() {
	# The supervisor stopped with the scope's cgroup made and empty; the
	# cgroup frozen, so the child that would exec bwrap stops as it is
	# born, before anything of the scope runs; then it is SIGKILLed.
	policy
	rm -f "$T/fault.log"
	JIG_FAULT_STOP="scope cgroup" JIG_FAULT_LOG="$T/fault.log" "$JIG" scope run "$T/policy.json" --record "$T/rec.json" \
		-- /probe sleep 60 >"$T/out" 2>"$T/err" </dev/null &
	sup=$!
	i=0; until grep -q "^scope cgroup $sup\$" "$T/fault.log" 2>/dev/null && [ "$(ps -o stat= -p "$sup" | cut -c1)" = T ]; do
		i=$((i+1)); [ $i -lt 600 ] || fail "the supervisor did not stop at scope cgroup"; sleep 0.05; done
	leaf=$(find /sys/fs/cgroup -type d -path "*/jig-$sup-*/probe" | head -1)
	[ -n "$leaf" ] || fail "no scope cgroup"
	echo 1 >"$leaf/cgroup.freeze"
	kill -CONT "$sup"
	i=0; until c=$(head -1 "$leaf/cgroup.procs") && [ -n "$c" ] && grep -q '^frozen 1' "$leaf/cgroup.events"; do
		i=$((i+1)); [ $i -lt 400 ] || fail "no frozen child in the scope's cgroup"; sleep 0.05; done
	kill -KILL "$c"
	set +e; wait "$sup"; rc=$?; set -e
	cat "$T/err"
	want outcome failed; want payload_started false; want cleanup_confirmed true
	grep -q "the scope ended before its payload started (bwrap killed by signal 9)" "$T/err" || fail "not recorded as never started"
	no_residue
}

# Entry for other suites that need the same systemd stand-in (as root).
if [ "${1:-}" = systemd_transient_scope_root ]; then
	root_systemd_transient_scope
	exit 0
fi
. "$JIG_SOURCE/tests/vm/case-main.sh"
