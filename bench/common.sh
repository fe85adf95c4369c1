# Sourced by the launch benchmarks (bench/scope.sh, flow.sh, native.sh):
# the one description of what their bare bwrap commands share with jig's.

# The namespaces and flags jig's sandbox module gives every scope without
# host network (plugins/sandbox-linux/launch.c), /dev and /proc included.
bench_ns="bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup --unshare-net \
 --disable-userns --die-with-parent --new-session --as-pid-1 --clearenv --cap-drop ALL --hostname jig \
 --dev /dev --proc /proc"

# bench_policy OUT [BUN]: the scope policy of the scope benchmarks, with
# /usr, a 16 MiB /scratch and the merged-/usr links (and Bun at /bun).
bench_policy() {
	jq -n --arg bun "${2:-}" '{
	  format: "jig-scope-policy/1", scope: "bench",
	  binds: ([{source: "/usr", target: "/usr"}] + (if $bun == "" then [] else [{source: $bun, target: "/bun"}] end)),
	  tmpfs: [{target: "/scratch", size_bytes: 16777216}],
	  symlinks: [{target: "/bin", link: "usr/bin"}, {target: "/lib", link: "usr/lib"}, {target: "/lib64", link: "usr/lib64"}],
	  env: {PATH: "/usr/bin", HOME: "/scratch", TMPDIR: "/scratch"}, cwd: "/scratch", network: "none",
	  descriptors: [{source: 1, target: 1}, {source: 2, target: 2}],
	  limits: {memory_bytes: 1073741824, tasks: 64, cpu_quota_us: 200000, wall_ms: 60000}
	}' >"$1"
}

# bench_prefix BUILD: a private copy of BUILD's test prefix in $T (a fresh
# temporary directory, removed at exit), jig from it as $JIG and its
# installed snapshot as $SNAP: the guest's tmpfs, not 9p (bench/scope.sh).
bench_prefix() {
	T=$(mktemp -d)
	trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
	cp -a "$1/test-prefix" "$T/prefix"
	JIG=$T/prefix/bin/jig
	SNAP=$T/prefix/lib/jig/$(readlink "$T/prefix/lib/jig/current")
}
