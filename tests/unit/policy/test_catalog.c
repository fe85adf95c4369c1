/* The capability catalog (issue 13): strict parsing with the fragment
 * named in every refusal, composition on a deny-all base, conflicts, and
 * for every fragment of the shipped catalog the proof that its grants are
 * absent from a scope that does not select it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/catalog.h"
#include "policy/scope_argv.h"
#include "util/fileio.h"

static char snapdir[64];
static char *shipped; /* the catalog jig installs */

static void make_snapshot_dir(void)
{
	snprintf(snapdir, sizeof(snapdir), "/tmp/jig-catalog-test.XXXXXX");
	assert_non_null(mkdtemp(snapdir));
	char p[128];
	snprintf(p, sizeof(p), "%s/libexec", snapdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/libexec/runtime", snapdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/libexec/managed", snapdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/libexec/shim", snapdir); /* the session's git and ssh (session-broker) */
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/libexec/connect", snapdir); /* jig's ssh ProxyCommand (session-git) */
	mkdir(p, 0755);
	const char *files[] = {"libexec/bun", "libexec/jig-http-worker", "libexec/jig-acp-worker", "libexec/jig-pi-launcher",
			       "libexec/jig-prepare-worker", "libexec/managed/claude-code-managed-settings.json",
			       "libexec/managed/codex-requirements.toml"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", snapdir, files[i]);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
}

static int setup(void **state)
{
	(void)state;
	make_snapshot_dir();
	FILE *f = fopen(JIG_CATALOG_SOURCE, "r");
	assert_non_null(f);
	shipped = calloc(1, 1 << 20);
	size_t n = fread(shipped, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(n > 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", snapdir);
	assert_int_equal(system(cmd), 0);
	free(shipped);
	return 0;
}

static struct jig_scope_facts facts(const char *kind)
{
	return (struct jig_scope_facts){.kind = kind, .name = "t", .snapshot_dir = snapdir, .entry = "main.ts", .input = "in"};
}

/* A catalog with one fragment "f" (JSON text) and a kind "k" of frags. */
static int parse_one(const char *fragment, const char *kinds, struct jig_catalog *c, struct jig_error *e)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"format\":\"jig-catalog/1\",\"fragments\":{\"lim\":{\"limits\":{\"memory_bytes\":67108864,\"tasks\":16,"
		 "\"cpu_quota_us\":100000,\"wall_ms\":1000}},\"f\":%s},\"kinds\":%s}",
		 fragment, kinds ? kinds : "{\"k\":{\"fragments\":[\"lim\",\"f\"],\"argv\":[\"/x\"]}}");
	return jig_catalog_parse(buf, strlen(buf), c, e);
}

static void refused(const char *fragment, const char *kinds, const char *needle)
{
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_true(parse_one(fragment, kinds, &c, &e) < 0);
	if (!strstr(e.msg, needle))
		fail_msg("\"%s\" does not say \"%s\"", e.msg, needle);
}

static void shipped_catalog_composes(void **state)
{
	(void)state;
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(shipped, strlen(shipped), &c, &e), 0);
	struct jig_scope_template t;
	struct jig_scope_facts f = facts("flow");
	assert_int_equal(jig_catalog_compose(&c, &f, &t, &e), 0);
	assert_true(t.policy.has_slots);
	assert_int_equal(t.policy.network, JIG_NET_NONE);
	assert_string_equal(t.argv[2], "main.ts");
	assert_string_equal(t.hold, "/output");
	/* The same inputs give the same digest. */
	struct jig_scope_template t2;
	assert_int_equal(jig_catalog_compose(&c, &f, &t2, &e), 0);
	assert_string_equal(t.policy.sha256, t2.policy.sha256);
	jig_scope_template_free(&t2);
	/* A reviewed deadline under the ceiling is part of the digest. */
	f.wall_ms = 5000;
	assert_int_equal(jig_catalog_compose(&c, &f, &t2, &e), 0);
	assert_string_not_equal(t.policy.sha256, t2.policy.sha256);
	jig_scope_template_free(&t2);
	f.wall_ms = 86400001;
	assert_true(jig_catalog_compose(&c, &f, &t2, &e) < 0);
	assert_non_null(strstr(e.msg, "ceiling"));
	jig_scope_template_free(&t);
	struct jig_scope_facts w = facts("http-worker");
	assert_int_equal(jig_catalog_compose(&c, &w, &t, &e), 0);
	assert_int_equal(t.policy.network, JIG_NET_HOST);
	jig_scope_template_free(&t);
	jig_catalog_free(&c);
}

static void refusals_name_the_fragment(void **state)
{
	(void)state;
	refused("{\"binds\":[{\"source\":\"/tmp\",\"target\":\"/t\"}]}", NULL, "catalog fragment \"f\": binds[0].source \"/tmp\": too broad");
	refused("{\"binds\":[{\"source\":\"/\",\"target\":\"/t\"}]}", NULL, "catalog fragment \"f\"");
	refused("{\"binds\":[{\"source\":\"/home\",\"target\":\"/t\"}]}", NULL, "catalog fragment \"f\": binds[0].source \"/home\": too broad");
	refused("{\"env\":{\"GITHUB_TOKEN\":\"x\"}}", NULL, "catalog fragment \"f\": scope policy: env \"GITHUB_TOKEN\": credentials never enter");
	refused("{\"env\":{\"MY_API_KEY\":\"x\"}}", NULL, "catalog fragment \"f\"");
	refused("{\"binds\":[{\"source\":\"/usr/lib\",\"target\":\"/proc/x\"}]}", NULL, "catalog fragment \"f\"");
	refused("{\"grant_everything\":true}", NULL, "catalog fragment \"f\"");
	refused("{\"binds\":[{\"source\":\"@home/x\",\"target\":\"/t\"}]}", NULL, "catalog fragment \"f\": binds[0].source \"@home/x\"");
	refused("{\"descriptors\":[{\"source\":\"@run0\",\"target\":99}]}", NULL, "catalog fragment \"f\"");
	refused("{\"network\":\"loopback\"}", NULL, "catalog fragment \"f\"");
	refused("{}", "{\"k\":{\"fragments\":[\"lim\",\"nope\"],\"argv\":[\"/x\"]}}", "catalog kind \"k\": unknown fragment \"nope\"");
	refused("{}", "{\"k\":{\"fragments\":[\"f\",\"f\"],\"argv\":[\"/x\"]}}", "catalog kind \"k\": fragment \"f\" is listed twice");
	refused("{}", "{\"k\":{\"fragments\":[\"f\"],\"argv\":[\"x\"]}}", "catalog kind \"k\": argv[0]");
	refused("{}", "{\"k\":{\"fragments\":[\"f\"],\"argv\":[\"/x\"],\"extra\":1}}", "catalog kind \"k\"");
}

static void malformed_catalogs(void **state)
{
	(void)state;
	const char *bad[] = {"", "{", "[]", "{\"format\":\"jig-catalog/2\",\"fragments\":{},\"kinds\":{}}",
			     "{\"format\":\"jig-catalog/1\",\"fragments\":{}}",
			     "{\"format\":\"jig-catalog/1\",\"fragments\":{},\"kinds\":{},\"more\":{}}",
			     "{\"format\":\"jig-catalog/1\",\"format\":\"jig-catalog/1\",\"fragments\":{},\"kinds\":{}}",
			     "{\"format\":\"jig-catalog/1\",\"fragments\":[],\"kinds\":{}}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jig_catalog c;
		struct jig_error e = {0};
		assert_true(jig_catalog_parse(bad[i], strlen(bad[i]), &c, &e) < 0);
		assert_non_null(strstr(e.msg, "catalog"));
		assert_int_equal(e.code, JIG_E_INTEGRITY);
	}
}

static void compose_refusals(void **state)
{
	(void)state;
	struct jig_catalog c;
	struct jig_error e = {0};
	struct jig_scope_template t;
	struct jig_scope_facts f = facts("k");
	/* The same target from two fragments. */
	const char *two = "{\"format\":\"jig-catalog/1\",\"fragments\":{"
			  "\"a\":{\"tmpfs\":[{\"target\":\"/s\",\"size_bytes\":4096}],\"limits\":{\"memory_bytes\":67108864,\"tasks\":16,\"cpu_quota_us\":100000,\"wall_ms\":1000}},"
			  "\"b\":{\"binds\":[{\"source\":\"/usr/lib\",\"target\":\"/s\"}],\"network\":\"host\"},"
			  "\"c\":{\"network\":\"none\"},\"h\":{\"network\":\"host\"},\"d\":{\"env\":{\"X\":\"1\"}},\"e\":{\"env\":{\"X\":\"2\"}}},"
			  "\"kinds\":{\"k\":{\"fragments\":[\"a\",\"b\"],\"argv\":[\"/x\"]},"
			  "\"net\":{\"fragments\":[\"a\",\"c\",\"h\"],\"argv\":[\"/x\"]},"
			  "\"env\":{\"fragments\":[\"a\",\"d\",\"e\"],\"argv\":[\"/x\"]},"
			  "\"nolimits\":{\"fragments\":[\"c\"],\"argv\":[\"/x\"]}}}";
	assert_int_equal(jig_catalog_parse(two, strlen(two), &c, &e), 0);
	assert_true(jig_catalog_compose(&c, &f, &t, &e) < 0);
	assert_non_null(strstr(e.msg, "target /s is granted by fragment \"a\" and again by \"b\""));
	f.kind = "net";
	assert_true(jig_catalog_compose(&c, &f, &t, &e) < 0);
	assert_non_null(strstr(e.msg, "network is granted by fragment \"c\" and again by \"h\""));
	f.kind = "env";
	assert_true(jig_catalog_compose(&c, &f, &t, &e) < 0);
	assert_non_null(strstr(e.msg, "environment variable X is granted by fragment \"d\" and again by \"e\""));
	f.kind = "nolimits";
	assert_true(jig_catalog_compose(&c, &f, &t, &e) < 0);
	assert_non_null(strstr(e.msg, "no fragment sets its limits"));
	f.kind = "agent";
	assert_true(jig_catalog_compose(&c, &f, &t, &e) < 0);
	assert_non_null(strstr(e.msg, "no scope kind \"agent\""));
	jig_catalog_free(&c);
}

/* Does the composed policy hold any grant of fragment fr (the same
 * target with the same source, size, link or value)? */
static bool holds_any(json_t *doc, json_t *fr)
{
	size_t i, k;
	json_t *v, *m;
	static const char *const lists[] = {"binds", "tmpfs", "symlinks", "descriptors"};
	for (int l = 0; l < 4; l++)
		json_array_foreach(json_object_get(fr, lists[l]), i, v)
			json_array_foreach(json_object_get(doc, lists[l]), k, m) {
				json_t *have = json_deep_copy(m);
				json_object_del(have, "resolve");
				json_object_del(have, "optional");
				json_t *want = json_deep_copy(v);
				json_object_del(want, "resolve");
				json_object_del(want, "optional");
				bool same = json_equal(want, have);
				json_decref(want);
				json_decref(have);
				if (same)
					return true;
			}
	const char *name;
	json_object_foreach(json_object_get(fr, "env"), name, v)
		if (json_equal(json_object_get(json_object_get(doc, "env"), name), v))
			return true;
	const char *net = json_string_value(json_object_get(fr, "network"));
	const char *has = json_string_value(json_object_get(doc, "network"));
	if (net && has && strcmp(net, "host") == 0 && strcmp(has, "host") == 0)
		return true;
	return false;
}

/* For every fragment of the shipped catalog: a kind made of every other
 * fragment (and a stand-in limit envelope) holds none of its grants. */
static void each_fragment_absent_unless_selected(void **state)
{
	(void)state;
	struct jig_error e = {0};
	json_error_t je;
	json_t *doc = json_loads(shipped, 0, &je);
	assert_non_null(doc);
	json_t *frs = json_object_get(doc, "fragments");
	const char *name;
	json_t *fr;
	int checked = 0;
	json_object_foreach(frs, name, fr) {
		json_t *cat = json_deep_copy(doc);
		json_t *kind = json_pack("{s:[],s:[s]}", "fragments", "argv", "/x");
		const char *other;
		json_t *o;
		bool net_set = false;
		json_object_foreach(frs, other, o) {
			/* Skip the fragment under test, and any that collides with
			 * another already chosen (targets, network, limits). */
			/* (A fragment that grants the very same thing as the one
			 * under test would hide its absence: it is left out too.) */
			if (strcmp(other, name) == 0 || json_object_get(o, "limits") || json_object_get(o, "cwd") ||
			    (json_object_get(o, "network") && net_set) || holds_any(o, fr))
				continue;
			bool clash = false;
			size_t k;
			json_t *c;
			json_array_foreach(json_object_get(kind, "fragments"), k, c) {
				json_t *x = json_object_get(frs, json_string_value(c));
				static const char *const l3[] = {"binds", "tmpfs", "symlinks", "descriptors"};
				for (int l = 0; l < 4; l++) {
					size_t a, b;
					json_t *u, *w;
					json_array_foreach(json_object_get(o, l3[l]), a, u)
						json_array_foreach(json_object_get(x, l3[l]), b, w)
							clash |= json_equal(json_object_get(u, "target"), json_object_get(w, "target"));
				}
				const char *var;
				json_t *val;
				json_object_foreach(json_object_get(o, "env"), var, val)
					clash |= json_object_get(json_object_get(x, "env"), var) != NULL;
			}
			if (clash)
				continue;
			net_set |= json_object_get(o, "network") != NULL;
			json_array_append_new(json_object_get(kind, "fragments"), json_string(other));
		}
		json_object_set_new(json_object_get(cat, "fragments"), "stand-in-limits",
				    json_pack("{s:{s:I,s:I,s:I,s:I}}", "limits", "memory_bytes", (json_int_t)(64 << 20), "tasks",
					      (json_int_t)16, "cpu_quota_us", (json_int_t)100000, "wall_ms", (json_int_t)1000));
		json_array_append_new(json_object_get(kind, "fragments"), json_string("stand-in-limits"));
		json_object_set_new(json_object_get(cat, "kinds"), "without", kind);
		char *txt = json_dumps(cat, JSON_COMPACT);
		json_decref(cat);
		struct jig_catalog c;
		assert_int_equal(jig_catalog_parse(txt, strlen(txt), &c, &e), 0);
		free(txt);
		struct jig_scope_template t;
		struct jig_scope_facts f = facts("without");
		if (jig_catalog_compose(&c, &f, &t, &e) < 0)
			fail_msg("composing without %s: %s", name, e.msg);
		if (holds_any(t.policy.doc, fr))
			fail_msg("a scope without fragment %s still has one of its grants", name);
		jig_scope_template_free(&t);
		jig_catalog_free(&c);
		checked++;
	}
	assert_true(checked >= 10);
	json_decref(doc);
}

static void resolve_fills_slots_and_checks(void **state)
{
	(void)state;
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(shipped, strlen(shipped), &c, &e), 0);
	struct jig_scope_template t;
	struct jig_scope_facts f = facts("flow");
	assert_int_equal(jig_catalog_compose(&c, &f, &t, &e), 0);
	char run[128];
	snprintf(run, sizeof(run), "%s/run", snapdir);
	mkdir(run, 0700);
	char p[160];
	snprintf(p, sizeof(p), "%s/package", run);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/input", run);
	mkdir(p, 0700);
	const struct jig_scope_slot slots[] = {{"null", 0}, {"run0", 1}};
	struct jig_scope_run r = {.run_dir = run, .slots = slots, .n_slots = 2, .wall_ms = 30000};
	struct jig_scope_policy out;
	assert_int_equal(jig_scope_policy_resolve(&t.policy, &r, NULL, &out, &e), 0);
	assert_false(out.has_slots);
	assert_int_equal(out.limits.wall_ms, 30000);
	jig_scope_policy_free(&out);
	/* A missing slot value, a deadline past the ceiling: refused. */
	r.n_slots = 1;
	assert_true(jig_scope_policy_resolve(&t.policy, &r, NULL, &out, &e) < 0);
	assert_non_null(strstr(e.msg, "@run0 has no value"));
	r.n_slots = 2;
	r.wall_ms = 86400001;
	assert_true(jig_scope_policy_resolve(&t.policy, &r, NULL, &out, &e) < 0);
	/* A template never runs as it is. */
	struct jig_scope sc;
	struct jig_scope_launch l = {.init_fd = -1};
	assert_true(jig_scope_describe(&t.policy, &l, &sc, &e) < 0);
	jig_scope_template_free(&t);
	jig_catalog_free(&c);
}

/* Issue 33 (R-S05, decision 115): with output_ready, the held directory
 * is an output with hidden stages of the policy's tmpfs size there, and
 * nothing is held by the launcher; without a tmpfs there it is refused. */
static void describe_output_with_stages(void **state)
{
	(void)state;
	struct jig_scope_tmpfs tm[] = {{"/scratch", 1 << 20}, {"/output", 16 << 20}};
	struct jig_scope_policy p = {.name = "flow-x", .tmpfs = tm, .n_tmpfs = 2, .cwd = "/"};
	struct jig_scope sc;
	struct jig_error e = {0};
	const char *argv[] = {"/bin/true", NULL};
	struct jig_scope_launch l = {.init_fd = -1, .argv = argv, .hold_path = "/output"};
	assert_int_equal(jig_scope_describe(&p, &l, &sc, &e), 0);
	assert_string_equal(sc.hold_path, "/output");
	assert_null(sc.output_path);
	l.output_ready = (void (*)(void *, int))1; /* only compared with NULL */
	l.output_ctx = &p;
	assert_int_equal(jig_scope_describe(&p, &l, &sc, &e), 0);
	assert_null(sc.hold_path);
	assert_string_equal(sc.output_path, "/output");
	assert_int_equal(sc.output_bytes, 16 << 20);
	assert_ptr_equal(sc.output_ctx, &p);
	l.hold_path = "/elsewhere";
	assert_true(jig_scope_describe(&p, &l, &sc, &e) < 0);
	assert_non_null(strstr(e.msg, "no tmpfs at /elsewhere for its output"));
}

/* Issue 32 (R-P12): a call's argv is its template's, whole, then the
 * call's values; what does not fit is refused, never cut. */
static void launch_argv_keeps_the_template(void **state)
{
	(void)state;
	char *targv[] = {"/.jig/bun", "--smol", NULL};
	struct jig_scope_template t = {.argv = targv};
	const char *call[] = {"/command/m.js", "a"};
	const char *out[5];
	struct jig_error e = {0};
	assert_int_equal(jig_scope_argv(&t, call, 2, out, 5, &e), 0);
	assert_string_equal(out[0], "/.jig/bun");
	assert_string_equal(out[1], "--smol");
	assert_string_equal(out[2], "/command/m.js");
	assert_string_equal(out[3], "a");
	assert_null(out[4]);
	assert_true(jig_scope_argv(&t, call, 2, out, 4, &e) < 0);
	assert_non_null(strstr(e.msg, "over 3 entries"));
	assert_true(jig_scope_argv(&t, call, 0, out, 2, &e) < 0);
	assert_true(jig_scope_argv(&t, call, 0, out, 1, &e) < 0);
}

/* One scope-name mangler (issue 32): the Plan's names keep 24 bytes of the
 * Flow or route name, the installer's 22, '_' as '-'; at most 32 characters
 * with the longest prefix of each ("command-", "installer-"). */
static void scope_names_byte_for_byte(void **state)
{
	(void)state;
	const char *n = "a_very_long_flow_name_over_32_bytes";
	char out[40];
	jig_scope_name(out, sizeof(out), "flow-", n, JIG_SCOPE_NAME_KEEP_PLAN);
	assert_string_equal(out, "flow-a-very-long-flow-name-ov");
	jig_scope_name(out, sizeof(out), "command-", n, JIG_SCOPE_NAME_KEEP_PLAN);
	assert_string_equal(out, "command-a-very-long-flow-name-ov");
	assert_int_equal(strlen(out), 32);
	jig_scope_name(out, sizeof(out), "installer-", n, JIG_SCOPE_NAME_KEEP_INSTALLER);
	assert_string_equal(out, "installer-a-very-long-flow-name-");
	assert_int_equal(strlen(out), 32);
	jig_scope_name(out, sizeof(out), "http-", "get_x", JIG_SCOPE_NAME_KEEP_PLAN);
	assert_string_equal(out, "http-get-x");
}

/* Writable binds (issue 34) are never a catalog grant: a fragment cannot
 * carry one, and no kind of the shipped catalog composes one (only the
 * session kind's per-launch additions, outside the catalog, do). */
static void no_kind_grants_a_writable_bind(void **state)
{
	(void)state;
	refused("{\"binds\":[{\"source\":\"/usr/lib\",\"target\":\"/x\",\"write\":true}]}", NULL, "write");
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(shipped, strlen(shipped), &c, &e), 0);
	const char *kind;
	json_t *k;
	int composed = 0;
	json_object_foreach(json_object_get(c.doc, "kinds"), kind, k) {
		struct jig_scope_template t;
		struct jig_scope_facts f = facts(kind);
		if (jig_catalog_compose(&c, &f, &t, &e) < 0)
			fail_msg("kind %s does not compose: %s", kind, e.msg);
		if (t.policy.n_rw_binds)
			fail_msg("kind %s composes a writable bind", kind);
		size_t i;
		json_t *b;
		json_array_foreach(json_object_get(t.policy.doc, "binds"), i, b)
			assert_null(json_object_get(b, "write"));
		jig_scope_template_free(&t);
		composed++;
	}
	assert_int_equal(composed, json_object_size(json_object_get(c.doc, "kinds")));
	assert_true(composed >= 10);
	jig_catalog_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_catalog_composes),	  cmocka_unit_test(refusals_name_the_fragment),
		cmocka_unit_test(malformed_catalogs),		  cmocka_unit_test(compose_refusals),
		cmocka_unit_test(each_fragment_absent_unless_selected), cmocka_unit_test(resolve_fills_slots_and_checks),
		cmocka_unit_test(launch_argv_keeps_the_template),	  cmocka_unit_test(describe_output_with_stages),
		cmocka_unit_test(scope_names_byte_for_byte), cmocka_unit_test(no_kind_grants_a_writable_bind),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
