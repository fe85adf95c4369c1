#!/bin/sh
# The spin models of jig's crash protocols (issue 37, models/*.pml,
# docs/reliability.md "Model-checked protocols"). Each case_* is one ctest
# (models.<case>), plain lane: for its model it generates the verifier
# (spin -a), compiles it (cc -O2) and runs it: the model must give no
# error (safety exhaustively; the liveness check with weak fairness), and
# each mutant (-DMUTANT_X) must give a counterexample of the property it
# breaks, or the test fails. No C code of jig's runs (label sources-only).
# Requirements: R-S07, R-L02, R-L03, R-L06, R-L07, R-L08, R-O02 (packs: R-S01).
set -eu
: "${JIG_SOURCE:?}"
M="$JIG_SOURCE/models"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v spin >/dev/null 2>&1 || fail "spin is not installed (scripts/deps.sh installs the Debian package spin)"
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/jig-models.XXXXXX")
trap 'rm -rf "$T"' EXIT

# verify MODEL TAG "SPIN_DEFS" "CC_DEFS" "PAN_ARGS": $T/TAG.out, $errors
verify() {
	d="$T/$2"
	mkdir -p "$d"
	cp "$M/$1.pml" "$d/"
	# shellcheck disable=SC2086
	(cd "$d" && spin $3 -a "$1.pml" >spin.out 2>&1) || { cat "$d/spin.out"; fail "$2: spin -a failed"; }
	# shellcheck disable=SC2086
	(cd "$d" && nice "$CC" -O2 -w -DMEMLIM=2048 $4 -o pan pan.c) || fail "$2: the verifier did not compile"
	# shellcheck disable=SC2086
	(cd "$d" && nice ./pan $5 >"$T/$2.out" 2>&1) || true
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$T/$2.out" | tail -1)
	[ -n "$errors" ] || { cat "$T/$2.out"; fail "$2: the verifier did not finish"; }
	! grep -q "out of memory\|max search depth too small" "$T/$2.out" || { cat "$T/$2.out"; fail "$2: the search was cut short"; }
}
stats() { # one line: states stored, transitions, depth, time
	printf '%s: %s states stored, %s transitions, depth %s, %s s\n' "$1" \
		"$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$T/$1.out")" \
		"$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$T/$1.out")" \
		"$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$T/$1.out")" \
		"$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds/\1/p' "$T/$1.out")"
}
# holds MODEL TAG SPIN_DEFS CC_DEFS PAN_ARGS: no error
holds() {
	verify "$@"
	[ "$errors" -eq 0 ] || { cat "$T/$2.out"; (cd "$T/$2" && spin -t -p -g $3 "$1.pml" | tail -60); fail "$2: $errors error(s)"; }
	stats "$2"
}
# breaks MODEL MUTANT PATTERN SPIN_DEFS CC_DEFS PAN_ARGS: the mutant gives a
# counterexample, and it is the property's (PATTERN on pan's error line)
breaks() {
	verify "$1" "$2" "-DMUTANT_$2 $4" "$5" "$6"
	[ "$errors" -ge 1 ] || { cat "$T/$2.out"; fail "mutant $2 of $1 gave no counterexample: the property is not checked"; }
	line=$(grep -m1 '^pan:1:' "$T/$2.out" || true)
	printf '%s\n' "$line" | grep -q -- "$3" || fail "mutant $2 of $1: another error than the property's: $line"
	echo "mutant $2: counterexample ($line)"
}

SAFE="-DSAFETY"
case_publication() {
	holds publication publication "" "$SAFE" "-m200000"
	breaks publication RENAME_REPLACE "(dest_run==seen)" "" "$SAFE" "-m200000"
	breaks publication RENAME_EARLY "dest_state==4" "" "$SAFE" "-m200000"
	breaks publication SWEEP_NO_LEASE "dest_state==4" "" "$SAFE" "-m200000"
	breaks publication RECOVER_UNFENCED "scope\[r\]!=1" "" "$SAFE" "-m200000"
}
case_reservations() {
	holds reservations reservations "" "$SAFE" "-m200000"
	breaks reservations NO_BUDGET_CHECK "<=4" "" "$SAFE" "-m200000"
	breaks reservations LAUNCH_BEFORE_LEDGER "disk&" "" "$SAFE" "-m200000"
	breaks reservations RELEASE_BEFORE_CLEANUP "disk&" "" "$SAFE" "-m200000"
	breaks reservations FENCE_ROOT_ONLY "!(ledger)&&" "" "$SAFE" "-m200000"
}
case_recovery_sweep() {
	holds recovery_sweep recovery_sweep "" "$SAFE" "-m200000"
	breaks recovery_sweep SWEEP_NO_LOCK "(o_alive\[r\]||c_alive\[r\])" "" "$SAFE" "-m200000"
	breaks recovery_sweep RENAME_BEFORE_LOCK "(o_alive\[r\]||c_alive\[r\])" "" "$SAFE" "-m200000"
	breaks recovery_sweep SWEEP_POPULATED "(cg\[r\]!=1)" "" "$SAFE" "-m200000"
	# S3: liveness under weak fairness (-a -f), the never claim of ltl s3
	holds recovery_sweep recovery_sweep_live "-DLIVE" "-DNFAIR=3 -DCOLLAPSE" "-m400000 -a -f"
	breaks recovery_sweep NO_END_MARK "acceptance cycle" "-DLIVE" "-DNFAIR=3 -DCOLLAPSE" "-m400000 -a -f"
}
case_packs() {
	holds packs packs "" "$SAFE" "-m200000"
	breaks packs NO_PACK_SYNC "pk==2" "" "$SAFE" "-m200000"
	breaks packs INDEX_FIRST "pk==2" "" "$SAFE" "-m200000"
	breaks packs NO_SIZE_CHECK "pk==2" "" "$SAFE" "-m200000"
}

"case_$1"
echo "PASS: $1"
