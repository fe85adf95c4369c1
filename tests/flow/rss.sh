# Sourced by tests/flow/cases.sh and bench/caps.sh (issue 31).
# rss_watch PID: until PID ends, samples the peak resident memory (VmHWM)
# of every process named jig every 100 ms, with shell builtins only (a
# fork a process would slow the guest's sampling); then $T/rss holds each
# such process's maximum as "pid KiB", one line a process.
rss_watch() {
	: >"$T/rss.raw"
	while kill -0 "$1" 2>/dev/null; do
		for d in /proc/[0-9]*; do
			read -r comm 2>/dev/null <"$d/comm" || continue
			[ "$comm" = jig ] || continue
			{ while read -r k v _; do if [ "$k" = VmHWM: ]; then echo "${d#/proc/} $v" >>"$T/rss.raw"; fi; done; } 2>/dev/null <"$d/status" || true
		done
		sleep 0.1
	done
	awk 'NF == 2 && $2 > m[$1] {m[$1] = $2} END {for (p in m) print p, m[p]}' "$T/rss.raw" >"$T/rss"
}
