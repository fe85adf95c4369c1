#!/bin/sh
# display_live.browser (issue 19, must-show 1): the page of a live Run in
# real headless Chromium (tests/display/browser-live.mjs). Chromium does not
# finish inside the TCG guest, so the Run is in the guest and the browser
# on the host:
#   - tests/vm/run --forward boots a VM of its own with a network device on
#     QEMU's restricted user network (no route anywhere) and its monitor at
#     $X/monitor; the exchange directory $X is shared at the same path;
#   - in the guest, tests/display/live.sh browser starts jig run --display
#     web, relays 10.0.2.15:PORT to 127.0.0.1:PORT and writes the link;
#   - here, the monitor forwards this host's 127.0.0.1:PORT to the guest's
#     PORT, so the browser sends exactly what it would to a local display
#     (Host and Origin 127.0.0.1:PORT), then Chromium runs as the
#     unprivileged user; $X/done lets the guest cancel the Run and check
#     that nothing listens after it.
# With JIG_SUPPORTED_HOST=native the Run is on this host: no VM, no relay.
# Screenshots go to $JIG_ARTIFACTS. Requirements: R-D01, R-D02 (docs/requirements.md).
set -eu
: "${JIG_SOURCE:?}" "${JIG_DISPLAY_BROWSER:?}" "${JIG_ARTIFACTS:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x /usr/bin/chromium ] || fail "Debian's chromium is not installed (scripts/deps.sh)"
USER_NAME=${JIG_TEST_USER:-jigtest}
X=$(mktemp -d /tmp/jig-live-browser.XXXXXX)
GUEST=
trap '[ -z "$GUEST" ] || kill "$GUEST" 2>/dev/null || true; rm -rf "$X"' EXIT
chmod 755 "$X"
[ "$(id -u)" != 0 ] || chown "$USER_NAME" "$X"
mkdir "$X/shots" "$X/home"
[ "$(id -u)" != 0 ] || chown "$USER_NAME" "$X/shots" "$X/home"

if [ "${JIG_SUPPORTED_HOST:-vm}" = native ]; then
	JIG_LIVE_EXCHANGE=$X sh "$JIG_SOURCE/tests/display/live.sh" browser >"$X/guest.out" 2>&1 &
else
	JIG_LIVE_EXCHANGE=$X JIG_LIVE_RELAY=1 "$JIG_SOURCE/tests/vm/run" --forward "$X/monitor" --share "$X" \
		--timeout 300 -- sh "$JIG_SOURCE/tests/display/live.sh" browser >"$X/guest.out" 2>&1 &
fi
GUEST=$!
i=0
until [ -s "$X/link" ]; do
	kill -0 "$GUEST" 2>/dev/null || { cat "$X/guest.out"; fail "the guest ended before it printed the link"; }
	i=$((i + 1))
	[ $i -lt 2400 ] || { cat "$X/guest.out"; fail "no link within 240 s"; }
	sleep 0.1
done
LINK=$(cat "$X/link")
PORT=$(echo "$LINK" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/#cap=[0-9a-f]\{64\}$|\1|p')
[ -n "$PORT" ] || fail "not a display link: $LINK"
CAP=${LINK##*#cap=}

if [ "${JIG_SUPPORTED_HOST:-vm}" != native ]; then
	# This host's 127.0.0.1:PORT to the guest's PORT (its relay).
	python3 - "$X/monitor" "$PORT" <<'PY' || fail "cannot forward 127.0.0.1:$PORT to the guest"
import socket, sys, time
mon, port = sys.argv[1:]
s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.settimeout(10)
def until(marker):
    buf = b""
    while marker not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.decode(errors="replace")
until(b"(qemu)")
s.sendall(("hostfwd_add n0 tcp:127.0.0.1:%s-10.0.2.15:%s\n" % (port, port)).encode())
out = until(b"(qemu)")
lines = [l for l in out.replace("\r", "").split("\n") if l and "hostfwd_add" not in l and "(qemu)" not in l]
if lines:
    sys.exit("monitor: " + " ".join(lines))
PY
	echo "ok: this host's 127.0.0.1:$PORT forwarded to the guest's display"
fi

python3 - "$LINK" "$PORT" "$CAP" "$JIG_DISPLAY_BROWSER/node_modules" "$X/shots" >"$X/args.json" <<'PY'
import json, sys
link, port, cap, mods, out = sys.argv[1:]
print(json.dumps({"link": link, "port": port, "cap": cap, "modules": mods, "out": out}))
PY
chmod 644 "$X/args.json"
# The browser runs as the unprivileged user (root's ctest), with its own profile.
as_user=
[ "$(id -u)" != 0 ] || as_user="setpriv --reuid=$USER_NAME --regid=$(id -g "$USER_NAME") --init-groups"
set +e
(cd "$X/shots" && $as_user env -i HOME="$X/home" PATH=/usr/bin:/bin node "$JIG_SOURCE/tests/display/browser-live.mjs" "$X/args.json")
brc=$?
: >"$X/done"
wait "$GUEST"
grc=$?
set -e
GUEST=
cat "$X/guest.out"
[ "$brc" -eq 0 ] || fail "the browser test failed"
[ "$grc" -eq 0 ] || fail "the guest half failed ($grc)"
mkdir -p "$JIG_ARTIFACTS"
cp "$X/shots"/*.png "$JIG_ARTIFACTS/"
echo "screenshots: $(ls "$JIG_ARTIFACTS"/display-live*.png)"
echo "PASS: browser"
