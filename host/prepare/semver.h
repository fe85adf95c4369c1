/* npm's version ranges (node-semver's grammar, not its loose mode), for
 * checking a lock's versions against package.json before anything is
 * fetched (issue 31; docs/dependencies.md).
 *
 * Read: exact versions ("1.2.3", "=1.2.3", "v1.2.3"), x-ranges ("1.x",
 * "1.2.*", "*", "" and partials "1", "1.2"), tilde ("~1.2.3", "~>1.2"),
 * caret ("^1.2.3", "^0.0.x"), comparators ("<", "<=", ">", ">=", "=",
 * with partials), hyphen ranges ("1.2 - 2.3.4"), space-separated
 * intersections and "||" unions, each desugared as node-semver does.
 * Prereleases as node-semver: a version with a prerelease satisfies a
 * comparator set only if some comparator of the set has a prerelease on
 * the same major.minor.patch. Build metadata is ignored.
 *
 * Anything else — tags ("latest"), URLs, git, "file:", "workspace:" —
 * cannot be read: never guessed. */
#ifndef JIG_PREPARE_SEMVER_H
#define JIG_PREPARE_SEMVER_H

#include <stdbool.h>
#include "util/limits.h"

enum jig_semver_result {
	JIG_SEMVER_NO = 0,     /* version is outside range */
	JIG_SEMVER_YES = 1,    /* version satisfies range */
	JIG_SEMVER_RANGE = -1, /* range is not a range jig can read */
	JIG_SEMVER_VERSION = -2 /* version is not a semver version */
};

/* Whether version ("1.2.3", "1.2.3-beta.1", "1.2.3+build") satisfies
 * range. */
enum jig_semver_result jig_semver_satisfies(const char *version, const char *range);

/* Whether range can be read at all. */
bool jig_semver_range_ok(const char *range);

#endif
