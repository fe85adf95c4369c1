#!/usr/bin/env python3
"""A test-only operator at a terminal (issue 34): runs COMMAND on a fresh
pseudo-terminal of its own (COMMAND's controlling terminal, 24x80) and
plays STEPS against it, printing what it sees; exits 1 on the first step
that fails.

  pty_drive.py STEP... -- COMMAND [ARGS...]

  expect:TEXT    read the terminal until TEXT appears (20 s)
  send:TEXT      type TEXT (\\r, \\n are the control characters)
  resize:R:C     the operator's window becomes R rows, C columns
  raw            the operator's terminal is in raw mode now (no ICANON, ECHO, ISIG)
  kill:SIG       signal SIG (TERM, INT, HUP, ...) to COMMAND (jig)
  exit:N         COMMAND ends with status N (128+n: signal n) within 60 s
  restored       the operator's terminal mode is exactly what it was before
"""
import fcntl
import os
import select
import signal
import struct
import sys
import termios
import time


def fail(msg, seen):
    print("FAIL: %s; the terminal showed: %r" % (msg, seen[-2000:]))
    sys.exit(1)


def main():
    args = sys.argv[1:]
    cut = args.index("--")
    steps, cmd = args[:cut], args[cut + 1:]
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    before = termios.tcgetattr(slave)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.close(master)
        os.execvp(cmd[0], cmd)
    seen = b""
    status = None

    def pump(timeout):
        nonlocal seen
        r, _, _ = select.select([master], [], [], timeout)
        if r:
            try:
                data = os.read(master, 4096)
            except OSError:
                data = b""
            seen += data
            return len(data) > 0
        return False

    for step in steps:
        kind, _, arg = step.partition(":")
        print("step", step, flush=True)
        if kind == "expect":
            end = time.time() + 20
            while arg.encode() not in seen:
                if time.time() > end:
                    fail("did not see %r" % arg, seen)
                pump(0.2)
        elif kind == "send":
            os.write(master, arg.replace("\\r", "\r").replace("\\n", "\n").encode())
        elif kind == "resize":
            r, c = (int(x) for x in arg.split(":"))
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))
        elif kind == "raw":
            lflag = termios.tcgetattr(slave)[3]
            if lflag & (termios.ICANON | termios.ECHO | termios.ISIG):
                fail("the operator's terminal is not in raw mode", seen)
        elif kind == "kill":
            os.kill(pid, getattr(signal, "SIG" + arg))
        elif kind == "exit":
            end = time.time() + 60
            while status is None:
                p, st = os.waitpid(pid, os.WNOHANG)
                if p == pid:
                    status = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
                    break
                if time.time() > end:
                    fail("COMMAND did not end", seen)
                pump(0.2)
            while pump(0.2):
                pass
            print("exit status", status)
            if status != int(arg):
                fail("exit status %d, expected %s" % (status, arg), seen)
        elif kind == "restored":
            after = termios.tcgetattr(slave)
            if after != before:
                fail("the operator's terminal mode was not restored: %r != %r" % (after, before), seen)
        else:
            fail("unknown step " + step, seen)
    print("terminal output:", repr(seen[-3000:]))
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


main()
