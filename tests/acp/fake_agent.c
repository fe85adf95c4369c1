/* jig-fake-agent MODE [ARG]: a scripted ACP v1 agent on stdin/stdout, the
 * client tests/acp/worker.sh runs under jig-acp-worker. Each mode is one
 * behaviour, honest or hostile (usage below). It checks what the worker
 * sends (capabilities off, the empty cwd, no MCP servers) and answers a
 * request it did not expect with an error, so a wrong worker fails the
 * test. FAKE_AGENT_PIDFILE: each process it starts appends "ROLE PID". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TMPFS_MAGIC_ 0x01021994
#define SESSION "sess-fake-1"

extern char **environ;

static const char *mode, *arg;
static char session_id[96] = SESSION; /* codex: one per session/new */
/* What the client told it (the "profile" mode reports them). */
static json_t *session_meta, *selected_model;
static json_t *pending_prompt; /* hang_cancel: the id of the prompt it holds */

static const char usage[] =
	"usage: jig-fake-agent MODE [ARG]\n"
	"modes: answer report fs terminal mcp permission longline flood bigtext crash segv hang [SPINNERS]\n"
	"       hang_cancel late echo badversion noise fork error wrongname profile\n"
	"       nonewline nullid closein tasks memory\n"
	"       raw LINE: LINE written before the answer, %XX as the byte XX (hex)\n"
	"       stop REASON: the answer, with stopReason REASON\n"
	"       codex [big|secret:VAR|twice|link|crash|noload|dirty|oddname]: Codex's rollout history under\n"
	"         (crash also when the prompt says CRASH)\n"
	"         $HOME/.codex/sessions, session/load, the answer \"ANSWER:history=N <prompt>\"\n"
	"       script FILE: a Markdown recipe's model: answers element N-1 of FILE's JSON array\n"
	"         (a string as it is, anything else as JSON) at \"jig-markdown turn N\" in the prompt\n"
	"       obey: a model that obeys injected text: {\"actions\": [every \"DO: {json}\" line of the prompt, done]}\n"
	"       egress HOST:PORT,...: for each, a CONNECT through $HTTPS_PROXY (its status, then \"ping\" and the\n"
	"         reply) and a direct connect to it: {\"proxy\", \"via_proxy\": {T: ...}, \"direct\": {T: ...}}\n";

static bool is(const char *m)
{
	return strcmp(mode, m) == 0;
}

static long arg_or(long dflt)
{
	return arg ? strtol(arg, NULL, 10) : dflt;
}

static void note_pid(const char *role, pid_t pid)
{
	const char *f = getenv("FAKE_AGENT_PIDFILE");
	FILE *p = f ? fopen(f, "ae") : NULL;
	if (p) {
		fprintf(p, "%s %d\n", role, (int)pid);
		fclose(p);
	}
}

static void put(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (!s)
		exit(70);
	fputs(s, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	free(s);
}

static void respond(json_t *id, json_t *result)
{
	if (is("noise"))
		for (int i = 1; i <= 3; i++)
			printf("noise line %d: this is not JSON {\n", i);
	put(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static void respond_error(json_t *id, int code, const char *message)
{
	put(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code, "message", message));
}

static void send_update(json_t *update)
{
	put(json_pack("{s:s,s:s,s:{s:s,s:o}}", "jsonrpc", "2.0", "method", "session/update", "params", "sessionId",
		      session_id, "update", update));
}

static void chunk(const char *kind, const char *text, size_t n)
{
	send_update(json_pack("{s:s,s:{s:s,s:s%}}", "sessionUpdate", kind, "content", "type", "text", "text", text, n));
}

/* One message from the worker; NULL at EOF. Lines that are not JSON exit. */
static json_t *next(void)
{
	static char *line;
	static size_t cap;
	ssize_t n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		line = NULL;
		return NULL;
	}
	json_t *m = json_loadb(line, (size_t)n, 0, NULL);
	if (!json_is_object(m)) {
		fprintf(stderr, "fake-agent: the worker sent a line that is not a JSON object\n");
		exit(65);
	}
	return m;
}

/* Sends a request of its own and returns the worker's response to it. */
static json_t *ask(const char *method, json_t *params)
{
	put(json_pack("{s:s,s:i,s:s,s:o}", "jsonrpc", "2.0", "id", 100, "method", method, "params", params));
	for (json_t *m; (m = next());) {
		if (json_integer_value(json_object_get(m, "id")) == 100 && !json_object_get(m, "method"))
			return m;
		json_decref(m);
	}
	exit(66);
}

static json_t *sorted_strings(json_t *a)
{
	size_t n = json_array_size(a);
	const char **v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		v[i] = json_string_value(json_array_get(a, i));
	for (size_t i = 1; i < n; i++) /* insertion sort: small lists */
		for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			const char *x = v[j];
			v[j] = v[j - 1], v[j - 1] = x;
		}
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, json_string(v[i]));
	free(v);
	json_decref(a);
	return out;
}

/* Whether value is in /proc/PID/FILE: 1 yes, 0 no, -1 unreadable. */
static int proc_has(const char *pid, const char *file, const char *value)
{
	char path[64], buf[1 << 16];
	snprintf(path, sizeof(path), "/proc/%s/%s", pid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	int err = n < 0 ? errno : 0;
	close(fd);
	if (err && err != ESRCH)
		return -1;
	return memmem(buf, len, value, strlen(value)) ? 1 : 0;
}

/* Where the credential's value shows in another process it can read. */
static json_t *credential_report(void)
{
	const char *value = arg ? getenv(arg) : NULL;
	if (!value || !*value)
		return json_null();
	json_t *found = json_array(), *unreadable = json_array();
	DIR *d = opendir("/proc");
	char self[32];
	snprintf(self, sizeof(self), "%d", (int)getpid());
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, self) == 0)
			continue;
		for (const char *const *f = (const char *const[]){"cmdline", "environ", NULL}; *f; f++) {
			int r = proc_has(e->d_name, *f, value);
			if (r)
				json_array_append_new(r > 0 ? found : unreadable,
						      json_pack("{s:i,s:s}", "pid", atoi(e->d_name), "file", *f));
		}
	}
	if (d)
		closedir(d);
	return json_pack("{s:s,s:o,s:o}", "name", arg, "found_in", found, "unreadable", unreadable);
}

/* Its open descriptors, and where stderr goes. */
static json_t *fds_report(void)
{
	json_t *fds = json_array();
	char target[256] = "";
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) != dirfd(d))
			json_array_append_new(fds, json_integer(atoi(e->d_name)));
	if (d)
		closedir(d);
	ssize_t n = readlink("/proc/self/fd/2", target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	return json_pack("{s:o,s:s}", "open", fds, "stderr", target);
}

/* The managed restriction files the clients read, as the client sees them:
 * their text (or null when absent) and whether it can open them to write. */
static json_t *managed_report(void)
{
	static const char *const paths[] = {"/etc/claude-code/managed-settings.json", "/etc/codex/requirements.toml"};
	json_t *out = json_object();
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char buf[8192];
		size_t len = 0;
		ssize_t n = 0;
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		while (fd >= 0 && len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += (size_t)n;
		if (fd >= 0)
			close(fd);
		int w = open(paths[i], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (w >= 0)
			close(w);
		json_object_set_new(out, paths[i],
				    fd < 0 ? json_null()
					   : json_pack("{s:s%,s:b}", "text", buf, len, "writable", w >= 0));
	}
	return out;
}

static json_t *report(void)
{
	char cwd[4096];
	json_t *entries = json_array(), *env = json_array(), *probe = json_object();
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "?");
	DIR *d = opendir(".");
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			json_array_append_new(entries, json_string(e->d_name));
	if (d)
		closedir(d);
	for (char **e = environ; e && *e; e++)
		json_array_append_new(env, json_stringn(*e, strcspn(*e, "=")));
	const char *home = getenv("HOME");
	struct statfs sf;
	json_t *tmpfs = home && statfs(home, &sf) == 0 ? json_boolean(sf.f_type == TMPFS_MAGIC_) : json_null();
	char *paths = getenv("FAKE_AGENT_PROBE") ? strdup(getenv("FAKE_AGENT_PROBE")) : NULL, *save = NULL;
	struct stat st;
	for (char *p = paths ? strtok_r(paths, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
		json_object_set_new(probe, p, json_boolean(lstat(p, &st) == 0));
	free(paths);
	return json_pack("{s:s,s:o,s:o,s:s?,s:o,s:o,s:o,s:o,s:o,s:i,s:i,s:i,s:i,s:i}", "cwd", cwd, "managed", managed_report(), "entries",
			 sorted_strings(entries), "home", home, "home_tmpfs", tmpfs, "env", sorted_strings(env),
			 "fds", fds_report(),
			 "credential", credential_report(), "probe", probe, "uid", (int)getuid(), "pid", (int)getpid(),
			 "ppid", (int)getppid(), "pgid", (int)getpgrp(), "sid", (int)getsid(0));
}

/* "egress": TCP to host:port (numeric or a name), or -1 with errno. */
static int tcp_dial(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	if (getaddrinfo(host, port, &hints, &res) != 0) {
		errno = EHOSTUNREACH;
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		int err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	freeaddrinfo(res);
	return fd;
}

static json_t *via_proxy(const char *proxy, const char *target)
{
	char host[256], *colon;
	snprintf(host, sizeof(host), "%s", strncmp(proxy, "http://", 7) == 0 ? proxy + 7 : proxy);
	if (!(colon = strrchr(host, ':')))
		return json_string("no proxy");
	*colon = '\0';
	int fd = tcp_dial(host, colon + 1);
	if (fd < 0)
		return json_sprintf("proxy: %s", strerror(errno));
	char req[600], buf[1024];
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	(void)!write(fd, req, strlen(req));
	size_t n = 0;
	while (n + 1 < sizeof(buf) && read(fd, buf + n, 1) == 1 && !(++n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0))
		;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	json_t *out = json_pack("{s:s}", "status", buf[0] ? buf : "(closed)");
	if (strncmp(buf, "HTTP/1.1 200 ", 13) == 0) {
		(void)!write(fd, "ping", 4);
		shutdown(fd, SHUT_WR);
		ssize_t k;
		n = 0;
		while (n + 1 < sizeof(buf) && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += (size_t)k;
		buf[n] = '\0';
		json_object_set_new(out, "reply", json_string(buf));
	}
	close(fd);
	return out;
}

static json_t *egress_probe(void)
{
	const char *proxy = getenv("HTTPS_PROXY");
	json_t *via = json_object(), *direct = json_object();
	char *list = strdup(arg ? arg : ""), *save = NULL;
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		json_object_set_new(via, t, proxy ? via_proxy(proxy, t) : json_string("no proxy"));
		char host[256], *colon;
		snprintf(host, sizeof(host), "%s", t);
		if (!(colon = strrchr(host, ':')))
			continue;
		*colon = '\0';
		int fd = tcp_dial(host, colon + 1);
		json_object_set_new(direct, t, json_string(fd >= 0 ? "connected" : strerror(errno)));
		if (fd >= 0)
			close(fd);
	}
	free(list);
	return json_pack("{s:s?,s:o,s:o}", "proxy", proxy, "via_proxy", via, "direct", direct);
}

static void answer_text(json_t *text)
{
	char *s = json_dumps(text, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(text);
	chunk("agent_message_chunk", s, strlen(s));
	free(s);
}

static void spam(void)
{
	if (is("longline")) {
		long n = arg_or(2L << 20);
		char *b = malloc((size_t)n + 1);
		memset(b, 'a', (size_t)n);
		memcpy(b, "{\"garbage\":\"", n >= 12 ? 12 : (size_t)n); /* JSON-ish, never closed */
		b[n] = '\n';
		fwrite(b, 1, (size_t)n + 1, stdout);
		fflush(stdout);
		free(b);
	} else if (is("flood")) {
		for (long i = arg_or(100000); i > 0; i--)
			chunk("agent_thought_chunk", "thinking", 8);
	} else if (is("bigtext")) {
		static char b[65536];
		memset(b, 'x', sizeof(b));
		for (long left = arg_or(4L << 20); left > 0; left -= (long)sizeof(b))
			chunk("agent_message_chunk", b, left < (long)sizeof(b) ? (size_t)left : sizeof(b));
	}
}

static void fork_off(void)
{
	fflush(stdout);
	pid_t a = fork();
	if (a == 0) {
		sleep(1000);
		_exit(0);
	}
	pid_t b = fork();
	if (b == 0) {
		setsid(); /* out of the client's group: only a scope's cgroup holds it */
		sleep(1000);
		_exit(0);
	}
	note_pid("group_child", a);
	note_pid("escaped", b);
}

/* "tasks N": tries to start N sleeping children, reports how many it got.
 * "memory MIB": touches MIB MiB, then reports (if it is still alive). */
static json_t *envelope_probe(void)
{
	long n = arg_or(0), got = 0;
	if (is("tasks")) {
		fflush(stdout);
		for (long i = 0; i < n; i++) {
			pid_t c = fork();
			if (c == 0) {
				sleep(1000);
				_exit(0);
			}
			if (c < 0)
				break;
			got++;
		}
		return json_pack("{s:i,s:i}", "wanted", (int)n, "started", (int)got);
	}
	for (long i = 0; i < n; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			break;
		memset(p, 1, 1 << 20);
		got++;
	}
	return json_pack("{s:i,s:i}", "wanted_mib", (int)n, "touched_mib", (int)got);
}

/* --- codex: a rollout file per session, as Codex keeps its history --- */

#define ROLLOUT_DIR ".codex/sessions/2026/12/03"
static int history_lines = -1; /* lines of the loaded rollout; -1: a new session */

static bool arg_is(const char *a)
{
	return arg && strcmp(arg, a) == 0;
}

static void rollout_path(char *out, size_t cap, const char *id)
{
	/* oddname: a name jig could not restore (a space) */
	snprintf(out, cap, "%s/%s/rollout-2026-12-03%s00-00-00-%s.jsonl", getenv("HOME"), ROLLOUT_DIR, arg_is("oddname") ? " " : "T", id);
}

static void mkdirs(const char *path)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0700);
			*c = '/';
		}
}

static void rollout_append(const char *line)
{
	char path[4096];
	rollout_path(path, sizeof(path), session_id);
	mkdirs(path);
	FILE *f = fopen(path, "ae");
	if (!f)
		exit(67);
	fprintf(f, "%s\n", line);
	fclose(f);
}

static void codex_new_session(void)
{
	FILE *u = fopen("/proc/sys/kernel/random/uuid", "re");
	char uuid[64] = "0";
	if (u && fgets(uuid, sizeof(uuid), u))
		uuid[strcspn(uuid, "\n")] = '\0';
	if (u)
		fclose(u);
	snprintf(session_id, sizeof(session_id), "%s", uuid);
	rollout_append("{\"type\":\"session_meta\"}");
	char path[4096], other[4096];
	rollout_path(path, sizeof(path), session_id);
	if (arg_is("twice")) { /* a second file for the same session, another day */
		snprintf(other, sizeof(other), "%s/.codex/sessions/2026/12/04/rollout-2026-12-04T00-00-01-%s.jsonl", getenv("HOME"),
			 session_id);
		mkdirs(other);
		FILE *f = fopen(other, "we");
		if (f)
			fclose(f);
	}
	if (arg_is("link")) {
		unlink(path);
		if (symlink("/etc/passwd", path) < 0)
			exit(67);
	}
	if (arg_is("big")) { /* one line over 8 MiB in all */
		FILE *f = fopen(path, "ae");
		for (int i = 0; f && i < (8 << 10) + 1; i++)
			fprintf(f, "{\"pad\":\"%01013d\"}\n", 0);
		if (f)
			fclose(f);
	}
	if (arg && strncmp(arg, "secret:", 7) == 0) {
		const char *v = getenv(arg + 7);
		char line[512];
		snprintf(line, sizeof(line), "{\"note\":\"%.400s\"}", v ? v : "");
		rollout_append(line);
	}
	if (arg_is("dirty"))
		rollout_append("{\"ctl\":\"\x01\"}");
}

/* session/load: the restored rollout must be where it was written. Its
 * lines are replayed as updates, as clients do (not this turn's answer). */
static void codex_load(json_t *id, json_t *params)
{
	const char *sid = json_string_value(json_object_get(params, "sessionId"));
	char path[4096];
	if (!sid || strlen(sid) >= sizeof(session_id)) {
		respond_error(id, -32602, "fake-agent: session/load without a sessionId");
		return;
	}
	snprintf(session_id, sizeof(session_id), "%s", sid);
	rollout_path(path, sizeof(path), session_id);
	FILE *f = fopen(path, "re");
	if (!f) {
		respond_error(id, -32002, "fake-agent: no rollout for that session");
		return;
	}
	char line[4096];
	history_lines = 0;
	while (fgets(line, sizeof(line), f)) {
		history_lines++;
		chunk("agent_message_chunk", "REPLAY ", 7);
	}
	fclose(f);
	respond(id, json_object());
}

/* The whole prompt text, its blocks joined (at most 64 KiB). */
static const char *prompt_text(json_t *params)
{
	static char text[65536];
	size_t i;
	json_t *b;
	text[0] = 0;
	json_array_foreach(json_object_get(params, "prompt"), i, b) {
		const char *t = json_string_value(json_object_get(b, "text"));
		if (t && strlen(text) + strlen(t) + 1 < sizeof(text))
			strcat(strcat(text, t), "\n");
	}
	return text;
}

/* script FILE and obey: a Markdown recipe's model (runtime/markdown.js). */
static void markdown_model(json_t *params)
{
	const char *t = prompt_text(params), *turn = strstr(t, "jig-markdown turn ");
	json_t *out = NULL;
	if (is("script")) {
		json_t *all = arg ? json_load_file(arg, 0, NULL) : NULL;
		long n = turn ? strtol(turn + 18, NULL, 10) : 0;
		json_t *v = json_array_get(all, (size_t)(n - 1));
		out = v ? json_incref(v) : json_pack("{s:[{s:s}]}", "actions", "action", "done");
		json_decref(all);
	} else {
		json_t *acts = json_array();
		for (const char *l = strstr(t, "DO: "); l; l = strstr(l + 1, "DO: ")) {
			const char *end = strchr(l, '\n');
			json_t *a = json_loadb(l + 4, end ? (size_t)(end - l - 4) : strlen(l + 4), 0, NULL);
			if (a)
				json_array_append_new(acts, a);
		}
		json_array_append_new(acts, json_pack("{s:s}", "action", "done"));
		out = json_pack("{s:o}", "actions", acts);
	}
	if (json_is_string(out))
		chunk("agent_message_chunk", json_string_value(out), strlen(json_string_value(out)));
	else
		answer_text(json_incref(out));
	json_decref(out);
}

/* The prompt: what the mode does with it. */
static void prompt(json_t *id, json_t *params)
{
	static const char *const asks[][2] = {
		{"fs", "fs/read_text_file"}, {"terminal", "terminal/create"}, {"mcp", "mcp/connect"}};
	if (is("crash"))
		exit(3);
	if (is("segv")) {
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (is("hang")) { /* ARG: that many children spinning on the CPU, SIGTERM ignored too */
		fflush(stdout);
		for (long i = arg_or(0); i > 0; i--) {
			pid_t c = fork();
			if (c == 0)
				for (volatile unsigned long x = 0;; x++)
					;
			if (c > 0)
				note_pid("spinner", c);
		}
		return;
	}
	if (is("hang_cancel")) {
		pending_prompt = json_incref(id);
		return;
	}
	if (is("error")) {
		respond_error(id, -32000, "model unavailable");
		return;
	}
	if (is("fork"))
		fork_off();
	spam();
	for (size_t i = 0; i < 3; i++)
		if (is(asks[i][0]))
			answer_text(ask(asks[i][1], i == 0 ? json_pack("{s:s,s:s}", "sessionId", SESSION, "path", "/etc/passwd")
						: i == 1 ? json_pack("{s:s,s:s}", "sessionId", SESSION, "command", "/bin/sh")
							 : json_pack("{s:s}", "sessionId", SESSION)));
	if (is("permission"))
		answer_text(ask("session/request_permission",
				json_pack("{s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s},{s:s,s:s,s:s}]}", "sessionId", SESSION, "toolCall",
					  "toolCallId", "call-1", "title", "rm -rf /", "options", "optionId", "a", "name",
					  "Allow", "kind", "allow_once", "optionId", "r", "name", "Reject", "kind",
					  "reject_once")));
	if (is("report"))
		answer_text(report());
	if (is("egress"))
		answer_text(egress_probe());
	if (is("tasks") || is("memory"))
		answer_text(envelope_probe());
	if (is("profile"))
		answer_text(json_pack("{s:O?,s:O?}", "meta", session_meta, "model", selected_model));
	if (is("echo")) {
		const char *v = arg ? getenv(arg) : NULL;
		chunk("agent_message_chunk", "ANSWER:the credential is ", 25);
		chunk("agent_message_chunk", v ? v : "(unset)", strlen(v ? v : "(unset)"));
	}
	if (is("codex")) {
		char head[64];
		const char *t = json_string_value(json_object_get(json_array_get(json_object_get(params, "prompt"), 0), "text"));
		snprintf(head, sizeof(head), "ANSWER:history=%d ", history_lines);
		chunk("agent_message_chunk", head, strlen(head));
		chunk("agent_message_chunk", t ? t : "", t ? strlen(t) : 0);
		if (!arg_is("link"))
			rollout_append("{\"type\":\"turn\"}");
		if (arg_is("crash") || (t && strstr(t, "CRASH"))) {
			respond(id, json_pack("{s:s}", "stopReason", "end_turn"));
			exit(3);
		}
	}
	if (is("script") || is("obey"))
		markdown_model(params);
	if (is("raw")) { /* the test's line, exactly; %XX is a byte */
		for (const char *c = arg ? arg : ""; *c; c++) {
			unsigned byte;
			if (c[0] == '%' && sscanf(c + 1, "%2x", &byte) == 1)
				fputc((int)byte, stdout), c += 2;
			else
				fputc(*c, stdout);
		}
		fputc('\n', stdout);
		fflush(stdout);
	}
	if (is("answer") || is("noise") || is("late") || is("fork") || is("wrongname") || is("longline") ||
	    is("flood") || is("raw") || is("stop")) {
		static char text[65536];
		size_t i;
		json_t *b;
		json_array_foreach(json_object_get(params, "prompt"), i, b) {
			const char *t = json_string_value(json_object_get(b, "text"));
			if (t && strlen(text) + strlen(t) < sizeof(text))
				strcat(text, t);
		}
		chunk("agent_message_chunk", "ANSWER:", 7);
		chunk("agent_message_chunk", text, strlen(text));
	}
	if (is("nonewline")) { /* the response as the last bytes, no newline, then gone */
		char *r = json_dumps(json_pack("{s:s,s:O,s:{s:s}}", "jsonrpc", "2.0", "id", id, "result", "stopReason", "end_turn"),
				     JSON_COMPACT);
		fputs(r ? r : "", stdout);
		fflush(stdout);
		exit(0);
	}
	respond(id, json_pack("{s:s}", "stopReason", is("stop") && arg ? arg : "end_turn"));
	if (is("late"))
		for (int i = 0; i < 5; i++)
			chunk("agent_message_chunk", "late", 4);
}

static bool initialize_ok(json_t *p)
{
	json_t *caps = json_object_get(p, "clientCapabilities"), *fs = json_object_get(caps, "fs");
	return json_integer_value(json_object_get(p, "protocolVersion")) == 1 &&
	       json_is_false(json_object_get(fs, "readTextFile")) && json_is_false(json_object_get(fs, "writeTextFile")) &&
	       json_is_false(json_object_get(caps, "terminal"));
}

static bool session_ok(json_t *p)
{
	char cwd[4096];
	const char *want = json_string_value(json_object_get(p, "cwd"));
	json_t *mcp = json_object_get(p, "mcpServers");
	return getcwd(cwd, sizeof(cwd)) && want && strcmp(want, cwd) == 0 && json_is_array(mcp) &&
	       json_array_size(mcp) == 0;
}

static void initialize(json_t *id, json_t *params)
{
	const char *version = getenv("FAKE_AGENT_VERSION");
	if (!initialize_ok(params)) {
		respond_error(id, -32602, "fake-agent: the initialize params are not a capability-less ACP v1 client's");
		return;
	}
	respond(id, json_pack("{s:i,s:{s:b},s:[],s:{s:s,s:s}}", "protocolVersion", is("badversion") ? 2 : 1,
			      "agentCapabilities", "loadSession", is("codex") && !arg_is("noload"), "authMethods", "agentInfo", "name",
			      is("wrongname") ? "someone-else" : "fake-agent", "version", version ? version : "1.0.0"));
}

static void dispatch(json_t *m)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *id = json_object_get(m, "id"), *params = json_object_get(m, "params");
	if (!method)
		return;
	if (strcmp(method, "initialize") == 0) {
		initialize(id, params);
	} else if (strcmp(method, "session/new") == 0 && is("nullid")) {
		respond_error(json_null(), -32700, "Parse error");
	} else if (strcmp(method, "session/new") == 0 && is("closein")) {
		fclose(stdin); /* and waits: the worker must not */
		pause();
	} else if (strcmp(method, "session/new") == 0) {
		if (session_ok(params)) {
			session_meta = json_incref(json_object_get(params, "_meta"));
			if (is("codex"))
				codex_new_session();
			respond(id, json_pack("{s:s}", "sessionId", session_id));
		}
		else
			respond_error(id, -32602, "fake-agent: session/new has another cwd or MCP servers");
	} else if (strcmp(method, "authenticate") == 0 && is("codex") && id) {
		respond(id, json_object()); /* the codex profile's openai-api-key method */
	} else if (strcmp(method, "session/load") == 0 && is("codex") && !arg_is("noload")) {
		if (session_ok(params))
			codex_load(id, params);
		else
			respond_error(id, -32602, "fake-agent: session/load has another cwd or MCP servers");
	} else if (strcmp(method, "session/set_model") == 0 && id) {
		selected_model = json_incref(json_object_get(params, "modelId"));
		respond(id, json_object());
	} else if (strcmp(method, "session/prompt") == 0) {
		prompt(id, params);
	} else if (strcmp(method, "session/cancel") == 0) {
		if (pending_prompt)
			respond(pending_prompt, json_pack("{s:s}", "stopReason", "cancelled"));
		json_decref(pending_prompt);
		pending_prompt = NULL;
	} else if (id) {
		respond_error(id, -32601, "Method not found");
	}
}

int main(int argc, char **argv)
{
	/* codex: jig's codex profile appends its "-c" options; ignored. */
	bool codex = argc >= 2 && strcmp(argv[1], "codex") == 0;
	if (argc < 2 || (argc > 3 && !codex)) {
		fputs(usage, stderr);
		return 2;
	}
	mode = argv[1];
	arg = argc > 2 && (!codex || argv[2][0] != '-') ? argv[2] : NULL;
	static const char *const modes[] = {"answer", "report", "profile", "fs", "terminal", "mcp", "permission", "longline",
					    "flood", "bigtext", "crash", "segv", "hang", "hang_cancel", "late",
					    "echo", "badversion", "noise", "fork", "error", "wrongname", "nonewline", "nullid",
					    "closein", "tasks", "memory", "codex", "script", "obey", "raw", "stop", "egress", NULL};
	size_t k = 0;
	while (modes[k] && !is(modes[k]))
		k++;
	if (!modes[k]) {
		fputs(usage, stderr);
		return 2;
	}
	note_pid("agent", getpid());
	if (is("hang"))
		signal(SIGTERM, SIG_IGN);
	for (json_t *m; (m = next());) {
		dispatch(m);
		json_decref(m);
	}
	if (is("hang"))
		for (;;)
			pause();
	return 0;
}
