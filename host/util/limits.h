/* Every limit of the contract in one place (the security contract's numbers,
 * docs/flow-format.md). Messages are built from these constants, never
 * restate them. Scope envelopes (memory, tasks, CPU, tmpfs sizes) are the
 * capability catalog's (policy/catalog.json). */
#ifndef JIG_UTIL_LIMITS_H
#define JIG_UTIL_LIMITS_H

#include <stdint.h>

/* A package file's path within its tree (node_modules/NAME/... for a
 * prepared dependency): at most this many bytes, so that the tree's own
 * place (the run directory, /flow/node_modules) still fits below PATH_MAX
 * (4096); a component is at most NAME_MAX (255) bytes (decision 261). */
#define JIG_PACKAGE_PATH_MAX 3072

/* Root read attachments (R-S02): at most this many files and bytes. */
#define JIG_MAX_INPUTS 64 /* --input arguments */
#define JIG_INPUT_MAX_FILES 64
#define JIG_INPUT_MAX_BYTES (8ull << 20)

/* Final validation of a Flow's output (R-S05, R-S06). */
#define JIG_OUTPUT_MAX_FILES 64
#define JIG_OUTPUT_MAX_ENTRIES 256
#define JIG_OUTPUT_MAX_BYTES (16ull << 20)

/* Run/0: newline-delimited JSON, bounded. A line holds one Project
 * Command's files (base64) and arguments; each operation keeps its own
 * field caps (docs/decisions.md). */
#define JIG_RUN0_MAX_LINE (1 << 20)
#define JIG_RUN0_MAX_MESSAGES 1024
#define JIG_RUN0_MAX_LOGS 256

/* HTTP Request effect: requests per Run. */
#define JIG_HTTP_MAX_REQUESTS 64

/* Agent effect: turns per Run. */
#define JIG_AGENT_MAX_TURNS 16

/* Project Commands (docs/commands.md): per call, what the Flow supplies
 * and what jig keeps of the output; calls per Run. The worst-case Run/0
 * line (files and stdin in base64, names and arguments JSON-escaped at six
 * bytes a byte) stays below JIG_RUN0_MAX_LINE. */
#define JIG_COMMAND_MAX_FILES 64
#define JIG_COMMAND_MAX_TEXT (256u << 10) /* bytes, all files together */
#define JIG_COMMAND_MAX_PATH 255	  /* bytes of one file's path */
#define JIG_COMMAND_MAX_STDIN (16u << 10)
#define JIG_COMMAND_MAX_ARGS 32
#define JIG_COMMAND_MAX_ARG 4096	       /* bytes of one argument */
#define JIG_COMMAND_MAX_ARGS_BYTES (16u << 10) /* all arguments together */
#define JIG_COMMAND_RETAIN (64u << 10)	       /* of each of stdout and stderr */
#define JIG_COMMAND_MAX_CALLS 16
/* A route's declared captured output (R-K03): the held /capture tmpfs is
 * 1 MiB; what comes back to the Flow is at most this (the text cap). */
#define JIG_COMMAND_CAPTURE_FILES 64
#define JIG_COMMAND_CAPTURE_BYTES (256u << 10)
_Static_assert((JIG_COMMAND_CAPTURE_BYTES + 2 * JIG_COMMAND_RETAIN) / 3 * 4 + 8 +
			       JIG_COMMAND_CAPTURE_FILES * (JIG_COMMAND_MAX_PATH + 200) + 4096 <
		       JIG_RUN0_MAX_LINE,
	       "a command's largest reply fits one Run/0 line");
_Static_assert((JIG_COMMAND_MAX_TEXT + JIG_COMMAND_MAX_STDIN) / 3 * 4 + 8 +
			       6 * (JIG_COMMAND_MAX_FILES * JIG_COMMAND_MAX_PATH + JIG_COMMAND_MAX_ARGS_BYTES) + 4096 <
		       JIG_RUN0_MAX_LINE,
	       "a command's largest request fits one Run/0 line");

/* Bindings (docs/bindings.md): calls per Flow run, import stages per
 * caller (the contract's two). The shape and the root budget are
 * flow/binding.h's. */
#define JIG_CALL_MAX_CALLS 16
#define JIG_CALL_MAX_STAGES 2
/* Child edges live at once in one Run (decision 330): a child in flight,
 * or a stage kept after its cleanup was not confirmed. Each owns at most one
 * import stage and one 16 MiB output volume, so at most five live stages
 * and six output backings (96 MiB) with the root's. */
#define JIG_CALL_MAX_LIVE 5

/* Run Checkpoint (issue 18, docs/reliability.md): one aggregate of at
 * most JIG_CHECKPOINT_MAX_BYTES canonical JSON ({"files","state"}), its
 * files at most JIG_CHECKPOINT_MAX_FILES UTF-8 texts of at most
 * JIG_CHECKPOINT_MAX_TEXT bytes together; at most JIG_CHECKPOINT_MAX_SAVES
 * saves a Run, one at a time. A checkpoint's Run/0 line may be longer than
 * JIG_RUN0_MAX_LINE: it holds the aggregate and the op. */
#define JIG_CHECKPOINT_MAX_BYTES (2u << 20)
#define JIG_CHECKPOINT_MAX_FILES 64
#define JIG_CHECKPOINT_MAX_TEXT (1u << 20)
#define JIG_CHECKPOINT_MAX_PATH 255
#define JIG_CHECKPOINT_MAX_SAVES 16
#define JIG_CHECKPOINT_MAX_LINE (JIG_CHECKPOINT_MAX_BYTES + 64)

/* A packet's record.json is read up to this size. */
#define JIG_RECORD_MAX_BYTES (4u << 20)

/* What a scope sends to the trusted side, capped there before it is kept
 * (issue 31; docs/reliability.md, "The trusted side's memory"). The Flow's
 * own cuts (runtime/boot.js) are a courtesy: these are the bounds. The
 * record budgets are shared by a root Run and all its children (one record
 * tree) and charged in bytes of compact JSON as the record will hold them
 * (escapes counted). */
/* A log line keeps at most this many bytes of its text, cut on a UTF-8
 * boundary and marked with how much was cut. */
#define JIG_RUN0_LOG_MAX_TEXT 4096u
/* The marker after a cut line: at most this many bytes. */
#define JIG_RUN0_LOG_CUT_MARK 64u
/* A Run/0 line holds at most this many structural JSON tokens ({ [ , :
 * outside strings), counted before it is parsed: jansson's tree of a 1 MiB
 * line of empty objects would take ~80 MiB; under this cap a parse takes
 * at most about 120 bytes a token (~3.8 MiB) beside the line's own bytes
 * (decision 91). Every request that can pass its own caps fits: an HTTP
 * body of JIG_HTTP_REQUEST_MAX compact bytes has at most half as many, an
 * Agent prompt of JIG_AGENT_PROMPT_MAX too. */
#define JIG_RUN0_MAX_TOKENS 32768
/* Log text kept per Run (the whole tree); later lines are dropped and
 * counted (the record's "logs_dropped"). */
#define JIG_RECORD_LOG_BYTES (256u << 10)
/* One effect's evidence (HTTP, Agent, Command, checkpoint): at most this
 * many bytes; a larger one is replaced by a stub saying how large it was. */
#define JIG_RECORD_EFFECT_MAX_BYTES (8u << 10)
/* All effects' evidence per Run (the whole tree). An effect is refused
 * before it runs (the Run fails) when less than one evidence cap is left,
 * so every effect that ran has its evidence. */
#define JIG_RECORD_EFFECTS_BYTES (1u << 20)
/* Child nodes in one Run's record tree (refused calls included); one more
 * call ends its caller's Run/0. */
#define JIG_CALL_MAX_NODES 64
/* A child node without its logs, effects and children: its binding,
 * termination, cleanup, inputs, outputs (<= 64 paths), staged paths and
 * reason. An allowance, not a proof (paths are long): the record's size is
 * checked before commit. */
#define JIG_RECORD_NODE_BYTES (8u << 10)
/* The rest of a root record: facts, inputs and outputs lists, checkpoint
 * summary, the scope's policy, verification. Also an allowance. */
#define JIG_RECORD_ROOT_BYTES (256u << 10)
/* Indentation: the record is written with two spaces a level; nesting and
 * line breaks add at most this share to the compact bytes above. */
#define JIG_RECORD_INDENT_SHARE 2u /* the published text is <= compact * this */
_Static_assert(JIG_RUN0_LOG_MAX_TEXT + JIG_RUN0_LOG_CUT_MARK <= JIG_RECORD_LOG_BYTES, "one cut line fits the log budget");
_Static_assert(JIG_RECORD_EFFECT_MAX_BYTES <= JIG_RECORD_EFFECTS_BYTES, "one effect fits the evidence budget");
_Static_assert((unsigned long long)JIG_RECORD_INDENT_SHARE *
			       (JIG_RECORD_LOG_BYTES + JIG_RECORD_EFFECTS_BYTES + JIG_CALL_MAX_NODES * JIG_RECORD_NODE_BYTES +
				JIG_RECORD_ROOT_BYTES) <=
		       JIG_RECORD_MAX_BYTES,
	       "the record's budgets fit what jig inspect reads");

/* Cancellation (R-L05, run/outer.h): after the first stop signal the
 * coordinator has this long to settle before SIGKILL. The command's
 * absolute expiry (jig run --expiry; by default the Run's deadline plus
 * the margin, none for --display web) can shorten that: at it the outer
 * command sends SIGTERM (if it has not yet) and SIGKILL within this grace:
 * it is due JIG_EXPIRY_KILL_MS after the expiry, which leaves the rest of
 * the grace for the timer's and the scheduler's lateness (decision 111). */
#define JIG_SETTLE_MS 60000
#define JIG_EXPIRY_GRACE_MS 250
#define JIG_EXPIRY_KILL_MS 200
_Static_assert(JIG_EXPIRY_KILL_MS < JIG_EXPIRY_GRACE_MS, "the SIGKILL is due inside the grace");
#define JIG_EXPIRY_DEFAULT_MARGIN_MS 120000ull /* the 60 s settlement and 60 s for admission and publication */

/* Retained Agent sessions (effects/agent_sessions.h): per project, per Flow and route, bytes and lifetime of each. */
#define JIG_SESSIONS_MAX 16
#define JIG_SESSIONS_SCOPE_MAX 4
#define JIG_SESSION_MAX_BYTES (8u << 20)
#define JIG_SESSION_TTL_S (24 * 60 * 60)

/* An agent provider (config/agent_config.h): the read-only trees and command arguments agents.json may name; the worker's deadline is the route's plus the grace, to start and stop. */
#define JIG_AGENT_MAX_TREES 8
#define JIG_AGENT_MAX_ARGS 16
#define JIG_AGENT_PI_MAX_ARGS 4
#define JIG_AGENT_MAX_ENV 32	   /* non-secret variables of a provider */
#define JIG_AGENT_VERSION_MAX 64 /* characters of the version a client must report */
#define JIG_AGENT_WORKER_GRACE_MS 10000

/* The HTTP worker's deadline: the grant's plus this, to start and stop. */
#define JIG_HTTP_WORKER_GRACE_MS 5000

/* Dependency preparation (prepare/prepare.h, docs/dependencies.md): a prepared record (its platform-skipped list names at most every package of a lock: 4,096 names of <= 214 bytes and their versions); the contract's dependency phase, for one review. */
#define JIG_PREPARED_RECORD_MAX (2u << 20)
#define JIG_PREPARE_PHASE_MS 180000
#define JIG_PREPARE_ONE_MS 60000
#define JIG_PREPARE_MAX 16			/* distinct preparations */
#define JIG_PREPARE_PHASE_BYTES (256ull << 20) /* prepared content, all of them */
#define JIG_PREPARE_SOURCE_BYTES (16ull << 20)  /* what one preparation reads (its files: at most 2 + 16) */

/* A project (flow/project.h): Flows, declared inputs or outputs per Flow, a package's files; a canonical artifact and the project's store in bytes. */
#define JIG_MAX_FLOWS 32
#define JIG_MAX_DECLARED 64	    /* inputs or outputs per Flow */
#define JIG_PACKAGE_MAX_FILES 4096
#define JIG_ARTIFACT_MAX_BYTES (64ull << 20) /* per canonical artifact */
#define JIG_STORE_MAX_BYTES (1ull << 30)     /* per project */
#define JIG_SCHEMA_REF_MAX 1024	    /* bytes of "$schema" in jig.json, flow.json, agents.json, npm.json (editors only; decision 158) */

/* Reviewed HTTP routes (flow.json "http"): routes per Flow and the ceilings of max_request_bytes (kept when Run/0 lines grew to 1 MiB), max_response_bytes and timeout_ms. */
#define JIG_HTTP_MAX_ROUTES 16
#define JIG_HTTP_REQUEST_MAX 61440	    /* ceiling of max_request_bytes (kept when Run/0 lines grew to 1 MiB) */
#define JIG_HTTP_RESPONSE_MAX (4ull << 20)  /* ceiling of max_response_bytes */
#define JIG_HTTP_TIMEOUT_MAX 60000	    /* ceiling of timeout_ms */

/* Reviewed Agent routes (flow.json "agents"): routes per Flow and the ceilings of max_prompt_bytes (kept when Run/0 lines grew to 1 MiB), max_answer_bytes and timeout_ms. */
#define JIG_AGENT_MAX_ROUTES 8
#define JIG_AGENT_PROMPT_MAX 49152	  /* ceiling of max_prompt_bytes (kept when Run/0 lines grew to 1 MiB) */
#define JIG_AGENT_ANSWER_MAX (1u << 20)	  /* ceiling of max_answer_bytes */
#define JIG_AGENT_TIMEOUT_MAX 600000	  /* ceiling of timeout_ms */

/* Reviewed Project Command routes (flow.json "commands"): routes per Flow and the bounds of timeout_ms (the catalog's command-limits). */
#define JIG_COMMAND_MAX_ROUTES 8
#define JIG_COMMAND_TIMEOUT_MIN 1000
#define JIG_COMMAND_TIMEOUT_MAX 600000 /* ceiling of timeout_ms (the catalog's command-limits) */

/* What one preparation installs (prepare/tarball.h): files and bytes; a tarball compressed as fetched, and decompressed with headers and padding. */
#define JIG_PREPARED_FILES_MAX 4096
#define JIG_PREPARED_BYTES_MAX (32u << 20)
#define JIG_TARBALL_MAX (16u << 20) /* compressed, as fetched */
#define JIG_TARBALL_UNPACKED_MAX (64u << 20) /* decompressed, headers and padding included */

/* Bindings (flow/binding.h, docs/bindings.md): per flow.json (the shape rules then allow 2 at a root, 1 in a child); a binding's timeout_ms (at most the root's 24 h; a Run caps it by the root's deadline); the fixed reservation policy, the contract's root budget (CPU per 100,000 us period: 3.5 CPU), child Flows the root and a child may have, the longest branch. */
#define JIG_BINDING_MAX 4 /* per flow.json; the shape rules then allow 2 at a root, 1 in a child */
#define JIG_BINDING_TIMEOUT_MIN 1000
#define JIG_BINDING_TIMEOUT_MAX 86400000 /* the root's 24 h; a Run caps it by the root's deadline */
#define JIG_ROOT_MEMORY_BYTES (1792ull << 20)
#define JIG_ROOT_TASKS 576u
#define JIG_ROOT_CPU_QUOTA_US 350000u /* per 100,000 us period: 3.5 CPU */
#define JIG_ROOT_SIBLINGS 2	      /* child Flows the root may have */
#define JIG_CHILD_FLOWS 1	      /* child Flows a child may have */
#define JIG_CHILD_LEVELS 5	      /* the longest branch */

/* The shortest deadline a scope policy may give (policy/scope_policy.c): a
 * Run whose capture left less is given this much (run/flow_run.c). */
#define JIG_SCOPE_WALL_MIN_MS 100

/* A Run's deadline (flow/timeout.h): the default and the most jig run --timeout may ask. */
#define JIG_RUN_TIMEOUT_DEFAULT_MS 30000ull
#define JIG_RUN_TIMEOUT_MAX_MS (24ull * 3600 * 1000)

/* npm dependencies (prepare/deps.h, docs/dependencies.md): package.json and bun.lock bytes, packages and patches, a patch's bytes; a lock key (install path) in bytes and in package names; dependencies one locked package and all of them declare; a lock entry's tarball URL. */
#define JIG_DEPS_MANIFEST_MAX (1u << 20)
#define JIG_DEPS_LOCK_MAX (16u << 20)
#define JIG_DEPS_MAX_PACKAGES 4096
#define JIG_DEPS_MAX_PATCHES 16
#define JIG_DEPS_PATCH_MAX (1u << 20)
#define JIG_DEPS_KEY_MAX 1024	 /* a lock key (install path), in bytes */
#define JIG_DEPS_MAX_DEPTH 32	 /* package names in one lock key */
#define JIG_DEPS_MAX_DEPS 1024	 /* dependencies one locked package declares */
#define JIG_DEPS_MAX_EDGES 65536 /* dependencies all locked packages declare */
#define JIG_DEPS_URL_MAX 1024	 /* a lock entry's tarball URL */

/* A semver range jig reads, in bytes (prepare/semver.h). */
#define JIG_SEMVER_RANGE_MAX 256 /* bytes of a range jig reads */

/* Markdown recipes (flow/recipe.h): the file (the prompt ceiling: it must fit a request), its front matter, the resources it lists (one Skill block each), its allowed-tools text (shown, granting nothing). */
#define JIG_RECIPE_MAX_BYTES 49152	      /* the recipe file (the prompt ceiling: it must fit a request) */
#define JIG_RECIPE_FRONT_MAX 8192	      /* its front matter */
#define JIG_RECIPE_MAX_RESOURCES 8	      /* listed in "resources" (one Skill block each) */
#define JIG_RECIPE_TOOLS_MAX 1024	      /* "allowed-tools" text, shown, granting nothing */

/* The scope policy language (policy/scope_policy.h, docs/scope-policy.md): a policy's bytes and its lists. */
#define JIG_SCOPE_POLICY_MAX_BYTES (256 * 1024)
#define JIG_POLICY_MAX_BINDS 64
#define JIG_POLICY_MAX_TMPFS 16
#define JIG_POLICY_MAX_SYMLINKS 32
#define JIG_POLICY_MAX_ENV 64
#define JIG_POLICY_MAX_FDS 16
#define JIG_POLICY_MAX_ENV_VALUE 4096
/* Exact network grants (issue 34, docs/scope-policy.md): loopback endpoints
 * and CONNECT destinations of one policy, the length of one HOST:PORT. */
#define JIG_POLICY_MAX_LOOPBACK 16
#define JIG_POLICY_MAX_CONNECT 16
#define JIG_POLICY_MAX_ENDPOINT 262 /* a 253-byte DNS name, ':' and 5 digits, with room */
/* The relays of those grants (run/netrelay.c): every byte the scope sends
 * is held in fixed buffers. */
#define JIG_NETRELAY_MAX_CONNS 64		/* simultaneous relayed connections; beyond: refused */
#define JIG_NETRELAY_BUF 16384			/* bytes buffered each way of one connection */
#define JIG_NETRELAY_CONNECT_MAX_HEADER 8192	/* a CONNECT request line and its headers */
#define JIG_NETRELAY_CONNECT_DEADLINE_MS 10000	/* to send that request */
#define JIG_NETRELAY_DIAL_MS 10000		/* to reach the host's endpoint */

/* The capability catalog's bytes (policy/catalog.h). */
#define JIG_CATALOG_MAX_BYTES (256 * 1024)
/* The entries of a catalog kind's argv (policy/catalog.c, policy/scope_argv.c). */
#define JIG_CATALOG_MAX_ARGV 16

/* A snapshot (snapshot/manifest.h, snapshot/signature.h): the manifest's bytes, files and modules; a module's and a file's bytes; the sequence (exact in every JSON reader); a signature's bytes. */
#define JIG_MANIFEST_MAX_BYTES (16u << 20)
#define JIG_MANIFEST_MAX_FILES 100000
#define JIG_MANIFEST_MAX_MODULES 64
#define JIG_MODULE_MAX_BYTES (256u << 20)
#define JIG_FILE_MAX_BYTES (UINT64_C(1) << 32)
#define JIG_SEQUENCE_MAX ((UINT64_C(1) << 53) - 1) /* exact in every JSON reader */
#define JIG_SIG_MAX_BYTES 256

/* A Run's lease file, in bytes (publish/run_lease.h). */
#define JIG_LEASE_MAX_BYTES (16u << 10)

/* Schema/0's nesting (util/schema0.h). */
#define JIG_SCHEMA0_MAX_DEPTH 16

/* --display web (display/display.h, docs/display.md): the capability token, clients, a request head, timeouts, the view and what it holds. */
#define JIG_DISPLAY_CAP_BYTES 32
#define JIG_DISPLAY_MAX_CLIENTS 16
#define JIG_DISPLAY_MAX_REQUEST_BYTES (16u << 10) /* request line + headers, per connection */
#define JIG_DISPLAY_IDLE_TIMEOUT_S 10
#define JIG_DISPLAY_HEAD_DEADLINE_MS 5000 /* a request head must arrive within this */
#define JIG_DISPLAY_DRAIN_MS 1000 /* closing: answers in flight get this long */
#define JIG_DISPLAY_MAX_VIEW_BYTES (1u << 20)
#define JIG_DISPLAY_MAX_STRING 4096 /* any one string of the view */
#define JIG_DISPLAY_MAX_LOGS 256
#define JIG_DISPLAY_EXCERPT_BYTES (16u << 10)
#define JIG_DISPLAY_MAX_ARTIFACTS 64
#define JIG_DISPLAY_MAX_WAIT_MS (60ull * 60 * 1000) /* a presentation is closed after 1 h */
/* jig run --display web (live.c): the view is rebuilt this often while the
 * Run is live; when it ends, the final view and the artifact captures are
 * offered and live inspection retires within the completion allowance:
 * at most LINGER_MS for a page that has been reading the view to fetch the
 * final one (and its excerpts), the rest for the server to stop (answers
 * in flight get JIG_DISPLAY_DRAIN_MS) and acknowledge it. */
#define JIG_DISPLAY_LIVE_PERIOD_MS 500
#define JIG_DISPLAY_COMPLETION_MS 10000
#define JIG_DISPLAY_LINGER_MS 8000
#define JIG_DISPLAY_QUIET_MS 2000 /* the linger ends this long after the last request, once the final view was served */
#define JIG_DISPLAY_MAX_SCOPES 16

/* jig session --evidence (evidence/evidence.h, docs/session-evidence.md): the
 * suite's size, the probe's output (read from a pipe on the trusted side)
 * and its deadline, and the shortest value that counts as a canary. */
#define JIG_EVIDENCE_MAX_CHECKS 256
#define JIG_EVIDENCE_PROBE_MAX_BYTES (256u << 10)
#define JIG_EVIDENCE_DEADLINE_MS 60000
#define JIG_EVIDENCE_CANARY_MIN 6

#endif
