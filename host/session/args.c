/* jig session's command line, pure: the grammar and every refusal it can
 * make alone (docs/session.md, "The command"). */
#include <string.h>

#include "session/session.h"

static const struct {
	const char *flag;
	unsigned bit;
} high_risk[] = {{"--docker", JIG_SESSION_HR_DOCKER},	      {"--browser", JIG_SESSION_HR_BROWSER},
		 {"--voice", JIG_SESSION_HR_VOICE},	      {"--release", JIG_SESSION_HR_RELEASE},
		 {"--production", JIG_SESSION_HR_PRODUCTION}, {"--maintenance", JIG_SESSION_HR_MAINTENANCE}};

const char *jig_session_high_risk_name(unsigned bit)
{
	for (size_t i = 0; i < sizeof(high_risk) / sizeof(high_risk[0]); i++)
		if (high_risk[i].bit == bit)
			return high_risk[i].flag + 2;
	return "?";
}

/* The reviewed selectors no agent argument may carry, whatever the client
 * (a client's own are the map's "selectors"): a provider, a model, a
 * profile, a configuration override, an environment. */
static const char *const selectors[] = {"--provider", "--model", "-m",	    "--profile", "-c",
					"--config",   "--env",	 "--settings", "--endpoint", "--base-url"};
#define N_SELECTORS (sizeof(selectors) / sizeof(selectors[0]))

const char *jig_session_selector(const char *arg, const char *const *extra, size_t n_extra)
{
	for (size_t k = 0; k < N_SELECTORS + n_extra; k++) {
		const char *s = k < N_SELECTORS ? selectors[k] : extra[k - N_SELECTORS];
		size_t n = strlen(s);
		if (strncmp(arg, s, n) != 0)
			continue;
		/* "--model", "--model=x"; "-m", "-mx" (a short option's value attached) */
		if (arg[n] == '\0' || arg[n] == '=' || (n == 2 && s[1] != '-'))
			return s;
	}
	return NULL;
}

static int parse_opt(int argc, char **argv, int *i, struct jig_session_args *a, struct jig_error *e)
{
	const char *s = argv[*i];
	if (strcmp(s, "--dry-run") == 0)
		return a->dry_run = 1, 0;
	if (strcmp(s, "--json") == 0)
		return a->json = 1, 0;
	if (strcmp(s, "--evidence") == 0)
		return a->evidence = 1, 0;
	if (strcmp(s, "--out") == 0) {
		if (a->evidence_out)
			return jig_err(e, JIG_E_USAGE, "session: --out is given twice");
		if (*i + 1 >= argc || argv[*i + 1][0] == '\0' || strcmp(argv[*i + 1], "--") == 0)
			return jig_err(e, JIG_E_USAGE, "session: --out needs a file (the evidence summary)");
		a->evidence_out = argv[++*i];
		return 0;
	}
	if (strncmp(s, "--provider=", 11) == 0)
		return jig_err(e, JIG_E_USAGE, "session: --provider=ID is refused; give it as \"--provider ID\", once, before \"--\"");
	if (strcmp(s, "--provider") == 0) {
		if (a->rq.provider)
			return jig_err(e, JIG_E_USAGE, "session: --provider is given twice; a session has one provider");
		if (*i + 1 >= argc || argv[*i + 1][0] == '-' || argv[*i + 1][0] == '\0')
			return jig_err(e, JIG_E_USAGE, "session: --provider needs a provider id");
		a->rq.provider = argv[++*i];
		return 0;
	}
	for (size_t k = 0; k < sizeof(high_risk) / sizeof(high_risk[0]); k++)
		if (strcmp(s, high_risk[k].flag) == 0)
			return a->rq.high_risk |= high_risk[k].bit, 0;
	if (strcmp(s, "--env") == 0 || strncmp(s, "--env=", 6) == 0)
		return jig_err(e, JIG_E_USAGE, "session: %s is refused; a session's environment comes only from the catalog and the repository map", "--env");
	return jig_err(e, JIG_E_USAGE, "session: unknown argument \"%.64s\"; usage: jig session [--provider ID] [--dry-run] [--json] "
		       "[--docker|--browser|--voice|--release|--production|--maintenance] [--evidence [--out FILE]] [-- AGENT-ARGS...]", s);
}

int jig_session_parse_args(int argc, char **argv, struct jig_session_args *a, struct jig_error *e)
{
	memset(a, 0, sizeof(*a));
	int i = 0;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		int r = parse_opt(argc, argv, &i, a, e);
		if (r)
			return r;
	}
	if (a->evidence_out && !a->evidence)
		return jig_err(e, JIG_E_USAGE, "session: --out names where --evidence writes its summary; without --evidence it is refused");
	if (a->evidence && i < argc)
		return jig_err(e, JIG_E_USAGE, "session: --evidence runs jig's probe instead of the agent; agent arguments after \"--\" are refused");
	if (i >= argc)
		return 0;
	a->rq.agent_args = argv + i + 1;
	for (int k = i + 1; k < argc; k++) {
		const char *s = jig_session_selector(argv[k], NULL, 0);
		if (s && strcmp(s, "--provider") == 0)
			return jig_err(e, JIG_E_USAGE, "session: --provider after \"--\" is refused; give it once, before \"--\"");
		if (s)
			return jig_err(e, JIG_E_USAGE, "session: agent argument \"%.64s\" selects a provider, model or configuration (%s); only the repository map selects them", argv[k], s);
	}
	return 0;
}
