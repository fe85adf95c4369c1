"""A loopback HTTPS Git server for the session's HTTPS chain (issue 45,
tests/session/broker.sh case git_over_https): git http-backend as CGI
behind TLS with the given certificate, Basic authentication with one
user and password. Each request is logged (method, path, whether its
credential matched). Usage: ROOT CERT KEY PORT LOG USER:PASSWORD [ADDRESS]
(ADDRESS 127.0.0.1 unless given: case git_remote listens on a TEST-NET
address of the guest)."""
import base64
import http.server
import ssl
import subprocess
import sys

root, cert, key, port, log, userpass = sys.argv[1:7]
addr = sys.argv[7] if len(sys.argv) > 7 else "127.0.0.1"  # where it listens
want = "Basic " + base64.b64encode(userpass.encode()).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.cgi()

    def do_POST(self):
        self.cgi()

    def cgi(self):
        ok = self.headers.get("Authorization", "") == want
        with open(log, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path, "ok" if ok else "none"))
        if not ok:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="fixture"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.headers.get("Transfer-Encoding", "") == "chunked":
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        env = {"GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": userpass.split(":")[0], "REMOTE_ADDR": "127.0.0.1",
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "PATH": "/usr/bin:/bin"}
        out = subprocess.run(["/usr/lib/git-core/git-http-backend"], input=body, env=env, capture_output=True).stdout
        sep = out.find(b"\r\n\r\n")
        head, rest = (out[:sep], out[sep + 4:]) if sep >= 0 else out.split(b"\n\n", 1) if b"\n\n" in out else (out, b"")
        status, headers = 200, []
        for line in head.decode("latin-1").replace("\r", "").split("\n"):
            if not line:
                continue
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            else:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = http.server.ThreadingHTTPServer((addr, int(port)), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
