// jig: the Flow API, as runtime/boot.js gives it to a Flow (docs/flow-format.md).
// Shipped in the signed snapshot (libexec/runtime/jig.d.ts) and written by
// `jig init` at the project root; a Flow imports only its types:
//
//   import type { Jig } from "../jig";
//   export default async function (jig: Jig) { ... }
//
// `import type` is erased when Bun runs the Flow, so nothing outside the
// Flow's package is loaded. Every promise below rejects with an Error whose
// message starts "jig.<call> <route>:" when jig refuses the request (no such
// route, a cap, a count) or the effect could not be made; a Flow that lets
// such an error escape fails its Run, and the record keeps the message.
// Types only: jig checks every request again on its side, whatever the Flow
// sends.

/**
 * Bytes jig hands to a Flow: a Node.js `Buffer` at run time (a Uint8Array
 * whose `toString` takes an encoding). Declared here so that the Flow API
 * needs no `@types/node`.
 */
export interface JigBytes extends Uint8Array {
	/** The bytes decoded: `"utf8"` (the default), `"base64"`, `"hex"`, `"latin1"` … */
	toString(encoding?: "utf8" | "utf-8" | "base64" | "base64url" | "hex" | "latin1" | "ascii" | "utf16le"): string;
}

/** Any JSON value (what `JSON.stringify` keeps). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Options of one reviewed HTTP request (flow.json "http"). */
export interface HttpRequest {
	/** The grant's method; restating it is allowed, changing it is refused. */
	method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";
	/** The grant's exact URL; restating it is allowed, changing it is refused. */
	url?: string;
	/**
	 * A JSON value, sent as application/json: exactly the bytes of
	 * `JSON.stringify(body)`, never re-encoded (a number beyond a double's
	 * precision: `JSON.rawJSON("12345678901234567")`); at most the route's
	 * `max_request_bytes`, checked against its `body_schema`. A GET or HEAD
	 * has no body.
	 */
	body?: JsonValue;
}

/** The answer of an HTTP request. The status is evidence, not success. */
export interface HttpResponse {
	readonly status: number;
	/**
	 * The response headers jig passes on (content-type, content-length,
	 * location, retry-after, etag, last-modified, cache-control, date),
	 * lower-case names, at most 1 KiB each.
	 */
	readonly headers: Readonly<Record<string, string>>;
	/** The body's bytes (at most the route's `max_response_bytes`). */
	readonly body: JigBytes;
	/** true for a 3xx: jig never follows a redirect. */
	readonly redirectNotFollowed?: boolean;
	readonly timing: { readonly connect_ms: number; readonly total_ms: number };
	/** The body as UTF-8 text. */
	text(): string;
	/** The body parsed as JSON; throws on invalid JSON. */
	json(): any;
}

/** The prompt of one Agent turn (flow.json "agents"): explicit data, no authority. */
export interface AgentRequest {
	/** The system text: what the Agent is to do. */
	instructions?: string;
	/** Further texts (Skills) after the instructions; at most 8. */
	skills?: string[];
	/** The material: text, or a JSON value (sent as its compact JSON text). */
	input?: JsonValue;
	/**
	 * On a route with "retain_sessions": a `session` reference of an earlier
	 * answer, to continue that conversation (once, within 24 h).
	 */
	session?: string;
}

/** The answer of an Agent turn. */
export interface AgentResponse {
	/** The Agent's answer (at most the route's `max_answer_bytes`). */
	readonly text: string;
	/** Why the turn ended, as the client reported it (e.g. "end_turn"), or null. */
	readonly stopReason: string | null;
	readonly usage: { readonly prompt_bytes: number; readonly answer_bytes: number };
	/** Milliseconds of the turn's phases, as the worker measured them. */
	readonly timing: Readonly<Record<string, number>>;
	/** On a route with "retain_sessions": a reference that resumes this conversation once, for 24 h. */
	readonly session?: string;
	/** On a route with "retain_sessions": why the session was not retained. */
	readonly sessionError?: string;
}

/** One Project Command (flow.json "commands"): a small program the Flow supplies. */
export interface CommandRequest {
	/**
	 * The program's files: normalised relative paths to their text (UTF-8
	 * strings or bytes); at most 64 files and 256 KiB together.
	 */
	files: Record<string, string | Uint8Array>;
	/** One of `files`, run with the installed Bun as /command/<entry>. */
	entry: string;
	/** At most 32 arguments (4 KiB each, 16 KiB together). */
	args?: string[];
	/** At most 16 KiB on its standard input. */
	stdin?: string | Uint8Array;
}

/** How a Project Command ended, as jig observed it (its output is its own account). */
export interface CommandResult {
	/**
	 * "exited", "signaled", "timeout" (the route's deadline), "oom", or
	 * "killed" (its scope was killed from outside while it ran; `error` says how).
	 */
	readonly outcome: "exited" | "signaled" | "timeout" | "oom" | "killed";
	readonly exitCode: number | null;
	readonly signal: number | null;
	/** The first 64 KiB of standard output, decoded as UTF-8 with replacement. */
	readonly stdout: string;
	/** The first 64 KiB of standard error, decoded as UTF-8 with replacement. */
	readonly stderr: string;
	/** The same bytes as `stdout`, exactly. */
	readonly stdoutRaw: JigBytes;
	/** The same bytes as `stderr`, exactly. */
	readonly stderrRaw: JigBytes;
	/** Bytes written to standard output in all. */
	readonly stdoutBytes: number;
	/** Bytes written to standard error in all. */
	readonly stderrBytes: number;
	readonly stdoutTruncated: boolean;
	readonly stderrTruncated: boolean;
	readonly wallMs: number;
	/** How the scope was killed, for outcome "killed". */
	readonly error?: string;
	/**
	 * A route with "capture": true: the files the command left under
	 * /capture (at most 64, 256 KiB), read by jig after its scope was fenced,
	 * as data only; null when they were refused (see `captureRefused`).
	 */
	readonly captured?: Readonly<Record<string, { readonly sha256: string; readonly bytes: number; readonly data: JigBytes }>> | null;
	/** Why /capture was refused (a symbolic link, a special file, over a cap), or null. */
	readonly captureRefused?: string | null;
}

/** Options of a child Flow call (flow.json "bindings"). */
export interface CallOptions {
	/**
	 * { child input: this Flow's input }, each pair one of the binding's
	 * reviewed read map: the child then gets exactly these, whole and
	 * read-only, instead of the whole read map.
	 */
	inputs?: Record<string, string>;
}

/** How a child Flow ended. */
export interface CallResult {
	readonly ok: boolean;
	/** "killed": the child's scope was killed from outside while it ran. */
	readonly outcome: "succeeded" | "failed" | "timeout" | "cancelled" | "killed";
	/** Why it did not succeed; absent when it succeeded. */
	readonly error?: string;
	/** Whether the child's Flow started at all (null: the sandbox module does not say). */
	readonly started: boolean | null;
	/** This Flow's output paths the binding's write map filled (already in its output). */
	readonly outputs: readonly string[];
	/**
	 * What the child wrote: the bytes of one of `outputs`, as this Flow's
	 * output holds it now (this Flow may since have replaced it);
	 * `.toString("utf8")` for text. Throws ("jig.call BINDING: …", naming
	 * `outputs`) for any other path. Nothing else of the child is readable.
	 */
	read(path: string): JigBytes;
}

/** One Run Checkpoint save (flow.json "checkpoint": true). */
export interface CheckpointRequest {
	/** Normalised relative paths to UTF-8 text; at most 64 files and 1 MiB together. */
	files?: Record<string, string>;
	/** Any JSON value; the whole save is at most 2 MiB of canonical JSON. */
	state?: JsonValue;
}

/** A save jig accepted. */
export interface CheckpointResult {
	/** The save's number in this Run (1-16). */
	readonly save: number;
	readonly bytes: number;
	readonly sha256: string;
}

/**
 * The Flow API: the one argument of a Flow's default export (also
 * `globalThis.jig`). A Flow has no network, no credentials and no other
 * files: what it reads are its attached inputs, what it publishes are its
 * declared outputs, and every effect is a reviewed route of its flow.json.
 */
export interface Jig {
	/** Names of the attached inputs (`jig run --input NAME=PATH`), sorted. */
	inputs(): string[];
	/**
	 * The bytes of one attached input (a file; read a directory input's files
	 * as "NAME/PATH"); `.toString("utf8")` for text. Throws when there is no
	 * such input or the name is not a normalised relative path.
	 */
	read(name: string): JigBytes;
	/**
	 * Writes one output file: a path of flow.json "outputs" (or below a
	 * declared directory). A path that is not normalised throws; an
	 * undeclared one fails the Run when its output is checked (nothing is
	 * published).
	 */
	write(path: string, data: string | Uint8Array): void;
	/**
	 * One log line for the Run record (the parts joined by spaces; 4 KiB a
	 * line, 256 lines a Flow, 256 KiB a Run are kept). Standard output and
	 * standard error go nowhere: log with this.
	 */
	log(...parts: unknown[]): void;
	/**
	 * One reviewed HTTP request: a route of flow.json "http". Resolves to the
	 * answer whatever its status; rejects ("jig.http ROUTE: …") when jig
	 * refuses the request or the exchange fails (64 requests a Run).
	 */
	http(route: string, request?: HttpRequest): Promise<HttpResponse>;
	/**
	 * One Agent turn: a route of flow.json "agents" (a reviewed provider and
	 * model). The prompt is instructions, skills and input, at most the
	 * route's `max_prompt_bytes`; the Agent sees nothing else. Rejects
	 * ("jig.agent ROUTE: …") when jig refuses or the turn fails (deadline,
	 * caps, a crash); 16 turns a Run.
	 */
	agent(route: string, request?: AgentRequest): Promise<AgentResponse>;
	/**
	 * One Project Command: a route of flow.json "commands", run in a scope of
	 * its own (no network, no credentials, no Flow package; the route's input,
	 * if any, read-only at /input/NAME). Resolves however the command ended;
	 * rejects ("jig.command ROUTE: …") when jig refuses (caps, no such route)
	 * or the command could not be run; 16 commands a Run.
	 */
	command(route: string, request: CommandRequest): Promise<CommandResult>;
	/**
	 * One reviewed child Flow: a binding of flow.json "bindings". The child
	 * runs in its own scope with the read map's inputs; its write map's
	 * accepted files are copied into this Flow's output. Resolves however
	 * the child ended; rejects ("jig.call BINDING: …") when jig refuses the
	 * call before dispatch (no such binding, the shape rules, the root budget).
	 */
	call(binding: string, options?: CallOptions): Promise<CallResult>;
	/**
	 * Saves progress with jig, outside the scope (flow.json "checkpoint":
	 * true). Resolves once jig accepted the save; rejects ("jig.checkpoint: …")
	 * when jig refuses (caps, more than 16 saves, one already in flight). If
	 * the Run does not complete, its packet holds the last accepted save.
	 */
	checkpoint(save?: CheckpointRequest): Promise<CheckpointResult>;
}

/** A Flow module: its default export is called with the API once. */
export type Flow = (jig: Jig) => void | Promise<void>;

declare global {
	/** The Flow API, also given to the Flow's default export. */
	var jig: Jig;
}
