/* The abandoned-run sweep's rules as a unit (issue 31; R-L06, R-L08,
 * R-C11): real leases written by jig_lease_create/jig_lease_write in
 * processes that then exit, in a private base directory instead of /tmp,
 * with the cgroup step stubbed (the VM lane's reliability.sweep_* cases
 * run it against real cgroups). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "publish/run_lease.h"
#include "publish/publish.h"
#include "publish/sweep.h"

static char base[64], lines[16384];
static int cg_calls, cg_fail;
/* How long a sweep waits for a held lease: short for the cases that keep
 * one; concurrent_sweeps waits as jig does (a sweep removing a Run holds
 * its lease longer than 100 ms on a loaded machine). */
static int wait_ms = 100;
static pid_t cg_pid;

static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(lines, line, sizeof(lines) - strlen(lines) - 2);
	strcat(lines, "\n");
}

static int fake_cgroups(void *ctx, pid_t pid, const char *where, char *removed, size_t rlen, char *err, size_t elen)
{
	(void)ctx;
	assert_non_null(where); /* the cgroup the coordinator started in */
	cg_calls++;
	cg_pid = pid;
	if (cg_fail) {
		snprintf(err, elen, "cgroup /sys/fs/cgroup/t/jig-%d-0-1: it is not empty (a process is still in it)", (int)pid);
		return -1;
	}
	snprintf(removed, rlen, "/sys/fs/cgroup/t/jig-%d-0-1/run\n/sys/fs/cgroup/t/jig-%d-0-1\n", (int)pid, (int)pid);
	return 0;
}

static int sweep(void)
{
	lines[0] = '\0';
	cg_calls = 0;
	struct jig_sweep sw = {.base = base, .say = collect, .cgroups = fake_cgroups, .wait_ms = wait_ms};
	return jig_sweep(&sw);
}

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	assert_int_equal(system(cmd), 0);
}

static int fresh(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/jig-sweep-test.XXXXXX");
	assert_non_null(mkdtemp(base));
	char out[128];
	snprintf(out, sizeof(out), "%s/out", base);
	assert_int_equal(mkdir(out, 0700), 0);
	return 0;
}

static int cleanup(void **state)
{
	(void)state;
	sh("chmod -R u+w '%s' && rm -rf '%s'", base);
	return 0;
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* A Run whose outer command and coordinator both exited: the run
 * directory (with a 0555 package/) and its stage (0555, with a file). */
static void dead_run(char *rd, size_t cap, char *stage, size_t scap, pid_t *coord)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t a = fork();
	if (a == 0) {
		char dir[128], out[128];
		struct jig_lease l;
		struct jig_error e = {0};
		snprintf(dir, sizeof(dir), "%s/" JIG_RUN_DIR_PREFIX "XXXXXX", base);
		snprintf(out, sizeof(out), "%s/out/pkt", base);
		if (!mkdtemp(dir) || jig_lease_create(&l, dir, out, &e) < 0)
			_exit(1);
		pid_t b = fork();
		if (b == 0)
			_exit(jig_lease_write(&l, getppid()) < 0 ? 1 : 0);
		int st = 0;
		waitpid(b, &st, 0);
		dprintf(p[1], "%s %d", dir, (int)b);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	close(p[1]);
	char buf[256] = "";
	assert_true(read(p[0], buf, sizeof(buf) - 1) > 0);
	close(p[0]);
	int st = 0, b = 0;
	waitpid(a, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(sscanf(buf, "%127s %d", rd, &b), 2);
	(void)cap;
	*coord = b;
	char name[NAME_MAX + 1];
	jig_publish_stage_name(name, sizeof(name), rd, "pkt");
	snprintf(stage, scap, "%s/out/%.150s", base, name);
	sh("mkdir -p '%s/package' && echo x >'%s/package/a' && chmod 0555 '%s/package'", rd);
	sh("mkdir -p '%s/files' && echo x >'%s/files/a' && chmod 0555 '%s/files' '%s'", stage);
}

/* Rewrites the lease's key to the JSON value v. */
static void edit_lease(const char *rd, const char *key, json_t *v)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/lease", rd);
	json_t *doc = json_load_file(p, 0, NULL);
	assert_non_null(doc);
	json_object_set_new(doc, key, v);
	assert_int_equal(json_dump_file(doc, p, JSON_COMPACT), 0);
	json_decref(doc);
}

static void dead_run_removed(void **state)
{
	(void)state;
	char rd[128], stage[256];
	pid_t coord;
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	assert_true(exists(rd) && exists(stage));
	assert_int_equal(sweep(), 1);
	assert_false(exists(rd));
	assert_false(exists(stage));
	assert_int_equal(cg_calls, 1);
	assert_int_equal(cg_pid, coord);
	assert_non_null(strstr(lines, "removed a cgroup of the abandoned Run"));
	assert_non_null(strstr(lines, "removed the publication stage of the abandoned Run"));
	assert_non_null(strstr(lines, stage));
	assert_non_null(strstr(lines, "removed the run directory of an abandoned Run"));
	assert_non_null(strstr(lines, "are gone"));
	assert_int_equal(sweep(), 0);
	assert_string_equal(lines, "");
}

static void live_run_untouched(void **state)
{
	(void)state;
	char rd[128];
	struct jig_lease l;
	struct jig_error e = {0};
	snprintf(rd, sizeof(rd), "%s/" JIG_RUN_DIR_PREFIX "XXXXXX", base);
	assert_non_null(mkdtemp(rd));
	assert_int_equal(jig_lease_create(&l, rd, NULL, &e), 0);
	assert_int_equal(jig_lease_write(&l, getppid()), 0);
	/* Held, its owner (this process) alive: never touched, nothing said. */
	assert_int_equal(sweep(), 0);
	assert_string_equal(lines, "");
	assert_true(exists(rd));
	assert_int_equal(cg_calls, 0);
	/* Free, but its owner still runs: a disagreement, kept and said. */
	jig_lease_close(&l);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "its lease is free, but its outer command"));
	assert_non_null(strstr(lines, "still runs"));
	assert_true(exists(rd));
	assert_int_equal(cg_calls, 0);
}

static void held_lease_kept(void **state)
{
	(void)state;
	char rd[128], stage[256], p[256];
	pid_t coord;
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	snprintf(p, sizeof(p), "%s/lease", rd);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0 && flock(fd, LOCK_EX) == 0);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "kept the abandoned Run"));
	assert_non_null(strstr(lines, "its lease is held by a live process, but the owners it names are gone"));
	assert_true(exists(rd) && exists(stage));
	assert_int_equal(cg_calls, 0);
	close(fd);
	assert_int_equal(sweep(), 1);
	assert_false(exists(rd) || exists(stage));
}

static void cgroup_kept(void **state)
{
	(void)state;
	char rd[128], stage[256];
	pid_t coord;
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	cg_fail = 1;
	assert_int_equal(sweep(), 0);
	cg_fail = 0;
	assert_non_null(strstr(lines, "kept the abandoned Run"));
	assert_non_null(strstr(lines, "it is not empty"));
	assert_null(strstr(lines, "removed"));
	assert_true(exists(rd) && exists(stage));
	assert_int_equal(sweep(), 1);
	assert_false(exists(rd) || exists(stage));
}

static void other_boot(void **state)
{
	(void)state;
	char rd[128], stage[256];
	pid_t coord;
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	edit_lease(rd, "boot_id", json_string("00000000-0000-0000-0000-000000000000"));
	assert_int_equal(sweep(), 1);
	assert_int_equal(cg_calls, 0); /* no cgroup outlives a boot: never looked for */
	assert_non_null(strstr(lines, "before the last boot"));
	assert_false(exists(rd) || exists(stage));
}

static void disagreements_kept(void **state)
{
	(void)state;
	char rd[128], stage[256], p[300];
	pid_t coord;
	struct {
		const char *key, *value, *said;
	} cases[] = {
		{"uid", "12345", "its lease was written by uid 12345"},
		{"stage", "{\"path\":\"/nonexistent-dir/.jig-stage-x-pkt\",\"dev\":1,\"ino\":1}", NULL},
		{"format", "\"jig-run-lease/9\"", "is not a jig-run-lease/1 document"},
		/* pid 1 runs with another start time: taken as reused, so the
		 * cgroups named after it cannot be told from its. */
		{"coordinator", "{\"pid\":1,\"start\":999999999999}", "is in use again"},
		{"stage", "{\"path\":\"/tmp/not-a-stage\",\"dev\":1,\"ino\":1}", "names no stage jig makes"},
		/* Another Run's stage name (another run directory's token). */
		{"stage", "{\"path\":\"/tmp/.jig-stage-ZZZZZZ-pkt\",\"dev\":1,\"ino\":1}", "names no stage jig makes"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
		json_t *v = json_loads(cases[i].value, JSON_DECODE_ANY, NULL);
		if (!cases[i].said) { /* this Run's stage name, in a directory that is gone */
			snprintf(p, sizeof(p), "/nonexistent-dir/%s", strrchr(stage, '/') + 1);
			json_object_set_new(v, "path", json_string(p));
		}
		edit_lease(rd, cases[i].key, v);
		int n = sweep();
		if (!cases[i].said) { /* the recorded stage's directory is gone: nothing to remove there */
			assert_int_equal(n, 1);
			sh("chmod -R u+w '%s' && rm -rf '%s'", stage);
			continue;
		}
		assert_int_equal(n, 0);
		assert_non_null(strstr(lines, cases[i].said));
		assert_non_null(strstr(lines, "kept the abandoned Run"));
		assert_true(exists(rd) && exists(stage));
		sh("chmod -R u+w '%s' && rm -rf '%s'", rd);
		sh("chmod -R u+w '%s' && rm -rf '%s'", stage);
	}
	/* The stage's directory replaced by another: kept. */
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	snprintf(p, sizeof(p), "%s/out", base);
	sh("chmod -R u+w '%s' && mv '%s' '%s.old'", p);
	sh("mkdir '%s'", p);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "is no longer the directory the stage was made in"));
	assert_true(exists(rd));
	sh("chmod -R u+w '%s' && rm -rf '%s'", rd);
	/* Unreadable, empty with other content, and missing leases. */
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	snprintf(p, sizeof(p), "%s/lease", rd);
	FILE *f = fopen(p, "w");
	fputs("{", f);
	fclose(f);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "kept the abandoned Run"));
	assert_true(exists(rd));
	f = fopen(p, "w");
	fclose(f);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "its lease is empty"));
	unlink(p);
	assert_int_equal(sweep(), 0);
	assert_non_null(strstr(lines, "it has no lease"));
	assert_true(exists(rd));
	sh("chmod -R u+w '%s' && rm -rf '%s'", rd);
	/* An empty lease alone: the coordinator never started. */
	snprintf(rd, sizeof(rd), "%s/" JIG_RUN_DIR_PREFIX "XXXXXX", base);
	assert_non_null(mkdtemp(rd));
	snprintf(p, sizeof(p), "%s/lease", rd);
	fclose(fopen(p, "w"));
	assert_int_equal(sweep(), 1);
	assert_non_null(strstr(lines, "ended before it started"));
	assert_false(exists(rd));
	/* Not the caller's kind of entry: a symlink named like a run directory. */
	snprintf(p, sizeof(p), "%s/" JIG_RUN_DIR_PREFIX "link", base);
	assert_int_equal(symlink("/", p), 0);
	assert_int_equal(sweep(), 0);
	assert_string_equal(lines, "");
	assert_true(exists(p));
}

/* Three sweeps at once over the same dead Runs (jig runs started
 * together): each Run removed once, and no sweep reports a Run another is
 * removing as kept. */
static void concurrent_sweeps(void **state)
{
	(void)state;
	char rd[4][128], stage[4][256];
	pid_t coord;
	for (int i = 0; i < 4; i++)
		dead_run(rd[i], sizeof(rd[i]), stage[i], sizeof(stage[i]), &coord);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t kids[3];
	wait_ms = 5000;
	for (int k = 0; k < 3; k++)
		if ((kids[k] = fork()) == 0) {
			close(p[0]);
			sweep();
			if (write(p[1], lines, strlen(lines)) < 0)
				_exit(1);
			_exit(0);
		}
	close(p[1]);
	char all[16384] = "";
	size_t got = 0;
	ssize_t n;
	while ((n = read(p[0], all + got, sizeof(all) - 1 - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	for (int k = 0; k < 3; k++)
		waitpid(kids[k], NULL, 0);
	wait_ms = 100;
	int removed = 0;
	for (const char *c = all; (c = strstr(c, "removed the run directory of an abandoned Run")); c++)
		removed++;
	assert_int_equal(removed, 4);
	assert_null(strstr(all, "kept"));
	for (int i = 0; i < 4; i++)
		assert_false(exists(rd[i]) || exists(stage[i]));
}

/* Decision 188 (models/recovery_sweep.pml, mutant NO_END_MARK): a Run
 * killed between its lease's unlink and its directory's rmdir (fault
 * point "run dir end") leaves an empty directory without a lease, marked
 * 01700; the sweep removes it. An empty unmarked one (a new Run's mkdtemp
 * before its lease) is kept and said. */
static void killed_as_it_ended(void **state)
{
	(void)state;
	char rd[128], stage[256], log[128], line[256] = "";
	pid_t coord;
	dead_run(rd, sizeof(rd), stage, sizeof(stage), &coord);
	sh("chmod -R u+w '%s' && rm -rf '%s'", stage);
	sh("echo '{}' >'%s/checkpoint.json' && chmod 0400 '%s/checkpoint.json'", rd); /* a file beside package/ */
	snprintf(log, sizeof(log), "%s/fault.log", base);
	pid_t a = fork();
	if (a == 0) {
		setenv("JIG_FAULT_STOP", "run dir end", 1);
		setenv("JIG_FAULT_LOG", log, 1);
		jig_lease_remove_run_dir(rd);
		_exit(0);
	}
	int st = 0;
	assert_int_equal(waitpid(a, &st, WUNTRACED), a);
	assert_true(WIFSTOPPED(st)); /* stopped at the point: the test build has them */
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, &st, 0), a);
	FILE *f = fopen(log, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_non_null(strstr(line, "run dir end"));
	struct stat sb;
	char p[256];
	snprintf(p, sizeof(p), "%s/lease", rd);
	assert_false(exists(p));
	assert_int_equal(lstat(rd, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 01700);
	snprintf(p, sizeof(p), "%s/checkpoint.json", rd);
	assert_false(exists(p)); /* empty: everything but the directory itself is gone */
	snprintf(p, sizeof(p), "%s/package", rd);
	assert_false(exists(p));
	/* beside it, a new Run's directory before its lease: unmarked */
	char fresh_rd[128];
	snprintf(fresh_rd, sizeof(fresh_rd), "%s/" JIG_RUN_DIR_PREFIX "XXXXXX", base);
	assert_non_null(mkdtemp(fresh_rd));
	assert_int_equal(sweep(), 1);
	assert_false(exists(rd));
	assert_non_null(strstr(lines, "removed the empty run directory"));
	assert_non_null(strstr(lines, "its Run was killed as it removed it"));
	assert_true(exists(fresh_rd));
	assert_non_null(strstr(lines, "it has no lease"));
	assert_int_equal(cg_calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(dead_run_removed, fresh, cleanup),
		cmocka_unit_test_setup_teardown(live_run_untouched, fresh, cleanup),
		cmocka_unit_test_setup_teardown(held_lease_kept, fresh, cleanup),
		cmocka_unit_test_setup_teardown(cgroup_kept, fresh, cleanup),
		cmocka_unit_test_setup_teardown(other_boot, fresh, cleanup),
		cmocka_unit_test_setup_teardown(disagreements_kept, fresh, cleanup),
		cmocka_unit_test_setup_teardown(concurrent_sweeps, fresh, cleanup),
		cmocka_unit_test_setup_teardown(killed_as_it_ended, fresh, cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
