/* A project (jig.json at its root), its Flows (flow.json in each package),
 * bounded descriptor-relative capture and the content-addressed Package/0
 * store under <project>/.jig/. Formats: docs/flow-format.md. */
#ifndef JIG_FLOW_PROJECT_H
#define JIG_FLOW_PROJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/crypto.h"
#include "util/error.h"
#include "util/limits.h"
#include "state/state.h"

#define JIG_PROJECT_FILE "jig.json"
#define JIG_FLOW_FILE "flow.json"
/* The formats of jig.json and flow.json, and the Package/0 manifest a
 * capture writes. */
#define JIG_PROJECT_FORMAT "jig-project/1"
#define JIG_FLOW_FORMAT "jig-flow/1"
#define JIG_PACKAGE_FORMAT "jig-package/1"

/* One reviewed HTTP request a Flow may ask for (flow.json "http"). */
struct jig_http_grant {
	char *route;
	char *method; /* GET POST PUT PATCH DELETE HEAD */
	char *url;    /* exact; checked against plugins/http's rule at review */
	json_t *body_schema; /* Schema/0 or NULL */
	uint64_t max_request_bytes, max_response_bytes, timeout_ms;
};

/* One reviewed Agent route (flow.json "agents"): an operator-configured
 * provider and the model, both pinned in the Plan with the provider's
 * identity (docs/agents.md). jig supplies no default model. */
struct jig_agent_grant {
	char *route;
	char *provider; /* an id of the operator's agents.json; NULL for an API-backed route */
	char *api;	/* API-backed: "openai-chat" or "anthropic-messages"; NULL for a native client */
	char *http;	/* API-backed: the Flow's POST http route the request is sent through */
	char *model;
	uint64_t max_prompt_bytes, max_answer_bytes, timeout_ms;
	bool retain_sessions; /* the client's session history kept for a later turn (Codex) */
};

/* One reviewed Project Command route (flow.json "commands"): the Flow
 * supplies a small program's text per call, run with the installed Bun in a
 * keyless, offline scope of its own (docs/commands.md). "input" is one of
 * the Flow's declared attachments, projected read-only; NULL: none. */
struct jig_command_grant {
	char *route;
	char *input;
	uint64_t timeout_ms;
	bool capture; /* "capture": true: a held /capture tmpfs, returned as data (R-K03) */
};

struct jig_binding;
struct jig_flow {
	char *name;
	char *dir;   /* package directory, relative to the project root */
	char *entry; /* relative to the package */
	char **inputs;
	size_t n_inputs;
	char **outputs;
	size_t n_outputs;
	struct jig_http_grant *http;
	size_t n_http;
	struct jig_agent_grant *agents;
	size_t n_agents;
	struct jig_command_grant *commands;
	size_t n_commands;
	json_t *recipe; /* a Markdown recipe's facts for the Plan (flow/recipe.h), or NULL: code */
	struct jig_binding *bindings; /* flow/binding.h */
	size_t n_bindings;
	bool bound; /* has a binding or is one's target: scope kind flow-bound */
	bool checkpoint; /* "checkpoint": true: Run Checkpoint (effects/checkpoint.h) */
	char package_sha256[JIG_SHA256_HEX]; /* set by capture */
	uint64_t package_bytes;
	size_t package_files;
	json_t *package_manifest; /* set by capture: the jig-package/1 manifest (files: path, size, sha256) */
};

struct jig_project {
	int rootfd;  /* the project directory */
	int statefd; /* <project>/.jig, 0700, the caller's */
	char *root;  /* for messages */
	struct jig_flow *flows;
	size_t n_flows;
	uint64_t store_cap; /* JIG_STORE_MAX_BYTES unless a test lowers it */
};

/* Opens the project at path: parses jig.json and every flow.json, opens
 * (creating if needed) the private state directory. */
int jig_project_open(const char *path, struct jig_project *p, struct jig_error *e);
/* The same for jig run: a .jig that is not the caller's (another user's,
 * not 0700, a symbolic link) is "not admitted by you" (exit 5), first. */
int jig_project_open_run(const char *path, struct jig_project *p, struct jig_error *e);
void jig_project_close(struct jig_project *p);
const struct jig_flow *jig_project_flow(const struct jig_project *p, const char *name);
/* The refusal of a Flow name the project does not have, naming the ones it
 * has ("project P has no Flow \"x\"; its Flows: a, b"); returns
 * -JIG_E_USAGE. Every "no such Flow" goes through it (jig_cli_known_flows). */
int jig_project_no_flow(const struct jig_project *p, const char *name, struct jig_error *e);
/* "a, b, c": the project's Flow names in jig.json's order, cut with "..."
 * to fit buf; returns buf. */
const char *jig_project_flow_names(const struct jig_project *p, char *buf, size_t cap);

/* Captures every Flow package (same checks either way) and fills
 * package_sha256. With store, also retains it in the store (idempotent:
 * existing blobs are reused), failing closed at the store cap when a new
 * artifact would be needed; without, only computes the digests (jig run). */
int jig_project_capture(struct jig_project *p, bool store, struct jig_error *e);

/* One tree (a binding's resource tree) hashed, and stored if store, under
 * the store's cap; *used is the store's size (UINT64_MAX: not counted yet, counted
 * when something is to be stored), updated. */
int jig_store_capture_tree(struct jig_project *p, int dirfd, const char *what, bool store, uint64_t *used,
			   char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e);
/* Captures the tree under dirfd into the store like a package (what names
 * it in messages); its digest into sha, its size into bytes and files.
 * For prepared trees (npm's files): any name jig_package_path_rule
 * accepts, where a Flow's own package keeps [A-Za-z0-9._+@-]. */
int jig_store_capture(struct jig_project *p, int dirfd, const char *what, char sha[JIG_SHA256_HEX], uint64_t *bytes,
		      size_t *files, struct jig_error *e);
/* Materialises a captured package from the store into dirfd (empty). */
int jig_store_materialise(const struct jig_project *p, const char *package_sha256, int dirfd,
			  struct jig_error *e);
/* A Flow's npm files, as its package holds them: what capture bounds and
 * scans for credentials, and what the dependency checks (prepare/deps.h)
 * read. */
#define JIG_DEPS_MANIFEST "package.json"
#define JIG_DEPS_LOCK "bun.lock"
/* Only what the dependency checks (prepare/deps.h) read: package.json,
 * bun.lock and the patches package.json names (each checked against its
 * digest like every materialised file); a review no longer copies a
 * 4,096-file package to read three files of it. */
int jig_store_materialise_deps(const struct jig_project *p, const char *package_sha256, int dirfd,
			       struct jig_error *e);

/* The Flow's grant for route, or NULL. */
const struct jig_http_grant *jig_flow_http_grant(const struct jig_flow *f, const char *route);

/* The Flow's Agent route, or NULL. */
const struct jig_agent_grant *jig_flow_agent_grant(const struct jig_flow *f, const char *route);

/* The Flow's Project Command route, or NULL. */
const struct jig_command_grant *jig_flow_command_grant(const struct jig_flow *f, const char *route);

/* The Flow's routes of kind ("http", "agent" or "command") as "a, b" in
 * buf, "none" when it has none: what a "no such route" refusal lists. */
const char *jig_flow_routes(const struct jig_flow *f, const char *kind, char *buf, size_t cap);

/* Names: [a-z0-9][a-z0-9_-]{0,63}. */
int jig_valid_name(const char *s);

#endif
