/* The installer worker's protocol (inscope/prepare/worker.c, which
 * includes this header): what jig sends it, what it answers, what it asks
 * the pinned Bun's install.js (runtime/install.js), and its user agent. */
#ifndef JIG_PREPARE_PROTOCOL_H
#define JIG_PREPARE_PROTOCOL_H

#define JIG_PREPARE_REQUEST_FORMAT "jig-prepare-request/1"
#define JIG_PREPARE_RESULT_FORMAT "jig-prepare-result/1"
#define JIG_INSTALL_REQUEST_FORMAT "jig-install-request/1"
#define JIG_PREPARE_USER_AGENT "jig-prepare/1"

#endif
