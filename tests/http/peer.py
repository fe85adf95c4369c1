#!/usr/bin/python3
"""A test peer for the HTTP effect: a real HTTP(S) server on 127.0.0.1.

  peer.py --portfile F [--port N] [--tls CERT KEY] [--log FILE]

Writes its port to F once listening. Every request is appended to --log as
"METHOD PATH AUTH BODY" (AUTH is "bearer" or "none"; the token itself is
never logged), and its header names to --log + ".headers", one request a
line. Paths:

  /ok           200, a small JSON body describing what arrived
  /health       200, {"status": "ok", "version": "1.2.3"}
  /echo-auth    200, the Authorization header's value as the body
  /status/N     status N, body "status N"
  /redirect     302 to /ok on the same server (must not be followed)
  /big/N        200, N bytes, chunked (no Content-Length)
  /trickle      200, then one byte every 200 ms for 20 s
  /slow/MS      200 after MS milliseconds
  /headers      200, the request's header names (lower case, sorted) and
                the value of any header outside the worker's set
  /drop         reads the request, then closes the connection unanswered
  /unavailable  503 with Retry-After: 0 (a client that retries would)
  /v1/chat/completions  a stub OpenAI-compatible chat completion whose text
                describes the request (model, auth, system, user, tools);
                streamed as chunks when the request asks for "stream"
  /v1/messages  the same as a stub Anthropic Messages response
"""
import argparse
import http.server
import json
import os
import ssl
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "jig-test-peer"

    def log_message(self, fmt, *args):
        pass

    def _log(self, body):
        if self.server.logfile:
            auth = "bearer" if self.headers.get("Authorization", "").startswith("Bearer ") else "none"
            with open(self.server.logfile, "a") as f:
                f.write(f"{self.command} {self.path} {auth} {body.decode('utf-8', 'replace')}\n")
            with open(self.server.logfile + ".headers", "a") as f:
                f.write(" ".join(sorted(k.lower() for k in self.headers.keys())) + "\n")

    def _send(self, status, body, ctype="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else b""
        self._log(body)
        p = self.path
        if p == "/ok":
            info = {"ok": True, "method": self.command, "body": body.decode("utf-8", "replace"),
                    "auth": "bearer" if self.headers.get("Authorization") else "none",
                    "content_type": self.headers.get("Content-Type"),
                    "accept_encoding": self.headers.get("Accept-Encoding"),
                    "proxy_seen": False}
            self._send(200, json.dumps(info, sort_keys=True).encode())
        elif p == "/headers":
            names = sorted(k.lower() for k in self.headers.keys())
            known = {"host", "user-agent", "accept", "content-type", "content-length", "authorization"}
            other = {k.lower(): v for k, v in self.headers.items() if k.lower() not in known}
            self._send(200, json.dumps({"names": names, "other": other}, sort_keys=True).encode())
        elif p == "/drop":
            self.close_connection = True
        elif p == "/unavailable":
            self._send(503, b"try again", "text/plain", [("Retry-After", "0")])
        elif p == "/health":
            self._send(200, json.dumps({"status": "ok", "version": "1.2.3"}).encode())
        elif p == "/echo-auth":
            self._send(200, (self.headers.get("Authorization") or "").encode(), "text/plain")
        elif p.startswith("/status/"):
            code = int(p.split("/")[2])
            self._send(code, f"status {code}".encode(), "text/plain")
        elif p == "/redirect":
            port = self.server.server_address[1]
            scheme = "https" if self.server.tls else "http"
            self._send(302, b"moved", "text/plain", [("Location", f"{scheme}://127.0.0.1:{port}/ok")])
        elif p.startswith("/big/"):
            left = int(p.split("/")[2])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                while left > 0:
                    c = chunk[:min(left, len(chunk))]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
                    left -= len(c)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass
        elif p == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass
        elif p.split("?")[0] in ("/v1/chat/completions", "/v1/messages"):
            self._stub_model(p.split("?")[0], body)
        elif p.split("?")[0] == "/v1/responses":
            self._stub_responses(body)
        elif p.split("?")[0] == "/v1/messages/count_tokens":
            self._send(200, b'{"input_tokens": 7}')
        elif p.startswith("/slow/"):
            time.sleep(int(p.split("/")[2]) / 1000)
            self._send(200, b"slow", "text/plain")
        else:
            self._send(404, b"no such path", "text/plain")

    def _stub_model(self, p, body):
        try:
            req = json.loads(body)
        except ValueError:
            return self._send(400, b'{"error": "not json"}')
        msgs = req.get("messages") or []
        system = req.get("system") or "".join(m["content"] for m in msgs if m.get("role") == "system")
        user = [m["content"] for m in msgs if m.get("role") == "user"]
        user = "".join(u if isinstance(u, str) else "".join(b.get("text", "") for b in u if isinstance(b, dict)) for u in user)
        auth = "bearer" if self.headers.get("Authorization", "").startswith("Bearer ") else \
            "api-key" if self.headers.get("x-api-key") else "none"
        text = json.dumps({"stub": True, "model": req.get("model"), "auth": auth, "system": system, "user": user,
                           "max_tokens": req.get("max_tokens")}, sort_keys=True)
        if isinstance(system, list):  # the Messages API's blocks
            system = "".join(b.get("text", "") for b in system if isinstance(b, dict))
        if isinstance(user, list):
            user = "".join(b.get("text", "") for b in user if isinstance(b, dict))
        text = json.dumps({"stub": True, "model": req.get("model"), "auth": auth, "system": system[:200], "user": user,
                           "max_tokens": req.get("max_tokens"), "tools": len(req.get("tools") or [])}, sort_keys=True)
        if p == "/v1/messages" and req.get("stream"):
            return self._stream_messages(req, text)
        if p == "/v1/chat/completions" and req.get("stream"):
            return self._stream_chat(req, text)
        if p == "/v1/chat/completions":
            out = {"id": "stub-1", "object": "chat.completion", "model": req.get("model"),
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}}
        else:
            out = {"id": "msg-1", "type": "message", "role": "assistant", "model": req.get("model"),
                   "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                   "usage": {"input_tokens": 7, "output_tokens": 5}}
        self._send(200, json.dumps(out).encode())

    def _stream_messages(self, req, text):
        """The Messages API's server-sent events, as a streaming client reads them."""
        ev = [("message_start", {"type": "message_start", "message": {
                  "id": "msg-1", "type": "message", "role": "assistant", "model": req.get("model"), "content": [],
                  "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 7, "output_tokens": 1}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": text}}),
              ("content_block_stop", {"type": "content_block_stop", "index": 0}),
              ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                 "usage": {"output_tokens": 5}}),
              ("message_stop", {"type": "message_stop"})]
        body = "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in ev).encode()
        self._send(200, body, "text/event-stream")

    def _stream_chat(self, req, text):
        """A chat completion's server-sent chunks, as a streaming client reads them."""
        base = {"id": "stub-1", "object": "chat.completion.chunk", "created": 0, "model": req.get("model")}
        ev = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]),
              dict(base, choices=[{"index": 0, "delta": {"content": text}, "finish_reason": None}]),
              dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
              dict(base, choices=[], usage={"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})]
        body = ("".join(f"data: {json.dumps(d)}\n\n" for d in ev) + "data: [DONE]\n\n").encode()
        self._send(200, body, "text/event-stream")

    def _stub_responses(self, body):
        """A stub of the OpenAI Responses API, streamed as Codex reads it."""
        try:
            req = json.loads(body)
        except ValueError:
            return self._send(400, b'{"error": "not json"}')
        user = ""
        for item in req.get("input") or []:
            if isinstance(item, dict) and item.get("role") == "user":
                for c in item.get("content") or []:
                    if isinstance(c, dict):
                        user += c.get("text", "")
        auth = "bearer" if self.headers.get("Authorization", "").startswith("Bearer ") else "none"
        tools = [t.get("name") or t.get("type") for t in req.get("tools") or [] if isinstance(t, dict)]
        text = json.dumps({"stub": True, "model": req.get("model"), "auth": auth, "tools": tools,
                           "user": user[-300:], "skill_md": body.count(b"SKILL.md"),
                           "skills_words": body.lower().count(b"skill"), "plugin_words": body.lower().count(b"plugin")},
                          sort_keys=True)
        item = {"id": "msg-1", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        resp = {"id": "resp-1", "object": "response", "status": "completed", "model": req.get("model"),
                "output": [item], "usage": {"input_tokens": 7, "output_tokens": 5, "total_tokens": 12,
                                            "input_tokens_details": {"cached_tokens": 0},
                                            "output_tokens_details": {"reasoning_tokens": 0}}}
        ev = [{"type": "response.created", "response": dict(resp, status="in_progress", output=[])},
              {"type": "response.output_item.added", "output_index": 0,
               "item": dict(item, status="in_progress", content=[])},
              {"type": "response.output_text.delta", "item_id": "msg-1", "output_index": 0, "content_index": 0,
               "delta": text},
              {"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.completed", "response": resp}]
        out = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in ev).encode()
        self._send(200, out, "text/event-stream")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--portfile", required=True)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--log")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.logfile = a.log
    srv.tls = bool(a.tls)
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.portfile)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
