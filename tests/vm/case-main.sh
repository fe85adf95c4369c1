# The end of every supported-host case script (sourced, with the script's
# arguments): as root (ROOT_MODE=1, the guest's set-up), root_<case> or
# scratch_<case> if the script has one; otherwise case_<case> as the user.
if [ "${ROOT_MODE:-}" = 1 ]; then
	if type "root_$1" >/dev/null 2>&1; then "root_$1"; fi
	if type "scratch_$1" >/dev/null 2>&1; then "scratch_$1"; fi
	exit 0
fi
"case_$1"
echo "PASS: $1"
