/* Every limit of a Run in one place (the security contract's numbers,
 * docs/flow-format.md). Messages are built from these constants, never
 * restate them. Scope envelopes (memory, tasks, CPU, tmpfs sizes) are the
 * capability catalog's (policy/catalog.json). */
#ifndef JIG_RUN_LIMITS_H
#define JIG_RUN_LIMITS_H

/* Root read attachments (R-S02): at most this many files and bytes. */
#define JIG_MAX_INPUTS 64 /* --input arguments */
#define JIG_INPUT_MAX_FILES 64
#define JIG_INPUT_MAX_BYTES (8ull << 20)

/* Final validation of a Flow's output (R-S05, R-S06). */
#define JIG_OUTPUT_MAX_FILES 64
#define JIG_OUTPUT_MAX_ENTRIES 256
#define JIG_OUTPUT_MAX_BYTES (16ull << 20)

/* Run/0: newline-delimited JSON, bounded. */
#define JIG_RUN0_MAX_LINE 65536
#define JIG_RUN0_MAX_MESSAGES 1024
#define JIG_RUN0_MAX_LOGS 256

/* HTTP Request effect: requests per Run. */
#define JIG_HTTP_MAX_REQUESTS 64

/* Agent effect: turns per Run. */
#define JIG_AGENT_MAX_TURNS 16

/* A packet's record.json is read up to this size. */
#define JIG_RECORD_MAX_BYTES (4u << 20)

/* Cancellation (R-L05): after the first stop signal the coordinator has
 * this long to settle before SIGKILL. */
#define JIG_SETTLE_MS 60000

#endif
