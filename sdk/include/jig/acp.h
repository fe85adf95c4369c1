/* The acp module kind (plugins/acp): one Agent turn with a native client
 * (Claude Code, Codex, Pi, …) over the Agent Client Protocol v1 —
 * JSON-RPC 2.0, one message per line on the client's stdin and stdout.
 *
 * The host decides everything (which client, its environment, the
 * credential projection, the limits, the scope); the module ships the
 * worker, JIG_ACP_WORKER_FILE in the snapshot, a program the host runs as
 * the first process of the provider's own scope. The worker starts the
 * client as its child, speaks ACP to it, and reports. It is an ACP client
 * that offers nothing: no filesystem, no terminal, no MCP.
 *
 * The worker's protocol (versioned; a worker refuses another format):
 *
 *   stdin, one JSON object, JIG_ACP_REQUEST_FORMAT:
 *     {"format",
 *      "argv": [absolute path, args...],   the client's command
 *      "env": {NAME: value, ...},          the client's whole environment,
 *                                          the credential projection included
 *      "secrets": [string, ...],           known credential bytes: an answer
 *                                          containing one is withheld
 *      "cwd": absolute path,               the empty work directory
 *      "expect": {"name"?, "version"?},    the reviewed identity; the
 *                                          client's agentInfo must match
 *      "session_meta"?: {...},             session/new's "_meta": the
 *                                          host's client profile
 *      "model"?: text,                     selected with session/set_model
 *                                          before the prompt (a profile's)
 *      "auth_method"?: text,               authenticate with this method id
 *                                          after initialize (a profile's)
 *      "history"?: {"dir", "max_bytes"},   collect the session's history:
 *                                          after an answer and a clean exit
 *                                          (status 0, not stopped), the one
 *                                          regular file HOME/dir/…/rollout-…-
 *                                          SESSIONID.jsonl (<= 4 levels, no
 *                                          link followed, <= max_bytes of
 *                                          complete lines, no control byte
 *                                          but tab, no secret)
 *      "restore"?: {"session_id", "path", written to HOME/dir/path (new
 *                   "rollout"},             file, 0600) before the client
 *                                          starts; session/load of that
 *                                          session instead of session/new
 *                                          (the client must offer
 *                                          loadSession); needs "history"
 *      "prompt": [ACP content block, ...], the turn's prompt
 *      "limits": {"deadline_ms",           the whole turn
 *                 "cancel_grace_ms",       after session/cancel
 *                 "exit_grace_ms",         close stdin -> SIGTERM -> SIGKILL
 *                 "max_line_bytes", "max_messages", "max_transcript_bytes"}}
 *
 *   stdout, one JSON object, JIG_ACP_RESULT_FORMAT:
 *     {"format", "outcome": "answer" | "refused" | "failed" | "timeout" | "withheld",
 *      "error"?: one line (every outcome but "answer"),
 *      "text"?: the agent's message chunks, joined ("answer" only),
 *      "stop_reason"?: the prompt response's stopReason,
 *      "agent"?: {"name", "version"} as the client reported them,
 *      "counts": {"lines", "skipped_lines", "messages", "updates",
 *                 "late_updates", "requests_refused", "permissions_refused",
 *                 "transcript_bytes", "bytes_in", "bytes_out"},
 *      "timing": {"initialize_ms", "prompt_ms", "total_ms"},
 *      "exit": {"how": "exited" | "signaled", "status"? , "signal"?,
 *               "forced": "none" | "term" | "kill"},
 *      "history"?: {"session_id", "path", "rollout"}   (with "history")
 *      "history_error"?: one line: why it was not collected}
 *
 * What the worker enforces (docs/agents.md): initialize advertises
 * protocolVersion 1 and no fs, terminal or MCP capability; a client
 * answering another protocol version is refused; session/new with the empty
 * work directory and no MCP servers; one session/prompt; every method the
 * client calls is answered -32601 except session/request_permission, which
 * is refused (a reject option if one is offered, else cancelled); lines
 * over max_line_bytes, more than max_messages messages or more than
 * max_transcript_bytes of agent text end the turn ("failed"); lines that
 * are not a JSON object with "jsonrpc": "2.0" are skipped and counted; a
 * line that is not UTF-8 or whose strings hold U+0000 or a lone surrogate
 * escape ends the turn ("failed"); a stopReason other than ACP v1's
 * (end_turn, max_tokens, max_turn_requests, refusal, cancelled) ends it
 * too ("failed"); updates after the prompt response
 * are counted and dropped, as are updates before the prompt (a loaded
 * session's replay); at the deadline session/cancel, then after
 * cancel_grace_ms the client is stopped ("timeout"); afterwards stdin is
 * closed, then SIGTERM, then SIGKILL to the client's process group, each
 * after exit_grace_ms. */
#ifndef JIG_ACP_H
#define JIG_ACP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_ACP_WORKER_FILE "libexec/jig-acp-worker"
/* The launcher of the host's pi profile: the command pi-acp starts as Pi
 * (plugins/acp/pi_launcher.c). */
#define JIG_ACP_PI_LAUNCHER_FILE "libexec/jig-pi-launcher"
#define JIG_ACP_REQUEST_FORMAT "jig-acp-request/1"
#define JIG_ACP_RESULT_FORMAT "jig-acp-result/1"
#define JIG_ACP_PROTOCOL_VERSION 1

struct jig_acp_ops {
	uint32_t struct_size;
	uint32_t protocol_version; /* JIG_ACP_PROTOCOL_VERSION */
	void *reserved[8];
};

#ifdef __cplusplus
}
#endif

#endif
