/* The registry's answers as the review reads them (issue 31): with jig
 * review --allow-resolution-network, the pinned Bun writes bun.lock in the
 * installer scope from the registry's metadata (packuments), and the
 * coordinator reads that lock back from the fenced scope: its jig_prepare_resolve()
 * (host/prepare/prepare.c, included here to drive the static function
 * itself, unchanged) strips trailing commas, parses, requires every
 * tarball to be the configured registry's own and rewrites it, then the
 * lock meets jig_deps_check as a supplied one. The tarballs themselves are
 * the tarball target. Input: package.json NUL the lock the scope left
 * [NUL the prepare worker's result; without it: "ok"]. Nothing is
 * launched: the sandbox is a stub that answers as the worker and holds a
 * directory with the lock. */
#include "../host/prepare/prepare.c"

#include <jig/module.h>

#include "fuzz.h"
#include "policy/catalog.h"

static const char *lock_text, *result_text;
static size_t lock_len, result_len;

static int stub_launch(void *state, const struct jig_scope *sc, struct jig_scope_result *res)
{
	(void)state;
	char held[512];
	snprintf(held, sizeof(held), "%s/held", fuzz_dir());
	for (uint32_t i = 0; i < sc->n_fds; i++) {
		char l[64], t[256];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", sc->fds[i].source);
		ssize_t n = readlink(l, t, sizeof(t) - 1);
		if (n > 0 && (t[n] = '\0', strncmp(t, "/memfd:jig-worker-result ", 25) == 0)) {
			const char *ok = "{\"format\":\"jig-prepare-result/1\",\"outcome\":\"ok\",\"fetched\":0,\"bytes\":0}";
			const char *w = result_text ? result_text : ok;
			size_t wn = result_text ? result_len : strlen(ok);
			if (wn && write(sc->fds[i].source, w, wn) != (ssize_t)wn)
				abort();
		}
	}
	fuzz_put("held/bun.lock", lock_text, lock_len);
	res->outcome = JIG_SCOPE_EXITED;
	res->cleanup_confirmed = 1;
	res->launcher_reported = 1;
	res->held_fd = open(held, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return JIG_MOD_OK;
}
static const struct jig_sandbox_ops stub_ops = {.struct_size = sizeof(stub_ops), .launch = stub_launch};

static struct jig_scope_template installer;
static struct jig_flow flow = {.name = "f"};
static int srcfd;
static char run_dir[256];

static void init(void)
{
	const char *d = fuzz_dir();
	char p[512];
	static const char *const dirs[] = {"held", "run", "run/src", "run/package", "snap", "snap/libexec", "snap/libexec/runtime", NULL};
	for (size_t i = 0; dirs[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, dirs[i]);
		if (mkdir(p, 0700) < 0)
			abort();
	}
	static const char *const files[] = {"snap/libexec/bun", "snap/libexec/jig-prepare-worker", NULL};
	for (size_t i = 0; files[i]; i++)
		fuzz_put(files[i], "", 0);
	/* The installer scope, composed from the source tree's catalog. */
	struct jig_error e = {0};
	char *text = NULL;
	size_t len;
	struct jig_catalog cat;
	int cfd = open(JIG_SOURCE_DIR "/policy/catalog.json", O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/snap", d);
	struct jig_scope_facts facts = {.kind = "installer", .name = "installer-f", .snapshot_dir = p, .home = jig_caller_home()};
	if (cfd < 0 || jig_read_fd(cfd, JIG_CATALOG_MAX_BYTES, "the catalog", &text, &len, NULL, &e) < 0 ||
	    jig_catalog_parse(text, len, &cat, &e) < 0 || jig_catalog_compose(&cat, &facts, &installer, &e) < 0) {
		fprintf(stderr, "installer scope: %s\n", e.msg);
		abort();
	}
	free(text);
	close(cfd);
	jig_catalog_free(&cat);
	snprintf(p, sizeof(p), "%s/run/src", d);
	snprintf(run_dir, sizeof(run_dir), "%s/run", d);
	if ((srcfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static int once;
	if (!once++)
		init();
	const char *manifest;
	size_t mn;
	const char *rest;
	size_t rn;
	fuzz_split(d, n, &manifest, &mn, &rest, &rn);
	fuzz_split((const uint8_t *)rest, rn, &lock_text, &lock_len, &result_text, &result_len);
	if (!memchr(rest, 0, rn))
		result_text = NULL;
	unlinkat(srcfd, JIG_DEPS_LOCK, 0);
	unlinkat(srcfd, JIG_DEPS_MANIFEST, 0);
	fuzz_put("run/src/package.json", manifest, mn);
	struct jig_prepare_phase ph = {.have_sandbox = true, .init_fd = -1, .allow_resolution = true,
				       .sandbox = {.ops = &stub_ops}};
	snprintf(ph.registry, sizeof(ph.registry), "%s", JIG_NPM_DEFAULT_REGISTRY);
	clock_gettime(CLOCK_MONOTONIC, &ph.deadline);
	ph.deadline.tv_sec += 3600;
	struct jig_prepare_one o = {.f = &flow, .ph = &ph, .t = installer, .runfd = -1};
	snprintf(o.run_dir, sizeof(o.run_dir), "%s", run_dir);
	struct jig_error e = {0};
	/* jig_prepare_resolve() warns on stderr about the network each time: not here. */
	FILE *err = stderr;
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	stderr = null;
	int r = jig_prepare_resolve(&o, srcfd, &e);
	stderr = err;
	if (getenv("JIG_FUZZ_SHOW"))
		fprintf(stderr, "resolve: %d %s\n", r, e.msg);
	if (!memchr(e.msg, 0, sizeof(e.msg)))
		abort();
	if (!r) {
		/* What jig_prepare_resolve() wrote: JSON whose every tarball is "" (Bun's
		 * default registry: jig's loopback copy at install). */
		char *w = NULL;
		size_t wn;
		if (jig_read_file_at(srcfd, JIG_DEPS_LOCK, 64u << 20, "the lock", &w, &wn, NULL, &e) < 0)
			abort();
		json_t *lock = json_loadb(w, wn, 0, NULL), *ent;
		const char *k;
		if (!json_is_object(lock))
			abort();
		json_object_foreach(json_object_get(lock, "packages"), k, ent) {
			const char *url = json_string_value(json_array_get(ent, 1));
			if (json_string_value(json_array_get(ent, 0)) && url && url[0])
				abort();
		}
		json_decref(lock);
		free(w);
		struct jig_deps deps;
		if (jig_deps_check(srcfd, flow.name, &deps, &e) == 0)
			jig_deps_free(&deps);
	}
	return 0;
}
