/* jig session --evidence: the negative suite for the current repository's
 * mapping, run by jig-session-probe in the session's own scope; raw
 * results under ${XDG_STATE_HOME:-~/.local/state}/jig/evidence/<run>/
 * (0700 directory, 0600 files) and a redacted, schema-checked summary
 * (docs/session-evidence.md). */
#include "evidence/evidence.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session/git.h"
#include "session/map.h"
#include "session/runtime.h"
#include "session/session.h"
#include "snapshot/snapshot.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/limits.h"

#define MAX_PATHS 160
#define MAX_PORTS 16
#define PROBE_TARGET "/.jig/session-probe"

extern char **environ;

/* Everything one evidence run holds (freed by run_free). */
struct ev_run {
	char id[40], started[21], finished[21];
	char dir[PATH_MAX];
	int dirfd;
	json_t *plan;
	struct jig_session_map map;
	bool map_open;
	struct jig_session_rt decoy;
	bool decoy_open;
	char markers[2][PATH_MAX];
	size_t n_markers;
	char *paths[MAX_PATHS]; /* siblings and private paths, owned */
	size_t n_siblings, n_private;
	unsigned loopback[MAX_PORTS], decoys[MAX_PORTS];
	int decoy_fds[MAX_PORTS];
	size_t n_loopback, n_decoys;
	const char *connect[MAX_PORTS];
	size_t n_connect;
	char *git_paths[16]; /* <common>/modules/<name>, then <common>/worktrees/<id>, owned */
	size_t n_git_modules, n_git_worktrees;
	char dotgit[PATH_MAX + 8], nest[PATH_MAX + 64];
	struct jig_evidence_suite suite;
	char *probe_out;
	size_t probe_len;
};

static void utc_now(char out[21])
{
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || !strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 21, "1970-01-01T00:00:00Z");
}

/* A string of the plan ("" when absent: every use compares it). */
/* The broker's git scope digest and the SSH and HTTPS hosts the
 * repository's remotes reach, from the Plan (decision 294): "ALIAS
 * HOST:PORT" each, nothing else of the map. */
static json_t *git_summary(json_t *plan)
{
	json_t *b = json_object_get(plan, "broker"), *ssh = json_array(), *https = json_array(), *h;
	const char *alias, *d = json_string_value(json_object_get(json_object_get(b, "git_scope"), "policy_sha256"));
	json_object_foreach(json_object_get(b, "ssh_hosts"), alias, h)
		json_array_append_new(ssh, json_sprintf("%s %s:%lld", alias, json_string_value(json_object_get(h, "host")),
							 (long long)json_integer_value(json_object_get(h, "port"))));
	json_object_foreach(json_object_get(b, "https_hosts"), alias, h)
		json_array_append_new(https, json_sprintf("%s %s:%lld", alias, json_string_value(json_object_get(h, "host")),
							   (long long)json_integer_value(json_object_get(h, "port"))));
	return json_pack("{s:s, s:o, s:o}", "scope_policy_sha256", d ? d : "", "ssh_hosts", ssh, "https_hosts", https);
}

static const char *plan_str(json_t *plan, const char *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(plan, obj), key));
	return v ? v : "";
}

/* dir and each missing component created 0700, never through a link; the
 * last two (evidence/ and the run's) must be the caller's. An fd or -code. */
static int make_run_dir(struct ev_run *r, struct jig_error *e)
{
	char base[PATH_MAX];
	if (jig_user_dir("XDG_STATE_HOME", ".local/state", base, sizeof(base)) < 0)
		return jig_err(e, JIG_E_USAGE, "evidence: no state directory (set HOME or an absolute XDG_STATE_HOME)");
	if (snprintf(r->dir, sizeof(r->dir), "%s/evidence/%s", base, r->id) >= (int)sizeof(r->dir))
		return jig_err(e, JIG_E_USAGE, "evidence: the state directory's path is too long");
	int fd = open("/", O_DIRECTORY | O_CLOEXEC);
	char *save = NULL, p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", r->dir);
	for (char *c = strtok_r(p, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		bool last = save == NULL || *save == '\0';
		if (mkdirat(fd, c, 0700) < 0 && (errno != EEXIST || last)) {
			int err = errno;
			close(fd);
			return jig_err(e, JIG_E_USAGE, "evidence: cannot create %s: %s", r->dir, strerror(err));
		}
		int next = openat(fd, c, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		if (fd >= 0)
			close(fd);
		return jig_err(e, JIG_E_USAGE, "evidence: %s is not a 0700 directory of yours (a link is never followed)", r->dir);
	}
	r->dirfd = fd;
	return 0;
}

static int marker(struct ev_run *r, const char *dir, struct jig_error *e)
{
	char *m = r->markers[r->n_markers], id[sizeof(r->id)];
	memcpy(id, r->id, sizeof(id));
	snprintf(m, PATH_MAX, "%s/.jig-evidence-%s", dir, id);
	int fd = open(m, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "evidence: cannot create the decoy %s: %s", m, strerror(errno));
	close(fd);
	r->n_markers++;
	return 0;
}

/* The decoys: another session (its own lease, TMPDIR and a file in it), a
 * file in /tmp and one in the runtime parent, listeners on loopback ports
 * the session was not granted. */
static int decoys(struct ev_run *r, const char *runtime, struct jig_error *e)
{
	int rc = jig_session_rt_open(&r->decoy, e);
	if (rc)
		return jig_err_prefix(e, -rc, "evidence: the decoy session: ");
	r->decoy_open = true;
	int fd = openat(r->decoy.root_fd, "tmp/decoy", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	if ((rc = marker(r, "/tmp", e)) || (rc = marker(r, runtime, e)))
		return rc;
	unsigned want[MAX_PORTS];
	size_t n = 0;
	for (size_t i = 0; i < r->n_loopback && n + 2 < MAX_PORTS; i++)
		want[n++] = r->loopback[i] < 65535 ? r->loopback[i] + 1 : r->loopback[i] - 1;
	want[n++] = 0; /* an ephemeral one */
	for (size_t i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)want[i]),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t sl = sizeof(sa);
		if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(s, 16) == 0 &&
		    getsockname(s, (struct sockaddr *)&sa, &sl) == 0) {
			r->decoy_fds[r->n_decoys] = s;
			r->decoys[r->n_decoys++] = ntohs(sa.sin_port);
			continue;
		}
		int err = errno;
		if (s >= 0)
			close(s);
		if (err == EADDRINUSE) /* something of the host's listens there: a decoy all the same */
			r->decoy_fds[r->n_decoys] = -1, r->decoys[r->n_decoys++] = want[i];
	}
	return 0;
}

static bool is_ancestor_or_same(const char *a, const char *b)
{
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/' || (n == 1 && a[0] == '/'));
}

static int keep_path(struct ev_run *r, const char *p, const char *const *granted, size_t n_granted)
{
	/* a directory above a granted path exists inside as the mount's
	 * skeleton: its listing proves nothing either way */
	for (size_t i = 0; i < n_granted; i++)
		if (granted[i] && is_ancestor_or_same(p, granted[i]))
			return 0;
	if (r->n_siblings + r->n_private >= MAX_PATHS)
		return 0;
	return (r->paths[r->n_siblings + r->n_private] = strdup(p)) ? 1 : -1;
}

/* The map's other repositories and worktrees, then the private places. */
static int neighbours(struct ev_run *r, struct jig_error *e)
{
	const char *granted[] = {plan_str(r->plan, "repository", "worktree"), plan_str(r->plan, "tmpdir", "path"),
				 json_string_value(json_object_get(r->plan, "state_root"))};
	const char *id;
	json_t *repo, *v;
	json_object_foreach(json_object_get(r->map.doc, "repositories"), id, repo) {
		json_t *all = jig_session_repo_paths(repo);
		size_t i;
		json_array_foreach(all, i, v) {
			int k = keep_path(r, json_string_value(v), granted, 3);
			if (k < 0)
				return json_decref(all), jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
			r->n_siblings += (size_t)k;
		}
		json_decref(all);
	}
	const char *home = jig_caller_home();
	char p[PATH_MAX], cfg[PATH_MAX];
	const char *priv[8] = {NULL};
	size_t n = 0;
	if (home && snprintf(p, sizeof(p), "%s/.ssh", home) < (int)sizeof(p))
		priv[n++] = strdup(p);
	if (home && snprintf(p, sizeof(p), "%s/.config/gh", home) < (int)sizeof(p))
		priv[n++] = strdup(p);
	if (jig_user_dir("XDG_CONFIG_HOME", ".config", cfg, sizeof(cfg)) == 0) {
		priv[n++] = strdup(cfg); /* jig's configuration, and the map in it */
		if (snprintf(p, sizeof(p), "%s/%s", cfg, JIG_SESSIONS_FILE) < (int)sizeof(p))
			priv[n++] = strdup(p);
	}
	if (snprintf(p, sizeof(p), "%s/plan.json", r->dir) < (int)sizeof(p))
		priv[n++] = strdup(p); /* this run's own raw evidence */
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		int k = priv[i] ? keep_path(r, priv[i], granted, 3) : -1;
		rc = k < 0 ? -1 : rc;
		r->n_private += (size_t)(k > 0);
		free((char *)priv[i]);
	}
	return rc ? jig_err(e, JIG_E_INTERNAL, "evidence: out of memory") : 0;
}

static int ports_of(json_t *list, unsigned *out, size_t *n)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		const char *s = json_string_value(v), *colon = s ? strrchr(s, ':') : NULL;
		if (!colon || *n == MAX_PORTS)
			return -1;
		out[(*n)++] = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	return 0;
}

static int network(struct ev_run *r, struct jig_error *e)
{
	json_t *net = json_object_get(json_object_get(r->plan, "provider"), "network"), *v;
	if (ports_of(json_object_get(net, "loopback"), r->loopback, &r->n_loopback) < 0)
		return jig_err(e, JIG_E_INTERNAL, "evidence: the plan's loopback grants cannot be read");
	size_t i;
	json_array_foreach(json_object_get(net, "connect"), i, v)
		if (r->n_connect < MAX_PORTS && json_is_string(v))
			r->connect[r->n_connect++] = json_string_value(v);
	return 0;
}

/* The Git directory's entries the suite writes at: up to eight modules
 * and eight linked worktrees' own directories (the trusted common
 * directory's, read on the host). */
static size_t git_list(struct ev_run *r, const char *common, const char *sub, size_t at)
{
	char p[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/%s", common, sub);
	DIR *d = opendir(p);
	size_t n = 0;
	struct dirent *de;
	while (d && n < 8 && (de = readdir(d))) {
		char q[2 * PATH_MAX];
		struct stat st;
		snprintf(q, sizeof(q), "%s/%s", p, de->d_name);
		if (de->d_name[0] != '.' && lstat(q, &st) == 0 && S_ISDIR(st.st_mode) && (r->git_paths[at + n] = strdup(q)))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* The host's answer to git.nested.kept, then the planted repository
 * removed (only the names the probe made, quarantined or not). */
static void nested_kept(struct ev_run *r)
{
	struct stat st;
	char p[PATH_MAX + 128];
	for (size_t i = 0; i < r->suite.n; i++) {
		struct jig_evidence_check *c = &r->suite.c[i];
		if (strcmp(c->id, JIG_EVIDENCE_NESTED_KEPT) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/.git", r->nest);
		c->actual = lstat(p, &st) == 0 ? JIG_EV_ALLOW : JIG_EV_DENY;
	}
}

static void nest_remove(struct ev_run *r)
{
	static const char *const made[] = {".git/config", ".git", JIG_SESSION_GIT_QUARANTINE "/config", JIG_SESSION_GIT_QUARANTINE};
	char p[PATH_MAX + 128];
	if (!r->nest[0])
		return;
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", r->nest, made[i]);
		if (unlink(p) < 0 && errno == EISDIR)
			rmdir(p);
		rmdir(p);
	}
	rmdir(r->nest);
}

static int write_raw(struct ev_run *r, const char *name, const char *data, size_t len, struct jig_error *e)
{
	return jig_write_file_at(r->dirfd, name, data, len, 0600, e);
}

static int build_suite(struct ev_run *r, struct jig_error *e)
{
	char tmpl[PATH_MAX];
	const char *tmpdir = plan_str(r->plan, "tmpdir", "path");
	const char *at = strstr(tmpdir, "@session");
	if (!tmpdir[0] || snprintf(tmpl, sizeof(tmpl), "%.*s*%s", at ? (int)(at - tmpdir) : (int)strlen(tmpdir), tmpdir,
				at ? at + strlen("@session") : "") >= (int)sizeof(tmpl))
		return jig_err(e, JIG_E_INTERNAL, "evidence: the plan names no TMPDIR");
	const char *markers[2] = {r->markers[0], r->markers[1]};
	struct jig_evidence_inputs in = {
		.worktree = plan_str(r->plan, "repository", "worktree"),
		.worktree_rw = !strcmp(plan_str(r->plan, "repository", "mode"), "rw"),
		.siblings = (const char *const *)r->paths, .n_siblings = r->n_siblings,
		.tmpdir = tmpl, .decoy_tmpdir = r->decoy.tmpdir,
		.markers = markers, .n_markers = r->n_markers,
		.private_dirs = (const char *const *)r->paths + r->n_siblings, .n_private_dirs = r->n_private,
		.loopback = r->loopback, .n_loopback = r->n_loopback, .decoy_ports = r->decoys, .n_decoy_ports = r->n_decoys,
		.proxy = json_string_value(json_object_get(json_object_get(json_object_get(r->plan, "provider"), "network"), "proxy")),
		.connect = r->connect, .n_connect = r->n_connect, .caller_env = environ};
	const char *common = plan_str(r->plan, "repository", "common_dir");
	if (common[0]) {
		r->n_git_modules = git_list(r, common, "modules", 0);
		r->n_git_worktrees = git_list(r, common, "worktrees", r->n_git_modules);
		snprintf(r->dotgit, sizeof(r->dotgit), "%s/.git", in.worktree);
		snprintf(r->nest, sizeof(r->nest), "%s/.jig-evidence-%s", in.worktree, r->id);
		in.git_common = common;
		in.git_dotgit = r->dotgit;
		in.git_modules = (const char *const *)r->git_paths;
		in.n_git_modules = r->n_git_modules;
		in.git_worktrees = (const char *const *)r->git_paths + r->n_git_modules;
		in.n_git_worktrees = r->n_git_worktrees;
		in.git_nest = r->nest;
	}
	return jig_evidence_suite_build(&r->suite, &in, e);
}

/* The probe's output: read on the trusted side from a pipe, at most
 * JIG_EVIDENCE_PROBE_MAX_BYTES and until JIG_EVIDENCE_DEADLINE_MS; past
 * either the read end is closed (the probe's next write fails) and the
 * unanswered checks stay missing. */
struct reader {
	int fd;
	char *buf;
	size_t len;
	bool cut;
};

static void *read_probe(void *arg)
{
	struct reader *rd = arg;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = JIG_EVIDENCE_DEADLINE_MS - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = {.fd = rd->fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			rd->cut = true;
			break;
		}
		ssize_t n = read(rd->fd, rd->buf + rd->len, JIG_EVIDENCE_PROBE_MAX_BYTES - rd->len);
		if (n <= 0)
			break;
		rd->len += (size_t)n;
		if (rd->len == JIG_EVIDENCE_PROBE_MAX_BYTES) {
			rd->cut = true;
			break;
		}
	}
	close(rd->fd);
	rd->fd = -1;
	return NULL;
}

/* The probe, its file bound read-only from the verified snapshot. */
static int run_probe(struct jig_session *s, struct ev_run *r, const char *probe_path, struct jig_error *e)
{
	char **argv = jig_evidence_argv(&r->suite, PROBE_TARGET);
	int p[2] = {-1, -1};
	struct reader rd = {.fd = -1, .buf = malloc(JIG_EVIDENCE_PROBE_MAX_BYTES + 1)};
	if (!argv || !rd.buf || pipe2(p, O_CLOEXEC) < 0) {
		jig_evidence_argv_free(argv);
		free(rd.buf);
		return jig_err(e, JIG_E_INTERNAL, "evidence: cannot start the probe: %s", strerror(errno));
	}
	rd.fd = p[0];
	pthread_t th;
	int rc = pthread_create(&th, NULL, read_probe, &rd);
	if (rc) {
		close(p[0]);
		close(p[1]);
		jig_evidence_argv_free(argv);
		free(rd.buf);
		return jig_err(e, JIG_E_INTERNAL, "evidence: cannot start the probe's reader");
	}
	struct jig_scope_bind bind = {.source = probe_path, .target = PROBE_TARGET};
	struct jig_scope_result res;
	rc = jig_session_launch(s, (const char *const *)argv, &bind, 1, p[1], &res, e);
	close(p[1]);
	pthread_join(th, NULL);
	jig_evidence_argv_free(argv);
	rd.buf[rd.len] = '\0';
	r->probe_out = rd.buf;
	r->probe_len = rd.len;
	if (!rc && rd.cut)
		fprintf(stderr, "jig: evidence: the probe's output was cut (past %u bytes or %d ms); unanswered checks fail\n",
			JIG_EVIDENCE_PROBE_MAX_BYTES, JIG_EVIDENCE_DEADLINE_MS);
	return rc;
}

/* The verified probe's path in the installed snapshot (its digest checked
 * now; the snapshot's files are never the caller's to change). */
static int probe_file(const char *manifest_sha256, char *out, size_t cap, struct jig_error *e)
{
	char libdir[PATH_MAX];
	struct jig_snapshot snap;
	int rc = jig_snapshot_default_libdir(libdir, sizeof(libdir), e);
	if (rc || (rc = jig_snapshot_open_installed(&snap, libdir, e)))
		return rc;
	char hex[JIG_SHA256_HEX];
	jig_hex(snap.manifest_sha256, JIG_SHA256_LEN, hex);
	int fd = -1;
	if (strcmp(hex, manifest_sha256))
		rc = jig_err(e, JIG_E_INTEGRITY, "evidence: the installed snapshot changed since the session's plan; run again");
	else if ((fd = jig_snapshot_open_listed(&snap, JIG_EVIDENCE_PROBE, true, e)) < 0)
		rc = fd;
	else if (snprintf(out, cap, "%s/%s", snap.dirpath, JIG_EVIDENCE_PROBE) >= (int)cap)
		rc = jig_err(e, JIG_E_INTERNAL, "evidence: the snapshot's path is too long");
	if (fd >= 0)
		close(fd);
	jig_snapshot_close(&snap);
	return rc;
}

static json_t *load_schema(const char *manifest_sha256, struct jig_error *e)
{
	char libdir[PATH_MAX];
	struct jig_snapshot snap;
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), e) || jig_snapshot_open_installed(&snap, libdir, e))
		return NULL;
	(void)manifest_sha256;
	json_t *schema = NULL;
	int fd = jig_snapshot_open_listed(&snap, JIG_EVIDENCE_SCHEMA, true, e);
	char *buf = NULL;
	size_t len = 0;
	if (fd >= 0 && jig_read_fd(fd, 64u << 10, JIG_EVIDENCE_SCHEMA, &buf, &len, NULL, e) == 0)
		jig_json_parse_object(buf, len, JIG_EVIDENCE_SCHEMA, &schema, e);
	if (fd >= 0)
		close(fd);
	free(buf);
	jig_snapshot_close(&snap);
	return schema;
}

static int hash_raw(const char *data, size_t len, char out[JIG_SHA256_HEX])
{
	unsigned char d[JIG_SHA256_LEN];
	if (jig_sha256(data, len, d) < 0)
		return -1;
	jig_hex(d, JIG_SHA256_LEN, out);
	return 0;
}

/* The raw results (suite.json, probe.jsonl), then the summary from their
 * hashes: schema-checked, hunted for canaries, written 0600 (O_EXCL, no
 * link followed) to the run's directory and to out when given. */
static int write_evidence(struct jig_session *s, struct ev_run *r, const char *agent_sha256, const char *out,
			  struct jig_error *e)
{
	json_t *sj = jig_evidence_suite_json(&r->suite);
	char *suite = sj ? json_dumps(sj, JSON_INDENT(1)) : NULL;
	json_decref(sj);
	char *plan = json_dumps(r->plan, JSON_INDENT(1));
	const char *names[] = {"plan.json", "suite.json", "probe.jsonl"};
	const char *data[] = {plan, suite, r->probe_out};
	unsigned long bytes[3];
	char hex[3][JIG_SHA256_HEX];
	const char *sums[] = {hex[0], hex[1], hex[2]};
	int rc = plan && suite ? 0 : jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
	for (size_t i = 0; i < 3 && !rc; i++) {
		bytes[i] = (unsigned long)strlen(data[i]);
		rc = hash_raw(data[i], bytes[i], hex[i]) < 0 ? jig_err(e, JIG_E_INTERNAL, "evidence: SHA-256 failed") : 0;
		if (!rc && i > 0) /* plan.json was written before the launch */
			rc = write_raw(r, names[i], data[i], bytes[i], e);
	}
	utc_now(r->finished);
	struct jig_evidence_meta m = {
		.run = r->id, .repository = plan_str(r->plan, "repository", "id"),
		.worktree_rw = !strcmp(plan_str(r->plan, "repository", "mode"), "rw"),
		.policy_sha256 = agent_sha256, .probe_policy_sha256 = jig_session_policy_sha256(s),
		.snapshot_sha256 = plan_str(r->plan, "snapshot", "manifest_sha256"),
		.started = r->started, .finished = r->finished, .raw_names = names, .raw_sha256 = sums, .raw_bytes = bytes,
		.n_raw = 3};
	m.git = git_summary(r->plan);
	json_t *sum = rc ? NULL : jig_evidence_summary(&r->suite, &m);
	json_decref(m.git);
	json_t *schema = sum ? load_schema(m.snapshot_sha256, e) : NULL;
	const char **can = jig_evidence_canaries(environ);
	char *text = NULL;
	if (!rc && (!sum || !schema || !can))
		rc = schema || !sum ? jig_err(e, JIG_E_INTERNAL, "evidence: out of memory") : -e->code;
	if (!rc && !(rc = jig_evidence_summary_bytes(sum, schema, can, &text, e))) {
		size_t len = strlen(text);
		text[len] = '\n';
		rc = write_raw(r, "summary.json", text, len + 1, e);
		if (!rc && out)
			rc = jig_write_file_at(AT_FDCWD, out, text, len + 1, 0600, e);
		if (rc && out)
			jig_err_prefix(e, -rc, "evidence: --out: ");
	}
	free(text);
	free(can);
	json_decref(schema);
	json_decref(sum);
	free(plan);
	free(suite);
	return rc;
}

static void run_free(struct ev_run *r)
{
	for (size_t i = 0; i < r->n_markers; i++)
		unlink(r->markers[i]);
	for (size_t i = 0; i < r->n_decoys; i++)
		if (r->decoy_fds[i] >= 0)
			close(r->decoy_fds[i]);
	for (size_t i = 0; i < r->n_siblings + r->n_private; i++)
		free(r->paths[i]);
	for (size_t i = 0; i < r->n_git_modules + r->n_git_worktrees; i++)
		free(r->git_paths[i]);
	nest_remove(r);
	if (r->decoy_open)
		jig_session_rt_close(&r->decoy);
	if (r->map_open)
		jig_session_map_free(&r->map);
	if (r->dirfd >= 0)
		close(r->dirfd);
	json_decref(r->plan);
	jig_evidence_suite_free(&r->suite);
	free(r->probe_out);
}

/* What the run found, one line per failed check and a last line. */
static void report(const struct ev_run *r, FILE *f)
{
	for (size_t i = 0; i < r->suite.n; i++) {
		const struct jig_evidence_check *c = &r->suite.c[i];
		if (!jig_evidence_check_passed(c))
			fprintf(f, "FAIL %s: expected %s, got %s%s%s\n", c->id, c->expect_allow ? "allow" : "deny",
				c->actual == JIG_EV_ALLOW ? "allow" : c->actual == JIG_EV_DENY ? "deny"
								 : c->actual == JIG_EV_ERROR ? "error" : "no answer",
				c->why[0] ? " " : "", c->why);
	}
	fprintf(f, "evidence %s: %zu checks, %zu failed; raw results and summary in %s\n", r->id, r->suite.n,
		jig_evidence_failed(&r->suite), r->dir);
}

static int prepare_run(struct ev_run *r, struct jig_session *s, struct jig_error *e)
{
	char runtime[PATH_MAX];
	int rc = jig_evidence_run_id(r->id, e);
	if (!rc && !(r->plan = jig_session_plan_json(s)))
		rc = jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
	if (!rc && !(rc = jig_session_map_load(&r->map, e)))
		r->map_open = true;
	if (!rc && strcmp(r->map.sha256, json_string_value(json_object_get(r->plan, "map_sha256")) ? json_string_value(json_object_get(r->plan, "map_sha256")) : ""))
		rc = jig_err(e, JIG_E_USAGE, "evidence: the repository map changed since the session's plan; run again");
	if (!rc)
		rc = make_run_dir(r, e);
	char *plan = rc ? NULL : json_dumps(r->plan, JSON_INDENT(1));
	if (!rc)
		rc = plan ? write_raw(r, "plan.json", plan, strlen(plan), e) : jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
	free(plan);
	if (!rc)
		rc = jig_runtime_dir(runtime, sizeof(runtime), e);
	if (!rc)
		rc = network(r, e);
	if (!rc)
		rc = decoys(r, runtime, e);
	if (!rc)
		rc = neighbours(r, e);
	return rc ? rc : build_suite(r, e);
}

int jig_session_evidence(struct jig_session *s, const char *out, struct jig_error *e)
{
	struct ev_run r = {.dirfd = -1};
	char probe[PATH_MAX], agent_sha256[JIG_SHA256_HEX];
	struct stat st;
	if (out && lstat(out, &st) == 0) /* O_EXCL decides at the end; this spares a run that could not be kept */
		return jig_err(e, JIG_E_USAGE, "evidence: --out %s exists; a summary never replaces a file", out);
	utc_now(r.started);
	snprintf(agent_sha256, sizeof(agent_sha256), "%s", jig_session_policy_sha256(s));
	int rc = prepare_run(&r, s, e);
	if (!rc)
		rc = probe_file(plan_str(r.plan, "snapshot", "manifest_sha256"), probe, sizeof(probe), e);
	if (!rc)
		rc = run_probe(s, &r, probe, e);
	if (!rc)
		rc = jig_evidence_parse(&r.suite, r.probe_out, r.probe_len, e);
	if (!rc)
		nested_kept(&r);
	if (!rc)
		rc = write_evidence(s, &r, agent_sha256, out, e);
	if (!rc) {
		report(&r, stdout);
		if (jig_evidence_failed(&r.suite))
			rc = jig_err(e, JIG_E_INTERNAL, "evidence: %zu of %zu checks failed: the session's scope grants more (or less) "
				     "than its mapping; see %s", jig_evidence_failed(&r.suite), r.suite.n, r.dir);
	}
	run_free(&r);
	return rc;
}
