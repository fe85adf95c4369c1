# scope_is_plan SCOPE INSIDE [ARG...]: issue 32, R-P12. SCOPE is one scope
# of the Plan (jig review --json: {policy_sha256, permission_plan, argv}),
# INSIDE what the scope's process read of itself (tests/flow/inside.js or
# jig-probe: {argv, environ, mountinfo, fds}), ARG the values one call
# appends to the Plan's argv. Prints both sides and fails (returns 1) when
# the argv, the environment, the read-only binds, the writable mounts with
# their sizes or the descriptors differ. A process's own runtime opens
# descriptors of its own (Bun: an epoll, an eventfd, /dev/null, a dup of
# a stream, the listing's directory); beyond the Plan's, only such are
# allowed. The limits are not visible inside (no /sys); the callers check
# the launch's policy digest, which covers them, against the Plan's.
# Sourced by the suites; the one copy of this comparison.
scope_is_plan() {
	_s=$1 _in=$2
	shift 2
	_d=$(mktemp -d /tmp/jig-plan-inside.XXXXXX)
	jq -c '.argv + $ARGS.positional' "$_s" --args "$@" >"$_d/want.argv"
	jq -c '.argv' "$_in" >"$_d/got.argv"
	jq -r '.permission_plan.env // {} | to_entries[] | "\(.key)=\(.value)"' "$_s" | sort >"$_d/want.env"
	jq -r '.environ[]' "$_in" | sort >"$_d/got.env"
	(jq -r '.permission_plan.binds[]?.target' "$_s"; echo /.jig/init) | sort >"$_d/want.binds"
	jq -r .mountinfo "$_in" | awk '{ split($6, o, ","); if (o[1] == "ro" && $5 != "/" && $5 != "/dev" && $5 != "/dev/pts" && $5 != "/proc") print $5 }' |
		sort >"$_d/got.binds"
	jq -r '.permission_plan.writable[]? | "\(.at) size=\(.size_bytes / 1024)k"' "$_s" | sort >"$_d/want.writable"
	jq -r .mountinfo "$_in" | awk '
		$5 ~ /^\/dev(\/|$)/ { next }
		{ split($6, o, ","); if (o[1] != "rw") next
		  for (i = 7; i <= NF; i++) if ($i == "-") break
		  n = split($(i + 3), so, ","); s = ""; for (k = 1; k <= n; k++) if (so[k] ~ /^size=/) s = so[k]
		  print $5, s }' | sort >"$_d/got.writable"
	jq -r '[.permission_plan.descriptors[]?.target] | sort | join(" ")' "$_s" >"$_d/want.fds"
	jq -r --slurpfile s "$_s" '($s[0].permission_plan.descriptors // [] | map(.target | tostring)) as $p
		| ([.fds | to_entries[] | select(.key as $k | $p | index($k)) | .value]) as $planned
		| [.fds | to_entries[] | select((.key as $k | $p | index($k)) or
			((.value | test("^anon_inode:|^/dev/null$|^[?]$")) or (.value as $v | $planned | index($v))) == false) | .key | tonumber]
		| sort | join(" ")' "$_in" >"$_d/got.fds"
	_bad=
	for _k in argv env binds writable fds; do
		echo "$_k in the Plan:"; sed 's/^/  /' "$_d/want.$_k"
		if cmp -s "$_d/want.$_k" "$_d/got.$_k"; then echo "$_k inside: the same"; else
			echo "$_k inside:"; sed 's/^/  /' "$_d/got.$_k"; _bad="$_bad $_k"; fi
	done
	rm -rf "$_d"
	[ -z "$_bad" ] || { echo "not the Plan's:$_bad"; return 1; }
}

# snapshot_with CATALOG_JQ [FILE NAME]...: as the scratch prefix's user
# (the root set-up copied the prefix and the development key, as
# flow.refuse_other_snapshot's does), installs a new snapshot: the
# current one's files, each FILE as libexec/NAME, the catalog edited by
# CATALOG_JQ. Test snapshots replace a fixed program (the HTTP worker,
# the installer's install.js) by one that reports what it reads of itself.
snapshot_with() {
	_cur=/var/tmp/prefix/lib/jig/$(readlink /var/tmp/prefix/lib/jig/current)
	rm -rf "$T/stage" && mkdir "$T/stage" && (cd "$_cur" && cp -r modules libexec "$T/stage/")
	jq "$1" "$_cur/libexec/catalog.json" >"$T/stage/libexec/catalog.json"
	shift
	while [ $# -ge 2 ]; do cp "$1" "$T/stage/libexec/$2"; shift 2; done
	_seq=$(($(jq .sequence "$_cur/manifest.json") + 1))
	/var/tmp/prefix/bin/jig-snapshot create --dir "$T/stage" --id "s$_seq" --sequence "$_seq" --module sandbox-linux:sandbox:modules/sandbox-linux.so --module http:http:modules/http.so --module acp:acp:modules/acp.so --module display:display:modules/display.so >/dev/null
	/var/tmp/prefix/bin/jig-snapshot sign --dir "$T/stage" --key /var/tmp/devkey >/dev/null
	/var/tmp/prefix/bin/jig-snapshot install --dir "$T/stage" --prefix /var/tmp/prefix >/dev/null
}
