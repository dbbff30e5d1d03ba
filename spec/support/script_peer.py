#!/usr/bin/env python3
"""A scripted TCP/UDP peer for spec/59 and for recording its expectations
from OpenResty (spec/support/record_openresty.sh).

Prints one line on stdout:
    tcp P refused P udp P udp_refused P unix PATH pid PID
and with --certs DIR (spec/support/certs) two more words at its end:
    tls P tls_self P
then serves until SIGTERM or until the process given with --parent is gone.

TCP (on 127.0.0.1:P and on the unix socket PATH): the client's first line
is a script, space-separated steps run in order:
    w:TEXT   write TEXT (percent-escaped: %0A is a newline, %25 is "%")
    n:N      write N bytes: "0123456789" repeated
    s:SEC    sleep SEC seconds
    r:N      read exactly N bytes (thrown away)
    c        half-close (FIN), then read until the client closes
    C        close at once
    R        reset (SO_LINGER 0, then close)
    e        echo what arrives until the client closes
When the steps run out, the peer reads until the client closes, then
closes. "tls" and "tls_self" run the same scripts after a TLS handshake
(the script line comes over TLS), with peer.crt (test.example and
127.0.0.1, signed by ca.crt) and self.crt (self-signed, self.example);
"c" there sends TLS's close_notify, then half-closes. "refused" is a TCP port nothing listens on, "udp_refused" a UDP
port nothing is bound to.

UDP: each datagram is echoed, except "silent..." (no reply) and "n:N"
(the reply is N bytes as above).

Standard library only (Python 3.11).
"""

import argparse
import os
import signal
import socket
import ssl
import struct
import sys
import tempfile
import threading
import time
import urllib.parse

PATTERN = b"0123456789"


def pattern(n):
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


def drain(conn):
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


def read_line(conn):
    """The script line, and what came after it in the same reads."""
    buf = b""
    while b"\n" not in buf:
        b = conn.recv(65536)
        if not b:
            return None, b""
        buf += b
    line, _, rest = buf.partition(b"\n")
    return line.decode("latin-1"), rest


def serve_tcp(conn):
    try:
        script, extra = read_line(conn)
        if script is None:
            return
        for step in script.split():
            op, _, arg = step.partition(":")
            if op == "w":
                conn.sendall(urllib.parse.unquote_to_bytes(arg))
            elif op == "n":
                conn.sendall(pattern(int(arg)))
            elif op == "s":
                time.sleep(float(arg))
            elif op == "r":
                left = int(arg) - len(extra[:int(arg)])
                extra = extra[int(arg):]
                while left > 0:
                    b = conn.recv(left)
                    if not b:
                        return
                    left -= len(b)
            elif op == "c":
                if isinstance(conn, ssl.SSLSocket):
                    conn = conn.unwrap()  # close_notify
                conn.shutdown(socket.SHUT_WR)
                break
            elif op == "C":
                return
            elif op == "R":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                struct.pack("ii", 1, 0))
                return
            elif op == "e":
                if extra:
                    conn.sendall(extra)
                while True:
                    b = conn.recv(65536)
                    if not b:
                        return
                    conn.sendall(b)
            else:
                sys.stderr.write("script_peer: bad step %r\n" % step)
                return
        drain(conn)
    except OSError:
        pass
    finally:
        conn.close()


def serve_tls(conn, ctx):
    conn.settimeout(10)
    try:
        conn = ctx.wrap_socket(conn, server_side=True)
    except (OSError, ssl.SSLError):
        conn.close()  # a failed handshake: the client's error is the test
        return
    conn.settimeout(None)
    serve_tcp(conn)


def accept_loop(srv, ctx=None):
    while True:
        conn, _ = srv.accept()
        if ctx is None:
            target, args = serve_tcp, (conn,)
        else:
            target, args = serve_tls, (conn, ctx)
        threading.Thread(target=target, args=args, daemon=True).start()


def tls_listener(certs, name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(certs, name + ".crt"),
                        os.path.join(certs, name + ".key"))
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    threading.Thread(target=accept_loop, args=(srv, ctx),
                     daemon=True).start()
    return srv.getsockname()[1]


def udp_loop(sock):
    while True:
        data, addr = sock.recvfrom(65536)
        if data.startswith(b"silent"):
            continue
        if data.startswith(b"n:"):
            data = pattern(int(data[2:]))
        sock.sendto(data, addr)


def unused_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parent", type=int, default=0)
    ap.add_argument("--certs", default="")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    tcp = socket.socket()
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(128)
    tmpdir = tempfile.mkdtemp(prefix="cs-peer-")
    path = os.path.join(tmpdir, "peer.sock")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(path)
    unix.listen(128)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    for target, arg in ((accept_loop, tcp), (accept_loop, unix),
                        (udp_loop, udp)):
        threading.Thread(target=target, args=(arg,), daemon=True).start()
    tls = ""
    if args.certs:
        tls = " tls %d tls_self %d" % (tls_listener(args.certs, "peer"),
                                       tls_listener(args.certs, "self"))
    print("tcp %d refused %d udp %d udp_refused %d unix %s pid %d%s" % (
        tcp.getsockname()[1], unused_port(socket.SOCK_STREAM),
        udp.getsockname()[1], unused_port(socket.SOCK_DGRAM), path,
        os.getpid(), tls), flush=True)
    try:
        while True:
            time.sleep(0.2)
            if args.parent and not os.path.exists("/proc/%d" % args.parent):
                break
    finally:
        os.unlink(path)
        os.rmdir(tmpdir)


if __name__ == "__main__":
    main()
