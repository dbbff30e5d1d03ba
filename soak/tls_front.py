#!/usr/bin/env python3
"""The soak's TLS front (run by soak/run.sh when SOAK_TLS > 0).

    python3 soak/tls_front.py CERT KEY UPSTREAM_PORT OUT_FILE

Listens on a free port of 127.0.0.1 with TLS (CERT, KEY) and relays every
connection, in clear, to the soak server's UPSTREAM_PORT, so that the
client's TLS connections meet the same server protocol as its plain ones.
EOF goes through in both directions: the client's EOF becomes a TCP
half-close upstream; the server's close ends the TLS side with
close_notify. Writes the port it listens on to OUT_FILE once it accepts,
then runs until it is killed.
"""
import asyncio
import os
import ssl
import sys


async def pump(reader, writer, half_close):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if half_close and writer.can_write_eof():
            writer.write_eof()
        else:
            writer.close()
    except (ConnectionError, ssl.SSLError, OSError):
        writer.close()


async def relay(tls_reader, tls_writer, upstream_port):
    try:
        up_reader, up_writer = await asyncio.open_connection(
            "127.0.0.1", upstream_port)
    except OSError:
        tls_writer.close()
        return
    # the client's EOF: a half-close upstream (the server may still answer,
    # as after "Q"); the server's EOF: the end of the TLS connection
    _, pending = await asyncio.wait(
        [asyncio.ensure_future(pump(tls_reader, up_writer, True)),
         asyncio.ensure_future(pump(up_reader, tls_writer, False))],
        return_when=asyncio.FIRST_EXCEPTION)
    for task in pending:
        task.cancel()
    tls_writer.close()
    up_writer.close()


async def main():
    cert, key, upstream_port, out = sys.argv[1:5]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    async def on_accept(reader, writer):
        try:
            await relay(reader, writer, int(upstream_port))
        except (ConnectionError, ssl.SSLError, OSError):
            writer.close()

    server = await asyncio.start_server(
        on_accept, "127.0.0.1", 0, ssl=ctx, backlog=4096,
        ssl_handshake_timeout=10)
    port = server.sockets[0].getsockname()[1]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, out)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
