/* Markdown Flows (issue 20; docs/markdown-flows.md): a Flow whose entry is
 * a Markdown recipe, run by jig's bundled interpreter
 * (runtime/markdown.js) through the reserved Agent route markdown-agent.
 * At review the recipe's front matter (a YAML mapping) is read from the
 * package and must agree with flow.json; the Flow may hold no grant but
 * that route (and the http route an API-backed one sends through). */
#ifndef JIG_FLOW_RECIPE_H
#define JIG_FLOW_RECIPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/limits.h"

#define JIG_RECIPE_ROUTE "markdown-agent"	      /* the one route the interpreter calls */
#define JIG_RECIPE_SUFFIX ".md"		      /* an entry ending so is a recipe */
#define JIG_RUNTIME_MARKDOWN "libexec/runtime/markdown.js"

struct jig_flow;

/* true iff the Flow's entry is a Markdown recipe. */
bool jig_recipe_is(const char *entry);

/* Checks Flow f (parsed from flow.json, package directory pkgfd; what
 * names flow.json in messages): a recipe's front matter, resources and
 * grants, or that a Flow of code does not hold the reserved route. Fills
 * f->recipe (the Plan's "recipe" facts) for a recipe. */
int jig_recipe_check(int pkgfd, struct jig_flow *f, const char *what, struct jig_error *e);

/* The front matter of text (len bytes) as a JSON object of strings and
 * arrays of strings, or -JIG_E_USAGE naming what. Exposed for the unit
 * test and the fuzz harness. */
int jig_recipe_front_matter(const char *text, size_t len, const char *what, json_t **out, size_t *body_at,
			    struct jig_error *e);

#endif
