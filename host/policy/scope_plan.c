/* Scope policy, the presentation: the permission plan, printed (text
 * inert) and as JSON. */
#include "policy/scope_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* The network line(s): an exact grant lists each endpoint and the proxy. */
static void print_network(const struct jig_scope_policy *p, const char *in, FILE *out)
{
	if (!p->n_listeners) {
		fprintf(out, "%s  network %s\n", in, p->network == JIG_NET_HOST ? "host (the host's network namespace)"
			: "none (private namespace; no route out, not even to host loopback)");
		return;
	}
	fprintf(out, "%s  network private namespace; only these endpoints, relayed by jig from outside the scope:\n", in);
	for (size_t i = 0; i < p->n_loopback; i++)
		fprintf(out, "%s    loopback 127.0.0.1:%u -> the host's 127.0.0.1:%u\n", in, p->listeners[i].port,
			p->listeners[i].port);
	if (p->proxy)
		fprintf(out, "%s    proxy %s: HTTP CONNECT to exactly these HOST:PORT (a name-and-port rule, not an IP firewall):\n",
			in, p->proxy);
	for (size_t i = 0; i < p->n_connect; i++)
		fprintf(out, "%s      connect %s\n", in, p->connect[i]);
}

void jig_scope_plan_print(const struct jig_scope_policy *p, const char *in, FILE *out)
{
	char buf[64];
	json_t *fds = json_object_get(p->doc, "descriptors");
	fprintf(out, "%sscope %s\n%s  policy sha256 %s%s\n", in, p->name, in, p->sha256,
		p->has_slots ? " (\"@\" slots are filled per run, outside the digest)" : "");
	fprintf(out, "%s  files (read-only binds; nothing else of the host is visible):\n", in);
	if (!p->n_binds)
		fprintf(out, "%s    (none)\n", in);
	for (size_t i = 0; i < p->n_binds; i++)
		fprintf(out, "%s    %-28s <- %s\n", in, p->binds[i].target, p->binds[i].source);
	if (p->n_rw_binds)
		fprintf(out, "%s  writable binds (the host's own directories; what the scope writes there stays):\n", in);
	for (size_t i = 0; i < p->n_rw_binds; i++)
		fprintf(out, "%s    %-28s <- %s (read/write)\n", in, p->rw_binds[i].target, p->rw_binds[i].source);
	fprintf(out, "%s  writable (private tmpfs, discarded at exit):\n", in);
	if (!p->n_tmpfs)
		fprintf(out, "%s    (none)\n", in);
	for (size_t i = 0; i < p->n_tmpfs; i++) {
		human_bytes(p->tmpfs[i].size_bytes, buf, sizeof(buf));
		fprintf(out, "%s    %-28s at most %s\n", in, p->tmpfs[i].target, buf);
	}
	for (size_t i = 0; i < p->n_symlinks; i++)
		fprintf(out, "%s  symlink %s -> %s\n", in, p->symlinks[i].target, p->symlinks[i].link);
	fprintf(out, "%s  always: %s (trusted launcher), private read-only /proc, minimal read-only /dev with the\n"
		     "%s    devices null, zero, full, random, urandom and tty (no /dev/shm); nothing else is writable\n",
		in, JIG_SCOPE_INIT_TARGET, in);
	fprintf(out, "%s  cwd %s\n", in, p->cwd);
	print_network(p, in, out);
	fprintf(out, "%s  environment (nothing is inherited):\n", in);
	if (!p->n_env)
		fprintf(out, "%s    (empty)\n", in);
	for (size_t i = 0; i < p->n_env; i++) {
		fprintf(out, "%s    ", in);
		jig_text_put(out, p->env[i]);
		fputc('\n', out);
	}
	fprintf(out, "%s  descriptors (all others are closed):\n", in);
	if (!p->n_fds)
		fprintf(out, "%s    (none)\n", in);
	for (size_t i = 0; i < p->n_fds; i++) {
		const char *slot = json_string_value(json_object_get(json_array_get(fds, i), "source"));
		if (slot)
			fprintf(out, "%s    %d <- %s\n", in, p->fds[i].target, slot);
		else
			fprintf(out, "%s    %d <- caller's %d\n", in, p->fds[i].target, p->fds[i].source);
	}
	human_bytes(p->limits.memory_bytes, buf, sizeof(buf));
	fprintf(out, "%s  limits: memory %s (no swap, OOM kills the whole scope), tasks %u, cpu %u us per 100000 us (%.1f CPUs), wall %s%llu ms\n",
		in, buf, p->limits.tasks, p->limits.cpu_quota_us, p->limits.cpu_quota_us / 100000.0,
		p->has_slots ? "at most " : "", (unsigned long long)p->limits.wall_ms);
	fprintf(out, "%s  denied: every capability; ptrace, bpf, perf, keyrings, userfaultfd, io_uring, namespaces, mounts, module and\n"
		     "%s    kexec calls, TIOCSTI/TIOCLINUX, modify_ldt, changing another process's limits, scheduling, affinity or\n"
		     "%s    I/O priority, non-native syscall ABIs, socket families beyond %s\n",
		in, in, in, p->network == JIG_NET_HOST ? "unix/inet/inet6"
			    : p->n_listeners ? "unix/inet/inet6 (inet only inside the private namespace; no raw sockets)"
					     : "unix");
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
	json_object_set_new(doc, "schema", json_string("jig-permission-plan/1"));
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
