#!/usr/bin/python3
"""A TCP proxy that adds latency and jitter (issue 34): this kernel has no netem.

    proxy.py CONTROL LISTEN_HOST:PORT=TARGET_HOST:PORT ...

Runs in the harness's router namespace, between the daemons and the PostgreSQL servers. Each
chunk read from one side is written to the other after `delay_ms` ± `jitter_ms` (uniform), never
before a chunk read earlier in the same direction (TCP keeps order, so jitter only ever delays).
CONTROL is a JSON file, read again every 0.2 s: {"delay_ms": 50, "jitter_ms": 20}; missing or
unreadable means no delay. Loss is not done here: the harness drops packets with nftables
(`numgen random`), so that TCP retransmits them as on a real lossy link.

The proxy listens on a route only while its target accepts connections (probed every 0.1 s):
a server whose process died while its host is up refuses connections (RST), and so does the
proxy then. (A proxy that accepted and then closed would hide the next host from the daemons:
libpq does not try the next host of a multi-host CONNINFO when the first accepts TCP and closes
during the start-up exchange: "server closed the connection unexpectedly", and the whole
connection attempt fails. docs/postgres.md, "Faults, checked", has what that means for a
deployment with a proxy or load balancer per host.) When a connection breaks on either side,
the other side is closed. A silent partition is never made between the proxy and a server: the
harness cuts the daemon's side, where the daemon's own TCP notices it (the proxy would
otherwise acknowledge the daemon's bytes and hide the partition from the keepalives).
"""
import asyncio
import json
import random
import sys
import time

SETTINGS = {"delay_ms": 0.0, "jitter_ms": 0.0}


async def watch_control(path):
    while True:
        try:
            with open(path) as f:
                data = json.load(f)
            SETTINGS["delay_ms"] = float(data.get("delay_ms", 0))
            SETTINGS["jitter_ms"] = float(data.get("jitter_ms", 0))
        except (OSError, ValueError):
            SETTINGS["delay_ms"] = SETTINGS["jitter_ms"] = 0.0
        await asyncio.sleep(0.2)


async def pump(reader, writer):
    """Copies reader to writer, each chunk after its delay, in order."""
    queue = asyncio.Queue()

    async def deliver():
        try:
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            try:
                writer.close()
            except OSError:
                pass

    task = asyncio.ensure_future(deliver())
    last_due = 0.0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            delay = SETTINGS["delay_ms"]
            if delay > 0:
                jitter = SETTINGS["jitter_ms"]
                due = time.monotonic() + max(0.0, delay + random.uniform(-jitter, jitter)) / 1000
                due = max(due, last_due)
            else:
                due = 0.0
            last_due = due
            queue.put_nowait((due, data))
    except (OSError, ConnectionError):
        pass
    queue.put_nowait((0.0, None))
    await task


async def serve(target_host, target_port, client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.wait_for(
            asyncio.open_connection(target_host, target_port), timeout=10)
    except (OSError, asyncio.TimeoutError):
        client_writer.close()
        return
    await asyncio.gather(pump(client_reader, server_writer), pump(server_reader, client_writer))


async def probe(host, port):
    try:
        _, w = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=0.5)
    except (OSError, asyncio.TimeoutError):
        return False
    w.close()
    return True


async def route(lhost, lport, thost, tport):
    """Listens on lhost:lport while thost:tport accepts connections."""
    server = None

    def handler(r, w):
        return serve(thost, tport, r, w)

    while True:
        up = await probe(thost, tport)
        if up and server is None:
            try:
                server = await asyncio.start_server(handler, lhost, lport, reuse_address=True)
                print(f"listening on {lhost}:{lport} ({thost}:{tport} accepts)", flush=True)
            except OSError as e:
                print(f"cannot listen on {lhost}:{lport}: {e}", flush=True)
        elif not up and server is not None:
            server.close()
            server = None
            print(f"not listening on {lhost}:{lport} ({thost}:{tport} refuses)", flush=True)
        await asyncio.sleep(0.1)


async def main(control, routes):
    asyncio.ensure_future(watch_control(control))
    tasks = []
    for r in routes:
        listen, target = r.split("=")
        lhost, lport = listen.rsplit(":", 1)
        thost, tport = target.rsplit(":", 1)
        tasks.append(route(lhost, int(lport), thost, int(tport)))
    print("proxy ready", flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
