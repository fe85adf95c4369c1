#!/bin/sh
# Flows end to end (issue 5): review, admission, jig run on Bun in a scope,
# published packets, jig inspect, and every refusal. Each case_* is one ctest
# (flow.<case>) in the supported-host lane, run as the unprivileged user;
# root_<case> prepares the guest as root where needed (on a guest of its
# own); scratch_<case> does too, changing only what the lane VM undoes
# between cases (files in /tmp, /var/tmp and /run, mounts, processes, the
# user-namespace limit, the delegated cgroup), so it runs in the lane.
# The hostile Flow (tests/flow/hostile) attempts what its "mode" input says.
# Requirements: R-C03, R-C04, R-L01, R-L06, R-L08, R-P10, R-P12, R-S02, R-S03,
# R-S06, R-S07 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
EX="$JIG_SOURCE/examples"
HOSTILE="$JIG_SOURCE/tests/flow/hostile"
. "$JIG_SOURCE/tests/flow/rss.sh"
. "$JIG_SOURCE/tests/flow/scope_plan.sh"

T=$(mktemp -d /tmp/jig-flow.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# project DIR: a private copy of a project on the guest's tmpfs, reviewed.
project() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	cp -r "$1" "$T/p"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out") || { cat "$T/review.out"; fail "review failed"; }
}
# run FLOW ARGS...: jig run in $T/p; $rc, $T/out, $T/err; packet at $T/pkt.
run() {
	flow=$1; shift
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	(cd "$T/p" && "$JIG" run "$flow" --output "$T/pkt" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	echo "--- jig run $flow $* (exit $rc)"
	cat "$T/out" "$T/err"
	[ -f "$T/pkt/record.json" ] && jq -c '{status, error, logs: (.logs | length), outputs: [.outputs[].path], termination: .termination | {outcome, exit_status, signal, cleanup_confirmed, wall_ms}}' "$T/pkt/record.json"
	return 0
}
rec() { jq -r ".$1" "$T/pkt/record.json"; }
hostile() { # hostile MODE [jig run args]: run the hostile Flow with that mode
	printf '%s\n' "$1" >"$T/mode"; shift
	run hostile --input mode="$T/mode" "$@"
}
denied() { # the attempt in result.json failed, the Run itself succeeded
	[ "$rc" -eq 0 ] || fail "jig run exited $rc"
	[ "$(rec status)" = succeeded ] || fail "status $(rec status)"
	jq -e '.ok == false' "$T/pkt/files/result.json" >/dev/null || fail "ESCAPE: $(cat "$T/pkt/files/result.json")"
	echo "denied: $(jq -r .error "$T/pkt/files/result.json")"
}
nothing_published() {
	[ ! -e "$T/pkt" ] || fail "a packet was published"
	! ls -a "$T" | grep -q '^\.jig-stage' || fail "a stage was left behind"
	no_run_dir
}
# The outer command's private run directory (/tmp/jig-run-*) is gone.
no_run_dir() {
	[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*' 2>/dev/null)" ] || fail "a run directory was left behind: $(find /tmp -maxdepth 1 -name 'jig-run-*')"
}
# why_says KIND PATTERN [FLOW]: jig why of the packet (or of the project's
# last Run of FLOW) explains KIND with PATTERN and a remedy (issue 35).
why_says() {
	set +e; (cd "$T/p" && "$JIG" why "${3:-$T/pkt}") >"$T/why" 2>&1; r=$?; set -e
	cat "$T/why"
	[ "$r" -eq 0 ] || fail "jig why exited $r"
	grep -q -- "^- $1: .*$2" "$T/why" || fail "jig why does not explain $1 /$2/"
	grep -Eq "^  (remedy|the contract forbids more): " "$T/why" || fail "jig why names no remedy"
}
refused_output() { # an output refusal: a failed packet (its record and logs, no file), exit 1, one clear line (issue 46)
	[ "$rc" -eq 1 ] || fail "exit $rc, not 1"
	grep -q "output refused, no file published: " "$T/err" || fail "not an output refusal"
	grep -q -- "$1" "$T/err" || fail "reason does not say /$1/"
	[ "$(rec status)" = failed ] && [ "$(rec 'outputs | length')" = 0 ] && [ -z "$(ls -A "$T/pkt/files")" ] || fail "output was published"
	! ls -a "$T" | grep -q '^\.jig-stage' || fail "a stage was left behind"
	no_run_dir
}

# --- 1. the examples end to end -----------------------------------------------------
case_csv_report() {
	project "$EX"
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	[ "$(rec status)" = succeeded ] && [ "$(rec termination.cleanup_confirmed)" = true ] || fail "record"
	grep -q "| population | yes | 236710 | 522250 |" "$T/pkt/files/report.md" || fail "report content"
	[ "$(rec 'outputs[0].sha256')" = "$(sha256sum "$T/pkt/files/report.md" | cut -d' ' -f1)" ] || fail "digest"
	[ "$(rec plan_sha256)" = "$(sed -n 's/^admitted Plan //p' "$T/review.out")" ] || fail "plan identity"
	"$JIG" inspect "$T/pkt" | tee "$T/inspect"
	grep -q "report.md .* verified" "$T/inspect" || fail "inspect"
	"$JIG" inspect "$T/pkt" --json | jq -e '.verified == true and .record.status == "succeeded"' >/dev/null || fail "inspect json"
	# The real packet through --display web (docs/display.md; the rules are
	# tests/display/cases.sh): the report by its content identity, then
	# closed from the page.
	"$JIG" inspect "$T/pkt" --display web >"$T/display" 2>&1 &
	dpid=$!
	i=0
	until grep -q '^display: http' "$T/display"; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "no display link"; sleep 0.1
	done
	link=$(sed -n 's/^display: \(http[^ ]*\).*/\1/p' "$T/display")
	port=${link#http://127.0.0.1:}; port=${port%%/*}; cap=${link##*#cap=}
	id=$(sha256sum "$T/pkt/files/report.md" | cut -d' ' -f1)
	printf 'GET /api/artifact/%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nX-Jig-Capability: %s\r\nConnection: close\r\n\r\n' \
		"$id" "$port" "$cap" | python3 "$JIG_SOURCE/tests/display/raw.py" "$port" send >"$T/art"
	head -n1 "$T/art" | grep -q ' 200 ' || fail "display artifact: $(head -n1 "$T/art")"
	sed -n '/^{/p' "$T/art" | jq -e --arg id "$id" '.id == $id and (.excerpt | contains("| population | yes | 236710 | 522250 |"))' >/dev/null ||
		fail "display excerpt"
	printf 'POST /api/close HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nX-Jig-Capability: %s\r\nOrigin: http://127.0.0.1:%s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' \
		"$port" "$cap" "$port" | python3 "$JIG_SOURCE/tests/display/raw.py" "$port" send | head -n1 | grep -q ' 204 ' || fail "display close"
	wait "$dpid" || fail "display exit"
	! grep -rqF "$cap" "$T/pkt" || fail "the capability is in the packet"
}
case_notes_index() {
	project "$EX"
	run notes-index --input notes="$EX/notes-index/sample.md"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	jq -e '.count == 2 and .notes[1].tags == ["release", "work"]' "$T/pkt/files/index.json" >/dev/null || fail "index content"
	"$JIG" inspect "$T/pkt" >/dev/null || fail "inspect"
}
case_inspect_detects_tampering() {
	project "$EX"
	run csv-report --input data="$EX/csv-report/sample.csv"
	chmod u+w "$T/pkt/files" "$T/pkt/files/report.md"
	echo extra >>"$T/pkt/files/report.md"
	set +e; "$JIG" inspect "$T/pkt" 2>"$T/err"; r=$?; set -e
	cat "$T/err"
	[ "$r" -eq 4 ] && grep -q "differs from the record" "$T/err" || fail "a tampered packet was accepted"
}

# --- 2. admission is bound to the exact project and snapshot -------------------------
case_refuse_changed_byte() {
	project "$EX"
	chmod u+w "$T/p/csv-report/main.ts"
	sed -i 's/rows, /rows; /' "$T/p/csv-report/main.ts"
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 4 ] || fail "exit $rc, expected 4"
	grep -q "changed since review.*review again" "$T/err" || fail "no review-again message"
	grep -q "^jig: flow csv-report: main.ts changed since review" "$T/err" || fail "the refusal does not name the Flow and file"
	nothing_published
	why_says flow-changed "flow csv-report: main.ts changed" csv-report
}
scratch_refuse_other_snapshot() {
	cp -a "$JIG_TEST_PREFIX" /var/tmp/prefix && chown -R jigtest /var/tmp/prefix
	cp "$JIG_DEV_KEY" /var/tmp/devkey && chown jigtest /var/tmp/devkey
}
case_refuse_other_snapshot() {
	JIG=/var/tmp/prefix/bin/jig
	project "$EX"
	# A distributor installs a newer snapshot (same files, new sequence).
	cur=/var/tmp/prefix/lib/jig/$(readlink /var/tmp/prefix/lib/jig/current)
	mkdir "$T/stage" && (cd "$cur" && cp -r modules libexec "$T/stage/")
	seq=$(($(jq .sequence "$cur/manifest.json") + 1))
	/var/tmp/prefix/bin/jig-snapshot create --dir "$T/stage" --id "s$seq" --sequence "$seq" --module sandbox-linux:sandbox:modules/sandbox-linux.so --module http:http:modules/http.so --module acp:acp:modules/acp.so --module display:display:modules/display.so >/dev/null
	/var/tmp/prefix/bin/jig-snapshot sign --dir "$T/stage" --key /var/tmp/devkey >/dev/null
	/var/tmp/prefix/bin/jig-snapshot install --dir "$T/stage" --prefix /var/tmp/prefix >/dev/null
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 4 ] && grep -q "review again" "$T/err" || fail "a run under another snapshot was not refused"
	nothing_published
	why_says snapshot-changed "the installed snapshot changed (id" csv-report
	(cd "$T/p" && "$JIG" review --yes >/dev/null)
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 0 ] || fail "re-review did not admit the new snapshot"
}
case_refuse_not_reviewed() {
	rm -rf "$T/p" && cp -r "$EX" "$T/p"
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -ne 0 ] && grep -q "no admitted Plan" "$T/err" || fail "an unreviewed project ran"
}

# --- 3. a hostile Flow reads nothing it was not given --------------------------------
case_hostile_read_project() { project "$HOSTILE"; hostile "read $T/p/jig.json"; denied; }
case_hostile_list_project() { project "$HOSTILE"; hostile "list $T/p"; denied; }
case_hostile_read_state() { project "$HOSTILE"; hostile "list $T/p/.jig"; denied; }
case_hostile_read_home() { echo secret >"$HOME/canary"; project "$HOSTILE"; hostile "read $HOME/canary"; denied; }
case_hostile_read_attachment_host_path() { project "$HOSTILE"; hostile "read $T/mode"; denied; }
case_hostile_read_etc_passwd() { project "$HOSTILE"; hostile "read /etc/passwd"; denied; }
case_hostile_write_package() { project "$HOSTILE"; hostile "write /flow/main.ts"; denied; }
case_hostile_write_input() { project "$HOSTILE"; hostile "write /input/mode"; denied; }
case_hostile_network_tcp() {
	"$JIG_PROBE" listen 47124 jig-flow-abstract "$T/listen.log" & lp=$!
	sleep 0.3
	project "$HOSTILE"; hostile "tcp 47124"; denied
	kill "$lp"
	! grep -q contact "$T/listen.log" || fail "the host listener was reached"
}
case_hostile_network_fetch() { project "$HOSTILE"; hostile "fetch http://127.0.0.1:47125/"; denied; }
case_hostile_ok_control() {
	# Negative evidence: the same harness reports ok:true when the attempt works.
	project "$HOSTILE"; hostile "ok"
	jq -e '.ok == true' "$T/pkt/files/result.json" >/dev/null || fail "the control attempt did not succeed"
}

# --- 4. output refusals: nothing is published ------------------------------------------
case_output_symlink() { project "$HOSTILE"; hostile "symlink"; refused_output "output out/link: is a symbolic link"; }
case_output_hardlink() { project "$HOSTILE"; hostile "hardlink"; refused_output "hard links"; }
case_output_fifo() { project "$HOSTILE"; hostile "fifo"; refused_output "special file"; }
case_output_65_files() { project "$HOSTILE"; hostile "files 65"; refused_output "more than 64 files"; why_says output-cap "more than 64 files" hostile; }
case_output_257_entries() { project "$HOSTILE"; hostile "entries 257"; refused_output "more than 256 entries"; }
case_output_17mib() {
	project "$HOSTILE"; hostile "big 17825792"
	# The 16 MiB tmpfs stops the writer itself: the Flow fails, no files are published.
	[ "$rc" -ne 0 ] || fail "17 MiB of output was accepted"
	[ ! -e "$T/pkt/files/out/big" ] || fail "the big file was published"
	why_says output-cap "its output passed a packet's caps"
}
case_output_sparse() { project "$HOSTILE"; hostile "sparse 1073741824"; refused_output "sparse"; }
case_output_undeclared() { project "$HOSTILE"; hostile "undeclared"; refused_output "not a declared output"; why_says output-undeclared "does not declare" hostile; }
case_output_existing_destination() {
	project "$HOSTILE"
	mkdir "$T/pkt-existing" && echo keep >"$T/pkt-existing/mine"
	printf 'ok\n' >"$T/mode"
	set +e; (cd "$T/p" && "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt-existing") 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q "already exists" "$T/err" || fail "an existing destination was not refused"
	[ "$(cat "$T/pkt-existing/mine")" = keep ] || fail "the destination was touched"
}

# --- 5. attachment refusals ----------------------------------------------------------------
att_refused() {
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
	grep -q "$1" "$T/err" || fail "reason does not say /$1/"
	nothing_published
}
case_attach_symlink() { project "$HOSTILE"; echo ok >"$T/real"; ln -s "$T/real" "$T/link"; run hostile --input mode="$T/link"; att_refused "symbolic link"; }
case_attach_hardlink() { project "$HOSTILE"; echo ok >"$T/a"; ln "$T/a" "$T/b"; run hostile --input mode="$T/a"; att_refused "hard links"; }
case_attach_65_files() {
	project "$HOSTILE"; mkdir "$T/many"
	i=0; while [ $i -lt 65 ]; do echo $i >"$T/many/f$i"; i=$((i+1)); done
	run hostile --input mode="$T/many"; att_refused "more than 64 files"
}
case_attach_over_8mib() { project "$HOSTILE"; head -c 8388609 /dev/zero | tr '\0' a >"$T/big"; run hostile --input mode="$T/big"; att_refused "more than 8388608 bytes"; }
scratch_attach_unsupported_fs() {
	mkdir -p /var/tmp/ramfs && mount -t ramfs ramfs /var/tmp/ramfs && echo ok >/var/tmp/ramfs/mode &&
		chmod 755 /var/tmp/ramfs && chmod 644 /var/tmp/ramfs/mode
}
case_attach_unsupported_fs() {
	# ramfs: not ext4, XFS, Btrfs or tmpfs. (The VM's 9p shares report the
	# host's ext4, so the checkout cannot serve here.)
	project "$HOSTILE"; run hostile --input mode=/var/tmp/ramfs/mode; att_refused "attachments are captured from ext4"
	run hostile --input mode=/proc/self/status; att_refused "attachments are captured from ext4"
}
case_attach_state() {
	project "$HOSTILE"
	run hostile --input mode="$T/p/.jig"; att_refused "protected .jig state"
	run hostile --input mode="$T/p"; att_refused "protected host state"
}
case_attach_undeclared() { project "$HOSTILE"; echo ok >"$T/m"; run hostile --input mode="$T/m" --input other="$T/m"; att_refused "declares no input"; }

# --- 5b. capture and publication (issue 33) ---------------------------------------------
case_packet_private() {
	# R-S07 (audit #205, decisions 120, 121): a published packet is owner-only,
	# files 0400 and directories 0500, record.json included; jig inspect
	# refuses it with one line once a mode is widened, and reads it again
	# once it is private again.
	project "$EX"
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 0 ] && [ -f "$T/pkt/record.json" ] && [ -f "$T/pkt/files/report.md" ] || fail "exit $rc"
	find "$T/pkt" -printf '%m %p\n'
	[ -z "$(find "$T/pkt" \( -type f ! -perm 400 \) -o \( -type d ! -perm 500 \))" ] || fail "a packet entry is not owner-only"
	"$JIG" inspect "$T/pkt" >/dev/null || fail "inspect of a private packet"
	for widen in "o+r $T/pkt/files/report.md" "g+rx $T/pkt/files" "o+r $T/pkt/record.json" "o+rx $T/pkt"; do
		# shellcheck disable=SC2086 # MODE PATH
		chmod $widen
		set +e; "$JIG" inspect "$T/pkt" >"$T/out" 2>"$T/err"; r=$?; set -e
		cat "$T/err"
		[ "$r" -eq 4 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "open to others; a packet is owner-only (R-S07): refused" "$T/err" ||
			fail "inspect accepted a widened packet ($widen): exit $r"
		# shellcheck disable=SC2086
		chmod go= ${widen#* }
	done
	"$JIG" inspect "$T/pkt" >/dev/null || fail "inspect after the modes were restored"
}
scratch_attach_bind_mount() {
	mkdir -p /var/tmp/att/inner /var/tmp/other && echo ok >/var/tmp/att/mode && echo secret >/var/tmp/other/secret &&
		mount --bind /var/tmp/other /var/tmp/att/inner && chmod -R a+rX /var/tmp/att /var/tmp/other
}
case_attach_bind_mount() {
	# R-S03 (audit #154): a bind mount of the same file system inside an
	# attached tree has the tree's st_dev; its mount id tells it: refused
	# before the Run, nothing published.
	[ "$(stat -c %d /var/tmp/att)" = "$(stat -c %d /var/tmp/att/inner)" ] || fail "the bind mount is not of the same file system"
	project "$HOSTILE"; run hostile --input mode=/var/tmp/att; att_refused "attachment mode (/var/tmp/att)\|mode/inner: is another mount; refused"
	grep -q "mode/inner: is another mount; refused" "$T/err" || fail "not refused as another mount"
}
case_attach_selector_skips_siblings() {
	# R-S02 (audit #152): a selected file's siblings are never enumerated:
	# beside it a directory no one may read (0000), a FIFO and a symbolic
	# link, each of which the capture refuses or cannot read when it walks
	# it. The selected file alone is captured and the Run succeeds.
	project "$HOSTILE"
	mkdir -p "$T/sel/locked/deep"; echo x >"$T/sel/locked/deep/f"; chmod 000 "$T/sel/locked"
	mkfifo "$T/sel/pipe"; ln -s /etc/passwd "$T/sel/link"; printf 'ok\n' >"$T/sel/mode"
	run hostile --input mode="$T/sel/mode"
	chmod 700 "$T/sel/locked"
	[ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] || fail "the Run did not succeed"
	jq -e '.ok == true' "$T/pkt/files/result.json" >/dev/null || fail "the selected file was not the input"
	jq -e '[.inputs[].path] == ["mode"]' "$T/pkt/record.json" >/dev/null || fail "inputs: $(jq -c .inputs "$T/pkt/record.json")"
}
case_output_xattr_acl() {
	# R-S06 (audit #171, decision 122): a POSIX ACL the Flow set on its own
	# output file is excess metadata: refused, nothing published.
	project "$HOSTILE"; hostile "xattr system.posix_acl_access"
	refused_output "output out/a: has the extended attribute system.posix_acl_access (excess metadata); refused"
}
case_output_xattr_user() {
	# R-S06 (audit #171, decision 122): a user. extended attribute on an
	# output is refused; on a kernel whose tmpfs holds none (before 6.6) the
	# Flow cannot set it (refused at the source) and nothing carries it.
	project "$HOSTILE"; hostile "xattr user.jig"
	if grep -q "setxattr user.jig: refused at the source (errno 95)" "$T/err"; then
		echo "the scope's tmpfs holds no user. attributes on $(uname -r): refused at the source"
		[ "$rc" -ne 0 ] || fail "the Run succeeded"
		[ ! -e "$T/pkt/files/out/a" ] && [ "$(rec 'outputs | length')" = 0 ] || fail "the failed Run published its output"
	else
		refused_output "output out/a: has the extended attribute user.jig (excess metadata); refused"
	fi
}
scratch_output_parent_unsupported_fs() { mkdir -p /var/tmp/ramfs && mount -t ramfs ramfs /var/tmp/ramfs && chmod 1777 /var/tmp/ramfs; }
case_output_parent_unsupported_fs() {
	# R-S03 (audit #156): the destination parent's file system must be ext4,
	# XFS, Btrfs or tmpfs: --output under ramfs or /proc is refused before
	# the Run starts, one line, nothing created there, no run directory left.
	project "$HOSTILE"; printf 'ok\n' >"$T/mode"
	for parent in /var/tmp/ramfs /proc; do
		set +e; (cd "$T/p" && "$JIG" run hostile --input mode="$T/mode" --output "$parent/pkt") >"$T/out" 2>"$T/err" </dev/null; rc=$?; set -e
		cat "$T/out" "$T/err"
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc, expected 2 and one line"
		fsname=${parent##*/}
		grep -q -- "--output $parent/pkt: its parent directory is on $fsname; packets are published onto ext4, XFS, Btrfs or tmpfs only; nothing was run: choose an --output on one of them" "$T/err" ||
			fail "not refused for its parent's file system"
	done
	[ -z "$(ls -A /var/tmp/ramfs)" ] || fail "something was created under the unsupported parent"
	no_run_dir
}
# A writable 9p directory (a subdirectory of the lane's own jigrun export,
# bound at /var/tmp/9p: 9p has no RENAME_NOREPLACE) and a parent the user
# cannot write (root's, on the tmpfs).
scratch_output_parent_no_noreplace() {
	d=/run/jig-vm/io/e35-9p-out
	rm -rf "$d" && mkdir "$d" && chown "$(id -u jigtest):$(id -g jigtest)" "$d" &&
		mkdir -p /var/tmp/9p && mount --bind "$d" /var/tmp/9p &&
		mkdir /var/tmp/root-only && chmod 755 /var/tmp/root-only
}
case_output_parent_no_noreplace() {
	# Issue 35, checks before work: --output's parent is probed for a
	# rename without replacement (renameat2 RENAME_NOREPLACE) when the Run
	# is admitted. On 9p, where it fails with EINVAL, and in a parent the
	# user cannot write, jig run is refused before the Flow starts: exit 2,
	# one line naming the file system and the fix, nothing left in the
	# parent (the probe's entry removed), no run directory, no packet.
	# (statfs on 9p reports its server's f_type, here ext4's: the mount's own type says 9p)
	awk '$5 == "/var/tmp/9p"' /proc/self/mountinfo | grep -q ' - 9p ' || fail "/var/tmp/9p is not 9p: $(grep /var/tmp/9p /proc/self/mountinfo)"
	project "$HOSTILE"; printf 'ok\n' >"$T/mode"
	for parent in /var/tmp/9p /var/tmp/root-only; do
		# the root-only parent with --json: jig-error/1 on stdout, the line on stderr
		json=; [ "$parent" = /var/tmp/9p ] || json=--json
		o="$T/out.${parent##*/}" e="$T/err.${parent##*/}"
		set +e; (cd "$T/p" && "$JIG" run hostile --input mode="$T/mode" --output "$parent/pkt" $json) >"$o" 2>"$e" </dev/null; rc=$?; set -e
		cat "$o" "$e"
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$e")" -eq 1 ] || fail "exit $rc, expected 2 and one line"
		[ -z "$(ls -A "$parent")" ] || fail "something was left in $parent: $(ls -A "$parent")"
		no_run_dir
	done
	grep -qF -- "--output /var/tmp/9p/pkt: its parent directory is on 9p, which cannot rename without replacing (renameat2 RENAME_NOREPLACE: Invalid argument), so the packet could not be published; nothing was run: choose an --output on a local file system (ext4, XFS, Btrfs or tmpfs)" "$T/err.9p" ||
		fail "the 9p parent is not refused by name with the fix"
	grep -qF -- "--output /var/tmp/root-only/pkt: its parent directory refused a new entry (Permission denied), so the packet could not be published; nothing was run: choose an --output in a directory you can write" "$T/err.root-only" ||
		fail "the unwritable parent is not refused with the fix"
	jq -e '.schema == "jig-error/1" and .exit == 2 and (.error | test("refused a new entry"))' "$T/out.root-only" >/dev/null ||
		fail "the unwritable parent is not refused with jig-error/1: $(cat "$T/out.root-only")"
}
scratch_run_dir_unsupported_fs() { mount -t ramfs ramfs /tmp && chmod 1777 /tmp && mkdir "$T"; } # $T: for the EXIT trap
case_run_dir_unsupported_fs() {
	# R-S03 (audit #156): the attachments' destination parent, the Run's
	# private directory under /tmp, must be ext4, XFS, Btrfs or tmpfs: with
	# /tmp on ramfs the Run is refused before its scope starts, one line,
	# nothing published, no run directory left. (The attachment and the
	# packet's parent are on /var/tmp, a tmpfs.)
	[ "$(stat -f -c %T /tmp)" = ramfs ] || fail "/tmp is not ramfs: $(stat -f -c %T /tmp)"
	project "$HOSTILE"; printf 'ok\n' >/var/tmp/mode
	set +e; (cd "$T/p" && "$JIG" run hostile --input mode=/var/tmp/mode --output /var/tmp/pkt) >"$T/out" 2>"$T/err" </dev/null; rc=$?; set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc, expected 2 and one line"
	grep -q "/tmp/jig-run-[A-Za-z0-9]* is on ramfs; attachments are captured onto ext4, XFS, Btrfs or tmpfs only" "$T/err" ||
		fail "not refused for the run directory's file system"
	[ ! -e /var/tmp/pkt ] && ! ls -a /var/tmp | grep -q '^\.jig-stage' || fail "something was published"
	no_run_dir
}

# Issue 35, must-show 4: a memory kill and a tasks limit of the root
# scope, each explained by jig why with the limit and what allows it.
case_why_limits() {
	project "$HOSTILE"
	hostile "hog"
	[ "$rc" -eq 1 ] && [ "$(rec termination.oom_kills)" -gt 0 ] || fail "no OOM kill: exit $rc"
	why_says memory "ran out of memory: the kernel killed it [0-9]* time(s) at its scope's limit of 256 MiB"
	grep -q "the contract forbids more: the limit is the capability catalog's" "$T/why" || fail "memory: the contract's word"
	hostile "threads 100" --timeout 20s
	[ "$rc" -eq 1 ] && [ "$(rec termination.pids_max_hits)" -gt 0 ] || fail "no pids.max hit: exit $rc"
	why_says tasks "more processes or threads than its scope's limit of 64 tasks"
}

# Issue 47, R-S05 #166 (seed 000: a scope's tmpfs volumes count against
# its memory limit): 60 MiB written to /scratch shows in the scope's
# memory peak; 200 MiB of memory held alone fits the 256 MiB limit, the
# same 200 MiB after 60 MiB of /scratch does not: the kernel kills the
# scope, named as out of memory. Were tmpfs pages not charged to the
# scope's cgroup, the third would fit as the second did.
case_tmpfs_charged_to_memory() {
	project "$HOSTILE"
	hostile "charge 60 0"
	peak=$(rec termination.memory_peak_bytes)
	echo "60 MiB of /scratch: exit $rc, peak $peak"
	[ "$rc" -eq 0 ] && [ "$peak" -ge $((60 << 20)) ] || fail "60 MiB of /scratch not charged to the scope: peak $peak"
	hostile "charge 0 200"
	echo "200 MiB held: exit $rc, peak $(rec termination.memory_peak_bytes)"
	[ "$rc" -eq 0 ] && [ "$(rec termination.oom_kills)" = 0 ] || fail "200 MiB alone did not fit: exit $rc"
	hostile "charge 60 200"
	[ "$rc" -eq 1 ] && [ "$(rec termination.oom_kills)" -gt 0 ] || fail "60 MiB of /scratch and 200 MiB held: no OOM kill (exit $rc)"
	why_says memory "ran out of memory"
}

# --- 6. deadline -----------------------------------------------------------------------------
case_timeout_fenced() {
	project "$HOSTILE"; hostile "sleep 60000" --timeout 2s
	[ "$rc" -eq 1 ] || fail "exit $rc"
	[ "$(rec status)" = timeout ] && [ "$(rec termination.outcome)" = timeout ] || fail "not recorded as a timeout"
	[ "$(rec termination.cleanup_confirmed)" = true ] || fail "cleanup"
	[ ! -e "$T/pkt/files/result.json" ] || fail "unfinished output was published"
	why_says deadline "passed its deadline of 2000 ms"
	grep -q "jig run hostile --timeout N" "$T/why" || fail "the remedy does not name --timeout"
}
case_timeout_rejected() {
	project "$HOSTILE"; echo ok >"$T/m"
	for t in 0 -1s 1.5s 25h 10x; do
		set +e; (cd "$T/p" && "$JIG" run hostile --input mode="$T/m" --output "$T/pkt" --timeout "$t") 2>"$T/err"; r=$?; set -e
		[ "$r" -eq 2 ] && grep -q -- "--timeout" "$T/err" || fail "--timeout $t accepted"
	done
	nothing_published
}

# --- 7. coordinator loss and cancellation -------------------------------------------------
start_sleeper() { # the hostile Flow sleeping, in the background; $outer, $coord
	project "$HOSTILE"; printf 'sleep 60000\n' >"$T/mode"
	(cd "$T/p" && exec "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" &
	outer=$!
	i=0; until pgrep -f /.jig/runtime/boot.js >/dev/null; do i=$((i+1)); [ $i -lt 400 ] || fail "the Flow did not start"; sleep 0.05; done
	coord=$(pgrep -P "$outer" -x jig)
	[ -n "$coord" ] || fail "no coordinator under $outer"
}
no_leftovers() {
	! pgrep -f /.jig/runtime/boot.js >/dev/null || fail "a Flow process survived"
	[ -z "$(find /sys/fs/cgroup/jig-test -mindepth 1 -maxdepth 2 -name 'jig-*' -type d)" ] || fail "cgroups left: $(find /sys/fs/cgroup/jig-test -name 'jig-*')"
	no_run_dir
	! ls -a "$T" | grep -q '^\.jig-stage' || fail "a stage was left behind"
}
case_coordinator_killed() {
	start_sleeper
	kill -KILL "$coord"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 1 ] || fail "outer exit $rc"
	grep -q "coordinator (pid $coord) was killed by signal 9.*nothing was published; its scope was fenced" "$T/err" || fail "no clear report"
	[ ! -e "$T/pkt" ] || fail "a partial packet was published"
	no_leftovers
}
case_sigint_mid_run() {
	start_sleeper
	kill -INT "$outer"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 1 ] || fail "exit $rc"
	[ "$(rec status)" = cancelled ] || fail "status $(rec status)"
	[ ! -e "$T/pkt/files/result.json" ] || fail "unfinished output was published"
	[ "$(rec termination.cleanup_confirmed)" = true ] || fail "cleanup"
	no_leftovers
}
# R-L05, R-L07 (issue 47): SIGINT provably before publication - the Flow's
# process runs (it would sleep 60 s, then write result.json) and no packet
# exists yet - ends the Run cancelled, and the packet then published is
# whole (jig inspect reads it), private, with the cancelled record and no
# output. Without cancellation handling the Flow sleeps on and publishes
# "succeeded": the case fails.
case_sigint_before_publication() {
	start_sleeper
	[ ! -e "$T/pkt" ] || fail "a packet existed while the Flow ran"
	kill -INT "$outer"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 1 ] || fail "exit $rc"
	head -1 "$T/err" | grep -q "was cancelled by the operator: SIGINT" || fail "first line: $(head -1 "$T/err")"
	"$JIG" inspect "$T/pkt" >/dev/null || fail "the packet of the cancelled Run is not whole"
	[ "$(rec status)" = cancelled ] && [ "$(rec termination.outcome)" = cancelled ] || fail "status $(rec status)"
	[ ! -e "$T/pkt/files/result.json" ] || fail "the Flow's output was published"
	[ -z "$(find "$T/pkt" -perm /077)" ] || fail "the packet is not private"
}

# --- issue 33: the cancellation bounds and the deadline (R-L05, R-L01) -------------------
now_ms() { date +%s%3N; }
# bounded STOP ARGS...: the hostile Flow (mode in $T/mode) in the
# background, the coordinator stopping at the fault point STOP ("" for
# none); $outer, $t0 (ms, just before the command).
bounded() {
	stop=$1; shift
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt" "$T/fault.log"
	t0=$(now_ms)
	(cd "$T/p" && exec env JIG_FAULT_STOP="$stop" JIG_FAULT_LOG="$T/fault.log" "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt" "$@") \
		>"$T/out" 2>"$T/err" </dev/null &
	outer=$!
}
flow_running() {
	i=0; until pgrep -f /.jig/runtime/boot.js >/dev/null; do i=$((i+1)); [ $i -lt 1200 ] || { cat "$T/err"; fail "the Flow did not start"; }; sleep 0.05; done
}
# blocked_at STAGE: the coordinator stopped at STAGE (it will not settle).
blocked_at() {
	i=0; until grep -q "^$1 " "$T/fault.log" 2>/dev/null; do i=$((i+1)); [ $i -lt 1200 ] || { cat "$T/err"; fail "stage $1 was not reached"; }; sleep 0.05; done
	stopped=$(sed -n "s/^$1 //p" "$T/fault.log" | head -1)
	i=0; until [ "$(ps -o stat= -p "$stopped" | cut -c1)" = T ]; do i=$((i+1)); [ $i -lt 500 ] || fail "not stopped"; sleep 0.01; done
}
# over: waits for the command; $rc, $elapsed (ms), $after (the N of its
# "SIGKILL N ms after ...", empty if it did not kill).
over() {
	set +e; wait "$outer"; rc=$?; set -e
	t_end=$(now_ms); elapsed=$((t_end - t0))
	cat "$T/out" "$T/err"
	after=$(sed -n 's/.*(SIGKILL \([0-9]*\) ms after .*/\1/p' "$T/err")
	echo "exit $rc after $elapsed ms; SIGKILL ${after:-none} ms after its bound"
}
within() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$4: ${1:-nothing}, expected $2..$3"; }
# R-L05 (#201, #202): an expiry shorter than the 60 s settlement; a Flow
# that ignores SIGTERM; a coordinator that cannot settle (stopped at
# "scope fence": the stop signal reached its supervisor, the Flow is not
# fenced yet). SIGINT, SIGINT, SIGTERM: the coordinator is SIGKILLed 200 ms
# after the expiry, inside its 250 ms grace (TCG: 200 ms of slack past it), the outer command fences the
# scope, and then publishes the record the coordinator would have
# (decision 295): cancelled by the operator's SIGINT, the expiry passed
# before it settled; no output file, nothing else left.
# lane: idle
case_cancel_expiry_grace() {
	project "$HOSTILE"; printf 'ignoreterm 120000\n' >"$T/mode"
	bounded "scope fence" --expiry 45s --timeout 5m
	flow_running
	kill -INT "$outer"
	echo "SIGINT $(( $(now_ms) - t0 )) ms after the start"
	blocked_at "scope fence"
	[ $(( $(now_ms) - t0 )) -lt 40000 ] || fail "too slow to test a 45 s expiry"
	pgrep -f /.jig/runtime/boot.js >/dev/null || fail "the Flow was fenced before the expiry"
	kill -INT "$outer"; sleep 1; kill -TERM "$outer"
	over
	[ "$rc" -eq 1 ] || fail "exit $rc"
	grep -q "the command's expiry passed and the coordinator did not settle (SIGKILL " "$T/err" || fail "the reason"
	grep -q "the coordinator (pid $stopped) was killed by signal 9 before it finished; its scope was fenced and its run directory and stage removed; a recovery-only coordinator published its record (cancelled)" "$T/err" || fail "not killed, fenced and recorded"
	within "$after" 200 450 "SIGKILL after the expiry (ms)"
	within "$elapsed" 45200 59000 "the command's life (ms), shorter than the 60 s settlement after the SIGINT"
	[ "$(rec status)" = cancelled ] && [ "$(rec termination.outcome)" = cancelled ] && [ "$(rec 'outputs | length')" = 0 ] ||
		fail "the record: $(rec status), $(rec termination.outcome), $(rec outputs)"
	rec error | grep -q "^cancelled by the operator: SIGINT (signal 2); the command's expiry of 45000 ms passed before the coordinator settled; the coordinator (pid $stopped) did not settle" ||
		fail "the record's error: $(rec error)"
	[ -z "$(ls -A "$T/pkt/files" 2>/dev/null)" ] || fail "files were published"
	no_leftovers
}
# R-L05 (#200, #202): no expiry that matters (the default, 150 s). The
# coordinator that cannot settle is SIGKILLed 60 s after the first stop
# signal; a SIGTERM 20 s and a SIGHUP 40 s later do not extend it.
# lane: idle
case_cancel_settle_sigkill_60s() {
	project "$HOSTILE"; printf 'ignoreterm 120000\n' >"$T/mode"
	bounded "scope fence"
	flow_running
	t1=$(now_ms); kill -INT "$outer" # t1 before the signal: the guest spawns slowly
	blocked_at "scope fence"
	sleep 20; kill -TERM "$outer"
	sleep 20; kill -HUP "$outer"
	over
	[ "$rc" -eq 1 ] || fail "exit $rc"
	grep -q "the coordinator did not settle within 60 s of the first stop signal" "$T/err" || fail "the reason"
	grep -q "killed by signal 9 before it finished; nothing was published; its scope was fenced" "$T/err" || fail "not killed and fenced"
	within "$after" 60000 60500 "SIGKILL after the first signal (ms)"
	# the end: after the SIGKILL, the fencing (seconds on a loaded TCG
	# guest); a bound extended by the SIGHUP would end it past 100 s
	within "$((t_end - t1))" 60000 90000 "from the first signal to the end (ms)"
	no_leftovers
}
# R-L05 (#203): --display web has no default expiry (the record says
# null; without it the record says the 30 s deadline plus 2 minutes); an
# explicit one holds: a Flow sleeping past a 10 s expiry is cancelled at
# it and the command ended by 250 ms after it (cancelled and published
# within the grace, or SIGKILLed at its end and the record published by
# the outer command, decision 295), nothing left.
# lane: idle
case_cancel_dashboard_expiry() {
	project "$HOSTILE"
	hostile ok --display web
	[ "$rc" -eq 0 ] || fail "exit $rc"
	[ "$(rec expiry_ms)" = null ] || fail "a dashboard's default expiry: $(rec expiry_ms)"
	hostile ok
	[ "$(rec expiry_ms)" = 150000 ] || fail "the default expiry: $(rec expiry_ms)"
	hostile ok --display web --expiry 90s
	[ "$(rec expiry_ms)" = 90000 ] || fail "an explicit expiry with --display web: $(rec expiry_ms)"
	printf 'sleep 60000\n' >"$T/mode"
	bounded "" --display web --expiry 10s --timeout 5m
	over
	[ "$rc" -eq 1 ] || fail "exit $rc"
	if [ -n "$after" ]; then
		within "$after" 200 450 "SIGKILL after the expiry (ms)"
		grep -q "a recovery-only coordinator published its record (cancelled)" "$T/err" || fail "no record published"
	else
		grep -q "the command's 10000 ms expiry passed (--expiry): the Run was cancelled" "$T/err" || fail "no expiry"
	fi
	[ "$(rec status)" = cancelled ] || fail "status $(rec status)"
	rec error | grep -q "^cancelled: the command's expiry of 10000 ms passed (SIGTERM)" || fail "the record's error: $(rec error)"
	within "$elapsed" 10000 40000 "the command's life (ms), SIGKILL and then the fencing"
	no_leftovers
}
# R-L01 (#127): the default deadline is 30 s: the Plan says so, the record
# of a Run without --timeout says 30000 ms, and a Flow sleeping 60 s is
# fenced as a timeout at 30 s.
# lane: idle
case_deadline_default_30s() {
	project "$HOSTILE"
	(cd "$T/p" && "$JIG" review --json) | jq -e '.plan.deadline.default == "30s" and .plan.deadline.maximum == "24h"' >/dev/null ||
		fail "the Plan's deadline: $(cd "$T/p" && "$JIG" review --json | jq -c .plan.deadline)"
	t0=$(now_ms)
	hostile "sleep 60000"
	elapsed=$(( $(now_ms) - t0 ))
	[ "$rc" -eq 1 ] || fail "exit $rc"
	[ "$(rec timeout_ms)" = 30000 ] && [ "$(rec status)" = timeout ] && [ "$(rec termination.outcome)" = timeout ] || fail "not a 30 s timeout"
	within "$elapsed" 30000 90000 "the command's life (ms)"
	within "$(rec termination.wall_ms)" 20000 32000 "the scope's wall time (ms)"
}
# R-L01 (#130): the deadline starts at the Run's acceptance, so a slow
# 8 MiB input capture (JIG_FAULT_DELAY: 20 s before the attachment is
# copied) is counted. Without the delay the Flow (read 8 MiB, sleep 8 s)
# succeeds in W ms of scope time (8 s <= W < 25 s); with it and --timeout
# 25s it is a timeout whose scope was given what was left (< 5 s < W):
# counted from the launch it would have had 25 s and succeeded. A capture
# longer than the deadline leaves the scope the shortest deadline, 100 ms.
# lane: idle
case_deadline_counts_capture() {
	project "$HOSTILE"
	{ printf 'sleep 8000\n'; head -c $((8388608 - 11)) /dev/zero | tr '\0' ' '; } >"$T/mode"
	[ "$(stat -c %s "$T/mode")" -eq 8388608 ] || fail "the input is not 8 MiB"
	run hostile --input mode="$T/mode" --timeout 60s
	[ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] || fail "without the delay: exit $rc"
	w=$(rec termination.wall_ms)
	within "$w" 8000 24999 "the Flow's own time (ms), longer than the 5 s the slow capture leaves it"
	export JIG_FAULT_DELAY=attach JIG_FAULT_DELAY_MS=20000
	run hostile --input mode="$T/mode" --timeout 25s
	[ "$rc" -eq 1 ] && [ "$(rec status)" = timeout ] || fail "a slow capture was not counted: exit $rc"
	within "$(rec termination.wall_ms)" 0 6500 "the scope's wall time (ms)"
	rec error | grep -q "25000 ms deadline (from its acceptance, input capture included)" || fail "the reason: $(rec error)"
	JIG_FAULT_DELAY_MS=3000
	run hostile --input mode="$T/mode" --timeout 2s
	unset JIG_FAULT_DELAY JIG_FAULT_DELAY_MS
	[ "$rc" -eq 1 ] && [ "$(rec status)" = timeout ] || fail "a capture past the deadline: exit $rc"
	within "$(rec termination.wall_ms)" 0 1500 "the scope's wall time (ms)"
	no_leftovers
}

# --- jig run obtains a transient delegated scope like jig scope run ----------------------
root_run_in_transient_scope() {
	JIG_PROBE=${JIG_PROBE:?} sh "$JIG_SOURCE/tests/sandbox/cases.sh" systemd_transient_scope_root
}
case_run_in_transient_scope() {
	project "$EX"
	run csv-report --input data="$EX/csv-report/sample.csv"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -q "fake systemd-run: jig-" "$T/err" || fail "jig run did not ask for a transient scope"
	[ "$(rec status)" = succeeded ] || fail "status"
	# R-L05: the command's expiry went along, what was left of it (ms)
	within "$(rec expiry_ms)" 1 149999 "the expiry passed on to the transient scope"
	[ -z "$(find /sys/fs/cgroup/jig-test/user-scopes -name 'jig-[0-9]*-*' -type d)" ] || fail "run cgroups left behind"
}

# --- 9. Run/0 abuse ends the Run cleanly ----------------------------------------------------
run0_refused() {
	[ "$rc" -eq 1 ] || fail "exit $rc"
	[ "$(rec status)" = failed ] || fail "status $(rec status)"
	rec error | grep -q "$1" || fail "error does not say /$1/: $(rec error)"
	[ "$(rec termination.cleanup_confirmed)" = true ] || fail "cleanup"
	"$JIG" --version >/dev/null || fail "jig is not healthy"
}
case_run0_huge_line() { project "$HOSTILE"; hostile "hugeline 100"; run0_refused "longer than 1024 KiB"; }
case_run0_invalid_json() { project "$HOSTILE"; hostile "badjson"; run0_refused "not a JSON object"; }
case_run0_unknown_op() { project "$HOSTILE"; hostile "unknownop"; run0_refused "unknown or malformed operation"; }
case_run0_flood() { project "$HOSTILE"; hostile "flood 5000"; run0_refused "more than 1024 messages"; why_says run0-cap "more than 1024 messages"; }

# --- issue 31: what a Flow sends is capped on the trusted side ----------------------
# sampled CMD...: runs CMD (in $T/p) while sampling the peak resident memory
# (VmHWM) of every jig process every 100 ms; $rc; $T/rss: "pid KiB" maxima;
# $peak_kib: the largest, $sum_kib: their sum.
sampled() {
	set +e
	(cd "$T/p" && "$@") >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	rss_watch "$pid"
	wait "$pid"
	rc=$?
	set -e
	peak_kib=$(awk '$2 > m {m = $2} END {print m + 0}' "$T/rss")
	sum_kib=$(awk '{s += $2} END {print s + 0}' "$T/rss")
	echo "--- $* (exit $rc); jig processes' peak RSS (KiB):"; cat "$T/rss" "$T/out" "$T/err"
}
# The bound docs/reliability.md states ("The trusted side's memory"), KiB:
# each jig process, and all of them together.
RSS_BOUND_ONE_KIB=$((96 * 1024))
RSS_BOUND_ALL_KIB=$((112 * 1024))
within_bound() {
	[ "$peak_kib" -gt 0 ] || fail "no jig process was sampled"
	[ "$peak_kib" -le "$RSS_BOUND_ONE_KIB" ] || fail "a jig process reached $peak_kib KiB, over the documented $RSS_BOUND_ONE_KIB"
	[ "$sum_kib" -le "$RSS_BOUND_ALL_KIB" ] || fail "jig's processes reached $sum_kib KiB together, over the documented $RSS_BOUND_ALL_KIB"
}
packet_within_caps() { # record.json fits what jig inspect reads, and jig inspect passes
	size=$(stat -c %s "$T/pkt/record.json")
	[ "$size" -le $((4 << 20)) ] || fail "record.json is $size bytes"
	"$JIG" inspect "$T/pkt" >"$T/inspect" || { cat "$T/inspect"; fail "jig inspect refused the packet"; }
	echo "record.json: $size bytes; jig inspect: ok"
}
# The issue's case: 200 well-formed 1 MiB log lines straight to Run/0. The
# Run is recorded within the caps: 4 KiB a kept line, 256 KiB in all, the
# rest counted; the packet passes jig inspect.
case_run0_big_logs() {
	project "$HOSTILE"
	printf 'biglogs 200\n' >"$T/mode"
	rm -rf "$T/pkt"
	sampled "$JIG" run hostile --output "$T/pkt" --input mode="$T/mode" --timeout 5m
	[ "$rc" -eq 0 ] || fail "jig run exited $rc"
	[ "$(rec status)" = succeeded ] || fail "status $(rec status)"
	kept=$(jq '.logs | length' "$T/pkt/record.json")
	[ "$kept" -eq 63 ] || fail "$kept log lines kept"
	jq -e '.logs[0] | endswith(" [jig cut 1044416 more bytes of this line]") and (startswith("bbbb"))' "$T/pkt/record.json" >/dev/null || fail "the cut line"
	jq -e '.logs_dropped.lines == 137 and .logs_dropped.bytes == 137 * 1048512 and .logs_cut == 63' "$T/pkt/record.json" >/dev/null || fail "the count: $(jq -c '{logs_dropped, logs_cut}' "$T/pkt/record.json")"
	packet_within_caps
	grep -q "logs: 137 more lines (143646144 bytes) not kept" "$T/inspect" || fail "inspect does not say what was dropped"
	within_bound
}
# Every channel at once (tests/flow/saturate; review grants neither a
# checkpoint nor effects beside bindings, so two Runs): 1 MiB log lines
# and four children each flooding its own Run/0 and making every effect at
# its count cap with evidence over its size cap (saturate); or 1 MiB lines,
# every effect, 16 one-MiB checkpoints and 4 refused (saturate_checkpoint). jig's own memory stays under the
# documented bound; every log line is kept or counted; the packet passes
# jig inspect.
saturated() { # saturated FLOW PLAN: the run and the checks both cases share
	project "$JIG_SOURCE/tests/flow/saturate"
	echo "$2" >"$T/plan"
	rm -rf "$T/pkt"
	sampled "$JIG" run "$1" --output "$T/pkt" --input plan="$T/plan" --timeout 10m
	[ "$rc" -eq 0 ] || fail "jig run exited $rc"
	jq -c '{status, error, logs: (.logs | length), logs_dropped, logs_cut, evidence_cut, effects: (.effects | length), checkpoint, children: [.children[]? | {status, logs: (.logs | length), logs_dropped}]}' "$T/pkt/record.json"
	[ "$(rec status)" = succeeded ] || fail "status $(rec status)"
	jq -e '([.logs[], .children[]?.logs[]] | map(length + 3) | add) <= 262144' "$T/pkt/record.json" >/dev/null || fail "log budget"
	packet_within_caps
	within_bound
}
case_run0_saturate() {
	saturated saturate '{"logs": 100, "kid_logs": 25}'
	jq -e '.calls == 4' "$T/pkt/files/result.json" >/dev/null || fail "calls $(cat "$T/pkt/files/result.json")"
	jq -e '([.children[] | select(.status == "succeeded")] | length) == 4' "$T/pkt/record.json" >/dev/null || fail "children"
	# each child: 64 HTTP requests and 16 commands, evidence over its cap
	jq -e '[.children[] | (.effects | length), .evidence_cut] == [80, 80, 80, 80, 80, 80, 80, 80] and ([.children[].effects[] | select(.evidence_cut)] | length) == 320' "$T/pkt/record.json" >/dev/null || fail "children's effects"
	jq -e '.logs_dropped.lines + ([.children[].logs_dropped.lines // 0] | add) + (.logs | length) + ([.children[].logs | length] | add) == 200' "$T/pkt/record.json" >/dev/null || fail "every line kept or counted"
}
case_run0_saturate_checkpoint() {
	saturated hoard '{"logs": 100}'
	jq -e '.http == 64 and .command == 16 and .checkpoint == 16' "$T/pkt/files/result.json" >/dev/null || fail "result $(cat "$T/pkt/files/result.json")"
	jq -e '.evidence_cut == 80 and ([.effects[] | select(.evidence_cut)] | length) == 80' "$T/pkt/record.json" >/dev/null || fail "effects"
	jq -e '(.effects | length) == 100 and ([.effects[] | select(.effect == "checkpoint" and .outcome == "accepted")] | length) == 16 and .checkpoint.progress == "completed"' "$T/pkt/record.json" >/dev/null || fail "checkpoint evidence"
	jq -e '.logs_dropped.lines + (.logs | length) == 100' "$T/pkt/record.json" >/dev/null || fail "every line kept or counted"
}

# --- 6. the HTTP Request effect (issue 6) ----------------------------------------------
# The caller Flow (tests/flow/http) runs the steps of its "steps" input; a
# real peer (tests/http/peer.py) serves 127.0.0.1:18080 (and TLS on 18443).
# Operator configuration lives in $XDG_CONFIG_HOME/jig/http.json.
CALLER="$JIG_SOURCE/tests/flow/http"
export XDG_CONFIG_HOME="$T/config"
PEERS=""
trap 'for p in $PEERS; do kill "$p" 2>/dev/null || true; done; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
peer() { # peer NAME PORT [--tls CERT KEY]
	name=$1 port=$2; shift 2
	/usr/bin/python3 "$JIG_SOURCE/tests/http/peer.py" --port "$port" --portfile "$T/$name.port" --log "$T/$name.log" "$@" &
	PEERS="$PEERS $!"
	i=0
	while [ ! -s "$T/$name.port" ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "peer $name did not start"; sleep 0.05; done
	touch "$T/$name.log"
}
config() { # config JSON: the operator's http.json, 0600
	mkdir -p "$XDG_CONFIG_HOME/jig"
	printf '%s\n' "$1" >"$XDG_CONFIG_HOME/jig/http.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/http.json"
}
steps() {
	printf "%s\n" "$1" >"$T/steps"; run caller --input steps="$T/steps"
	[ ! -f "$T/pkt/files/result.json" ] || jq -c "[.[] | {ok, status, error}]" "$T/pkt/files/result.json"
}
res() { jq -r ".[$1]$2" "$T/pkt/files/result.json"; }
ev() { jq -r ".effects[$1]$2" "$T/pkt/record.json"; }
expect_ok() { [ "$(res "$1" .ok)" = true ] || fail "step $1 failed: $(res "$1" .error)"; }
expect_refused() { # expect_refused STEP PATTERN
	[ "$(res "$1" .ok)" = false ] || fail "step $1 was not refused: $(res "$1" '')"
	res "$1" .error | grep -q -- "$2" || fail "step $1: error does not match /$2/: $(res "$1" .error)"
}
succeeded() { [ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] || fail "the Run did not succeed"; }
certs() { sh "$JIG_SOURCE/tests/http/certs.sh" "$T"; }

case_http_route() {
	# R-H01, R-H02, R-H03, R-H08: a reviewed loopback route answers the Flow;
	# the record holds the evidence; the Flow's own sockets still fail; a
	# proxy in jig's own environment is not used; a 404 is evidence.
	peer srv 18080; peer proxy 18081
	project "$CALLER"
	grep -q "http ok: GET http://127.0.0.1:18080/ok" "$T/review.out" || fail "the Plan does not show the grant"
	export http_proxy=http://127.0.0.1:18081 HTTP_PROXY=http://127.0.0.1:18081 ALL_PROXY=http://127.0.0.1:18081
	steps '[{"do":"http","route":"ok"},{"do":"fetch","url":"http://127.0.0.1:18080/ok"},{"do":"tcp","port":18080},
		{"do":"http","route":"ok","method":"GET","url":"http://127.0.0.1:18080/ok"},{"do":"http","route":"notfound"},
		{"do":"http","route":"large"},{"do":"http","route":"ok"}]'
	unset http_proxy HTTP_PROXY ALL_PROXY
	succeeded
	expect_ok 0
	[ "$(res 0 .status)" = 200 ] && res 0 .text | jq -e '.ok and .auth == "none"' >/dev/null || fail "the route's body"
	[ "$(res 0 '.headers["content-type"]')" = application/json ] || fail "selected headers"
	expect_refused 1 ""; expect_refused 2 ""
	expect_ok 3
	expect_ok 4; [ "$(res 4 .status)" = 404 ] || fail "a 404 is evidence, not an error"
	expect_ok 5; [ "$(res 5 .length)" = 4000000 ] || fail "a 4 MB body arrived as $(res 5 .length) bytes"
	expect_ok 6 # the Run/0 stream is in step after a large reply
	[ "$(wc -l <"$T/srv.log")" -eq 5 ] || fail "the server saw $(wc -l <"$T/srv.log") requests, expected 5"
	[ "$(wc -l <"$T/proxy.log")" -eq 0 ] || fail "the proxy was used"
	jq -e '.effects | length == 5 and (.[0] | .route == "ok" and .method == "GET" and .url == "http://127.0.0.1:18080/ok"
		and .outcome == "response" and .status == 200 and .response_bytes > 0 and .request_bytes > 0 and (.total_ms | type) == "number")
		and .[2].status == 404' "$T/pkt/record.json" >/dev/null || fail "evidence: $(jq -c .effects "$T/pkt/record.json")"
}
case_http_cancel_in_flight() {
	# R-H07: cancelling the Run stops a request in flight: the worker's scope
	# is fenced with the Flow's, nothing is left behind.
	peer srv 18080
	project "$CALLER"
	printf '[{"do":"http","route":"slow"}]\n' >"$T/steps"
	(cd "$T/p" && exec "$JIG" run caller --input steps="$T/steps" --output "$T/pkt") >"$T/out" 2>"$T/err" &
	outer=$!
	i=0; until grep -q "^GET /slow" "$T/srv.log"; do i=$((i+1)); [ $i -lt 400 ] || fail "the request was not made"; sleep 0.05; done
	pgrep -f /.jig/http-worker >/dev/null || fail "no worker is running"
	start=$(date +%s)
	kill -TERM "$outer"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/err"
	[ $(($(date +%s) - start)) -lt 10 ] || fail "cancellation waited for the request"
	[ "$rc" -eq 1 ] && [ "$(rec status)" = cancelled ] || fail "exit $rc, status $(rec status)"
	! pgrep -f /.jig/http-worker >/dev/null || fail "the worker survived"
	jq -e '.effects[0].outcome == "failed" and (.effects[0].error | test("cancelled"))' "$T/pkt/record.json" >/dev/null || fail "evidence: $(jq -c .effects "$T/pkt/record.json")"
	no_leftovers
}
case_http_example() {
	# R-H01: the example Flow calls its reviewed loopback route.
	peer svc 8080
	project "$EX"
	run service-check
	succeeded
	grep -q 'answered \*\*200\*\*' "$T/pkt/files/status.md" && grep -q '"version": "1.2.3"' "$T/pkt/files/status.md" || fail "report: $(cat "$T/pkt/files/status.md")"
	jq -e '.effects == [.effects[0]] and .effects[0].route == "health" and .effects[0].status == 200' "$T/pkt/record.json" >/dev/null || fail "evidence"
}
case_http_refusals() {
	# R-H03, R-H04, R-H05: each refusal, in one Run (a changed URL or method,
	# loopback aliases, Schema/0, a redirect, the response cap, a trickle past
	# the deadline); nothing refused reaches the server.
	peer srv 18080
	project "$CALLER"
	steps '[{"do":"http","route":"ok","url":"http://127.0.0.1:18080/oK"},
		{"do":"http","route":"ok","method":"POST"},
		{"do":"http","route":"ok","url":"http://localhost:18080/ok"},
		{"do":"http","route":"ok","url":"http://127.1:18080/ok"},
		{"do":"http","route":"ok","url":"http://2130706433:18080/ok"},
		{"do":"http","route":"nope"},
		{"do":"http","route":"post","body":{"n":10}},
		{"do":"http","route":"post","body":{"n":1,"extra":true}},
		{"do":"http","route":"post","body":{"n":3}},
		{"do":"http","route":"redirect"},
		{"do":"http","route":"big"},
		{"do":"http","route":"trickle"},
		{"do":"http","route":"ok","body":{"n":1}}]'
	succeeded
	for i in 0 1 2 3 4; do expect_refused $i "grants exactly GET http://127.0.0.1:18080/ok"; done
	expect_refused 5 'no reviewed http route "nope"'
	why_says http-ungranted 'asked for the HTTP route "nope", which its flow.json does not grant'
	expect_refused 6 "does not match its Schema/0"
	expect_refused 7 "does not match its Schema/0"
	expect_ok 8; res 8 .text | jq -e '.method == "POST" and .body == "{\"n\":3}"' >/dev/null || fail "the valid body"
	expect_ok 9; [ "$(res 9 .status)" = 302 ] && [ "$(res 9 .redirectNotFollowed)" = true ] || fail "redirect"
	expect_refused 10 "over the grant's 1000 bytes; cut"
	expect_refused 11 "deadline of 1000 ms"
	expect_refused 12 "takes no body"
	# Sent: the valid post, the redirect (not its target), big, trickle.
	grep -c . "$T/srv.log" | grep -qx 4 || fail "server log: $(cat "$T/srv.log")"
	! grep -q "^GET /ok" "$T/srv.log" || fail "a refused request or the redirect's target reached the server"
	jq -e '[.effects[].outcome] == ["refused","refused","refused","refused","refused","refused","refused","refused","response","response","refused","failed","refused"]' \
		"$T/pkt/record.json" >/dev/null || fail "evidence outcomes: $(jq -c '[.effects[].outcome]' "$T/pkt/record.json")"
}
case_http_body_over_grant() {
	# R-H04 (decision 332): a request body is bounded by its grant's
	# max_request_bytes (route post: 256). The body is the JSON text the
	# Flow wrote (here with spaces, raw on Run/0): 256 bytes are sent as
	# they are; 257 are refused with one line before anything is sent.
	peer srv 18080
	project "$CALLER"
	at=$(printf '{"n":3%249s}' '') over=$(printf '{"n":3%250s}' '')
	[ ${#at} -eq 256 ] && [ ${#over} -eq 257 ] || fail "the bodies are ${#at} and ${#over} bytes"
	steps "$(jq -cn --arg a "$at" --arg o "$over" '[{do: "raw", op: {op: "http", route: "post", body: $o}},
		{do: "raw", op: {op: "http", route: "post", body: $a}}]')"
	succeeded
	expect_refused 0 "route post: the body is 257 bytes, over its 256; not sent"
	[ "$(res 0 .error | wc -l)" -eq 1 ] || fail "not one line: $(res 0 .error)"
	expect_ok 1
	[ "$(wc -l <"$T/srv.log")" -eq 1 ] || fail "server log: $(cat "$T/srv.log")"
	[ "$(sed -n 's|^POST /ok none ||p' "$T/srv.log")" = "$at" ] || fail "the service received: $(cat "$T/srv.log")"
	jq -e '[.effects[].outcome] == ["refused", "response"]' "$T/pkt/record.json" >/dev/null ||
		fail "evidence outcomes: $(jq -c '[.effects[].outcome]' "$T/pkt/record.json")"
}
case_http_bindings() {
	# R-H05, R-H07, R-H10: a bound bearer is sent; an echoed one is withheld;
	# a revoked binding, a binding to another URL, the operator's own Schema/0,
	# an unsafe configuration each stop the request before it is sent.
	peer srv 18080
	project "$CALLER"
	config '{"format":"jig-http-config/1","bindings":[
		{"flow":"caller","route":"ok","url":"http://127.0.0.1:18080/ok","bearer":"tok-ok-1"},
		{"flow":"caller","route":"echo","url":"http://127.0.0.1:18080/echo-auth","bearer":"tok-echo-2"},
		{"flow":"caller","route":"notfound","url":"http://127.0.0.1:18080/elsewhere","bearer":"tok-3"},
		{"flow":"caller","route":"redirect","url":"http://127.0.0.1:18080/redirect","bearer":"tok-4","revoked":true},
		{"flow":"caller","route":"post","url":"http://127.0.0.1:18080/ok","body_schema":{"type":"object","properties":{"n":{"enum":[1,2]}}}}]}'
	steps '[{"do":"http","route":"ok"},{"do":"http","route":"echo"},{"do":"http","route":"notfound"},{"do":"http","route":"redirect"},
		{"do":"http","route":"post","body":{"n":3}},{"do":"http","route":"post","body":{"n":2}}]'
	succeeded
	expect_ok 0; res 0 .text | jq -e '.auth == "bearer"' >/dev/null || fail "the bearer was not sent"
	expect_refused 1 "contains the bound bearer"
	expect_refused 2 "bound route notfound to another URL"
	expect_refused 3 "revoked the binding of route redirect"
	expect_refused 4 "the operator's Schema/0"
	expect_ok 5; res 5 .text | jq -e '.auth == "none"' >/dev/null || fail "a schema-only binding sent a bearer"
	[ "$(wc -l <"$T/srv.log")" -eq 3 ] || fail "server log: $(cat "$T/srv.log")"
	! grep -rq "tok-" "$T/pkt" || fail "a bearer is in the packet"
	chmod 644 "$XDG_CONFIG_HOME/jig/http.json"
	steps '[{"do":"http","route":"ok"}]'
	succeeded
	expect_refused 0 "must be yours and mode 0600"
	[ "$(wc -l <"$T/srv.log")" -eq 3 ] || fail "sent with an unsafe configuration"
	# Issue 44: a configuration the operator cannot read is not "no
	# bindings": the revoked route stays refused, nothing is sent.
	chmod 600 "$XDG_CONFIG_HOME/jig/http.json"; chmod 000 "$XDG_CONFIG_HOME/jig"
	steps '[{"do":"http","route":"redirect"},{"do":"http","route":"post","body":{"n":3}}]'
	chmod 700 "$XDG_CONFIG_HOME/jig"
	succeeded
	expect_refused 0 "http.json: Permission denied: cannot read the operator configuration"
	expect_refused 1 "http.json: Permission denied"
	[ "$(wc -l <"$T/srv.log")" -eq 3 ] || fail "sent with an unreadable configuration: $(cat "$T/srv.log")"
}
case_http_bearer_canary() {
	# R-H02, R-H06: the bearer never appears in the Flow's environment, arguments,
	# Run/0 traffic, the Plan, the record, logs or jig's output.
	canary=CANARY-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	peer srv 18080
	project "$CALLER"
	config "{\"format\":\"jig-http-config/1\",\"bindings\":[{\"flow\":\"caller\",\"route\":\"ok\",\"url\":\"http://127.0.0.1:18080/ok\",\"bearer\":\"$canary\"},
		{\"flow\":\"caller\",\"route\":\"post\",\"url\":\"http://127.0.0.1:18080/ok\",\"bearer\":\"$canary\"}]}"
	steps '[{"do":"http","route":"ok"},{"do":"http","route":"post","body":{"n":1}},{"do":"http","route":"trickle"},{"do":"dump"}]'
	succeeded
	expect_ok 0; res 0 .text | jq -e '.auth == "bearer"' >/dev/null || fail "the bearer was not sent"
	grep -q '^env ' "$T/pkt/files/dump.txt" && grep -q '^results ' "$T/pkt/files/dump.txt" || fail "no dump"
	for f in "$T/pkt" "$T/p" "$T/out" "$T/err" "$T/review.out" "$T/srv.log"; do
		! grep -rqa -- "$canary" "$f" || fail "the bearer is in $f"
	done
}
scratch_http_tls() {
	# A name for the host's resolver: /etc/hosts with jig-test.example.
	cp /etc/hosts /tmp/jig-hosts && echo "127.0.0.1 jig-test.example" >>/tmp/jig-hosts &&
		chmod 644 /tmp/jig-hosts && mount --bind /tmp/jig-hosts /etc/hosts
}
case_http_tls() {
	# R-H09: an untrusted CA is refused; the operator's test CA makes it work;
	# a name is resolved with the host's resolver and verified against the
	# certificate.
	certs
	peer a 18443 --tls "$T/srv-a.pem" "$T/srv-a.key"
	project "$CALLER"
	steps '[{"do":"http","route":"tls"}]'
	succeeded
	expect_refused 0 "TLS"
	config "{\"format\":\"jig-http-config/1\",\"ca_file\":\"$T/ca-b.pem\"}"
	steps '[{"do":"http","route":"tls"}]'
	expect_refused 0 "TLS"
	config "{\"format\":\"jig-http-config/1\",\"ca_file\":\"$T/ca-a.pem\"}"
	steps '[{"do":"http","route":"tls"},{"do":"http","route":"named"},{"do":"resolve","name":"jig-test.example"},
		{"do":"fetch","url":"https://jig-test.example:18443/ok"}]'
	succeeded
	expect_ok 0; res 0 .text | jq -e '.ok' >/dev/null || fail "body over TLS"
	expect_ok 1
	# R-H09 (audit #76): the name was the host's resolver's, inside the
	# worker's scope; the Flow's own scope has no resolver (no name-service
	# files, no network): its lookup of the name and its own fetch fail.
	expect_refused 2 ""; expect_refused 3 ""
	[ "$(wc -l <"$T/a.log")" -eq 2 ] || fail "server log: $(cat "$T/a.log")"
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[] | select(.name == "caller")' >"$T/caller.json"
	jq -e '[.http[] | select(.route == "named") | .worker_scope.permission_plan.binds[].target] | index("/etc/hosts") and index("/etc/resolv.conf") and index("/etc/nsswitch.conf")' \
		"$T/caller.json" >/dev/null || fail "the worker's scope does not bind the host's name service"
	jq -e '[.scope.permission_plan.binds[].target | select(startswith("/etc"))] == [] and .scope.permission_plan.network == "none"' \
		"$T/caller.json" >/dev/null || fail "the Flow's scope has a resolver: $(jq -c .scope.permission_plan.binds "$T/caller.json")"
}
case_http_r_h03_flow_adds_nothing() {
	# R-H03 (audit #62, #65): a Flow cannot add a header, a proxy, a retry or
	# code to its request: a Run/0 http operation with any field beyond
	# route, method, url and body is refused before the worker starts; the
	# worker's scope holds the snapshot's worker and no Flow or project
	# file; the peer sees only the worker's own headers.
	peer srv 18080
	project "$CALLER"
	steps '[{"do":"raw","op":{"op":"http","route":"ok","headers":{"X-Evil":"1"}}},
		{"do":"raw","op":{"op":"http","route":"ok","import":"/flow/main.ts"}},
		{"do":"raw","op":{"op":"http","route":"ok","proxy":"http://127.0.0.1:18081"}},
		{"do":"raw","op":{"op":"http","route":"ok","retries":3}},
		{"do":"raw","op":{"op":"http","route":"ok","grant":{"method":"GET","url":"http://127.0.0.1:18080/ok"},"bearer":"x"}},
		{"do":"raw","op":{"op":"http","route":"ok"}}]'
	succeeded
	for i in 0 1 2 3 4; do expect_refused $i 'unknown field'; done
	expect_ok 5
	[ "$(wc -l <"$T/srv.log")" -eq 1 ] || fail "server log: $(cat "$T/srv.log")"
	[ "$(cat "$T/srv.log.headers")" = "accept host user-agent" ] || fail "the peer saw headers: $(cat "$T/srv.log.headers")"
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[] | select(.name == "caller") | .http[] | select(.route == "ok") | .worker_scope' >"$T/ws.json"
	jq -r '.permission_plan.binds[].source' "$T/ws.json" >"$T/sources"
	cat "$T/sources"
	! grep -q -- "$T" "$T/sources" || fail "the worker's scope binds a project path"
	[ "$(grep -c '/libexec/' "$T/sources")" -eq 1 ] && grep -q '/libexec/jig-http-worker$' "$T/sources" || fail "the worker's scope binds other snapshot code"
	jq -e '.argv == ["/.jig/http-worker"] and .permission_plan.env == {}' "$T/ws.json" >/dev/null || fail "argv/env: $(jq -c '{argv, env: .permission_plan.env}' "$T/ws.json")"
}

case_http_exact_body() {
	# R-H03 (issue 46, decision 260): the service receives exactly the bytes
	# the Flow's JSON.stringify built — 132.45, 0.1, 1e21 and a 17-digit
	# integer unchanged — validated against the route's schema, never
	# re-encoded; a body that is not its JSON text, or has a key twice, or
	# fails the schema is refused before anything is sent.
	peer srv 18080
	project "$CALLER"
	want='{"north":132.45,"tenth":0.1,"big":1e21,"id":12345678901234567}'
	steps '[{"do":"http","route":"exact","body":{"north":132.45,"tenth":0.1},"raw":{"big":"1e21","id":"12345678901234567"}},
		{"do":"http","route":"exact","body":{"north":200,"tenth":0.1},"raw":{"big":"1e21","id":"1"}},
		{"do":"raw","op":{"op":"http","route":"exact","body":{"north":1,"tenth":1,"big":1,"id":1}}},
		{"do":"raw","op":{"op":"http","route":"exact","body":"{\"north\":1,\"north\":2,\"tenth\":1,\"big\":1,\"id\":1}"}}]'
	succeeded
	expect_ok 0
	[ "$(res 0 .sent)" = "$want" ] || fail "the Flow built $(res 0 .sent)"
	[ "$(sed -n 's|^POST /ok none ||p' "$T/srv.log")" = "$want" ] || fail "the service received: $(cat "$T/srv.log")"
	[ "$(res 0 .text | jq -r .body)" = "$want" ] || fail "the service answered: $(res 0 .text)"
	expect_refused 1 "at \"/north\": .*out of range"
	expect_refused 2 "the body must be its JSON text"
	expect_refused 3 "is not one JSON value"
	[ "$(wc -l <"$T/srv.log")" -eq 1 ] || fail "a refused body was sent: $(cat "$T/srv.log")"
}


# --- 10. hardening (issue 12) -------------------------------------------------------------
# Untrusted text reaches the terminal inert (R-P12): no_raw_controls FILE...
# fails if any file holds invalid UTF-8, a control byte other than newline,
# DEL, a C1 control or a bidi control.
no_raw_controls() {
	python3 - "$@" <<'PY' || fail "a raw control byte reached the terminal"
import re, sys
bad = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
ok = True
for name in sys.argv[1:]:
    data = open(name, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{name}: invalid UTF-8 at {e.start}: {data[max(0, e.start - 20):e.start + 20]!r}"); ok = False; continue
    for m in bad.finditer(text):
        print(f"{name}: raw {m.group()!r} at {m.start()}: {text[max(0, m.start() - 30):m.start() + 30]!r}"); ok = False
sys.exit(0 if ok else 1)
PY
}
no_forged_line() {
	! grep -h '^jig: flow hostile succeeded' "$@" || fail "a forged jig line reached the terminal"
}
EXACT='"\u001b]52;c;cHduZWQ=\u0007 bs\b\b del\u007f c1\u009b31m bidi\u202egnp.exe\u2066x\u2069 lone\rCR"'
case_hostile_text_error() {
	project "$HOSTILE"; hostile text-error
	[ "$rc" -eq 1 ] && [ "$(rec status)" = failed ] || fail "the Run did not fail"
	# as lines (issue 46), each inert and after jig's indent
	grep -q '^jig: flow hostile failed in its own code: Error: \\x1b\[2K\\r\\x1b\[1Ajig: flow hostile succeeded; packet /tmp/forged; packet ' "$T/err" &&
		grep -q '^    \\x1b\]0;pwned-title\\x07\\x1b\]52;c;cHduZWQ=\\x07 bs\\x08\\x08 del\\x7f c1\\u009b31m bidi\\u202egnp.exe\\u2066x\\u2069 lone\\rCR' "$T/err" || fail "the error is not shown escaped"
	no_raw_controls "$T/out" "$T/err"; no_forged_line "$T/out" "$T/err"
	# The record keeps the exact text; inspect shows it (and the logs) inert.
	jq -e --argjson x "$EXACT" '(.error | contains($x)) and (.logs[0] | contains($x))' "$T/pkt/record.json" >/dev/null || fail "the record lost the exact text"
	"$JIG" inspect "$T/pkt" >"$T/inspect" 2>&1 || true
	cat "$T/inspect"
	no_raw_controls "$T/inspect"; no_forged_line "$T/inspect"
	grep -q '^      \\x1b\]0;pwned-title\\x07\\x1b\]52;c;cHduZWQ=\\x07' "$T/inspect" && grep -q '^  log second\\x1b\[31m line$' "$T/inspect" || fail "inspect does not show the logs escaped"
	"$JIG" inspect "$T/pkt" --json >"$T/inspect.json"
	no_raw_controls "$T/inspect.json"
	jq -e --argjson x "$EXACT" '(.record.error | contains($x)) and (.record.logs[0] | contains($x))' "$T/inspect.json" >/dev/null || fail "inspect --json lost the exact text"
	# jig run --json: exact, and still pure ASCII on the terminal.
	hostile text-error --json
	no_raw_controls "$T/out" "$T/err"
	jq -e --argjson x "$EXACT" '.error | contains($x)' "$T/out" >/dev/null || fail "run --json lost the exact text"
}
case_hostile_text_name() {
	project "$HOSTILE"; hostile text-name
	refused_output "names must be"
	grep -q 'out/evil\\x1b\[2K\\r\\x1b\[1Ajig: flow hostile succeeded; packet tmpforged\\x1b\]0;pwned-title' "$T/err" || fail "the name is not shown escaped"
	grep -q '\\x9b2J' "$T/err" || fail "the raw C1 byte is not shown escaped"
	no_raw_controls "$T/out" "$T/err"; no_forged_line "$T/out" "$T/err"
	hostile text-name --json
	no_raw_controls "$T/out" "$T/err"
	jq -e '.status == "failed" and (.error | contains("names must be"))' "$T/out" >/dev/null || fail "no failed record"
}
case_hostile_text_log() {
	project "$HOSTILE"; hostile text-log
	[ "$rc" -eq 0 ] || fail "exit $rc"
	"$JIG" inspect "$T/pkt" >"$T/inspect" 2>&1
	cat "$T/inspect"
	no_raw_controls "$T/out" "$T/err" "$T/inspect"; no_forged_line "$T/inspect"
	grep -q '^  log \\x1b\[2K\\r' "$T/inspect" || fail "inspect does not show the log"
}
# A crash is named on the terminal with its signal and core flag.
case_crash_names_signal() {
	project "$HOSTILE"; hostile segv
	[ "$rc" -eq 1 ] && [ "$(rec termination.signal)" = 11 ] || fail "not a SIGSEGV crash"
	core=$(rec termination.core_dumped)
	want="no core dumped"; [ "$core" = true ] && want="core dumped"
	grep -Eq "^jig: flow hostile (crashed with|was killed by) SIGSEGV \(signal 11, $want\)" "$T/err" || fail "the crash message does not name SIGSEGV and the core flag"
	"$JIG" inspect "$T/pkt" | grep -q "signal 11" || fail "inspect"
}
# Every writable mount in the Flow's scope is in its Plan with its cap;
# /dev/shm is not writable (R-P05).
case_flow_writable_mounts_are_the_plan() {
	project "$HOSTILE"
	(cd "$T/p" && "$JIG" review --json) | jq -r '.plan.flows[] | select(.name == "hostile") | .scope.permission_plan' >"$T/grants.json"
	hostile whoami
	[ "$rc" -eq 0 ] || fail "exit $rc"
	jq -r '.writable[] | "\(.at) size=\(.size_bytes / 1024)k"' "$T/grants.json" | sort >"$T/want"
	devs=$(jq -r '.always.devices[]' "$T/grants.json" | tr '\n' ' ')
	# mountinfo: ID PARENT DEV ROOT TARGET OPTS ... - FSTYPE SOURCE SUPER
	awk -v devs="$devs" 'BEGIN { split(devs, d, " "); for (k in d) dev[d[k]] = 1 }
	     { split($6, o, ","); if (o[1] != "rw" || ($5 in dev)) next
	       for (i = 7; i <= NF; i++) if ($i == "-") break
	       n = split($(i + 3), so, ","); s = ""; for (k = 1; k <= n; k++) if (so[k] ~ /^size=/) s = so[k]
	       print $5, s }' "$T/pkt/files/out/mountinfo" | sort >"$T/got"
	echo "writable in the Plan:"; cat "$T/want"; echo "writable inside:"; cat "$T/got"
	cmp -s "$T/want" "$T/got" || fail "the Flow's writable mounts are not its Plan's"
	hostile "fill /dev/shm/big 67108864"; denied
	grep -q "read-only file system" "$T/pkt/files/result.json" || fail "/dev/shm did not fail read-only"
}
# pid 1 (the launcher) cannot be re-tuned by the Flow; Bun keeps running.
case_hostile_tune_launcher() { project "$HOSTILE"; hostile tune-pid1; denied; cat "$T/pkt/files/result.json"; }
# Nothing the Flow sees of its mounts, descriptors, pid 1 or environment
# names the operator, the project or its .jig state.
case_hostile_sees_no_host_paths() {
	P="$T/zqx-secret-project-4711"
	cp -r "$HOSTILE" "$P"
	(cd "$P" && "$JIG" review --yes >/dev/null)
	printf 'whoami\n' >"$T/mode"
	(cd "$P" && "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt") || fail "the run failed"
	cat "$T/pkt/files/out/mountinfo" "$T/pkt/files/out/whoami.json"
	me=$(id -un)
	for secret in zqx-secret-project "$P" "$HOME" "/home/$me" "$me" ".jig/runs" ".jig-stage" "$T"; do
		! grep -F -q -- "$secret" "$T/pkt/files/out/mountinfo" "$T/pkt/files/out/whoami.json" || fail "the Flow can see \"$secret\""
	done
	no_run_dir
}

# worker_inside NAME: reviews the caller, runs its http route "ok" on the
# probe worker: $T/NAME.scope the Plan's worker scope, $T/NAME.inside what
# the worker read of itself.
worker_inside() {
	(cd "$T/p" && "$JIG" review --yes >/dev/null && "$JIG" review --json) |
		jq '.plan.flows[] | select(.name == "caller") | .http[] | select(.route == "ok") | .worker_scope' >"$T/$1.scope"
	steps '[{"do":"http","route":"ok"}]'
	succeeded
	res 0 .text >"$T/$1.inside"
	[ "$(ev 0 .scope_policy_sha256)" = "$(jq -r .policy_sha256 "$T/$1.scope")" ] || fail "the worker's policy digest is not the Plan's"
}
# Issues 13, 32 (R-P12): the HTTP worker's scope is its Plan's (argv,
# environment, binds, writable mounts, descriptors; the policy digest,
# which covers the limits). Then a catalog whose http-worker kind has one
# more argv entry and an environment entry: the launch follows it, and
# the comparison against the old Plan sees the difference.
scratch_http_worker_scope_is_the_plan() { scratch_refuse_other_snapshot; }
case_http_worker_scope_is_the_plan() {
	JIG=/var/tmp/prefix/bin/jig
	snapshot_with . "$JIG_PROBE" jig-http-worker
	project "$CALLER"
	worker_inside plan
	scope_is_plan "$T/plan.scope" "$T/plan.inside" || fail "the worker's scope is not its Plan's"
	snapshot_with '.kinds["http-worker"].argv += ["--plan-probe"] | .fragments["worker-scratch"].env = {"PLAN_PROBE": "1"}' "$JIG_PROBE" jig-http-worker
	worker_inside edited
	jq -e '.argv == ["/.jig/http-worker", "--plan-probe"] and .permission_plan.env == {"PLAN_PROBE": "1"}' "$T/edited.scope" >/dev/null ||
		fail "the edited catalog is not in the Plan"
	scope_is_plan "$T/edited.scope" "$T/edited.inside" || fail "the launch did not follow the catalog's edit"
	! scope_is_plan "$T/plan.scope" "$T/edited.inside" || fail "the comparison did not see the catalog's edit"
}

# --- 11. one scope model (issue 13) -------------------------------------------------------
# What the Plan shows is what runs: the record names the Plan's scope policy
# digest and carries its canonical policy, whose permission plan (jig scope
# plan) is the review's, text and JSON; inside, the Flow's environment,
# binds and descriptors are exactly the Plan's.
case_scope_is_the_plan() {
	project "$HOSTILE"
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[] | select(.name == "hostile") | .scope' >"$T/scope.json"
	(cd "$T/p" && "$JIG" review --full) >"$T/review.txt" </dev/null || true # admitted: --full prints it (issue 44)
	hostile whoami
	[ "$rc" -eq 0 ] || fail "exit $rc"
	[ "$(rec scope.policy_sha256)" = "$(jq -r .policy_sha256 "$T/scope.json")" ] || fail "the record's scope digest is not the Plan's"
	jq .scope.policy "$T/pkt/record.json" >"$T/policy.json"
	"$JIG" scope plan "$T/policy.json" --json >"$T/pp.json"
	jq -e --slurpfile pp "$T/pp.json" '.permission_plan == $pp[0]' "$T/scope.json" >/dev/null || fail "jig scope plan --json of the record's policy is not the review's"
	"$JIG" scope plan "$T/policy.json" >"$T/pp.txt"
	awk '$0 == "    scope flow-hostile" { on = 1 } on && (/^  flow / || /^    http / || /^admitted/ || /^not admitted/ || /^Plan /) { on = 0 } on { print substr($0, 5) }' "$T/review.txt" >"$T/rv.txt"
	diff "$T/rv.txt" "$T/pp.txt" || fail "jig scope plan of the record's policy does not print the review's permission plan"
	# Inside: the argv, the environment, the binds, the writable mounts
	# and the descriptors (issue 32: the one comparison, scope_plan.sh).
	W="$T/pkt/files/out/whoami.json"
	jq -n --rawfile m "$T/pkt/files/out/mountinfo" --slurpfile w "$W" '$w[0] | {argv, environ, fds, mountinfo: $m}' >"$T/inside.json"
	scope_is_plan "$T/scope.json" "$T/inside.json" || fail "the Flow's scope is not its Plan's"
	[ "$(jq -r '[.permission_plan.descriptors[].target] | join(" ")' "$T/scope.json")" = "0 1 2 3" ] || fail "plan descriptors"
	for fd in 0 1 2; do [ "$(jq -r ".fds[\"$fd\"]" "$W")" = /dev/null ] || fail "descriptor $fd is $(jq -r ".fds[\"$fd\"]" "$W")"; done
	jq -r '.fds["3"]' "$W" | grep -q '^socket:\[' || fail "descriptor 3 is not Run/0's socket"
	[ "$(rec scope.policy.limits.memory_bytes)" = "$(jq -r .permission_plan.limits.memory_bytes "$T/scope.json")" ] || fail "limits"
}


case_concurrent_runs_with_review() {
	# Issue 36: four Runs of two Flows of one project at once, with an
	# unchanged jig review --yes while they run: none is refused or waits
	# for another (each holds the project's lock shared; its ledger is in
	# its own run directory), all four publish a packet that verifies; the
	# review admits the same Plan; afterwards both Flows' last-Run entries
	# are whole (each written under its own name and renamed) and nothing
	# temporary is left in .jig.
	project "$EX"
	plan=$(jq -r .plan_sha256 "$T/p/.jig/admission.json")
	pids=""
	for k in 1 2 3 4; do
		if [ $((k % 2)) = 1 ]; then f=csv-report inp="data=$EX/csv-report/sample.csv"; else f=notes-index inp="notes=$EX/notes-index/sample.md"; fi
		(cd "$T/p" && exec "$JIG" run "$f" --output "$T/pkt$k" --input "$inp") >"$T/out$k" 2>"$T/err$k" </dev/null &
		pids="$pids $!"
	done
	(cd "$T/p" && "$JIG" review --yes) >"$T/review2.out" 2>&1 || { cat "$T/review2.out"; fail "the review during the Runs failed"; }
	k=0
	for p in $pids; do
		k=$((k + 1))
		set +e; wait "$p"; rc=$?; set -e
		[ "$rc" -eq 0 ] && [ "$(jq -r .status "$T/pkt$k/record.json")" = succeeded ] || { cat "$T/err$k"; fail "Run $k: exit $rc"; }
		"$JIG" inspect "$T/pkt$k" >/dev/null || fail "packet $k does not verify"
	done
	[ "$(jq -r .plan_sha256 "$T/p/.jig/admission.json")" = "$plan" ] || fail "the unchanged review admitted another Plan"
	for f in csv-report notes-index; do
		jq -e --arg f "$f" '.flow == $f and .record.status == "succeeded"' "$T/p/.jig/runs/$f.json" >/dev/null ||
			fail "the last-Run entry of $f: $(cat "$T/p/.jig/runs/$f.json")"
	done
	[ -z "$(find "$T/p/.jig" -name '.*tmp*' -o -name '*.tmp')" ] || fail "left in .jig: $(find "$T/p/.jig" -name '*tmp*')"
	no_run_dir
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
