/* jig init (issue 35; decision 157): a new project in an empty or absent
 * directory, or one more Flow in an existing project. Every file written
 * comes from the installed snapshot (libexec/init/, the Flow API's
 * declaration libexec/runtime/jig.d.ts, the schemas libexec/schemas/), read
 * through its hashed open; only jig.json and the Flow's name in flow.json
 * are composed here. Nothing is replaced: a refusal writes nothing, and a
 * failure half-way removes what this call wrote. */
#ifndef JIG_FLOW_SCAFFOLD_H
#define JIG_FLOW_SCAFFOLD_H

#include <jansson.h>
#include <stdbool.h>

#include "snapshot/snapshot.h"
#include "util/error.h"

#define JIG_INIT_DEFAULT_FLOW "hello"

struct jig_init {
	const char *dir;  /* the project directory */
	const char *flow; /* the Flow's name */
	bool add;	  /* --flow: add to the project in dir, if there is one */
	/* Results: */
	bool added;	      /* a Flow was added to an existing project */
	json_t *written;      /* project-relative paths written, in order (caller decrefs) */
	char input[80];	      /* the template's input name and its sample file, */
	char sample[160];     /* for the next steps the command prints */
};

int jig_project_init(const struct jig_snapshot *s, struct jig_init *in, struct jig_error *e);

#endif
