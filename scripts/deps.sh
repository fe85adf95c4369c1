#!/bin/sh
# Installs every Debian package jig's build, tests and VM lane need.
# Named explicitly; nothing else is fetched from outside except Bun from npm.
set -eu
PKGS="
  build-essential cmake pkg-config git ca-certificates openssl jq gojq xxd util-linux
  libssl-dev libjansson-dev libcurl4-openssl-dev libseccomp-dev
  libarchive-dev libcmocka-dev nettle-dev libyaml-dev libmicrohttpd-dev
  bubblewrap uidmap
  valgrind hyperfine python3 python3-jsonschema curl clang musl-tools gnuplot-nox
  zsh man-db bsdextrautils bash-completion
  chromium wrk
  lintian spin
  openssh-client openssh-server
  qemu-system-x86 busybox-static linux-image-amd64 kmod cpio
"
# openssh-server is test-only: session_broker.git_over_ssh runs its own sshd
# as the test user on 127.0.0.1 (Debian's package also enables ssh.service).
# Bun comes from the npm registry (scripts/bun.sh); Debian's npm unless the
# machine already has one (e.g. with a NodeSource nodejs).
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing packages:$missing; run as root (or with sudo) to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing
fi
