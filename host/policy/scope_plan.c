/* Scope policy, the presentation: the permission plan, printed (text
 * inert) and as JSON. */
#include "policy/scope_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

#define KIB UINT64_C(1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

static void human_bytes(uint64_t b, char *out, size_t cap)
{
	if (b >= GIB && b % GIB == 0)
		snprintf(out, cap, "%llu GiB", (unsigned long long)(b / GIB));
	else if (b >= MIB && b % MIB == 0)
		snprintf(out, cap, "%llu MiB", (unsigned long long)(b / MIB));
	else if (b >= KIB && b % KIB == 0)
		snprintf(out, cap, "%llu KiB", (unsigned long long)(b / KIB));
	else
		snprintf(out, cap, "%llu bytes", (unsigned long long)b);
}

/* The permission plan as items: each one or more lines (a '\n' starts a
 * continuation, printed two columns further in) in a section. Printed in
 * full they are the plan; what several scopes share is printed once
 * (struct jig_scope_common) and each scope then shows only its other
 * items. */
enum { S_FILES, S_RW, S_TMPFS, S_SYMLINK, S_ALWAYS, S_CWD, S_NET, S_ENV, S_FDS, S_LIMITS, S_DENIED, S_N };
/* A section with a heading lists its items under it, two columns further in. */
static const char *const heading[S_N] = {
	[S_FILES] = "files (read-only binds; nothing else of the host is visible):",
	[S_RW] = "writable binds (the host's own directories; what the scope writes there stays):",
	[S_TMPFS] = "writable (private tmpfs, discarded at exit):",
	[S_ENV] = "environment (nothing is inherited):",
	[S_FDS] = "descriptors (all others are closed):",
};

struct item {
	int section;
	char *text;
};
struct items {
	struct item *v;
	size_t n;
	bool oom;
};
struct jig_scope_common {
	struct items it;
};

__attribute__((format(printf, 3, 4))) static void item(struct items *it, int section, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = NULL;
	int r = vasprintf(&t, fmt, ap);
	va_end(ap);
	struct item *v = r < 0 ? NULL : realloc(it->v, (it->n + 1) * sizeof(*v));
	if (!v) {
		free(r < 0 ? NULL : t);
		it->oom = true;
		return;
	}
	it->v = v;
	it->v[it->n++] = (struct item){section, t};
}

static void items_free(struct items *it)
{
	for (size_t i = 0; i < it->n; i++)
		free(it->v[i].text);
	free(it->v);
	*it = (struct items){0};
}

static void items_of(const struct jig_scope_policy *p, struct items *it)
{
	char buf[64];
	json_t *fds = json_object_get(p->doc, "descriptors");
	if (!p->n_binds)
		item(it, S_FILES, "(none)");
	for (size_t i = 0; i < p->n_binds; i++)
		item(it, S_FILES, "%-28s <- %s", p->binds[i].target, p->binds[i].source);
	for (size_t i = 0; i < p->n_rw_binds; i++)
		item(it, S_RW, "%-28s <- %s (read/write)", p->rw_binds[i].target, p->rw_binds[i].source);
	if (!p->n_tmpfs)
		item(it, S_TMPFS, "(none)");
	for (size_t i = 0; i < p->n_tmpfs; i++) {
		human_bytes(p->tmpfs[i].size_bytes, buf, sizeof(buf));
		item(it, S_TMPFS, "%-28s at most %s", p->tmpfs[i].target, buf);
	}
	for (size_t i = 0; i < p->n_symlinks; i++)
		item(it, S_SYMLINK, "symlink %s -> %s", p->symlinks[i].target, p->symlinks[i].link);
	item(it, S_ALWAYS, "always: %s (trusted launcher), private read-only /proc, minimal read-only /dev with the\n"
			   "devices null, zero, full, random, urandom and tty (no /dev/shm); nothing else is writable",
	     JIG_SCOPE_INIT_TARGET);
	item(it, S_CWD, "cwd %s", p->cwd);
	if (!p->n_listeners)
		item(it, S_NET, "network %s", p->network == JIG_NET_HOST ? "host (the host's network namespace)"
					     : "none (private namespace; no route out, not even to host loopback)");
	else { /* an exact grant lists each endpoint and the proxy: one item */
		char *t = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&t, &len);
		if (!m) {
			it->oom = true;
			return;
		}
		fprintf(m, "network private namespace; only these endpoints, relayed by jig from outside the scope:");
		for (size_t i = 0; i < p->n_loopback; i++)
			fprintf(m, "\n  loopback 127.0.0.1:%u -> the host's 127.0.0.1:%u", p->listeners[i].port, p->listeners[i].port);
		if (p->proxy)
			fprintf(m, "\n  proxy %s: HTTP CONNECT to exactly these HOST:PORT (a name-and-port rule, not an IP firewall):", p->proxy);
		for (size_t i = 0; i < p->n_connect; i++)
			fprintf(m, "\n    connect %s", p->connect[i]);
		fclose(m);
		item(it, S_NET, "%s", t);
		free(t);
	}
	if (!p->n_env)
		item(it, S_ENV, "(empty)");
	for (size_t i = 0; i < p->n_env; i++) {
		jig_autofree char *inert = jig_text_inert_dup(p->env[i]);
		item(it, S_ENV, "%s", inert ? inert : "?");
	}
	if (!p->n_fds)
		item(it, S_FDS, "(none)");
	for (size_t i = 0; i < p->n_fds; i++) {
		const char *slot = json_string_value(json_object_get(json_array_get(fds, i), "source"));
		if (slot)
			item(it, S_FDS, "%d <- %s", p->fds[i].target, slot);
		else
			item(it, S_FDS, "%d <- caller's %d", p->fds[i].target, p->fds[i].source);
	}
	human_bytes(p->limits.memory_bytes, buf, sizeof(buf));
	item(it, S_LIMITS, "limits: memory %s (no swap, OOM kills the whole scope), tasks %u, cpu %u us per 100000 us (%.1f CPUs), wall %s%llu ms",
	     buf, p->limits.tasks, p->limits.cpu_quota_us, p->limits.cpu_quota_us / 100000.0, p->has_slots ? "at most " : "",
	     (unsigned long long)p->limits.wall_ms);
	item(it, S_DENIED, "denied: every capability; ptrace, bpf, perf, keyrings, userfaultfd, io_uring, namespaces, mounts, module and\n"
			   "kexec calls, TIOCSTI/TIOCLINUX, modify_ldt, changing another process's limits, scheduling, affinity or\n"
			   "I/O priority, non-native syscall ABIs, socket families beyond %s",
	     p->network == JIG_NET_HOST ? "unix/inet/inet6"
	     : p->n_listeners	      ? "unix/inet/inet6 (inet only inside the private namespace; no raw sockets)"
					      : "unix");
}

static bool has(const struct items *it, const struct item *x)
{
	for (size_t i = 0; it && i < it->n; i++)
		if (it->v[i].section == x->section && strcmp(it->v[i].text, x->text) == 0)
			return true;
	return false;
}

/* Items of it that besides does not have, section by section; returns how
 * many lines. */
static size_t print_items(const struct items *it, const struct items *besides, const char *in, FILE *out)
{
	size_t lines = 0;
	for (int s = 0; s < S_N; s++) {
		bool headed = false;
		for (size_t i = 0; i < it->n; i++) {
			if (it->v[i].section != s || has(besides, &it->v[i]))
				continue;
			if (heading[s] && !headed) {
				fprintf(out, "%s  %s\n", in, heading[s]);
				headed = true;
				lines++;
			}
			const char *t = it->v[i].text;
			for (bool first = true; t; first = false) {
				const char *nl = strchr(t, '\n');
				fprintf(out, "%s%s%s%.*s\n", in, heading[s] ? "    " : "  ", first ? "" : "  ",
					(int)(nl ? (size_t)(nl - t) : strlen(t)), t);
				lines++;
				t = nl ? nl + 1 : NULL;
			}
		}
	}
	return lines;
}

static void print_head(const struct jig_scope_policy *p, const char *in, const char *besides, FILE *out)
{
	fprintf(out, "%sscope %s", in, p->name);
	if (besides)
		fprintf(out, ": what every %s scope has (above), and:", besides);
	fprintf(out, "\n%s  policy sha256 %s%s\n", in, p->sha256,
		p->has_slots ? " (\"@\" slots are filled per run, outside the digest)" : "");
}

void jig_scope_plan_print(const struct jig_scope_policy *p, const char *in, FILE *out)
{
	jig_scope_plan_print_besides(p, NULL, NULL, in, out);
}

void jig_scope_plan_print_besides(const struct jig_scope_policy *p, const struct jig_scope_common *c, const char *kind,
				  const char *in, FILE *out)
{
	struct items it = {0};
	items_of(p, &it);
	print_head(p, in, c ? kind : NULL, out);
	if (it.oom)
		fprintf(out, "%s  (out of memory printing the plan: jig scope plan or --json shows it)\n", in);
	else
		print_items(&it, c ? &c->it : NULL, in, out);
	items_free(&it);
}

struct jig_scope_common *jig_scope_common_of(const struct jig_scope_policy *const *ps, size_t n)
{
	struct jig_scope_common *c = calloc(1, sizeof(*c));
	if (!c || !n)
		return c;
	items_of(ps[0], &c->it);
	struct items other = {0};
	for (size_t k = 1; k < n && !c->it.oom; k++) {
		items_of(ps[k], &other);
		if (other.oom)
			c->it.oom = true;
		size_t kept = 0;
		for (size_t i = 0; i < c->it.n; i++)
			if (has(&other, &c->it.v[i]))
				c->it.v[kept++] = c->it.v[i];
			else
				free(c->it.v[i].text);
		c->it.n = kept;
		items_free(&other);
	}
	if (c->it.oom) { /* nothing in common: every scope prints in full */
		items_free(&c->it);
	}
	return c;
}

size_t jig_scope_common_print(const struct jig_scope_common *c, const char *in, FILE *out)
{
	return c ? print_items(&c->it, NULL, in, out) : 0;
}

void jig_scope_common_free(struct jig_scope_common *c)
{
	if (c)
		items_free(&c->it);
	free(c);
}

json_t *jig_scope_devices_json(void)
{
	static const char *const devices[] = {JIG_SCOPE_DEVICES};
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
		json_array_append_new(a, json_string(devices[i]));
	return a;
}

json_t *jig_scope_plan_json(const struct jig_scope_policy *p)
{
	json_t *doc = json_deep_copy(p->doc);
	if (!doc)
		return NULL;
	json_object_del(doc, "format");
	json_object_set_new(doc, "schema", json_string(JIG_PERMISSION_PLAN_FORMAT));
	json_object_set_new(doc, "policy_sha256", json_string(p->sha256));
	json_object_set_new(doc, "always", json_pack("{s:s,s:s,s:s,s:o}", "launcher", JIG_SCOPE_INIT_TARGET,
						      "proc", "private, read-only", "dev", "minimal, read-only",
						      "devices", jig_scope_devices_json()));
	/* Every writable mount: the policy's tmpfs, with its cap, and its
	 * writable binds (the root, /dev, /dev/pts and /proc are read-only). */
	json_t *writable = json_array();
	for (size_t i = 0; i < p->n_rw_binds; i++)
		json_array_append_new(writable, json_pack("{s:s,s:s}", "at", p->rw_binds[i].target, "bind",
							  p->rw_binds[i].source));
	for (size_t i = 0; i < p->n_tmpfs; i++)
		json_array_append_new(writable, json_pack("{s:s,s:I}", "at", p->tmpfs[i].target, "size_bytes",
							  (json_int_t)p->tmpfs[i].size_bytes));
	json_object_set_new(doc, "writable", writable);
	json_t *denied = json_pack("[s,s,s,s,s,s,s,s,s,s,s,s,s,s]", "capabilities", "ptrace", "bpf",
				   "perf_event_open", "keyrings", "userfaultfd", "io_uring",
				   "namespaces", "mount", "module_and_kexec", "tiocsti_tioclinux",
				   "non_native_abi", "modify_ldt",
				   "changing_another_process_limits_scheduling_affinity_or_io_priority");
	json_array_append_new(denied, json_string(p->network == JIG_NET_HOST || p->n_listeners ? "sockets_other_than_unix_inet_inet6"
												 : "sockets_other_than_unix"));
	if (p->n_listeners)
		json_array_append_new(denied, json_string("raw_sockets"));
	json_object_set_new(doc, "denied", denied);
	return doc;
}
