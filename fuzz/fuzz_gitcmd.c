/* The git command policy's check of one brokered request's argv
 * (host/session/gitcmd.c, issue 45): the argv comes from the agent's scope
 * through the shim, so it is hostile. The input's NUL-separated strings are
 * the arguments after "git"; an input starting with "P\n" is instead a
 * policy file for the policy's own strict parser. */
#include <assert.h>

#include "fuzz.h"
#include "session/gitcmd.h"
#include "util/fileio.h"

#define MAX_ARGS 64

static struct jig_git_policy pol;

static void load(void)
{
	if (pol.doc)
		return;
	FILE *f = fopen(JIG_SOURCE_DIR "/policy/git-command.json", "rb");
	assert(f);
	static char buf[JIG_GIT_POLICY_MAX_BYTES];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct jig_error e = {0};
	int r = jig_git_policy_parse(buf, n, &pol, &e);
	assert(r == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct jig_error e = {0};
	if (n >= 2 && d[0] == 'P' && d[1] == '\n') {
		struct jig_git_policy p = {0};
		if (n - 2 <= JIG_GIT_POLICY_MAX_BYTES && jig_git_policy_parse((const char *)d + 2, n - 2, &p, &e) != 0)
			assert(e.msg[0] != '\0');
		jig_git_policy_free(&p);
		return 0;
	}
	if (n > 4096)
		return 0;
	load();
	char *copy = malloc(n + 1);
	memcpy(copy, d, n);
	copy[n] = '\0';
	const char *argv[MAX_ARGS + 1] = {"git"};
	int argc = 1;
	for (size_t i = 0; i <= n && argc < MAX_ARGS;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	struct jig_git_checked out = {0};
	if (jig_git_check(&pol, argc, argv, &out, &e) == 0) {
		assert(out.sub == -1 || (out.sub > 0 && out.sub < argc));
		/* Nothing before the subcommand may configure git: no -c,
		 * --config-env, --exec-path, --git-dir or --work-tree. */
		int end = out.sub > 0 ? out.sub : argc;
		for (int i = 1; i < end; i++) {
			if (strcmp(argv[i], "-C") == 0) {
				i++; /* -C's directory, an operand ("--config-envP" is one) */
				continue;
			}
			assert(strcmp(argv[i], "-c") != 0 && strncmp(argv[i], "--config-env", 12) != 0);
			assert(strncmp(argv[i], "--exec-path", 11) != 0 && strncmp(argv[i], "--git-dir", 9) != 0);
			assert(strncmp(argv[i], "--work-tree", 11) != 0);
		}
		/* A remote operand is never a program-running transport. */
		if (out.remote)
			assert(strncmp(out.remote, "ext::", 5) != 0 && strncmp(out.remote, "fd::", 4) != 0);
	} else {
		assert(e.msg[0] != '\0');
	}
	free(copy);
	return 0;
}
