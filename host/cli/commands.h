#ifndef JIG_COMMANDS_H
#define JIG_COMMANDS_H

#include <jansson.h>

#include "../snapshot/snapshot.h"

int jig_cmd_modules_list(int json);
int jig_cmd_modules_verify(int json);
int jig_cmd_host_check(int json);
int jig_cmd_review(int argc, char **argv);
int jig_cmd_run(int argc, char **argv);
int jig_cmd_inspect(int argc, char **argv);
int jig_cmd_scope(int argc, char **argv, int in_transient_scope);

/* Shared by the commands. */
const char *jig_cli_key_summary(void);
/* Opens the installed snapshot; on failure prints the one-line error. */
int jig_cli_open_snapshot(struct jig_snapshot *s, int json);
json_t *jig_cli_snapshot_json(const struct jig_snapshot *s);
void jig_cli_print_json(json_t *doc);
void jig_cli_fail(int json, const struct jig_error *e);

#endif
