/* Dependency preparation: see prepare.h. */
#include "prepare/prepare.h"
#include "prepare/installer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "effects/worker.h"
#include "prepare/deps.h"
#include "prepare/protocol.h"
#include "prepare/tarball.h"
#include "util/cleanup.h"
#include "util/credential.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/progress.h"

#define NPM_CONFIG_MAX (16 * 1024)
#define RESULT_MAX (16 * 1024)

/* The registry is operator configuration, never the project's:
 * ${XDG_CONFIG_HOME:-~/.config}/jig/npm.json, the caller's and not
 * writable by others (JIG_CONFIG_NAMES). Only a missing file is the
 * default registry; an unreadable one is refused (config.c), never the
 * public registry. https, or plain http to a loopback address only. */
static int registry_ok(const char *u)
{
	const char *rest;
	if (strncmp(u, "https://", 8) == 0)
		rest = u + 8;
	else if (strncmp(u, "http://127.0.0.1", 16) == 0 || strncmp(u, "http://localhost", 16) == 0)
		rest = u + 16;
	else if (strncmp(u, "http://[::1]", 12) == 0)
		rest = u + 12;
	else
		return 0;
	if (rest == u + 8 && (!*rest || *rest == '/' || *rest == ':'))
		return 0;
	if (rest != u + 8 && *rest && *rest != ':' && *rest != '/')
		return 0; /* http://127.0.0.1.example.com */
	for (const char *c = u; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || strchr("@?#\\\"'", *c))
			return 0;
	return strlen(u) < 512;
}

static int read_registry(char *out, size_t cap, struct jig_error *e)
{
	snprintf(out, cap, "%s", JIG_NPM_DEFAULT_REGISTRY);
	char what[PATH_MAX + 16];
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_config_read("npm.json", NPM_CONFIG_MAX, JIG_CONFIG_NAMES, what, sizeof(what), &buf, &len, e);
	if (r == JIG_CONFIG_ABSENT)
		return 0;
	if (r)
		return r;
	json_t *doc = NULL;
	const char *format, *registry;
	static const char *const keys[] = {"format", "registry", NULL};
	if ((r = jig_json_parse_object(buf, len, what, &doc, e)) || (r = jig_json_only_keys_edited(doc, keys, what, e)) ||
	    (r = jig_json_get_string(doc, "format", what, &format, e)) ||
	    (r = jig_json_get_string(doc, "registry", what, &registry, e))) {
		r = jig_err(e, JIG_E_USAGE, "%s", e->msg); /* the operator's input, whatever the parser's code */
		goto out;
	}
	if (strcmp(format, JIG_NPM_CONFIG_FORMAT) != 0)
		r = jig_err(e, JIG_E_USAGE, "%s: format \"%.40s\" is not " JIG_NPM_CONFIG_FORMAT, what, format);
	else if (!registry_ok(registry))
		r = jig_err(e, JIG_E_USAGE,
			    "%s: registry \"%.200s\" must be an https URL (or http to 127.0.0.1, localhost or [::1]) without credentials, query or fragment",
			    what, registry);
	else
		snprintf(out, cap, "%s", registry);
out:
	json_decref(doc);
	return r;
}

int jig_prepare_phase_begin(struct jig_prepare_phase *ph, const struct jig_snapshot *s, struct jig_verifier *v,
			    struct jig_error *e)
{
	memset(ph, 0, sizeof(*ph));
	ph->snapshot = s;
	ph->verifier = v;
	ph->init_fd = -1;
	clock_gettime(CLOCK_MONOTONIC, &ph->deadline);
	ph->deadline.tv_sec += JIG_PREPARE_PHASE_MS / 1000;
	(void)e;
	return 0;
}

void jig_prepare_phase_end(struct jig_prepare_phase *ph)
{
	if (ph->have_sandbox)
		jig_sandbox_close(&ph->sandbox);
	if (ph->init_fd >= 0)
		close(ph->init_fd);
	ph->have_sandbox = false;
	ph->init_fd = -1;
}

static int64_t phase_left_ms(const struct jig_prepare_phase *ph)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(ph->deadline.tv_sec - now.tv_sec) * 1000 + (ph->deadline.tv_nsec - now.tv_nsec) / 1000000;
}

static int write_record(struct jig_project *p, const char *rel, json_t *doc, struct jig_error *e)
{
	jig_autofree char *canon = jig_json_canonical(doc);
	char tmp[200];
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", rel, (int)getpid());
	if (!canon)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (mkdirat(p->statefd, "store/prepared", 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_INTERNAL, "store/prepared: %s", strerror(errno));
	unlinkat(p->statefd, tmp, 0);
	int r = jig_write_file_at(p->statefd, tmp, canon, strlen(canon), 0600, e);
	if (!r && JIG_FAULT_FAILS("prepared record"))
		r = jig_err(e, JIG_E_INTERNAL, "%s: not written (fault point \"prepared record\")", rel);
	if (!r && renameat(p->statefd, tmp, p->statefd, rel) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
	if (r)
		unlinkat(p->statefd, tmp, 0);
	return r;
}

/* Copies rel (a regular file beneath from) to the same path beneath to. */
int jig_prepare_copy_file(int from, int to, const char *rel, struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_read_file_at(from, rel, JIG_DEPS_LOCK_MAX, rel, &buf, &len, NULL, e);
	if (r)
		return r;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s", rel);
	for (char *s = strchr(dir, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(to, dir, 0755) < 0 && errno != EEXIST)
			return jig_err(e, JIG_E_INTERNAL, "%s: %s", dir, strerror(errno));
		*s = '/';
	}
	jig_autoclose int fd = jig_open_beneath(to, rel, O_WRONLY | O_CREAT | O_EXCL);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		return jig_err(e, JIG_E_INTERNAL, "staging %s: %s", rel, strerror(errno));
	fchmod(fd, 0444);
	return 0;
}

static int sha_of(const struct jig_snapshot *s, const char *path, char out[JIG_SHA256_HEX], struct jig_error *e)
{
	const struct jig_manifest_file *f = jig_manifest_find_file(&s->m, path);
	if (!f)
		return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; it cannot prepare dependencies (reinstall jig)", s->m.id, path);
	jig_hex(f->sha256, JIG_SHA256_LEN, out);
	return 0;
}

/* The operator's registry, read once a review. */
int jig_prepare_registry_ready(struct jig_prepare_phase *ph, struct jig_error *e)
{
	int r = ph->have_registry ? 0 : read_registry(ph->registry, sizeof(ph->registry), e);
	ph->have_registry = r == 0;
	return r;
}

/* The installer's own pieces: verified now (by the operator's mode), the
 * launcher opened, the sandbox module loaded; once per review. */
static int installer_ready(struct jig_prepare_phase *ph, struct jig_error *e)
{
	if (ph->have_sandbox)
		return 0;
	static const char *const files[] = {JIG_PREPARE_WORKER_FILE, JIG_RUNTIME_INSTALL};
	int r = jig_prepare_registry_ready(ph, e);
	if (!r)
		r = jig_verifier_check(ph->verifier, ph->snapshot, files, 2, e);
	if (r)
		return r;
	if ((ph->init_fd = jig_verifier_open(ph->verifier, ph->snapshot, "libexec/jig-scope-init", e)) < 0)
		return ph->init_fd;
	if ((r = jig_sandbox_open(&ph->sandbox, ph->snapshot, e)))
		return r;
	ph->have_sandbox = true;
	return 0;
}


/* The registry could not be reached or used (exit 6, not a usage error):
 * what failed and what the operator can check. */
static int registry_failed(const char *flow, const char *doing, const char *registry, const char *why, struct jig_error *e)
{
	return jig_err(e, JIG_E_REGISTRY,
		       "flow %s: %s failed: the registry %.200s could not be reached or used; not admitted; check the registry in "
		       "the operator's npm.json (${XDG_CONFIG_HOME:-~/.config}/jig/npm.json) and that this host reaches it; a Flow "
		       "without bun.lock is resolved only with jig review --allow-resolution-network; the installer said: %.300s",
		       flow, doing, registry, why ? why : "no reason given");
}

/* One launch of the installer scope with input (what it is for names it
 * in messages): 0 with *held, the scope's /work, once it is fenced. */
static int launch(struct jig_prepare_one *o, const char *input, const char *doing, int *held, struct jig_error *e)
{
	struct jig_prepare_phase *ph = o->ph;
	const struct jig_flow *f = o->f;
	int64_t left = phase_left_ms(ph);
	*held = -1;
	if (ph->launched >= JIG_PREPARE_MAX)
		return jig_err(e, JIG_E_USAGE, "flow %s: a review runs the installer at most %d times; not admitted", f->name,
			       JIG_PREPARE_MAX);
	if (left <= 0)
		return jig_err(e, JIG_E_USAGE, "flow %s: the dependency phase's deadline of %d s passed; not admitted", f->name,
			       JIG_PREPARE_PHASE_MS / 1000);
	int r = installer_ready(ph, e);
	if (r)
		return r;
	ph->launched++;
	struct jig_scope_run run = {.run_dir = o->run_dir,
				    .wall_ms = (uint64_t)(left < JIG_PREPARE_ONE_MS ? left : JIG_PREPARE_ONE_MS)};
	struct jig_worker_call call = {.sandbox = &ph->sandbox, .t = &o->t, .init_fd = ph->init_fd, .abort_fd = -1,
				       .companion_pid = 0, .input = input, .result_format = JIG_PREPARE_RESULT_FORMAT,
				       .result_max = RESULT_MAX, .run = &run, .held_fd = held};
	json_t *result = NULL;
	struct jig_scope_result res;
	memset(&res, 0, sizeof(res));
	char why[1024];
	/* Which deadline a timeout is: the phase's, when less than one
	 * preparation's was left of it. */
	char deadline[400];
	if (left < JIG_PREPARE_ONE_MS)
		snprintf(deadline, sizeof(deadline),
			 " (the %d s phase deadline: this review's dependency preparations together passed %d s; review again to go on, "
			 "the ones prepared are reused)",
			 JIG_PREPARE_PHASE_MS / 1000, JIG_PREPARE_PHASE_MS / 1000);
	else
		snprintf(deadline, sizeof(deadline),
			 " (the %d s per-preparation deadline: this one preparation took longer; a registry that slow, or a lock that "
			 "large, cannot be prepared)",
			 JIG_PREPARE_ONE_MS / 1000);
	if (jig_worker_run(&call, &result, &res, why, sizeof(why)) < 0)
		r = jig_err(e, res.outcome == JIG_SCOPE_TIMEOUT ? JIG_E_USAGE : JIG_E_HOST, "flow %s: %s: %.500s%s; not admitted",
			    f->name, doing, why, res.outcome == JIG_SCOPE_TIMEOUT ? deadline : "");
	else if (strcmp(json_string_value(json_object_get(result, "outcome")), "unreachable") == 0)
		r = registry_failed(f->name, doing, ph->registry, json_string_value(json_object_get(result, "error")), e);
	else if (strcmp(json_string_value(json_object_get(result, "outcome")), "ok") != 0)
		r = jig_err(e, JIG_E_USAGE, "flow %s: %s %s: %.700s; not admitted", f->name, doing,
			    json_string_value(json_object_get(result, "outcome")),
			    json_string_value(json_object_get(result, "error")) ?: "no reason given");
	json_decref(result);
	if (r && *held >= 0) {
		close(*held);
		*held = -1;
	}
	return r;
}

/* The record's (and so the Plan's) patches [{"package": name@version,
 * "path", "sha256"}] and platform-skipped packages [{"package", "for":
 * "os" | "cpu" | "libc" | "dependents"}], each only when there are any. */
static void describe(const struct jig_deps *d, json_t *rec)
{
	json_t *patches = json_array(), *skipped = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(d->patches, i, x)
		json_array_append_new(patches, json_pack("{s:O,s:O,s:O}", "package", json_object_get(x, "spec"), "path",
							 json_object_get(x, "path"), "sha256", json_object_get(x, "sha256")));
	json_array_foreach(d->packages, i, x)
		if (json_object_get(x, "skipped"))
			json_array_append_new(skipped, json_pack("{s:s++,s:O}", "package", json_string_value(json_object_get(x, "name")), "@",
								 json_string_value(json_object_get(x, "version")), "for",
								 json_object_get(x, "skipped")));
	if (json_array_size(patches))
		json_object_set(rec, "patches", patches);
	if (json_array_size(skipped))
		json_object_set(rec, "platform_skipped", skipped);
	json_decref(patches);
	json_decref(skipped);
}

int jig_prepare_stage_sources(struct jig_prepare_one *o, int pkg, int src, bool keep_lock, struct jig_error *e)
{
	int r = jig_prepare_copy_file(pkg, src, JIG_DEPS_MANIFEST, e);
	if (!r && keep_lock)
		r = jig_prepare_stage_lock(pkg, src, &o->d, e);
	size_t i;
	json_t *pp;
	json_array_foreach(o->d.patches, i, pp)
		if (!r)
			r = jig_prepare_copy_file(pkg, src, json_string_value(json_object_get(pp, "path")), e);
	return r;
}

/* The supplied lock as the installer gets it: each full tarball URL of
 * the configured registry (checked: jig_deps_check_registry) written as
 * Bun's default registry (""), so the frozen install asks jig's inspected
 * loopback copy, never a URL of the lock's. */
int jig_prepare_stage_lock(int pkg, int src, const struct jig_deps *d, struct jig_error *e)
{
	if (!d->n_urls)
		return jig_prepare_copy_file(pkg, src, JIG_DEPS_LOCK, e);
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_read_file_at(pkg, JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX, JIG_DEPS_LOCK, &buf, &len, NULL, e);
	if (r)
		return r;
	jig_deps_strip_trailing_commas(buf, &len);
	json_t *lock = NULL;
	if ((r = jig_json_parse_object(buf, len, JIG_DEPS_LOCK, &lock, e)))
		return r;
	const char *k;
	json_t *ent;
	json_object_foreach(json_object_get(lock, "packages"), k, ent)
		json_array_set_new(ent, 1, json_string(""));
	jig_autofree char *text = json_dumps(lock, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(lock);
	return text ? jig_write_file_at(src, JIG_DEPS_LOCK, text, strlen(text), 0444, e) : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

/* Runs the installer scope and captures what it prepared. */
static int install(struct jig_prepare_one *o, const char *identity, const char *source, json_t **rec, struct jig_error *e)
{
	struct jig_prepare_phase *ph = o->ph;
	const struct jig_flow *f = o->f;
	int r = installer_ready(ph, e); /* the registry is read here */
	if (r)
		return r;
	json_t *pkgs = json_array();
	size_t i;
	json_t *pk;
	json_array_foreach(o->d.packages, i, pk)
		if (!json_object_get(pk, "skipped")) /* the pinned Bun skips it on this host: never fetched */
			json_array_append_new(pkgs, json_pack("{s:O,s:O,s:O}", "name", json_object_get(pk, "name"), "version",
							      json_object_get(pk, "version"), "integrity", json_object_get(pk, "integrity")));
	size_t n_fetch = json_array_size(pkgs); /* before the request takes pkgs */
	json_t *req = json_pack("{s:s,s:s,s:o}", "format", JIG_PREPARE_REQUEST_FORMAT, "registry", ph->registry, "packages", pkgs);
	jig_autofree char *input = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!input)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	int held;
	jig_progress_status("flow %s: installing %zu package%s in the installer scope", f->name, n_fetch, n_fetch == 1 ? "" : "s");
	if ((r = launch(o, input, "preparing its dependencies", &held, e)))
		return r;
	/* The prepared tree, validated by the same bounded capture as a
	 * package: regular files and directories only, singly linked, names
	 * plain, within the caps; an installation with no runtime packages is
	 * an empty tree. */
	jig_autoclose int nm = held >= 0 ? openat(held, "node_modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (held >= 0)
		close(held);
	if (nm < 0 && (mkdirat(o->runfd, "empty", 0700) < 0 ||
		       (nm = openat(o->runfd, "empty", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0))
		return jig_err(e, JIG_E_INTERNAL, "flow %s: the prepared installation: %s", f->name, strerror(errno));
	char what[200], tree[JIG_SHA256_HEX];
	snprintf(what, sizeof(what), "flow %s: its prepared node_modules", f->name);
	uint64_t bytes = 0;
	size_t files = 0;
	if ((r = jig_store_capture(o->p, nm, what, tree, &bytes, &files, e)))
		return r;
	if (files > JIG_PREPARED_FILES_MAX || bytes > JIG_PREPARED_BYTES_MAX)
		return jig_err(e, JIG_E_USAGE,
			       "%s: %zu files, %llu bytes: over the %d files or %u MiB one preparation may install; depend on fewer or smaller packages; not admitted",
			       what, files, (unsigned long long)bytes, JIG_PREPARED_FILES_MAX, JIG_PREPARED_BYTES_MAX >> 20);
	char human[32];
	jig_progress_bytes(human, sizeof(human), bytes);
	jig_progress_line("flow %s: prepared %zu package%s: %zu files, %s", f->name, o->d.n_packages,
			  o->d.n_packages == 1 ? "" : "s", files, human);
	if ((ph->bytes += bytes) > JIG_PREPARE_PHASE_BYTES)
		return jig_err(e, JIG_E_USAGE, "flow %s: the review's prepared dependencies exceed %llu MiB; not admitted", f->name,
			       (unsigned long long)(JIG_PREPARE_PHASE_BYTES >> 20));
	*rec = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s}", "format", JIG_PREPARED_FORMAT, "identity", identity, "source",
			 source, "tree", tree, "files", (json_int_t)files, "bytes", (json_int_t)bytes, "packages",
			 (json_int_t)o->d.n_packages, "installer_policy_sha256", o->t.policy.sha256);
	if (!*rec)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (o->d.n_patches || o->d.n_skipped)
		describe(&o->d, *rec);
	char rel[160];
	jig_prepared_record_name(rel, sizeof(rel), "identity", identity);
	if ((r = write_record(o->p, rel, *rec, e))) {
		json_decref(*rec);
		*rec = NULL;
	}
	return r;
}

/* The installer scope, composed from the catalog like every scope. */
int jig_prepare_compose(struct jig_prepare_one *o, struct jig_error *e)
{
	struct jig_catalog cat;
	int r = jig_catalog_load(o->ph->snapshot, &cat, e);
	if (r)
		return r;
	char name[40];
	jig_scope_name(name, sizeof(name), "installer-", o->f->name, JIG_SCOPE_NAME_KEEP_INSTALLER);
	struct jig_scope_facts facts = {.kind = "installer", .name = name, .snapshot_dir = o->ph->snapshot->dirpath,
					.home = jig_caller_home()};
	r = jig_catalog_compose(&cat, &facts, &o->t, e);
	o->have_t = r == 0;
	jig_catalog_free(&cat);
	return r;
}

/* Resolution (jig review --allow-resolution-network): Bun writes
 * bun.lock from the operator's registry's metadata, installing nothing.
 * Every entry's tarball must be that registry's own for its name and
 * version; it is written as Bun's default registry ("") — so the frozen
 * install asks jig's loopback copy, never a URL of the lock's — and the
 * lock then meets the same checks as a supplied one. */
int jig_prepare_resolve(struct jig_prepare_one *o, int src, struct jig_error *e)
{
	const struct jig_flow *f = o->f;
	char warning[1024]; /* a Flow's name is at most 64 bytes */
	snprintf(warning, sizeof(warning),
		 "flow %s has no bun.lock and you passed --allow-resolution-network: the pinned Bun now resolves its\n"
		 "  dependencies in the installer scope with this host's network. The requests are selected by the dependencies\n"
		 "  (their names, ranges and the registry's metadata) and can reach private-network and loopback destinations\n"
		 "  this host can reach; this is not egress filtering. The permission lasts for this review only, and declining\n"
		 "  or a failed review cannot undo requests already made. The resolved lock must pass the same checks as a\n"
		 "  supplied one before anything is installed.",
		 f->name);
	if (o->ph->warn)
		o->ph->warn(warning);
	int r = installer_ready(o->ph, e); /* the registry is read here */
	if (r)
		return r;
	json_t *req = json_pack("{s:s,s:s,s:s,s:[]}", "format", JIG_PREPARE_REQUEST_FORMAT, "mode", "resolve", "registry",
				o->ph->registry, "packages");
	jig_autofree char *input = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!input)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	int held;
	jig_progress_status("flow %s: resolving its dependencies", f->name);
	if ((r = launch(o, input, "resolving its dependencies", &held, e)))
		return r;
	jig_autofree char *buf = NULL;
	size_t len;
	char what[200];
	snprintf(what, sizeof(what), "flow %s: the resolved bun.lock", f->name);
	r = jig_read_file_at(held, JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX, what, &buf, &len, NULL, e);
	close(held);
	json_t *lock = NULL;
	if (r)
		return r;
	/* A registry whose metadata puts a credential into a tarball URL:
	 * refused without printing it. */
	const char *cred;
	size_t cline = jig_credential_line(buf, len, &cred);
	if (cline)
		return jig_err(e, JIG_E_USAGE, "%s: line %zu: %s; a credential never belongs in a lock; not admitted", what, cline,
			       cred);
	jig_deps_strip_trailing_commas(buf, &len);
	if ((r = jig_json_parse_object(buf, len, what, &lock, e)))
		return jig_err(e, JIG_E_USAGE, "%s; not admitted", e->msg);
	size_t rl = strlen(o->ph->registry);
	const char *sep = rl && o->ph->registry[rl - 1] == '/' ? "" : "/";
	const char *k;
	json_t *ent;
	json_object_foreach(json_object_get(lock, "packages"), k, ent) {
		const char *spec = json_string_value(json_array_get(ent, 0));
		const char *url = json_string_value(json_array_get(ent, 1));
		if (!spec || !url || !url[0])
			continue; /* the checks below refuse what is malformed */
		const char *at = strrchr(spec, '@');
		char want[2048];
		if (!at || at == spec) {
			r = jig_err(e, JIG_E_USAGE, "%s: packages.%.200s: not name@version; not admitted", what, k);
			break;
		}
		int nl = (int)(at - spec);
		const char *slash = memchr(spec, '/', (size_t)nl);
		const char *base = slash ? slash + 1 : spec;
		snprintf(want, sizeof(want), "%s%s%.*s/-/%.*s-%s.tgz", o->ph->registry, sep, nl, spec, (int)(at - base), base, at + 1);
		if (strcmp(url, want) != 0) {
			r = jig_err(e, JIG_E_USAGE, "%s: packages.%.200s: its tarball is %.300s, not the registry's own; not admitted", what, k,
				    url);
			break;
		}
		json_array_set_new(ent, 1, json_string(""));
	}
	jig_autofree char *text = r ? NULL : json_dumps(lock, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(lock);
	if (!r && !text)
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (!r)
		unlinkat(src, JIG_DEPS_LOCK, 0); /* the lock jig lock refreshes, replaced */
	return r ? r : jig_write_file_at(src, JIG_DEPS_LOCK, text, strlen(text), 0444, e);
}

static int prepare_flow(struct jig_prepare_one *o, struct jig_error *e)
{
	struct jig_flow *f = o->f;
	char tmpl[] = "/tmp/jig-prepare-XXXXXX";
	if (!mkdtemp(tmpl))
		return jig_err(e, JIG_E_INTERNAL, "a preparation directory: %s", strerror(errno));
	snprintf(o->run_dir, sizeof(o->run_dir), "%s", tmpl);
	if ((o->runfd = JIG_FAULT_FAILS("prepare open") ? (errno = EMFILE, -1) : open(o->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(o->runfd, "package", 0700) < 0 || mkdirat(o->runfd, "src", 0700) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", o->run_dir, strerror(errno));
	jig_autoclose int pkg = openat(o->runfd, "package", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_autoclose int src = openat(o->runfd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* The checks read the captured bytes, the very bytes the installer
	 * will see: a change in the project after capture is not seen. */
	int r = pkg < 0 || src < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", o->run_dir, strerror(errno))
				   : jig_store_materialise_deps(o->p, f->package_sha256, pkg, e);
	if (r || (r = jig_deps_check_unlocked(pkg, f->name, &o->d, e)) || !o->d.declared)
		return r;
	jig_progress_status("flow %s: checking its dependencies", f->name);
	bool resolving = !o->d.locked;
	if (resolving) {
		/* No lock: a review that resolved this very package before is
		 * reused as it is (no network); otherwise resolving needs the
		 * operator's explicit flag. */
		json_t *rec = jig_prepared_record(o->p, f);
		bool done = rec && json_is_true(json_object_get(rec, "resolved"));
		json_decref(rec);
		if (done)
			return 0;
		if (!o->ph->allow_resolution) {
			jig_deps_free(&o->d);
			return jig_deps_check(pkg, f->name, &o->d, e); /* its refusal names the flag */
		}
	}
	/* A lock's full tarball URLs are the configured registry's own, or
	 * refused here, before anything is fetched. */
	if (!resolving && o->d.n_urls &&
	    ((r = jig_prepare_registry_ready(o->ph, e)) || (r = jig_deps_check_registry(&o->d, f->name, o->ph->registry, e))))
		return r;
	r = jig_prepare_stage_sources(o, pkg, src, !resolving, e);
	if (r || (r = jig_prepare_compose(o, e)))
		return r;
	if (resolving) {
		jig_deps_free(&o->d);
		if ((r = jig_prepare_resolve(o, src, e)) || (r = jig_deps_check(src, f->name, &o->d, e)))
			return r;
	}
	char source[JIG_SHA256_HEX], what[200];
	snprintf(what, sizeof(what), "flow %s: its dependency sources", f->name);
	uint64_t sbytes;
	size_t sfiles;
	if ((r = jig_store_capture(o->p, src, what, source, &sbytes, &sfiles, e)))
		return r;
	if (sbytes > JIG_PREPARE_SOURCE_BYTES)
		return jig_err(e, JIG_E_USAGE,
			       "%s (package.json, bun.lock and the declared patches) are %llu bytes, over the %llu MiB a preparation may read; not admitted",
			       what, (unsigned long long)sbytes, (unsigned long long)(JIG_PREPARE_SOURCE_BYTES >> 20));
	/* The identity of a preparation: the sources and everything of the
	 * installer (its scope, the worker, the runtime support, Bun). */
	char worker[JIG_SHA256_HEX], script[JIG_SHA256_HEX], bun[JIG_SHA256_HEX];
	if ((r = sha_of(o->ph->snapshot, JIG_PREPARE_WORKER_FILE, worker, e)) ||
	    (r = sha_of(o->ph->snapshot, JIG_RUNTIME_INSTALL, script, e)) || (r = sha_of(o->ph->snapshot, "libexec/bun", bun, e)))
		return r;
	json_t *id = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "format", JIG_PREPARED_FORMAT, "source", source, "installer_policy",
			       o->t.policy.sha256, "worker", worker, "install", script, "bun", bun);
	jig_autofree char *canon = id ? jig_json_canonical(id) : NULL;
	json_decref(id);
	if (!canon)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	char identity[JIG_SHA256_HEX], rel[160];
	jig_sha256_hex(canon, strlen(canon), identity);
	/* An unchanged preparation is reused: no network. */
	jig_prepared_record_name(rel, sizeof(rel), "identity", identity);
	json_t *rec = jig_prepared_record_read(o->p, rel);
	if (rec)
		jig_progress_line("flow %s: its %zu dependenc%s prepared before: reused", f->name, o->d.n_packages,
				  o->d.n_packages == 1 ? "y was" : "ies were");
	if (!rec && (r = install(o, identity, source, &rec, e)))
		return r;
	if (resolving)
		json_object_set_new(rec, "resolved", json_true());
	jig_prepared_record_name(rel, sizeof(rel), "package", f->package_sha256);
	r = write_record(o->p, rel, rec, e);
	json_decref(rec);
	return r;
}

int jig_prepare_project(struct jig_project *p, struct jig_prepare_phase *ph, struct jig_error *e)
{
	int r = 0;
	for (size_t i = 0; !r && i < p->n_flows; i++) {
		struct jig_prepare_one o = {.p = p, .f = &p->flows[i], .ph = ph, .runfd = -1};
		if (p->flows[i].recipe)
			continue; /* a Markdown recipe: its files are resources, never dependencies (issue 20) */
		r = prepare_flow(&o, e);
		if (o.runfd >= 0)
			close(o.runfd);
		if (o.run_dir[0]) /* made, even if it could not be opened */
			jig_remove_tree(AT_FDCWD, o.run_dir);
		if (o.have_t)
			jig_scope_template_free(&o.t);
		jig_deps_free(&o.d);
	}
	return r;
}
