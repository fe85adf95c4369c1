#!/bin/sh
# jig session's runtime directory, lease and sweep on a supported host
# (issue 34; seed 001 Slice 3 items 8-10): the real /run/user/<uid> and a
# real cgroup v2 hierarchy, as the unprivileged user, through
# tests/unit/session/rt_probe.c (the API jig session calls). Each case_*
# is one ctest session_rt.<case> in the supported-host lane;
# scratch_<case> makes the user's /run/user/<uid> (the lane undoes /run).
set -eu
: "${JIG_RT_PROBE:?}" "${JIG_SOURCE:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }

user_runtime() {
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u" && chown jigtest:jigtest "/run/user/$u" && chmod 0700 "/run/user/$u"
}

# hold [CGROUP]: a session holder in the background ($holder; its id $id,
# TMPDIR $tmp); its stdin is a fifo kept open by $feeder.
hold() {
	T=$(mktemp -d /tmp/jig-rt.XXXXXX)
	mkfifo "$T/in"
	sleep 600 >"$T/in" & feeder=$!
	"$JIG_RT_PROBE" hold "$@" <"$T/in" >"$T/out" 2>"$T/err" & holder=$!
	i=0; until [ -s "$T/out" ]; do i=$((i+1)); [ $i -lt 500 ] || fail "no session: $(cat "$T/err")"; sleep 0.02; done
	read -r id tmp <"$T/out"
}

sweep() {
	"$JIG_RT_PROBE" sweep >"$T/swept" 2>"$T/said" || fail "the sweep failed: $(cat "$T/said")"
	cat "$T/said"
	swept=$(cat "$T/swept")
}

scratch_sigkill_then_cgroup() { user_runtime; }
# The holder SIGKILLed while a process of its session lives on in the
# session's cgroup: kept (populated 1, said in one line); that process gone
# (populated 0): the next sweep removes the directory and its TMPDIR.
case_sigkill_then_cgroup() {
	export XDG_RUNTIME_DIR="/run/user/$(id -u)"
	[ "$("$JIG_RT_PROBE" runtime)" = "$XDG_RUNTIME_DIR" ] || fail "the runtime directory was refused"
	cg="$JIG_TEST_CGROUP/rt-agent"
	mkdir "$cg"
	sleep 600 & agent=$!
	echo "$agent" >"$cg/cgroup.procs" || fail "cannot put a process in $cg"
	grep -qx 'populated 1' "$cg/cgroup.events" || fail "$cg is not populated"
	hold "${cg#/sys/fs/cgroup}"
	[ "$tmp" = "$XDG_RUNTIME_DIR/jig/sessions/$id/tmp" ] || fail "TMPDIR $tmp is not the exact path"
	[ "$(stat -c %a:%U "$tmp")" = "700:$(id -un)" ] || fail "TMPDIR is $(stat -c %a:%U "$tmp")"
	echo data >"$tmp/f"
	sweep
	[ "$swept" = 0 ] && [ -d "$tmp" ] || fail "a live session was swept"
	[ ! -s "$T/said" ] || fail "a live session was reported"
	kill -KILL "$holder"; wait "$holder" 2>/dev/null || true
	sweep
	[ "$swept" = 0 ] && [ -f "$tmp/f" ] || fail "a session whose cgroup is populated was swept"
	grep -qx "jig: kept the session directory $XDG_RUNTIME_DIR/jig/sessions/$id: its cgroup still has processes (populated 1); remove it by hand once its owner is gone" "$T/said" ||
		fail "the kept session was not said in one line"
	kill "$agent"; wait "$agent" 2>/dev/null || true
	i=0; until grep -qx 'populated 0' "$cg/cgroup.events"; do i=$((i+1)); [ $i -lt 500 ] || fail "$cg stays populated"; sleep 0.02; done
	sweep
	[ "$swept" = 1 ] && [ ! -e "$XDG_RUNTIME_DIR/jig/sessions/$id" ] || fail "the abandoned session was not removed"
	grep -q "jig: removed the abandoned session directory $XDG_RUNTIME_DIR/jig/sessions/$id" "$T/said" || fail "the removal was not said"
	kill "$feeder" 2>/dev/null || true
	rmdir "$cg"
	rm -rf "$T"
}

scratch_normal_close() { user_runtime; }
# A normal end (EOF on the holder's stdin) removes the session's directory;
# the cgroup's owner (the holder) was recorded from /proc/self/cgroup.
case_normal_close() {
	export XDG_RUNTIME_DIR="/run/user/$(id -u)"
	hold "$(sed -n 's/^0:://p' /proc/self/cgroup)"
	[ -d "$tmp" ] || fail "no TMPDIR"
	grep -q "\"cgroup\":\"$(sed -n 's/^0:://p' /proc/self/cgroup)\"" "$XDG_RUNTIME_DIR/jig/sessions/$id/lease" || fail "the cgroup was not recorded"
	kill "$feeder"; wait "$holder" || fail "the holder failed: $(cat "$T/err")"
	[ ! -e "$XDG_RUNTIME_DIR/jig/sessions/$id" ] || fail "the session's directory stays after a normal end"
	rm -rf "$T"
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
