"""A TCP forwarder on 127.0.0.1 that can go silent: a network that drops
every packet from some moment on, its connections left open.

``SilentProxy(port)`` forwards each connection to ``127.0.0.1:port`` in
both directions (an asyncio loop in a daemon thread) until :meth:`silence`;
from then on it reads what either side sends and forwards nothing, and
accepts new connections without ever answering them.  :meth:`close` ends
it."""

from __future__ import annotations

import asyncio
import threading


class SilentProxy:
    def __init__(self, port: int) -> None:
        self.port, self.silent = port, threading.Event()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("the proxy did not start")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.listening}"

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0))
        self.listening = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _connection(self, client_r, client_w) -> None:
        if self.silent.is_set():
            await self._swallow(client_r)
            return
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.port)
        await asyncio.gather(self._pump(client_r, server_w), self._pump(server_r, client_w),
                             return_exceptions=True)

    async def _pump(self, reader, writer) -> None:
        while data := await reader.read(65536):
            if self.silent.is_set():
                continue  # dropped: the other side waits for it forever
            writer.write(data)
            await writer.drain()
        if not self.silent.is_set():
            writer.close()

    async def _swallow(self, reader) -> None:
        while await reader.read(65536):
            pass

    def silence(self) -> None:
        """Forward nothing more, on open connections and new ones."""
        self.silent.set()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
