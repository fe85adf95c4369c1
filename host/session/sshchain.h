/* The session's SSH chain (issue 45, Slice 4A, decisions 235-238): the
 * map's approved SSH hosts per context (alias, host, port, the operator's
 * known_hosts, the approved keys' fingerprints) and the context's own
 * ssh-agent socket. Before the launch and before each brokered request
 * that reaches an SSH remote, jig (outside every scope) checks the socket
 * (there, a socket, the caller's, no link, in trusted directories, outside
 * every repository) and asks the agent for its keys over the agent
 * protocol: one of the host's approved fingerprints must be loaded. jig
 * writes its own ssh configuration for the brokered git's scope (no user
 * or system configuration, StrictHostKeyChecking yes, the operator's
 * known_hosts, IdentitiesOnly with the approved keys' public halves, the
 * context's agent, no proxy, local command or forwarding). */
#ifndef JIG_SESSION_SSHCHAIN_H
#define JIG_SESSION_SSHCHAIN_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define JIG_SSH_DIR_TARGET "/.jig/ssh"		   /* jig's ssh configuration and the approved public keys */
#define JIG_SSH_AGENT_TARGET "/.jig/ssh-agent"	   /* the context's agent socket */
#define JIG_SSH_KNOWN_HOSTS_TARGET "/.jig/ssh-known-hosts" /* /<alias>: the operator's known_hosts, read-only */
#define JIG_SSH_COMMAND "ssh -F " JIG_SSH_DIR_TARGET "/config"
#define JIG_SSH_MAX_AGENT_REPLY (256u << 10)

/* "ssh://[USER@]ALIAS/PATH" (no port: the map's; no scp form): ALIAS into
 * out. 0, or -1 when u is not that shape. Pure. */
int jig_ssh_url_alias(const char *u, char *out, size_t cap);
/* Any URL Git would reach over SSH (ssh://, git+ssh://, ssh+git://, scp-like HOST:PATH). */
bool jig_ssh_url(const char *u);

/* The agent's loaded keys (SSH2_AGENTC_REQUEST_IDENTITIES) from a reply
 * body (pure, untrusted bytes): for each key blob, its fingerprint
 * ("SHA256:" unpadded base64) is compared with fingerprints; each that
 * matches is appended to pubs ("TYPE BASE64\n", at most cap bytes). The
 * number that matched, or -1: a malformed reply. */
int jig_ssh_agent_match(const unsigned char *reply, size_t len, const json_t *fingerprints, char *pubs, size_t cap);

/* The socket as the map names it: checked, then asked; pubs (may be NULL)
 * receives the approved keys' public lines. -code with one line naming the
 * context, the socket and what is wrong. */
int jig_ssh_agent_check(const char *context, const char *sock, const char *alias, const json_t *fingerprints,
			json_t *repositories, char *pubs, size_t cap, struct jig_error *e);

/* A session's chain: the context's agent and hosts (borrowed from the map). */
struct jig_ssh_chain {
	const char *context, *agent;
	json_t *hosts;	      /* contexts.<context>.ssh_hosts */
	json_t *repositories; /* the map's, for the outside-every-repository checks */
	char dir[PATH_MAX];   /* jig's: config and ALIAS.pub; "" when the repository has no SSH remote */
};

/* For each SSH host the repository's git_remotes name: its known_hosts
 * checked (regular, the caller's, not writable by others, trusted
 * directories, outside every repository), the agent checked, then dir
 * (created 0700) holding "config" and "ALIAS.pub". c->dir stays "" when
 * no remote is SSH; dir NULL: the checks alone. -code with e, dir removed. */
int jig_ssh_chain_start(struct jig_ssh_chain *c, json_t *map_doc, json_t *repo, const char *context, const char *dir,
			struct jig_error *e);
/* Removes what jig_ssh_chain_start wrote. */
void jig_ssh_chain_remove(const char *dir);
/* jig's ssh configuration for hosts (pure; tests). */
int jig_ssh_config_text(json_t *hosts, char *out, size_t cap);

#endif
