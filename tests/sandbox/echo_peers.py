# Loopback echo peers for the network-grant tests: each PORT answers
# "PORT:what it got" and logs each contact to LOG.  Usage: LOG PORT...
import socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
def serve(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(16)
    while True:
        c, _ = s.accept(); log.write("contact %d\n" % port)
        data = b""
        while True:
            b = c.recv(4096)
            if not b: break
            data += b
        c.sendall(b"%d:" % port + data); c.close()
for p in sys.argv[2:]:
    threading.Thread(target=serve, args=(int(p),), daemon=True).start()
log.write("listening\n")
threading.Event().wait()
