#!/bin/sh
# Host compatibility diagnosis (issue 14): for each common reason a Linux
# host cannot run bwrap-based containment, a guest prepared (as root, by
# root_<case>) to have it; jig host check names it and prints the remedy
# (text and --json), and jig run refuses a reviewed Flow with the same
# explanation (exit 3). Each case_* is one ctest (compat.<case>) in the
# supported-host lane, on a guest of its own (root_<case>) or in the lane
# (scratch_<case>: it changes only what the lane undoes).
# Requirements: R-C02, R-T02 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
EX="$JIG_SOURCE/examples"

fail() { echo "FAIL: $*" >&2; exit 1; }

# diagnosed ID: host check names ID with its remedy; jig run refuses with
# the same words.
diagnosed() {
	id=$1
	T=$(mktemp -d /tmp/jig-compat.XXXXXX)
	set +e
	"$JIG" host check >"$T/check" 2>&1; rc=$?
	"$JIG" host check --json >"$T/check.json"; jrc=$?
	set -e
	cat "$T/check"
	[ "$rc" -eq 3 ] && [ "$jrc" -eq 3 ] || fail "host check exited $rc/$jrc, expected 3"
	jq -e --arg id "$id" '.supported == false and ([.problems[].id] | index($id)) != null' "$T/check.json" >/dev/null ||
		fail "host check --json does not name $id: $(jq -c .problems "$T/check.json")"
	what=$(jq -r --arg id "$id" '[.problems[] | select(.id == $id)][0].what' "$T/check.json")
	remedy=$(jq -r --arg id "$id" '[.problems[] | select(.id == $id)][0].remedy' "$T/check.json")
	[ -n "$remedy" ] || fail "no remedy"
	grep -qF "  $id: $what" "$T/check" || fail "the text does not name $id"
	grep -qF "    to fix: $remedy" "$T/check" || fail "the text does not print the remedy"
	grep -q "jig refuses to run Flows here" "$T/check" || fail "verdict"

	cp -r "$EX" "$T/p"
	(cd "$T/p" && "$JIG" review --yes >/dev/null) || fail "review failed"
	set +e
	(cd "$T/p" && "$JIG" run csv-report --input data="$EX/csv-report/sample.csv" --output "$T/pkt") \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 3 ] || fail "jig run exited $rc, expected 3"
	# The launch refusal says what host check says (host check may add
	# the host's own context after "what", e.g. that there is no systemd).
	case $id in no-delegation) what=${what%%, and no systemd*} ;; esac
	grep -qF "$id: $what; to fix: $remedy" "$T/err" || fail "jig run does not refuse with host check's explanation"
	[ ! -e "$T/pkt" ] || fail "a packet was published"
	rm -rf "$T"
}

# Ubuntu 23.10+ (kernel.apparmor_restrict_unprivileged_userns=1): Debian's
# kernel has no such knob, so the guest is given one (a tmpfs over
# /proc/sys/kernel, keeping the boot id a Run's lease records) and a
# Bubblewrap that behaves as AppArmor leaves it (it reports its version,
# and is refused the uid map of its namespace).
scratch_apparmor_userns() {
	boot=$(cat /proc/sys/kernel/random/boot_id)
	mount -t tmpfs -o mode=755 tmpfs /proc/sys/kernel
	echo 1 >/proc/sys/kernel/apparmor_restrict_unprivileged_userns
	mkdir /proc/sys/kernel/random && echo "$boot" >/proc/sys/kernel/random/boot_id
	cat >/run/bwrap <<'EOF'
#!/bin/sh
[ "${1:-}" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }
echo "bwrap: setting up uid map: Permission denied" >&2
exit 1
EOF
	chmod 755 /run/bwrap
	mount --bind /run/bwrap /usr/bin/bwrap
}
case_apparmor_userns() { diagnosed apparmor-userns; }

scratch_userns_disabled() { echo 0 >/proc/sys/user/max_user_namespaces; }
case_userns_disabled() { diagnosed userns-disabled; }

# A setuid-root Bubblewrap (what distributions without unprivileged user
# namespaces ship).
scratch_bwrap_setuid() {
	cp /usr/bin/bwrap /run/bwrap-suid && chmod 4755 /run/bwrap-suid
	mount --bind /run/bwrap-suid /usr/bin/bwrap
}
case_bwrap_setuid() { diagnosed bwrap-setuid; }

# No delegated cgroup and no systemd user manager to ask for one.
scratch_no_delegation() { chown -R root:root /sys/fs/cgroup/jig-test; }
case_no_delegation() { diagnosed no-delegation; }

# The controllers bound to cgroup v1 hierarchies (this development
# machine's state): the guest's cgroup v2 gives them up, and they are
# mounted as v1 under a tmpfs at /sys/fs/cgroup.
root_cgroup_v1() {
	cg=/sys/fs/cgroup
	rmdir "$cg/jig-test/session" "$cg/jig-test"
	echo "-memory -pids -cpu" >"$cg/cgroup.subtree_control"
	umount "$cg"
	mount -t tmpfs -o mode=755 tmpfs "$cg"
	# The kernel releases a controller from cgroup v2 only once the removed
	# cgroups' state is freed, asynchronously: until then the v1 mount is
	# "busy", so it is retried for a few seconds.
	for c in memory pids cpu; do
		mkdir "$cg/$c" || return 1
		i=0
		until mount -t cgroup -o "$c" cgroup "$cg/$c" 2>/dev/null; do
			i=$((i + 1)); [ $i -lt 100 ] || { echo "cannot bind $c to cgroup v1" >&2; return 1; }
			sleep 0.1
		done
	done
	# Where the lane runner puts the command (a plain file now).
	mkdir -p "$cg/jig-test/session" && : >"$cg/jig-test/session/cgroup.procs"
}
case_cgroup_v1() { diagnosed cgroup-v1; }

. "$JIG_SOURCE/tests/vm/case-main.sh"
