/* jig session's runtime directory, private TMPDIR, lease and sweep
 * (issue 34; seed 001 Slice 3 items 8-10): each refusal of an unsafe
 * $XDG_RUNTIME_DIR its own test, the TMPDIR's life, and the sweep's rules
 * with real leases (one held by a live process, one whose owner was
 * SIGKILLed) and crafted ones, in the fixture's private /run. */
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "proc/lease.h"
#include "session/runtime.h"
#include "rt_fixture.h"

#define SESSIONS_FMT "/run/user/%u/jig/sessions"

static void refused(const char *want)
{
	char out[4096];
	struct jig_error e = {0};
	assert_true(jig_runtime_dir(out, sizeof(out), &e) < 0);
	assert_int_equal(e.code, JIG_E_HOST);
	assert_null(strchr(e.msg, '\n'));
	if (!strstr(e.msg, want))
		fail_msg("\"%s\" does not say \"%s\"", e.msg, want);
	struct jig_session_rt rt;
	assert_true(jig_session_rt_open(&rt, &e) < 0); /* nothing is made beneath a refused one */
	assert_int_equal(rt.root_fd, -1);
	assert_int_equal(rt.lease_fd, -1);
}

static void xdg_accepted(void **state)
{
	(void)state;
	char out[4096];
	struct jig_error e = {0};
	assert_int_equal(jig_runtime_dir(out, sizeof(out), &e), 0);
	assert_string_equal(out, rt_xdg);
}

static void xdg_unset_refused(void **state)
{
	(void)state;
	unsetenv("XDG_RUNTIME_DIR");
	refused("XDG_RUNTIME_DIR is not set");
	setenv("XDG_RUNTIME_DIR", "", 1);
	refused("XDG_RUNTIME_DIR is not set");
}

static void xdg_not_run_user_refused(void **state)
{
	(void)state;
	const char *bad[] = {"/tmp", "/run/user/1001", "/run/user/0/", "/run/user//0", "/run/./user/0", "run/user/0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		setenv("XDG_RUNTIME_DIR", bad[i], 1);
		refused("is not /run/user/0 (the caller's uid's runtime directory)");
	}
}

static void xdg_foreign_owner_refused(void **state)
{
	(void)state;
	assert_int_equal(chown(rt_xdg, rt_jigtest(), rt_jigtest()), 0);
	refused("is owned by uid 1001, not by the caller (uid 0)");
}

static void xdg_wrong_mode_refused(void **state)
{
	(void)state;
	assert_int_equal(chmod(rt_xdg, 0755), 0);
	refused("has mode 0755, not 0700");
	assert_int_equal(chmod(rt_xdg, 01700), 0);
	refused("has mode 1700, not 0700");
}

static void xdg_symlink_refused(void **state)
{
	(void)state;
	/* the last component, then a middle one */
	rt_sh("mv /run/user/0 /run/user/real0 && ln -s real0 /run/user/0");
	refused("its component \"0\" is a symbolic link");
	rt_sh("rm /run/user/0 && mv /run/user/real0 /run/user/0 && mv /run/user /run/u && ln -s u /run/user");
	refused("its component \"user\" is a symbolic link");
	rt_sh("rm /run/user && mv /run/u /run/user");
}

static void jig_dirs_checked(void **state)
{
	(void)state;
	struct jig_session_rt rt;
	struct jig_error e = {0};
	rt_sh("mkdir -m 0755 /run/user/0/jig");
	assert_true(jig_session_rt_open(&rt, &e) < 0);
	assert_string_equal(e.msg, "/run/user/0/jig: not a directory of the caller's with mode 0700 (uid 0, mode 0755), refusing it");
	rt_sh("chmod 0700 /run/user/0/jig && mkdir -m 0700 /tmp/jig-rt-elsewhere.$PPID && ln -s /tmp/jig-rt-elsewhere.$PPID /run/user/0/jig/sessions");
	assert_true(jig_session_rt_open(&rt, &e) < 0);
	assert_string_equal(e.msg, "/run/user/0/jig/sessions: not a directory (a symbolic link or a file), refusing it");
	rt_sh("rmdir /tmp/jig-rt-elsewhere.$PPID && rm /run/user/0/jig/sessions && mkdir -m 0700 /run/user/0/jig/sessions && "
	      "chown 1001 /run/user/0/jig/sessions");
	assert_true(jig_session_rt_open(&rt, &e) < 0);
	assert_string_equal(e.msg, "/run/user/0/jig/sessions: not a directory of the caller's with mode 0700 (uid 1001, mode 0700), refusing it");
}

static void mode_of(const char *path, mode_t want_type, unsigned want_mode)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & S_IFMT, want_type);
	assert_int_equal(st.st_mode & 07777, want_mode);
	assert_int_equal(st.st_uid, geteuid());
}

/* TMPDIR: created 0700 at the exact path, the lease 0600 with its facts, gone after close. */
static void tmpdir_lifecycle(void **state)
{
	(void)state;
	struct jig_session_rt rt;
	struct jig_error e = {0};
	char want[4200];
	umask(0); /* the modes are jig's, not the umask's */
	assert_int_equal(jig_session_rt_open(&rt, &e), 0);
	umask(022);
	assert_int_equal(strspn(rt.id, "0123456789abcdef"), 32);
	assert_int_equal(strlen(rt.id), 32);
	snprintf(want, sizeof(want), SESSIONS_FMT "/%s", (unsigned)geteuid(), rt.id);
	assert_string_equal(rt.root, want);
	strcat(want, "/tmp");
	assert_string_equal(rt.tmpdir, want);
	mode_of("/run/user/0/jig", S_IFDIR, 0700);
	mode_of("/run/user/0/jig/sessions", S_IFDIR, 0700);
	mode_of(rt.root, S_IFDIR, 0700);
	mode_of(rt.tmpdir, S_IFDIR, 0700);
	char lease[4200], buf[1024];
	snprintf(lease, sizeof(lease), "%s/lease", rt.root);
	mode_of(lease, S_IFREG, 0600);
	int fd = open(lease, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1); /* held */
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	json_t *doc = json_loads(buf, 0, NULL);
	char boot[64];
	unsigned long long start;
	assert_int_equal(jig_boot_id(boot, sizeof(boot)), 0);
	assert_int_equal(jig_proc_start(getpid(), &start), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "format")), JIG_SESSION_LEASE_FORMAT);
	assert_string_equal(json_string_value(json_object_get(doc, "boot_id")), boot);
	assert_int_equal(json_integer_value(json_object_get(doc, "pid")), getpid());
	assert_int_equal(json_integer_value(json_object_get(doc, "start")), start);
	assert_true(json_is_null(json_object_get(doc, "cgroup")));
	json_decref(doc);
	assert_int_equal(jig_session_rt_set_cgroup(&rt, "/user.slice/jig-session-x.scope", &e), 0);
	assert_true(jig_session_rt_set_cgroup(&rt, "/a/../b", &e) < 0);
	assert_true(jig_session_rt_set_cgroup(&rt, "relative", &e) < 0);
	fd = open(lease, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	assert_non_null(strstr(buf, "\"cgroup\":\"/user.slice/jig-session-x.scope\""));
	/* what the agent leaves: files, directories, read-only ones, a link out */
	char cmd[9000];
	rt_sh("mkdir -p /run/outside && echo keep > /run/outside/f");
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p a/b/c && echo x > a/b/c/f && chmod 0500 a/b && ln -s /run/outside a/link && "
		 "ln -s /run/outside/f flink", rt.tmpdir);
	rt_sh(cmd);
	jig_session_rt_close(&rt);
	struct stat st;
	assert_int_equal(lstat(want, &st), -1);
	assert_int_equal(lstat(rt.root, &st), -1);
	assert_int_equal(rt.root_fd, -1);
	assert_int_equal(rt.lease_fd, -1);
	assert_int_equal(lstat("/run/outside/f", &st), 0); /* no link followed */
	jig_session_rt_close(&rt); /* idempotent */
	mode_of("/run/user/0/jig/sessions", S_IFDIR, 0700);
}

/* close never crosses a mount: a tmpfs mounted inside TMPDIR keeps its files. */
static void close_stops_at_mounts(void **state)
{
	(void)state;
	struct jig_session_rt rt;
	struct jig_error e = {0};
	char mnt[4200], f[4300];
	assert_int_equal(jig_session_rt_open(&rt, &e), 0);
	snprintf(mnt, sizeof(mnt), "%s/mnt", rt.tmpdir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	assert_int_equal(mount("jig-test-inner", mnt, "tmpfs", 0, NULL), 0);
	snprintf(f, sizeof(f), "%s/precious", mnt);
	rt_sh("true");
	int fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	jig_session_rt_close(&rt);
	struct stat st;
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(umount(mnt), 0);
}

/* A child that opens a session, reports its id and waits to be killed. */
static pid_t owner(char id[33])
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct jig_session_rt rt;
		struct jig_error e = {0};
		close(p[0]);
		if (jig_session_rt_open(&rt, &e) < 0 || jig_session_rt_set_cgroup(&rt, "/gone/jig-session.scope", &e) < 0)
			_exit(3);
		if (write(p[1], rt.id, 32) != 32)
			_exit(4);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], id, 32), 32);
	id[32] = '\0';
	close(p[0]);
	return pid;
}

static bool there(const char *id)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof(path), SESSIONS_FMT "/%s", (unsigned)geteuid(), id);
	return lstat(path, &st) == 0;
}

static int sweep(void)
{
	struct jig_error e = {0};
	rt_capture();
	int n = jig_session_rt_sweep(&e);
	rt_captured();
	assert_true(n >= 0);
	return n;
}

/* The lease held by a live process: preserved. Its owner SIGKILLed: the next sweep removes it. */
static void live_kept_killed_swept(void **state)
{
	(void)state;
	char id[33];
	pid_t pid = owner(id);
	assert_true(there(id));
	assert_int_equal(sweep(), 0);
	assert_true(there(id));
	assert_string_equal(rt_said, ""); /* a live session is not news */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_true(there(id));
	assert_int_equal(sweep(), 1);
	assert_false(there(id));
	assert_non_null(strstr(rt_said, "removed the abandoned session directory"));
	assert_int_equal(sweep(), 0);
}

/* The caller's own open session is never swept. */
static void own_session_kept(void **state)
{
	(void)state;
	struct jig_session_rt rt;
	struct jig_error e = {0};
	assert_int_equal(jig_session_rt_open(&rt, &e), 0);
	assert_int_equal(sweep(), 0);
	assert_true(there(rt.id));
	jig_session_rt_close(&rt);
}

/* A session directory with a free lease of the given text. */
static void crafted(const char *id, const char *lease)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "d=" SESSIONS_FMT "/%s && mkdir -p -m 0700 $d/tmp && chmod 0700 $d $d/.. $d/../.. && "
		 "printf '%%s' '%s' > $d/lease && chmod 0600 $d/lease", (unsigned)geteuid(), id, lease);
	rt_sh(cmd);
}

static const char *lease_text(const char *boot, pid_t pid, unsigned long long start, const char *cgroup)
{
	static char buf[512];
	char b[64];
	if (!boot)
		assert_int_equal(jig_boot_id(b, sizeof(b)), 0);
	snprintf(buf, sizeof(buf), "{\"boot_id\":\"%s\",\"cgroup\":%s%s%s,\"format\":\"" JIG_SESSION_LEASE_FORMAT "\",\"pid\":%d,\"start\":%llu,\"uid\":%u}",
		 boot ? boot : b, cgroup ? "\"" : "", cgroup ? cgroup : "null", cgroup ? "\"" : "", (int)pid, start, (unsigned)geteuid());
	return buf;
}

static pid_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccc"

static void dead_owner_removed(void **state)
{
	(void)state;
	crafted(ID_A, lease_text(NULL, dead_pid(), 1, NULL));
	crafted(ID_B, lease_text(NULL, dead_pid(), 1, "/absent/x.scope"));
	assert_int_equal(sweep(), 2);
	assert_false(there(ID_A));
	assert_false(there(ID_B));
}

static void malformed_lease_kept(void **state)
{
	(void)state;
	unsigned long long start;
	assert_int_equal(jig_proc_start(getpid(), &start), 0);
	crafted(ID_A, "not json");
	crafted(ID_B, "{\"format\":\"" JIG_SESSION_LEASE_FORMAT "\",\"pid\":1}");
	crafted(ID_C, "");
	crafted("dddddddddddddddddddddddddddddddd", lease_text(NULL, dead_pid(), 1, "no/slash"));
	assert_int_equal(sweep(), 0);
	assert_true(there("dddddddddddddddddddddddddddddddd"));
	assert_non_null(strstr(rt_said, "dddddddddddddddddddddddddddddddd: its lease is not a whole " JIG_SESSION_LEASE_FORMAT " document"));
	assert_true(there(ID_A) && there(ID_B) && there(ID_C));
	assert_non_null(strstr(rt_said, "jig: kept the session directory /run/user/0/jig/sessions/" ID_A ": its lease cannot be read as JSON"));
	assert_non_null(strstr(rt_said, ID_B ": its lease is not a whole " JIG_SESSION_LEASE_FORMAT " document"));
	assert_non_null(strstr(rt_said, ID_C ": its lease is empty"));
	/* a free lease whose owner still runs, another uid's, a symlinked lease, no lease */
	rt_sh("rm -rf /run/user/0/jig/sessions/*");
	crafted(ID_A, lease_text(NULL, getpid(), start, NULL));
	crafted(ID_B, "{}");
	rt_sh("cd /run/user/0/jig/sessions/" ID_B " && rm lease && ln -s ../" ID_A "/lease lease");
	crafted(ID_C, "{}");
	rt_sh("rm /run/user/0/jig/sessions/" ID_C "/lease");
	assert_int_equal(sweep(), 0);
	assert_true(there(ID_A) && there(ID_B) && there(ID_C));
	assert_non_null(strstr(rt_said, ID_A ": its lease is free, but its owner (pid "));
	assert_non_null(strstr(rt_said, ID_B ": its lease: is or passes through a symbolic link"));
	assert_non_null(strstr(rt_said, ID_C ": it has no lease"));
	rt_sh("rm -rf /run/user/0/jig/sessions/*");
	char other[600];
	snprintf(other, sizeof(other), "%s", lease_text(NULL, dead_pid(), 1, NULL));
	*strstr(other, "\"uid\":0") = '\0';
	strcat(other, "\"uid\":1001}");
	crafted(ID_A, other);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(rt_said, ID_A ": its lease names another uid"));
}

/* Decision 232: a lease is read only through the trusted-state store's
 * rule. Leases whose facts say their owner is gone, but another's, with a
 * wider mode or a second link, are not acted on: each directory is kept
 * and said; the same lease made right lets the next sweep remove it. */
static void lease_outside_the_rule_kept(void **state)
{
	(void)state;
	char facts[600];
	snprintf(facts, sizeof(facts), "%s", lease_text(NULL, dead_pid(), 1, NULL));
	crafted(ID_A, facts);
	crafted(ID_B, facts);
	crafted(ID_C, facts);
	rt_sh("cd /run/user/0/jig/sessions && chown 1001 " ID_A "/lease && chmod 0644 " ID_B "/lease && ln " ID_C "/lease " ID_C "/tmp/second");
	assert_int_equal(sweep(), 0);
	assert_true(there(ID_A) && there(ID_B) && there(ID_C));
	const char *ids[] = {ID_A, ID_B, ID_C};
	for (size_t i = 0; i < 3; i++) {
		char want[200];
		snprintf(want, sizeof(want), "%s: its lease: not a regular file of yours with mode 0600 and one link", ids[i]);
		if (!strstr(rt_said, want))
			fail_msg("not said: %s in %s", want, rt_said);
	}
	rt_sh("cd /run/user/0/jig/sessions && chown 0 " ID_A "/lease && chmod 0600 " ID_B "/lease && rm " ID_C "/tmp/second");
	assert_int_equal(sweep(), 3);
}

/* The recorded pid now runs another process (another start time): removed. */
static void reused_pid_removed(void **state)
{
	(void)state;
	unsigned long long start;
	assert_int_equal(jig_proc_start(getpid(), &start), 0);
	crafted(ID_A, lease_text(NULL, getpid(), start + 1, NULL));
	assert_int_equal(sweep(), 1);
	assert_false(there(ID_A));
}

/* Another boot's lease: its pid means nothing now (even a live one); removed when its cgroup is gone. */
static void other_boot_removed(void **state)
{
	(void)state;
	unsigned long long start;
	assert_int_equal(jig_proc_start(getpid(), &start), 0);
	crafted(ID_A, lease_text("00000000-0000-0000-0000-000000000000", getpid(), start, NULL));
	assert_int_equal(sweep(), 1);
	assert_false(there(ID_A));
}

/* A populated cgroup keeps it; an unreadable one too; "populated 0" lets it go. */
static void populated_cgroup_kept(void **state)
{
	(void)state;
	rt_sh("mkdir -p /sys/fs/cgroup/user.slice/s.scope /sys/fs/cgroup/user.slice/t.scope && "
	      "printf 'populated 1\\nfrozen 0\\n' > /sys/fs/cgroup/user.slice/s.scope/cgroup.events");
	crafted(ID_A, lease_text(NULL, dead_pid(), 1, "/user.slice/s.scope"));
	crafted(ID_B, lease_text(NULL, dead_pid(), 1, "/user.slice/t.scope"));
	assert_int_equal(sweep(), 0);
	assert_true(there(ID_A) && there(ID_B));
	assert_non_null(strstr(rt_said, ID_A ": its cgroup still has processes (populated 1)"));
	assert_non_null(strstr(rt_said, ID_B ": cannot read its cgroup's cgroup.events"));
	rt_sh("printf 'populated 0\\nfrozen 0\\n' > /sys/fs/cgroup/user.slice/s.scope/cgroup.events");
	assert_int_equal(sweep(), 1);
	assert_false(there(ID_A));
	/* a symlinked cgroup path is not followed: cannot tell, kept */
	rt_sh("rm -rf /sys/fs/cgroup/user.slice/t.scope && ln -s s.scope /sys/fs/cgroup/user.slice/t.scope");
	assert_int_equal(sweep(), 0);
	assert_true(there(ID_B));
}

/* A sweep removes no directory of another shape or owner. */
static void foreign_entries_kept(void **state)
{
	(void)state;
	crafted(ID_A, lease_text(NULL, dead_pid(), 1, NULL));
	rt_sh("chmod 0755 /run/user/0/jig/sessions/" ID_A " && mkdir -m 0700 /run/user/0/jig/sessions/notasession");
	assert_int_equal(sweep(), 0);
	assert_true(there(ID_A) && there("notasession"));
	assert_non_null(strstr(rt_said, ID_A ": not a directory of the caller's with mode 0700"));
}

/* Decision 188: a session killed as it removed its directory (marked
 * 01700, lease gone, rmdir not yet) is removed by the next sweep; a marked
 * one with something still in it and no lease is kept and reported. */
static void killed_as_it_ended(void **state)
{
	(void)state;
	rt_sh("mkdir -p -m 0700 /run/user/0/jig/sessions && chmod 0700 /run/user/0/jig /run/user/0/jig/sessions && "
	      "mkdir -m 01700 /run/user/0/jig/sessions/" ID_A " /run/user/0/jig/sessions/" ID_B
	      " && mkdir -m 0700 /run/user/0/jig/sessions/" ID_B "/tmp");
	assert_int_equal(sweep(), 1);
	assert_false(there(ID_A));
	assert_non_null(strstr(rt_said, ID_A ": its owner was killed as it removed it"));
	assert_true(there(ID_B));
	assert_non_null(strstr(rt_said, ID_B ": it has no lease"));
}

/* Sessions opened and closed while sweeps run: no sweep removes or
 * reports a session being made or ended, and every open succeeds. */
static void sweeps_race_open_and_close(void **state)
{
	(void)state;
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		for (int i = 0; i < 300; i++) {
			struct jig_session_rt rt;
			struct jig_error e = {0};
			if (jig_session_rt_open(&rt, &e) < 0) {
				fprintf(stderr, "open: %s\n", e.msg);
				_exit(1);
			}
			jig_session_rt_close(&rt);
		}
		_exit(0);
	}
	int removed = 0, status, sweeps = 0, lines = 0;
	while (waitpid(kid, &status, WNOHANG) == 0) {
		removed += sweep();
		if (rt_said[0])
			lines++, print_message("%s", rt_said);
		sweeps++;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(lines, 0);
	print_message("%d sweeps raced 300 sessions\n", sweeps);
	rt_sh("test -z \"$(ls -A /run/user/0/jig/sessions)\"");
}

int main(void)
{
	rt_world();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(xdg_accepted, rt_fresh),
		cmocka_unit_test_setup(xdg_unset_refused, rt_fresh),
		cmocka_unit_test_setup(xdg_not_run_user_refused, rt_fresh),
		cmocka_unit_test_setup(xdg_foreign_owner_refused, rt_fresh),
		cmocka_unit_test_setup(xdg_wrong_mode_refused, rt_fresh),
		cmocka_unit_test_setup(xdg_symlink_refused, rt_fresh),
		cmocka_unit_test_setup(jig_dirs_checked, rt_fresh),
		cmocka_unit_test_setup(tmpdir_lifecycle, rt_fresh),
		cmocka_unit_test_setup(close_stops_at_mounts, rt_fresh),
		cmocka_unit_test_setup(live_kept_killed_swept, rt_fresh),
		cmocka_unit_test_setup(own_session_kept, rt_fresh),
		cmocka_unit_test_setup(dead_owner_removed, rt_fresh),
		cmocka_unit_test_setup(malformed_lease_kept, rt_fresh),
		cmocka_unit_test_setup(reused_pid_removed, rt_fresh),
		cmocka_unit_test_setup(other_boot_removed, rt_fresh),
		cmocka_unit_test_setup(populated_cgroup_kept, rt_fresh),
		cmocka_unit_test_setup(foreign_entries_kept, rt_fresh),
		cmocka_unit_test_setup(killed_as_it_ended, rt_fresh),
		cmocka_unit_test_setup(lease_outside_the_rule_kept, rt_fresh),
		cmocka_unit_test_setup(sweeps_race_open_and_close, rt_fresh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
