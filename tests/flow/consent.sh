#!/bin/sh
# The forged-consent matrix (issue 44, must-show 1; decisions 190-192), in
# the supported-host lane, where an admitted Flow really runs: a reviewed
# project carried to another directory, user or operator key by tar, cp -a
# or git, an edited admission, a .jig replaced by a symbolic link, a stale
# admission memo and capture cache carried in an archive. Each: jig run is
# refused "not admitted by you: run 'jig review' again" (exit 5) and the
# Flow never ran (no packet: its output, the only place it can write); then the operator's own jig review --yes admits and jig run
# runs. Each case_* is one ctest (consent_vm.<case>, label supported-host) as
# jigtest, whose home (and so operator key) is fresh in every case.
# The plain-lane cases of every bad entry: tests/integration/consent.sh.
# Requirements: R-V06, R-V08, R-V05, R-C01.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
EX="$JIG_SOURCE/examples"
T=$(mktemp -d /tmp/jig-consent.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
OTHER=/var/tmp/consent-other # made by the scratch_ set-ups, as another user
P="$T/p" # the project jig reviews and runs

review() { (cd "$P" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }; }
reviewed() { rm -rf "$T/p"; cp -r "$EX" "$T/p"; review; }
run() {
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	(cd "$P" && "$JIG" run csv-report --input data="$P/csv-report/sample.csv" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	echo "--- jig run csv-report (exit $rc)"
	cat "$T/out" "$T/err"
}
# refused WHY: not admitted by you, first line; nothing ran.
refused() {
	run
	[ "$rc" -eq 5 ] || fail "jig run exited $rc, expected 5 (not admitted by you)"
	head -1 "$T/err" | grep -q "not admitted by you.*run 'jig review' again" || fail "first line: $(head -1 "$T/err")"
	grep -q -- "$1" "$T/err" || fail "the refusal does not say /$1/"
	[ ! -e "$T/pkt" ] || fail "the Flow ran: a packet was published"
}
# ran: the Run succeeded and its packet holds the Flow's output.
ran() {
	run
	[ "$rc" -eq 0 ] && [ "$(jq -r .status "$T/pkt/record.json")" = succeeded ] || fail "the operator's admitted Run did not run (exit $rc)"
	[ -n "$(find "$T/pkt/files" -type f)" ] || fail "the Flow wrote nothing"
}
readmit() { review; ran; }
# stale_caches: the admission memo and a capture cache in .jig, as an
# older jig left them (made here if this jig writes none).
stale_caches() {
	[ -e "$1/.jig/admission-memo.json" ] || printf '{"format":"jig-admission-memo/2"}' >"$1/.jig/admission-memo.json"
	[ -d "$1/.jig/capture" ] || { mkdir "$1/.jig/capture" && printf 'x' >"$1/.jig/capture/csv-report.json"; }
	chmod 600 "$1/.jig/admission-memo.json"
}

case_tar_elsewhere() {
	# Archived with tar, with a stale memo and capture cache, extracted
	# elsewhere by the same user.
	reviewed
	stale_caches "$T/p"
	tar -C "$T" -cf "$T/p.tar" p
	mkdir "$T/x" && tar -C "$T/x" -xpf "$T/p.tar"
	P="$T/x/p"
	[ -f "$P/.jig/admission-memo.json" ] && [ -d "$P/.jig/capture" ] || fail "the archive lost its caches"
	refused "made for another directory"
	readmit
}

scratch_tar_other_user() {
	# Another user reviews (and so admits with their own key) a project,
	# then archives it for jigtest.
	mount -t tmpfs -o mode=0755 tmpfs /home/jigconsent && chown jigconsent: /home/jigconsent
	rm -rf "$OTHER" && mkdir -m 755 "$OTHER" && cp -r "$JIG_SOURCE/examples" "$OTHER/p" && chown -R jigconsent: "$OTHER"
	as_other() { /usr/bin/setpriv --reuid=jigconsent --regid=jigconsent --init-groups -- env HOME=/home/jigconsent "$@"; }
	(cd "$OTHER/p" && as_other "$JIG_TEST_PREFIX/bin/jig" review --yes >/dev/null)
	as_other tar -C "$OTHER" -cf "$OTHER/p.tar" p
}
case_tar_other_user() {
	[ -f "$OTHER/p.tar" ] || fail "no archive from the other user"
	reviewed # jigtest has an operator key of its own: the MAC decides
	rm -rf "$T/p"
	tar -C "$T" -xf "$OTHER/p.tar"
	[ -f "$T/p/.jig/admission.json" ] || fail "the archive carries no admission"
	refused "not admitted by you"
	readmit
}

case_tar_in_place_key_deleted() {
	# Archived, the operator secret deleted, extracted in place.
	reviewed
	tar -C "$T" -cf "$T/p.tar" p
	rm "$(getent passwd "$(id -un)" | cut -d: -f6)/.local/state/jig/operator.key"
	mkdir "$T/x" && tar -C "$T/x" -xpf "$T/p.tar" && rm -rf "$T/p" && mv "$T/x/p" "$T/p"
	refused "no operator key"
	readmit
}

case_cp_a() {
	reviewed
	cp -a "$T/p" "$T/copy"
	P="$T/copy"
	refused "made for another directory"
	readmit
}

case_git_clone() {
	# .jig committed to a repository and cloned.
	reviewed
	(cd "$T/p" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm reviewed) || fail "git"
	(cd "$T/p" && git ls-files | grep -q '^\.jig/admission.json$') || fail ".jig was not committed"
	git clone -q "$T/p" "$T/clone"
	chmod 700 "$T/clone/.jig" # git keeps no directory mode: what a careful attacker's checkout would set
	P="$T/clone"
	refused "not admitted by you"
	readmit
}

case_admission_edited() {
	# The project changed (one more line of code) and the admission edited
	# to name the new Plan, with that Plan's text in admitted/<sha>.json.
	reviewed
	printf '// more\n' >>"$T/p/csv-report/main.ts"
	set +e; (cd "$T/p" && "$JIG" review --json >"$T/plan.json" 2>/dev/null); set -e
	new=$(jq -r .plan_sha256 "$T/plan.json")
	old=$(jq -r .plan_sha256 "$T/p/.jig/admission.json")
	[ -n "$new" ] && [ "$new" != "$old" ] || fail "no new Plan"
	cp "$T/p/.jig/admitted/$old.json" "$T/p/.jig/admitted/$new.json"
	jq -c --arg n "$new" '.plan_sha256 = $n' "$T/p/.jig/admission.json" >"$T/a" && cat "$T/a" >"$T/p/.jig/admission.json"
	refused "not made with your operator key"
	readmit
}

case_admitted_plan_edited() {
	# admitted/<sha>.json edited: never read as the admitted Plan (its bytes
	# must hash to its name); the admission itself still holds.
	reviewed
	sha=$(jq -r .plan_sha256 "$T/p/.jig/admission.json")
	sed -i 's/"csv-report"/"csv-reporx"/' "$T/p/.jig/admitted/$sha.json"
	(cd "$T/p" && "$JIG" list --json) | jq -e '.admitted_plan == null' >/dev/null || fail "jig list read an edited admitted Plan"
	ran
	readmit
	(cd "$T/p" && "$JIG" list --json) | jq -e --arg s "$sha" '.admitted_plan == $s' >/dev/null || fail "review did not rewrite it"
}

case_state_symlink() {
	# .jig replaced by a symbolic link between review and run.
	reviewed
	mv "$T/p/.jig" "$T/state" && ln -s "$T/state" "$T/p/.jig"
	refused "symbolic link"
	rm "$T/p/.jig"
	readmit
	[ -f "$T/state/admission.json" ] || fail "the link's target was touched"
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
