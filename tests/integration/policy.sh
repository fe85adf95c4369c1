#!/bin/sh
# Scope policy validation, canonical identity, permission plan, and the
# refusals that need no supported host. Each case_* is one ctest
# (policy.<case>); jig runs as the unprivileged user jigtest.
# Requirements: R-P03 (strict validation), R-P04 (canonical, digested),
# R-P05 (permission plan), R-C02/R-T02 (refuse on an unsupported host).
set -eu
: "${JIG_TEST_PREFIX:?}"
USER_NAME=jigtest
T=$(mktemp -d /tmp/jig-pol.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG" "$@"; }

base() {
	jq -n '{
	  format: "jig-scope-policy/1", scope: "t",
	  binds: [{source: "/usr", target: "/usr"}],
	  tmpfs: [{target: "/scratch", size_bytes: 1048576}],
	  symlinks: [{target: "/bin", link: "usr/bin"}],
	  env: {PATH: "/usr/bin"}, cwd: "/scratch", network: "none",
	  descriptors: [{source: 1, target: 1}],
	  limits: {memory_bytes: 67108864, tasks: 16, cpu_quota_us: 50000, wall_ms: 5000}
	}' | jq "${1:-.}" >"$T/p.json"
	chmod 644 "$T/p.json"
}
# bad JQ PATTERN: the edited policy is refused with exit 2 and one line naming it.
bad() {
	base "$1"
	set +e
	jig scope plan "$T/p.json" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2 for: $1"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -Eq -- "$2" "$T/err" || fail "error does not match /$2/"
	[ ! -s "$T/out" ] || fail "a plan was printed"
}

case_plan_text() {
	base
	jig scope plan "$T/p.json" >"$T/out"
	cat "$T/out"
	grep -q "^scope t" "$T/out" && grep -q "/usr  *<- /usr" "$T/out" && grep -q "/scratch .*1 MiB" "$T/out" &&
		grep -q "network none" "$T/out" && grep -q "PATH=/usr/bin" "$T/out" && grep -q "1 <- caller's 1" "$T/out" &&
		grep -q "memory 64 MiB" "$T/out" && grep -q "policy sha256 [0-9a-f]\{64\}" "$T/out" || fail "plan incomplete"
}
case_plan_json() {
	base
	jig scope plan "$T/p.json" --json >"$T/out"
	jq -e '.schema == "jig-permission-plan/1" and (.policy_sha256 | test("^[0-9a-f]{64}$")) and .network == "none"
	       and .binds[0].source == "/usr" and .limits.tasks == 16 and (.denied | index("ptrace"))' "$T/out" >/dev/null ||
		fail "plan json: $(cat "$T/out")"
}
case_identity_canonical() {
	# Key order, list order and whitespace do not change the identity;
	# any grant does.
	base '.binds += [{source: "/etc/ssl", target: "/etc/ssl"}]'
	a=$(jig scope plan "$T/p.json" --json | jq -r .policy_sha256)
	base '.binds = [{target: "/etc/ssl", source: "/etc/ssl"}, {source: "/usr", target: "/usr"}]'
	jq -S . "$T/p.json" >"$T/q.json" && cp "$T/q.json" "$T/p.json"
	b=$(jig scope plan "$T/p.json" --json | jq -r .policy_sha256)
	[ "$a" = "$b" ] || fail "same policy, two identities: $a $b"
	base '.binds += [{source: "/etc/ssl", target: "/etc/ssl"}] | .limits.tasks = 17'
	c=$(jig scope plan "$T/p.json" --json | jq -r .policy_sha256)
	[ "$a" != "$c" ] || fail "a changed limit kept the identity"
}
case_dry_run() {
	base
	jig scope run "$T/p.json" --dry-run -- /bin/sh -c 'touch /tmp/jig-dry-ran' >"$T/out"
	grep -q "dry run" "$T/out" || fail "no dry-run note"
	[ ! -e /tmp/jig-dry-ran ] || fail "dry run ran the program"
}

case_bad_unknown_key() { bad '.extra = 1' 'unknown key|"extra"'; }
case_bad_missing_key() { bad 'del(.limits)' 'limits'; }
case_bad_duplicate_key() {
	base
	sed 's/"scope": "t"/"scope": "t", "scope": "u"/' "$T/p.json" >"$T/q.json"
	cp "$T/q.json" "$T/p.json"
	set +e; jig scope plan "$T/p.json" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q "duplicate" "$T/err" || fail "duplicate key accepted"
}
case_bad_format() { bad '.format = "jig-scope-policy/2"' 'format'; }
case_bad_scope_name() { bad '.scope = "../x"' 'scope'; }
case_bad_relative_source() { bad '.binds[0].source = "usr"' 'binds\[0\].source "usr"'; }
case_bad_dotdot_source() { bad '.binds[0].source = "/usr/../etc"' 'normalised'; }
case_bad_trailing_slash() { bad '.binds[0].source = "/usr/"' 'normalised'; }
case_bad_double_slash() { bad '.binds[0].source = "//usr"' 'normalised'; }
case_bad_root_source() { bad '.binds[0].source = "/"' 'whole host file system'; }
case_bad_tmp_source() { bad '.binds[0].source = "/tmp"' 'too broad'; }
case_bad_home_source() { bad '.binds[0].source = "/home"' 'too broad|home directory'; }
case_bad_own_home_source() {
	home=$(getent passwd "$USER_NAME" | cut -d: -f6)
	bad ".binds[0].source = \"$home\"" 'home directory'
}
case_bad_proc_source() { bad '.binds[0].source = "/proc/1"' '/proc is never granted'; }
case_bad_run_source() { bad '.binds[0].source = "/run/user/1000/bus"' '/run is never granted'; }
case_bad_proc_target() { bad '.binds[0].target = "/proc/x"' 'provided by jig'; }
case_bad_dup_target() { bad '.tmpfs[0].target = "/usr"' 'granted twice'; }
case_bad_network() { bad '.network = "loopback"' 'network'; }
case_bad_memory_small() { bad '.limits.memory_bytes = 1024' 'memory_bytes'; }
case_bad_memory_large() { bad '.limits.memory_bytes = 1099511627776000' 'memory_bytes'; }
case_bad_tasks_zero() { bad '.limits.tasks = 0' 'tasks'; }
case_bad_cpu_zero() { bad '.limits.cpu_quota_us = 0' 'cpu_quota_us'; }
case_bad_wall_float() { bad '.limits.wall_ms = 1.5' 'wall_ms'; }
case_bad_tmpfs_size() { bad '.tmpfs[0].size_bytes = 0' 'size_bytes'; }
case_bad_env_name() { bad '.env = {"A-B": "x"}' 'env name'; }
case_bad_env_credential() { bad '.env = {GITHUB_TOKEN: "x"}' 'credentials never enter'; }
case_bad_fd_target() { bad '.descriptors[0].target = 64' 'target'; }
case_bad_fd_dup() { bad '.descriptors += [{source: 2, target: 1}]' 'given twice'; }
case_bad_not_object() {
	printf '[1]' >"$T/p.json"
	set +e; jig scope plan "$T/p.json" 2>"$T/err"; rc=$?; set -e
	[ "$rc" -eq 2 ] || fail "exit $rc"
}
case_bad_trailing() {
	base
	printf 'garbage' >>"$T/p.json"
	set +e; jig scope plan "$T/p.json" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc"
}
case_bad_too_big() {
	head -c 300000 /dev/zero | tr '\0' ' ' >"$T/p.json"
	set +e; jig scope plan "$T/p.json" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q "larger than" "$T/err" || fail "a huge policy was read"
}
case_bad_missing_file() {
	set +e; jig scope plan "$T/none.json" 2>"$T/err"; rc=$?; set -e
	[ "$rc" -eq 2 ] && grep -q "cannot open" "$T/err" || fail "missing file"
}

# Fail closed on the bare development/CI host, whose cgroup controllers are
# bound to cgroup v1 (a cgroup v2 host without delegation is refused too, by
# the same check). The VM lane proves the other refusals
# (sandbox.no_delegation, sandbox.userns_disabled, sandbox.bwrap_missing).
case_refuse_unsupported_host() {
	base
	set +e
	jig scope run "$T/p.json" -- /bin/true >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 3 ] || fail "exit $rc, expected 3"
	grep -Eq "not a cgroup v2 file system|not a delegated cgroup" "$T/err" || fail "no reason"
}
case_refuse_root() {
	base
	set +e
	"$JIG" scope run "$T/p.json" -- /bin/true >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 3 ] && grep -q "rootless" "$T/err" || fail "root was not refused"
}

"case_$1"
echo "PASS: $1"
