# An HTTPS peer on 127.0.0.1:8443 (or ADDR:8443) standing in for a model provider;
# logs "listening" and each contact to LOG.  Usage: CERT KEY LOG [ADDR]
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"provider ok\n"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        open(sys.argv[3], "a").write("https contact\n")
srv = http.server.HTTPServer((sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1", 8443), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(sys.argv[3], "a").write("listening\n")
srv.serve_forever()
