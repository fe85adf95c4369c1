/* jig why: a Run's refusals and failures explained in the operator's
 * terms, from its record (jig-run-record/1) or from the project's last-Run
 * entry (packet/history.h): one table row per failure kind a record can
 * carry, each with its cause and the remedy, or that the contract forbids
 * it (docs/cli.md, "jig why"). */
#ifndef JIG_PACKET_WHY_H
#define JIG_PACKET_WHY_H

#include <jansson.h>
#include <stdio.h>

#define JIG_WHY_FORMAT "jig-why/1"

/* The explanations of rec (a record or a history entry): a new array of
 * {kind, where, cause, remedy, contract_forbids}, never NULL unless out of
 * memory; what caused the Run's end first (a refused effect or a failed
 * child before the Flow's own error that followed it). Text taken from the record is kept as it is (printing makes it
 * inert). */
json_t *jig_why_explain(json_t *rec, const char *packet);
/* jig run's first line: "jig: HEAD; packet PACKET", inert. */
void jig_why_put_run_line(FILE *f, const char *head, const char *packet);
/* The headline of the packet at path, when one was published there (its
 * coordinator may have been killed after publishing): 0 with buf, or -1. */
int jig_why_packet_headline(const char *packet, char *buf, size_t cap);
/* The jig-why/1 document: the Run's facts, its headline and its
 * explanations. packet: where the record was read (NULL: from the
 * project's last-Run entry, which names its own). */
json_t *jig_why_doc(json_t *rec, const char *source, const char *packet);
/* The Run's headline into buf: one line that names what happened, the
 * first line of jig run's, jig inspect's and jig why's text alike (the
 * first explanation's first line, or "flow F succeeded"). packet: the
 * packet that holds rec, named in remedies (NULL: none). */
void jig_why_headline(json_t *rec, const char *packet, char *buf, size_t cap);
/* The document as text, every line inert. */
void jig_why_print(FILE *out, json_t *doc);

#endif
