#!/usr/bin/env python3
"""A WebSocket server for spec/43 (Debian's python3-websockets, asyncio).

    ws_peer.py PORT [TLS_PORT CERT KEY]

Listens on 127.0.0.1:PORT (and with TLS on TLS_PORT, with the certificate
CERT and its key KEY), prints "ready" once it does, and serves until
SIGTERM. What it does depends on the request's path:

    /echo        echoes every message (text as text, binary as binary);
                 the text "count" is answered with how many messages this
                 connection got before it, and "path" with the path
    /frag        sends the text "ab" "cd" "ef" as fragments (then an
                 empty final frame: websockets' way), then echoes
    /ping        sends a ping "hi", waits for its pong, then sends the
                 text "pong received"; then echoes
    /close       closes with code 4001 and reason "bye"
    /big?N       sends one binary message of N bytes ("0123456789"...)
    /stall       sends nothing; reads until the client goes
    /drop        drops the TCP connection at once, without a close frame
    /forbidden   refuses the handshake: 403 with the body "no"

Frames from the client must be masked (RFC 6455): an unmasked one makes
the server close with 1002. Messages up to 16 MiB.
"""
import asyncio
import http
import signal
import ssl
import sys

import websockets


async def handler(ws, path=None):
    path = ws.path
    if path == "/frag":
        await ws.send(["ab", "cd", "ef"])
    elif path == "/ping":
        pong = await ws.ping(b"hi")
        await pong
        await ws.send("pong received")
    elif path == "/close":
        await ws.close(4001, "bye")
        return
    elif path.startswith("/big?"):
        n = int(path[5:])
        await ws.send((b"0123456789" * (n // 10 + 1))[:n])
    elif path == "/stall":
        try:
            async for _ in ws:
                pass
        except websockets.ConnectionClosed:
            pass
        return
    elif path == "/drop":
        ws.transport.abort()
        return
    count = 0
    try:
        async for msg in ws:
            if msg == "count":
                await ws.send(str(count))
            elif msg == "path":
                await ws.send(path)
            else:
                await ws.send(msg)
            count += 1
    except websockets.ConnectionClosed:
        pass


async def process_request(path, headers):
    if path == "/forbidden":
        return http.HTTPStatus.FORBIDDEN, [("Content-Length", "2")], b"no"
    return None


def serve(port, tls=None):
    return websockets.serve(handler, "127.0.0.1", port, ssl=tls,
                            process_request=process_request,
                            max_size=16 * 1024 * 1024, ping_interval=None)


async def main(argv):
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM,
                                                  stop.set_result, None)
    servers = [serve(int(argv[1]))]
    if len(argv) > 4:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(argv[3], argv[4])
        servers.append(serve(int(argv[2]), tls))
    for s in servers:
        await s
    print("ready", flush=True)
    await stop


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
