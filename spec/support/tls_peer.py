#!/usr/bin/env python3
"""The TLS peer of the TLS specs (started by spec/support/tls.lua).

Listens on HOST:0, prints "port N pid P" (one line) on stdout, then serves
every connection in a thread of its own, one SSLContext for the whole
process (so its session cache and ticket keys last across connections),
until SIGTERM or until the process given with --parent is gone. What it
does with a connection is the mode (see MODES below); what happened is
logged on stderr, one line per event.

Standard library only (Python 3.11).
"""

import argparse
import os
import select
import signal
import socket
import ssl
import sys
import threading
import time

BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"

_log_lock = threading.Lock()
_conn_ids = iter(range(1, 1 << 62))


def log(cid, msg):
    line = "%.3f [%s] %s\n" % (time.time(), cid, msg)
    with _log_lock:
        sys.stderr.write(line)
        sys.stderr.flush()


# -- SNI: the name the client sent, per TLS connection -------------------

_sni_lock = threading.Lock()
_sni = {}  # id(SSLSocket) -> the server name


def _sni_callback(sslsock, name, _ctx):
    with _sni_lock:
        _sni[id(sslsock)] = name
    return None


def sni_of(ssock):
    with _sni_lock:
        return _sni.get(id(ssock))


def forget_sni(ssock):
    with _sni_lock:
        _sni.pop(id(ssock), None)


# -- helpers -------------------------------------------------------------

def client_cn(ssock):
    try:
        cert = ssock.getpeercert()
    except (ValueError, OSError):
        return None
    if not cert:
        return None
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return value
    return None


def close_tls(cid, ssock, notify=True):
    """Sends close_notify (unwrap) when notify, then closes."""
    if notify:
        try:
            ssock.unwrap()
            log(cid, "close_notify sent")
        except (OSError, ValueError) as e:
            log(cid, "unwrap: %r" % (e,))
    forget_sni(ssock)
    try:
        ssock.close()
    except OSError:
        pass


def drain_and_close(cid, sock, seconds):
    """TCP FIN (shutdown SHUT_WR), reads (and drops) what the client still
    sends until its EOF or `seconds` pass, closes: a close without a RST
    (a close with unread data would send one)."""
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError as e:
        log(cid, "shutdown: %r" % (e,))
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            if not sock.recv(65536):
                break
    except OSError:
        pass
    sock.close()


def echo_loop(cid, ssock):
    total = 0
    try:
        while True:
            data = ssock.recv(65536)
            if not data:
                log(cid, "client closed after %d bytes" % total)
                break
            total += len(data)
            ssock.sendall(data)
    except (OSError, ValueError) as e:
        log(cid, "echo: %r after %d bytes" % (e, total))
        close_tls(cid, ssock, notify=False)
        return
    close_tls(cid, ssock)


# -- modes ---------------------------------------------------------------

def mode_echo(cid, ssock, _args):
    echo_loop(cid, ssock)


def mode_whoami(cid, ssock, _args):
    line = "sni=%s cn=%s reused=%d version=%s\n" % (
        sni_of(ssock) or "-", client_cn(ssock) or "-",
        1 if ssock.session_reused else 0, ssock.version())
    log(cid, "whoami: " + line.strip())
    try:
        ssock.sendall(line.encode())
    except OSError as e:
        log(cid, "whoami send: %r" % (e,))
        close_tls(cid, ssock, notify=False)
        return
    echo_loop(cid, ssock)


def send_payload(cid, ssock, args):
    try:
        ssock.sendall(args.payload)
        log(cid, "sent %d bytes" % len(args.payload))
    except OSError as e:
        log(cid, "send: %r" % (e,))


def mode_send_notify(cid, ssock, args):
    send_payload(cid, ssock, args)
    close_tls(cid, ssock)


def mode_send_close(cid, ssock, args):
    send_payload(cid, ssock, args)
    # SSLSocket.shutdown() drops the SSL object and shuts the TCP socket
    # down: a FIN without close_notify (Python sends close_notify only in
    # unwrap()); what the client sends afterwards is read raw and dropped
    forget_sni(ssock)
    log(cid, "closing the TCP connection without close_notify")
    drain_and_close(cid, ssock, 5.0)


def mode_corrupt(cid, ssock, args):
    send_payload(cid, ssock, args)
    # an application-data record written straight on the TCP socket, not
    # through TLS: its authentication fails on the client
    os.write(ssock.fileno(), b"\x17\x03\x03\x00\x20" + b"\x00" * 32)
    log(cid, "sent a forged record")
    forget_sni(ssock)
    drain_and_close(cid, ssock, 5.0)


def _read_head(cid, ssock, buf):
    """Reads until CRLFCRLF; returns (head, rest) or (None, buf) at EOF."""
    while b"\r\n\r\n" not in buf:
        data = ssock.recv(65536)
        if not data:
            if buf:
                log(cid, "http: EOF inside a request head")
            return None, buf
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def mode_http(cid, ssock, _args):
    sni = sni_of(ssock) or "-"
    buf = b""
    try:
        while True:
            head, buf = _read_head(cid, ssock, buf)
            if head is None:
                break
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3:
                log(cid, "http: bad request line %r" % lines[0])
                ssock.sendall(BAD_REQUEST)
                break
            method, path, _version = parts
            headers = {}
            for h in lines[1:]:
                name, _, value = h.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or "0")
            while len(buf) < length:
                data = ssock.recv(65536)
                if not data:
                    raise EOFError("EOF inside a request body")
                buf += data
            body, buf = buf[:length], buf[length:]
            text = "method=%s path=%s sni=%s" % (method, path, sni)
            out = text.encode() + (b"\n" + body if body else b"")
            close = headers.get("connection", "").lower() == "close"
            resp = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    b"Content-Length: %d\r\n" % len(out))
            if close:
                resp += b"Connection: close\r\n"
            ssock.sendall(resp + b"\r\n" + out)
            log(cid, "http: %s %s (%d body bytes)%s"
                % (method, path, length, " close" if close else ""))
            if close:
                break
    except (OSError, ValueError, EOFError) as e:
        log(cid, "http: %r" % (e,))
        close_tls(cid, ssock, notify=False)
        return
    close_tls(cid, ssock)


def mode_hang(cid, raw, _args):
    # never reads nor writes; closes when the client has closed (POLLRDHUP:
    # its FIN, whatever it sent before is left unread) or after 30 s
    poller = select.poll()
    poller.register(raw, select.POLLRDHUP)
    events = poller.poll(30000)
    log(cid, "hang: %s" % ("client closed" if events else "30 s passed"))
    raw.close()


def mode_plain(cid, raw, args):
    raw.settimeout(0.2)
    got = 0
    try:
        while True:
            data = raw.recv(65536)
            if not data:
                break
            got += len(data)
    except OSError:
        pass
    log(cid, "plain: read %d bytes" % got)
    raw.settimeout(5)
    try:
        raw.sendall(args.payload if args.payload is not None
                    else BAD_REQUEST)
    except OSError as e:
        log(cid, "plain send: %r" % (e,))
    drain_and_close(cid, raw, 1.0)


TLS_MODES = {
    "echo": mode_echo,
    "starttls": mode_echo,  # after the clear exchange in handle()
    "whoami": mode_whoami,
    "send_notify": mode_send_notify,
    "send_close": mode_send_close,
    "corrupt": mode_corrupt,
    "http": mode_http,
}
RAW_MODES = {
    "hang": mode_hang,
    "plain": mode_plain,
}


def handle(ctx, raw, addr, args):
    cid = next(_conn_ids)
    log(cid, "accepted from %s:%d" % addr[:2])
    try:
        if args.mode in RAW_MODES:
            RAW_MODES[args.mode](cid, raw, args)
            return
        if args.mode == "starttls":
            # a line in clear, then "OK\n" and the payload (bytes a man in
            # the middle would add) in clear, then TLS
            line = b""
            while not line.endswith(b"\n"):
                data = raw.recv(1)
                if not data:
                    raw.close()
                    return
                line += data
            log(cid, "starttls: %r" % (line,))
            raw.sendall(b"OK\n" + (args.payload or b""))
        ssock = ctx.wrap_socket(raw, server_side=True,
                                do_handshake_on_connect=False)
        try:
            ssock.do_handshake()
        except (OSError, ValueError) as e:
            log(cid, "handshake failed: %r" % (e,))
            forget_sni(ssock)
            ssock.close()
            return
        log(cid, "handshake done: %s %s sni=%s cn=%s reused=%d" % (
            ssock.version(), ssock.cipher()[0], sni_of(ssock) or "-",
            client_cn(ssock) or "-", 1 if ssock.session_reused else 0))
        TLS_MODES[args.mode](cid, ssock, args)
    except Exception as e:  # pylint: disable=broad-except
        log(cid, "unexpected: %r" % (e,))
        try:
            raw.close()
        except OSError:
            pass


# -- process -------------------------------------------------------------

def watch_parent(pid):
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            log("-", "parent %d is gone: exiting" % pid)
            os._exit(0)
        except PermissionError:
            pass
        time.sleep(0.5)


VERSIONS = {
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}


def make_context(args):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    if args.min_version:
        ctx.minimum_version = VERSIONS[args.min_version]
    if args.max_version:
        ctx.maximum_version = VERSIONS[args.max_version]
    if args.client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cafile=args.client_ca)
    ctx.sni_callback = _sni_callback
    return ctx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--mode", default="echo",
                    choices=sorted(list(TLS_MODES) + list(RAW_MODES)))
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--client-ca")
    ap.add_argument("--min-version", choices=sorted(VERSIONS))
    ap.add_argument("--max-version", choices=sorted(VERSIONS))
    ap.add_argument("--payload-file",
                    help="the bytes that send_notify, send_close and "
                         "plain send")
    ap.add_argument("--parent", type=int,
                    help="exit when this process is gone")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if args.parent:
        threading.Thread(target=watch_parent, args=(args.parent,),
                         daemon=True).start()

    args.payload = None
    if args.payload_file:
        with open(args.payload_file, "rb") as f:
            args.payload = f.read()
    if args.mode in ("send_notify", "send_close", "corrupt") \
            and args.payload is None:
        args.payload = b""

    ctx = None
    if args.mode in TLS_MODES:
        if not (args.cert and args.key):
            ap.error("--cert and --key are needed in mode " + args.mode)
        ctx = make_context(args)

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    lsock = socket.socket(family, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((args.host, 0))
    lsock.listen(128)
    port = lsock.getsockname()[1]
    log("-", "mode %s listening on %s port %d" % (args.mode, args.host, port))
    sys.stdout.write("port %d pid %d\n" % (port, os.getpid()))
    sys.stdout.flush()

    while True:
        try:
            raw, addr = lsock.accept()
        except InterruptedError:
            continue
        threading.Thread(target=handle, args=(ctx, raw, addr, args),
                         daemon=True).start()


if __name__ == "__main__":
    main()
