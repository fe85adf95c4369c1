#!/bin/sh
# man.sh JIG OUT: jig(1) from `JIG help` and `JIG --version`, so the man
# page and the help are one text (the usage in host/cli/main.c). Run at
# build time (target jig-man); installed as share/man/man1/jig.1.
set -eu
jig=$1 out=$2
version=$("$jig" --version | awk '{ print $2 }')
"$jig" help >"$out.help"
awk -v version="$version" '
	function esc(s) {
		gsub(/\\/, "\\e", s)
		gsub(/-/, "\\-", s)
		if (s ~ /^[.\047]/) s = "\\&" s
		return s
	}
	function section(name) {
		if (pre) print ".fi"
		print ".SH " name
		print ".nf"
		pre = 1
	}
	NR == 1 {
		print ".TH JIG 1 \"\" \"jig " version "\" \"User Commands\""
		print ".SH NAME"
		print "jig \\- run untrusted JavaScript Flows in a contained, reviewed scope"
		print ".SH SYNOPSIS"
		sub(/^usage: /, "")
		print ".B " esc($0)
		print ".SH DESCRIPTION"
		print "jig captures a project of Flows, shows its Plan for review, admits it after"
		print "an explicit yes, and runs an admitted Flow in a contained scope (bwrap,"
		print "rootless cgroup v2, seccomp), publishing its packet. The text below is"
		print "the one \\fBjig help\\fR prints."
		next
	}
	/^commands:$/ { section("COMMANDS"); next }
	/^options:$/ { section("OPTIONS"); next }
	/^exit status:$/ { section("EXIT STATUS"); next }
	/^files:$/ { section("FILES"); next }
	/^see / { if (pre) print ".fi"; pre = 0; print ".SH SEE ALSO"; print esc($0); next }
	/^$/ { if (pre) print ""; next }
	{ print esc($0) }
	END { if (pre) print ".fi" }
' "$out.help" >"$out.tmp"
rm -f "$out.help"
mv "$out.tmp" "$out"
