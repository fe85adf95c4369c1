/* Run/0 with the real effects behind it (issue 31): the bytes a Flow
 * writes, read by the coordinator's Run/0 reader and handed to the same
 * effect functions `jig run` uses (jig_http_effect, jig_agent_effect and
 * its API-backed turn, jig_command_effect, jig_checkpoint_effect), for a
 * Flow with reviewed routes of every kind, composed from the real catalog
 * (policy/catalog.json). Every check of a Flow's request runs: unknown
 * fields, the grant, Schema/0, the caps, the prompt, the command's files,
 * the retained-session reference, the operator's provider and its
 * identity. Nothing is launched: the sandbox is a stub that checks the
 * request jig would hand a worker (a JSON object of the worker's format)
 * and answers as a worker that ran; so the deliveries run too. The Flow
 * must never receive the provider's credential. */
#include <dirent.h>
#include <sys/socket.h>

#include <jig/acp.h>
#include <jig/http.h>
#include <jig/module.h>

#include "effects/agents.h"
#include "effects/checkpoint.h"
#include "effects/command.h"
#include "effects/http.h"
#include "flow/plan.h"
#include "flow/project.h"
#include "fuzz.h"
#include "policy/catalog.h"
#include "util/limits.h"
#include "fuzz_run0.h"
#include "util/fileio.h"

#define CREDENTIAL "cred-7f3a9c51e2d04b"

static const char jig_json[] = "{\"format\":\"jig-project/1\",\"flows\":{\"f\":\"f\"}}";
static const char flow_json[] =
	"{\"format\":\"jig-flow/1\",\"name\":\"f\",\"entry\":\"main.ts\",\"inputs\":[\"steps\",\"data\"],\"outputs\":[\"o.txt\"],"
	"\"checkpoint\":true,"
	"\"http\":{\"get\":{\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/ok\"},"
	"\"post\":{\"method\":\"POST\",\"url\":\"http://127.0.0.1:9/ok\",\"max_request_bytes\":256,"
	"\"body_schema\":{\"type\":\"object\",\"required\":[\"n\"],\"additionalProperties\":false,"
	"\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},\"s\":{\"type\":\"string\",\"maxLength\":8}}}},"
	"\"any\":{\"method\":\"PUT\",\"url\":\"https://api.example.com/v1/x?y=z\",\"timeout_ms\":1000},"
	"\"llm\":{\"method\":\"POST\",\"url\":\"http://127.0.0.1:9/v1/chat/completions\"},"
	"\"msgs\":{\"method\":\"POST\",\"url\":\"http://127.0.0.1:9/v1/messages\"}},"
	"\"agents\":{\"ask\":{\"provider\":\"fake\",\"model\":\"m1\",\"retain_sessions\":true,\"max_prompt_bytes\":4096,"
	"\"max_answer_bytes\":1024},"
	"\"chat\":{\"api\":\"openai-chat\",\"http\":\"llm\",\"model\":\"c1\",\"max_answer_bytes\":4096},"
	"\"claude\":{\"api\":\"anthropic-messages\",\"http\":\"msgs\",\"model\":\"c2\"}},"
	"\"commands\":{\"run\":{\"timeout_ms\":30000},\"tests\":{\"input\":\"data\",\"timeout_ms\":3000},"
	"\"capt\":{\"timeout_ms\":30000,\"capture\":true}}}";
static const char agents_json[] =
	"{\"format\":\"jig-agents/1\",\"providers\":{\"fake\":{\"client\":\"codex\",\"command\":[\"/usr/bin/true\",\"--x\"],"
	"\"trees\":[\"/usr/bin/true\"],\"version\":\"1.0.0\",\"model_env\":\"M\",\"env\":{\"A\":\"b\"},"
	"\"credential\":{\"env\":\"K\",\"value\":\"" CREDENTIAL "\"}}}}";

static struct {
	struct jig_project p;
	const struct jig_flow *f;
	struct jig_plan plan;
	struct jig_sandbox sb;
	struct jig_http_effect_env http;
	struct jig_agent_effect_env agent;
	struct jig_command_effect_env cmd;
	struct jig_checkpoint_env ck;
	int rundir, statefd;
	char run_dir[256];
} G;

static void put(const char *rel, const char *text, mode_t mode)
{
	fuzz_put(rel, text, strlen(text));
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", fuzz_dir(), rel);
	chmod(p, mode);
}

static int fd_is(int fd, const char *memfd)
{
	char l[64], t[256];
	snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(l, t, sizeof(t) - 1);
	if (n < 0)
		return 0;
	t[n] = '\0';
	return strncmp(t, "/memfd:", 7) == 0 && strncmp(t + 7, memfd, strlen(memfd)) == 0 && t[7 + strlen(memfd)] == ' ';
}

static void write_str(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		abort();
}

/* The sandbox: launches nothing. A worker's request must be a JSON object
 * of a worker's format; the answer is a worker's that ran and exited 0. */
static int stub_launch(void *state, const struct jig_scope *sc, struct jig_scope_result *res)
{
	(void)state;
	int req = -1, out = -1;
	for (uint32_t i = 0; i < sc->n_fds; i++) {
		if (fd_is(sc->fds[i].source, "jig-worker-request"))
			req = sc->fds[i].source;
		else if (fd_is(sc->fds[i].source, "jig-worker-result"))
			out = sc->fds[i].source;
		else if (sc->fds[i].target == 1 || sc->fds[i].target == 2)
			write_str(sc->fds[i].source, sc->fds[i].target == 1 ? "out\n" : "err\033[2J\n");
	}
	if (req >= 0) {
		struct stat st;
		char *buf = fstat(req, &st) == 0 ? calloc(1, (size_t)st.st_size + 1) : NULL;
		if (!buf || pread(req, buf, (size_t)st.st_size, 0) != st.st_size)
			abort();
		json_t *r = json_loadb(buf, (size_t)st.st_size, 0, NULL);
		const char *format = json_string_value(json_object_get(r, "format"));
		if (!json_is_object(r) || !format || out < 0)
			abort(); /* jig handed a worker a malformed request */
		if (strcmp(format, JIG_HTTP_REQUEST_FORMAT) == 0) {
			const char *body = json_string_value(json_object_get(r, "body"));
			/* An API-backed turn's body is the provider's answer shape. */
			write_str(out, body && strstr(body, "\"messages\"")
					       ? "{\"format\":\"jig-http-result/1\",\"outcome\":\"response\",\"status\":200,\"headers\":{},"
						 "\"body_base64\":\"eyJjaG9pY2VzIjpbeyJtZXNzYWdlIjp7ImNvbnRlbnQiOiJvayJ9fV0sImNvbnRlbnQiOlt7InR5cGUiOiJ0ZXh0IiwidGV4dCI6Im9rIn1dfQ==\","
						 "\"request_bytes\":1,\"response_bytes\":1,\"header_bytes\":1,\"connect_ms\":0,\"total_ms\":1}"
					       : "{\"format\":\"jig-http-result/1\",\"outcome\":\"response\",\"status\":200,"
						 "\"headers\":{\"content-type\":\"text/plain\"},\"body_base64\":\"aGk=\",\"request_bytes\":1,"
						 "\"response_bytes\":2,\"header_bytes\":1,\"connect_ms\":0,\"total_ms\":1}");
		} else if (strcmp(format, JIG_ACP_REQUEST_FORMAT) == 0) {
			/* A prompt asking for it gets an answer holding the
			 * credential: it must be withheld. */
			const char *t = strstr(buf, "ANSLEAK") ? "the key is " CREDENTIAL : "ok";
			json_t *a = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:i,s:s}}", "format", JIG_ACP_RESULT_FORMAT,
					      "outcome", "answer", "text", t, "stop_reason", "end_turn", "agent", "name", "a",
					      "version", "1.0.0", "exit", "how", "exited", "status", 0, "forced", "none");
			if (json_object_get(r, "history"))
				json_object_set_new(a, "history", json_pack("{s:s,s:s,s:s}", "session_id", "s1", "path",
									   "2026/12/05/rollout-2026-12-05T00-00-00-s1.jsonl", "rollout",
									   strstr(buf, "HISTLEAK") ? CREDENTIAL "\n" : "{}\n"));
			char *s = json_dumps(a, JSON_COMPACT);
			write_str(out, s);
			free(s);
			json_decref(a);
		} else {
			abort();
		}
		json_decref(r);
		free(buf);
	}
	res->outcome = JIG_SCOPE_EXITED;
	res->exit_status = 0;
	res->cleanup_confirmed = 1;
	res->launcher_reported = 1;
	res->held_fd = -1;
	return JIG_MOD_OK;
}
static const struct jig_sandbox_ops stub_ops = {.struct_size = sizeof(stub_ops), .launch = stub_launch};

static void http_fx(void *ctx, json_t *op, json_t **reply, json_t **ev, int *intr)
{
	(void)ctx;
	jig_http_effect(&G.http, G.f, op, reply, ev, intr);
}
static void agent_fx(void *ctx, json_t *op, json_t **reply, json_t **ev, int *intr)
{
	(void)ctx;
	jig_agent_effect(&G.agent, G.f, op, reply, ev, intr);
}
static void command_fx(void *ctx, json_t *op, json_t **reply, json_t **ev, int *intr)
{
	(void)ctx;
	jig_command_effect(&G.cmd, G.f, op, reply, ev, intr);
}
static void checkpoint_fx(void *ctx, json_t *op, json_t **reply, json_t **ev, int *intr)
{
	(void)ctx;
	*intr = 0;
	jig_checkpoint_effect(&G.ck, op, reply, ev);
}

static struct jig_plan_scope *scope(const char *route)
{
	struct jig_plan_scope *s = &G.plan.scopes[G.plan.n_scopes++];
	s->flow = G.f->name;
	s->route = route;
	return s;
}

static void init(void)
{
	const char *d = fuzz_dir();
	char p[512];
	static const char *const dirs[] = {"p", "p/f", "p/.jig", "cfg", "cfg/jig", "run", "run/input", "snap", "snap/libexec",
					   "snap/libexec/managed", "snap/libexec/runtime", NULL};
	/* A snapshot's files the catalog binds (empty: nothing runs). */
	static const char *const files[] = {"bun", "jig-acp-worker", "jig-http-worker", "jig-pi-launcher", "jig-prepare-worker",
					    "managed/claude-code-managed-settings.json", "managed/codex-requirements.toml", NULL};
	for (size_t i = 0; dirs[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, dirs[i]);
		if (mkdir(p, 0700) < 0)
			abort();
	}
	for (size_t i = 0; files[i]; i++) {
		snprintf(p, sizeof(p), "snap/libexec/%s", files[i]);
		put(p, "", 0700);
	}
	put("p/jig.json", jig_json, 0600);
	put("p/f/flow.json", flow_json, 0600);
	put("p/f/main.ts", "export {};\n", 0600);
	put("cfg/jig/agents.json", agents_json, 0600);
	put("run/input/data", "data\n", 0600);
	snprintf(p, sizeof(p), "%s/cfg", d);
	setenv("XDG_CONFIG_HOME", p, 1);
	struct jig_error e = {0};
	snprintf(p, sizeof(p), "%s/p", d);
	if (jig_project_open(p, &G.p, &e) < 0 || !(G.f = jig_project_flow(&G.p, "f"))) {
		fprintf(stderr, "project: %s\n", e.msg);
		abort();
	}
	char *cat_text = NULL;
	size_t cat_len;
	struct jig_catalog cat;
	int cfd = open(JIG_SOURCE_DIR "/policy/catalog.json", O_RDONLY | O_CLOEXEC);
	if (cfd < 0 || jig_read_fd(cfd, JIG_CATALOG_MAX_BYTES, "the catalog", &cat_text, &cat_len, NULL, &e) < 0 ||
	    jig_catalog_parse(cat_text, cat_len, &cat, &e) < 0) {
		fprintf(stderr, "catalog: %s\n", e.msg);
		abort();
	}
	free(cat_text);
	close(cfd);
	char snapdir[512];
	snprintf(snapdir, sizeof(snapdir), "%s/snap", d);
	struct jig_snapshot snap = {.dirfd = -1, .dirpath = snapdir};
	G.plan.scopes = calloc(32, sizeof(*G.plan.scopes));
	json_t *agents = json_array();
	int r = 0;
	for (size_t i = 0; !r && i < G.f->n_http; i++)
		r = jig_plan_compose_http(&cat, &snap, &G.f->http[i], &scope(G.f->http[i].route)->t, &e);
	for (size_t i = 0; !r && i < G.f->n_commands; i++)
		r = jig_plan_compose_command(&cat, &snap, &G.f->commands[i], &scope(G.f->commands[i].route)->t, &e);
	for (size_t i = 0; !r && i < G.f->n_agents; i++) {
		const struct jig_agent_grant *g = &G.f->agents[i];
		if (g->api) {
			json_array_append_new(agents, json_pack("{s:s}", "route", g->route));
			continue;
		}
		struct jig_agent_provider prov;
		json_t *id = NULL;
		if (!(r = jig_agent_provider_get(g->provider, false, &prov, &e)) && !(r = jig_agent_identity(&prov, g->model, &id, &e)))
			r = jig_plan_compose_agent(&cat, &snap, g, &prov, &scope(g->route)->t, &e);
		jig_agent_provider_free(&prov);
		json_array_append_new(agents, json_pack("{s:s,s:o}", "route", g->route, "identity", id ? id : json_object()));
	}
	if (r) {
		fprintf(stderr, "compose: %s\n", e.msg);
		abort();
	}
	jig_catalog_free(&cat);
	G.plan.doc = json_pack("{s:[{s:s,s:o}]}", "flows", "name", G.f->name, "agents", agents);
	G.sb.ops = &stub_ops;
	snprintf(G.run_dir, sizeof(G.run_dir), "%s/run", d);
	G.rundir = open(G.run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/p/.jig", d);
	G.statefd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (G.rundir < 0 || G.statefd < 0)
		abort();
	G.http = (struct jig_http_effect_env){.sandbox = &G.sb, .plan = &G.plan, .init_fd = -1, .flow = G.f->name, .abort_fd = -1};
	G.agent = (struct jig_agent_effect_env){.http = &G.http, .sandbox = &G.sb, .plan = &G.plan, .init_fd = -1, .abort_fd = -1,
						.statefd = G.statefd};
	G.cmd = (struct jig_command_effect_env){.sandbox = &G.sb, .plan = &G.plan, .init_fd = -1, .abort_fd = -1,
						.run_dir = G.run_dir, .rundir = G.rundir};
}

/* Each input starts from the same state: no retained session, no
 * checkpoint. */
static void reset(void)
{
	int fd = dup(G.statefd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	while (dir && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			jig_remove_tree(G.statefd, de->d_name);
	if (dir)
		closedir(dir);
	unlinkat(G.rundir, JIG_CHECKPOINT_FILE, 0);
	unlinkat(G.rundir, "checkpoint.next", 0);
	G.ck = (struct jig_checkpoint_env){.rundir = G.rundir};
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static int once;
	if (!once++)
		init();
	if (n > 2 * JIG_RUN0_MAX_LINE)
		return 0;
	reset();
	struct fuzz_run0 f;
	fuzz_run0_feed(&f, d, n, 4 << 20, http_fx, agent_fx, command_fx, checkpoint_fx);
	/* Every effect left an object of evidence, and no reply the Flow got
	 * holds the credential (the Flow's input cannot: it is not in it). */
	size_t i;
	json_t *ev;
	json_array_foreach(f.r.effects, i, ev)
		if (!json_is_object(ev))
			abort();
	static char replies[8 << 20];
	size_t got = 0;
	ssize_t k;
	while (got < sizeof(replies) && (k = recv(f.sv[1], replies + got, sizeof(replies) - got, MSG_DONTWAIT)) > 0)
		got += (size_t)k;
	if (!memmem(d, n, CREDENTIAL, strlen(CREDENTIAL)) && memmem(replies, got, CREDENTIAL, strlen(CREDENTIAL)))
		abort();
	char *dump = json_dumps(f.r.effects, JSON_COMPACT);
	if (getenv("JIG_FUZZ_SHOW")) /* what the Flow got, and the evidence */
		fprintf(stderr, "%.*s\n%s\n%s\n", (int)got, replies, dump ? dump : "", f.r.error);
	if (dump && !memmem(d, n, CREDENTIAL, strlen(CREDENTIAL)) && strstr(dump, CREDENTIAL))
		abort(); /* nor does the record */
	free(dump);
	fuzz_run0_close(&f);
	return 0;
}
