/* jig-pi-launcher: the command pi-acp starts as Pi (PI_ACP_PI_COMMAND) in
 * the provider scope of jig's "pi" profile (docs/agents.md).
 *
 * pi-acp runs its Pi command with fixed arguments ("--mode rpc --no-themes"),
 * so the profile's own flags cannot reach Pi through the adapter's command.
 * The host puts the whole Pi command in the client's environment instead:
 * JIG_PI_ARGV, a JSON array (the operator's reviewed Pi command, then the
 * profile's flags), and JIG_PI_MODELS, the operator's reviewed models.json.
 * The launcher makes Pi's agent directory in the scope's private HOME (Pi
 * writes its auth and model stores there), links models.json into it
 * (keeping an earlier launch's link to the same file), removes its own
 * variables and executes JIG_PI_ARGV followed by the adapter's arguments.
 * It decides nothing: an adapter argument other than the ones pi-acp is
 * known to pass, a model that starts with '-' (Pi would parse it as an
 * option), or a missing or malformed variable, stops it with one line on
 * stderr (exit 127; the turn then fails). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#define ARGV_MAX 64

static int die(const char *msg, const char *arg)
{
	fprintf(stderr, "jig-pi-launcher: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return 127;
}

/* The arguments pi-acp passes for a new session: a session to resume
 * ("--session FILE") would be Pi state jig never gives it. */
static bool adapter_args_ok(int argc, char **argv)
{
	static const char *const known[] = {"--mode", "rpc", "--no-themes"};
	if (argc - 1 != 3)
		return false;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], known[i - 1]) != 0)
			return false;
	return true;
}

static int make_dir(const char *path)
{
	return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* The link to the operator's models.json; one already there (an earlier
 * launch in the same HOME) is accepted only if it points exactly there. */
static int link_models(const char *models, const char *link)
{
	char was[PATH_MAX];
	if (symlink(models, link) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	ssize_t n = readlink(link, was, sizeof(was));
	if (n < 0 || (size_t)n >= sizeof(was) || (size_t)n != strlen(models) || memcmp(was, models, (size_t)n) != 0) {
		errno = EEXIST;
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (!adapter_args_ok(argc, argv))
		return die("the adapter passed arguments other than \"--mode rpc --no-themes\"; refused", argc > 1 ? argv[1] : "(none)");
	const char *spec = getenv("JIG_PI_ARGV"), *models = getenv("JIG_PI_MODELS"), *home = getenv("HOME");
	if (!spec || !models || !home || home[0] != '/' || models[0] != '/')
		return die("JIG_PI_ARGV, JIG_PI_MODELS and HOME must be set (jig's pi profile sets them)", NULL);
	json_error_t je;
	json_t *a = json_loads(spec, JSON_REJECT_DUPLICATES, &je);
	size_t n = json_array_size(a);
	if (!json_is_array(a) || !n || n > ARGV_MAX)
		return die("JIG_PI_ARGV is not a JSON array of 1-64 strings", NULL);
	char *pargv[ARGV_MAX + 4];
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return die("JIG_PI_ARGV is not a JSON array of 1-64 strings", NULL);
		pargv[i] = (char *)json_string_value(v);
	}
	if (pargv[0][0] != '/')
		return die("the Pi command is not an absolute path", pargv[0]);
	/* A model Pi would read as another option. */
	for (size_t k = 1; k < n; k++)
		if (strcmp(pargv[k], "--model") == 0 && (k + 1 == n || pargv[k + 1][0] == '-'))
			return die("the model is missing or starts with '-'; refused", k + 1 < n ? pargv[k + 1] : NULL);
	for (int k = 1; k < argc; k++)
		pargv[n++] = argv[k];
	pargv[n] = NULL;
	char dir[PATH_MAX], link[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s/.pi", home) >= (int)sizeof(dir) || make_dir(dir) < 0 ||
	    snprintf(dir, sizeof(dir), "%s/.pi/agent", home) >= (int)sizeof(dir) || make_dir(dir) < 0)
		return die("cannot make Pi's agent directory in HOME", strerror(errno));
	if (snprintf(link, sizeof(link), "%s/models.json", dir) >= (int)sizeof(link) || link_models(models, link) < 0)
		return die("cannot link models.json into Pi's agent directory",
			   errno == EEXIST ? "another file or link is there" : strerror(errno));
	if (setenv("PI_CODING_AGENT_DIR", dir, 1) < 0 || unsetenv("JIG_PI_ARGV") < 0 || unsetenv("JIG_PI_MODELS") < 0)
		return die("cannot set Pi's environment", strerror(errno));
	execv(pargv[0], pargv);
	return die("cannot start Pi", strerror(errno));
}
