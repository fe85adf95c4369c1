#!/bin/sh
# The mutation campaign over the trusted side (issue 47, decisions 300-304).
#
# Each mutant of tests/mutants/*.txt is one targeted change of security-
# relevant host code: a comparison flipped, a check's return ignored, a
# bound off by one, a refusal turned into success. For each, this script
# replaces the mutant's snippet (which must occur exactly once in its file,
# or the script stops: a mutant that no longer matches the source is a
# failure, never silently skipped), rebuilds only the targets its tests need
# in an existing CMake build directory (make recompiles the one object and
# relinks), runs the ctest cases named as its killers, restores the file and
# rebuilds again. A mutant is KILLED when at least one of its killers fails,
# SURVIVED when all pass.
#
#   scripts/mutate.sh [--build DIR] [--sample N [--seed S]] [--full] [--only ID]... [--list]
#
#   --build DIR  the build directory (default build/, configured with
#                -DJIG_FAULT_POINTS=ON as scripts/test.sh makes it)
#   --sample N   N mutants picked at random among those with plain-lane
#                killers and no "expect:" (seed printed; --seed S repeats a
#                draw); exit 1 if one survives. .ci/run (scripts/test.sh)
#                runs --sample 4.
#   --full       also the supported-host killers (VM lane, slow) of
#                mutants that have them; without it only plain-lane cases run
#   --only ID    just these mutants (repeatable)
#   --list       print the mutants and their killers, build nothing
#
# A kill counts only if the failed killers pass again once the file is put
# back and rebuilt (else the kill is void: the case failed for another
# reason, such as state a mutant made it leave behind).
# Exit: 0 every mutant run was killed; 1 one survived or a build failed;
# 2 bad use or a mutant whose snippet does not match its file.
# The source file is restored on any exit (and at the next start, from the
# copy kept in DIR/mutate/, if a run was killed hard).
set -eu
cd "$(dirname "$0")/.."
SRC=$PWD
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
B=build sample=0 seed= full=0 list=0 only=
while [ $# -gt 0 ]; do
	case $1 in
	--build) B=${2:?--build needs a directory}; shift 2 ;;
	--sample) sample=${2:?--sample needs a number}; shift 2 ;;
	--seed) seed=${2:?--seed needs a number}; shift 2 ;;
	--full) full=1; shift ;;
	--only) only="$only ${2:?--only needs an ID}"; shift 2 ;;
	--list) list=1; shift ;;
	*) echo "mutate: unknown argument $1 (usage: scripts/mutate.sh [--build DIR] [--sample N [--seed S]] [--full] [--only ID]... [--list])" >&2; exit 2 ;;
	esac
done
case $sample in *[!0-9]*) echo "mutate: --sample wants a number, not $sample" >&2; exit 2 ;; esac

[ -d "$B" ] || { echo "mutate: no build directory $B (scripts/setup.sh makes build/)" >&2; exit 2; }
B=$(cd "$B" && pwd)
W=$B/mutate
US=$(printf '\037')
mkdir -p "$W"
# A run killed hard left its backup: put the file back before anything.
if [ -f "$W/backup.path" ]; then
	f=$(cat "$W/backup.path")
	echo "mutate: restoring $f from an interrupted run" >&2
	cp "$W/backup.file" "$SRC/$f" && rm -f "$W/backup.path" "$W/backup.file"
fi

# The mutants, one "id file req from to plain vm targets expect" line each
# (fields separated by \037, the unit separator, which no snippet holds),
# from the records of tests/mutants/*.txt (fields "key: value",
# records separated by blank lines).
perl -e '
	my @f = qw(id file req from to plain vm targets expect);
	my (%r, %seen, $n);
	sub flush {
		return unless %r;
		for my $k (qw(id file req from to)) {
			die "mutate: $ARGV: record ending at line $.: no \"$k:\"\n" unless defined $r{$k} && length $r{$k};
		}
		die "mutate: $r{id}: no killer (\"plain:\" or \"vm:\")\n" unless length($r{plain} // "") || length($r{vm} // "");
		die "mutate: $r{id}: given twice\n" if $seen{$r{id}}++;
		$r{$_} //= "" for @f;
		print join("\037", map { $r{$_} } @f), "\n";
		%r = ();
	}
	while (<>) {
		chomp;
		next if /^#/;
		if (/^\s*$/) { flush(); next; }
		/^([a-z]+): ?(.*)$/ or die "mutate: $ARGV:$.: not \"key: value\": $_\n";
		my ($k, $v) = ($1, $2);
		die "mutate: $ARGV:$.: unknown key $k\n" unless grep { $_ eq $k } @f, "note";
		die "mutate: $ARGV:$.: a tab in $k\n" if $v =~ /\t/;
		$r{$k} = $v unless $k eq "note";
	} continue { if (eof) { flush(); close ARGV; } }
' tests/mutants/*.txt >"$W/all.tsv" || exit 2

# Every snippet matches its file exactly once, checked before any build.
perl -F'\037' -lane '
	my ($id, $file, $from) = @F[0, 1, 3];
	open(my $h, "<", $file) or do { print STDERR "mutate: $id: $file: $!"; $bad = 1; next };
	local $/; my $t = <$h>; $from =~ s/\{NL\}/\n/g; $from =~ s/\{TAB\}/\t/g; my $n = () = $t =~ /\Q$from\E/g;
	if ($n != 1) { print STDERR "mutate: $id: the snippet occurs $n times in $file (must be once): $from"; $bad = 1 }
	END { exit($bad ? 2 : 0) }' "$W/all.tsv" || exit 2

# Which mutants: --only, else a sample of those with plain killers that
# are expected to die, else all.
if [ -n "$only" ]; then
	: >"$W/run.tsv"
	for id in $only; do
		awk -F"$US" -v id="$id" '$1 == id' "$W/all.tsv" >>"$W/run.tsv"
		grep -q "^$id$US" "$W/run.tsv" || { echo "mutate: no mutant $id" >&2; exit 2; }
	done
elif [ "$sample" -gt 0 ]; then
	[ -n "$seed" ] || seed=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo "== mutate: a sample of $sample (--seed $seed repeats it)"
	awk -F"$US" '$9 == "" && $6 != ""' "$W/all.tsv" | perl -e 'srand(shift); my @l = <STDIN>; for (my $i = @l; --$i;) { my $j = int rand($i + 1); @l[$i, $j] = @l[$j, $i] } print @l[0 .. (@l > '"$sample"' ? '"$sample"' - 1 : $#l)]' "$seed" >"$W/run.tsv"
else
	cp "$W/all.tsv" "$W/run.tsv"
fi

if [ "$list" = 1 ]; then
	awk -F"$US" '{ printf "%-32s %-34s %-6s plain: %s%s\n", $1, $2, $3, $6, ($7 != "" ? "  vm: " $7 : "") }' "$W/run.tsv"
	exit 0
fi
[ -f "$B/CMakeCache.txt" ] || { echo "mutate: $B is not a configured build directory (scripts/setup.sh makes build/)" >&2; exit 2; }

restore() {
	if [ -f "$W/backup.path" ]; then
		cp "$W/backup.file" "$SRC/$(cat "$W/backup.path")" && rm -f "$W/backup.path" "$W/backup.file"
	fi
}
trap 'restore' EXIT
trap 'restore; exit 130' INT TERM HUP

# targets FILE PLAIN VM EXTRA: the build targets the killers need: jig (and
# the installed prefix the integration cases copy) unless only unit cases
# kill, test_NAME for unit.NAME / valgrind.NAME, and the mutant's own.
targets() {
	t=$4
	for c in $2 $3; do
		case $c in
		unit.*) t="$t test_${c#unit.}" ;;
		valgrind.*) t="$t test_${c#valgrind.}" ;;
		*) case " $t " in *" jig "*) ;; *) t="$t jig" ;; esac ;;
		esac
	done
	echo $t
}
build() { nice cmake --build "$B" -j2 --target $1 >"$W/build.log" 2>&1 </dev/null; }

killed=0 survived=0 total=0 failed=0 skipped=0 known=0 all_tg=
: >"$W/results.tsv"
while IFS=$US read -r id file req from to plain vm extra expect; do
	total=$((total + 1))
	tests=$plain
	[ "$full" = 1 ] && [ -n "$vm" ] && tests="$tests $vm"
	[ -n "$tests" ] || { skipped=$((skipped + 1)); echo "not run   $id ($req): its killers are VM cases (--full)"; printf "%s\t%s\t%s\tnot-run\t\n" "$id" "$file" "$req" >>"$W/results.tsv"; continue; }
	tg=$(targets "$file" "$plain" "$([ "$full" = 1 ] && echo "$vm")" "$extra")
	all_tg="$all_tg $tg"
	# Every killer named must be a ctest case of this build: a misspelt
	# or deleted one would let its mutant "survive" for nothing.
	for c in $tests; do
		(cd "$B" && ctest -N -R "^$(echo "$c" | sed 's/[.]/\\./g')\$" </dev/null) | grep -q " $c\$" || {
			echo "mutate: $id: no ctest case $c in $B" >&2; exit 2; }
	done
	cp "$SRC/$file" "$W/backup.file" && echo "$file" >"$W/backup.path"
	FROM=$from TO=$to perl -0pi -e 'my ($f, $t) = @ENV{qw(FROM TO)}; s/\{NL\}/\n/g, s/\{TAB\}/\t/g for $f, $t; s/\Q$f\E/$t/' "$SRC/$file"
	start=$(date +%s)
	if ! build "$tg"; then
		# A mutant that does not compile proves nothing: a broken entry.
		restore
		echo "mutate: $id: the mutant does not build ($W/build.log):" >&2
		grep -m3 'error' "$W/build.log" >&2 || true
		failed=$((failed + 1))
		printf '%s\t%s\t%s\tno-build\t\n' "$id" "$file" "$req" >>"$W/results.tsv"
		continue
	fi
	re=$(echo $tests | sed 's/[.]/\\./g; s/ /$|^/g')
	caught=
	(cd "$B" && ctest -R "^($re)\$" --timeout 600 --output-on-failure >"$W/$id.log" 2>&1 </dev/null) || caught=1
	# Which killers failed (ctest's summary lists them).
	who=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (.*/\1/p' "$W/$id.log" | grep -v '^install-prefix$' | tr '\n' ' ')
	restore
	if [ -n "$caught" ] && [ -z "$who" ]; then
		echo "mutate: $id: ctest failed but no killer did (install-prefix? see $W/$id.log)" >&2
		failed=$((failed + 1))
		printf '%s\t%s\t%s\terror\t\n' "$id" "$file" "$req" >>"$W/results.tsv"
	elif [ -n "$caught" ] && ! build "$tg"; then
		echo "mutate: the unmutated build failed after $id ($W/build.log)" >&2
		exit 1
	elif [ -n "$caught" ] && ! (cd "$B" && ctest -R "^($(echo $who | sed 's/[.]/\\./g; s/ /$|^/g'))\$" --output-on-failure >"$W/$id.unmutated.log" 2>&1 </dev/null); then
		# A killer that fails without the mutant proves nothing (a case
		# the mutant made leave shared state behind, say): void.
		echo "mutate: $id: its killer fails unmutated too, so the kill is void ($W/$id.unmutated.log)" >&2
		failed=$((failed + 1))
		printf '%s\t%s\t%s\tvoid\t%s\n' "$id" "$file" "$req" "$who" >>"$W/results.tsv"
	elif [ -n "$caught" ]; then
		killed=$((killed + 1))
		printf '%s\t%s\t%s\tkilled\t%s\n' "$id" "$file" "$req" "$who" >>"$W/results.tsv"
		echo "killed    $id ($req, $(($(date +%s) - start)) s) by $who"
	else
		if [ -n "$expect" ]; then known=$((known + 1)); else survived=$((survived + 1)); fi
		printf '%s\t%s\t%s\tsurvived\t\n' "$id" "$file" "$req" >>"$W/results.tsv"
		echo "SURVIVED  $id ($req, $(($(date +%s) - start)) s): $file: '$from' -> '$to' passes $tests${expect:+ (expected: $expect)}"
	fi
done <"$W/run.tsv"
# Back to the unmutated build.
[ -z "$all_tg" ] || build "$all_tg" || { echo "mutate: the unmutated build failed ($W/build.log)" >&2; exit 1; }
echo "== mutate: $total mutants, $killed killed, $survived survived unexpectedly, $known survived as listed (expect:), $skipped not run (VM only), $failed broken (results: $W/results.tsv)"
[ "$survived" = 0 ] && [ "$failed" = 0 ]
