"""Shared fixtures for the interop suite driven by the official `a2a-sdk` (1.x) client.

The server under test is given by A2A_INTEROP_URL (e.g. http://127.0.0.1:8080) and must run
the `--conformance` agent (behaviour selected by the messageId prefix).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid

from dataclasses import dataclass, field

import grpc
import httpx
import pytest

from aiohttp import web

from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role


BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC']


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get('A2A_INTEROP_URL'):
        raise pytest.UsageError(
            'A2A_INTEROP_URL is not set (e.g. http://127.0.0.1:8080)'
        )


@pytest.fixture(scope='session')
def base_url() -> str:
    return os.environ['A2A_INTEROP_URL'].rstrip('/')


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    return request.param


def user_message(
    prefix: str,
    text: str = 'hello',
    *,
    task_id: str = '',
    context_id: str = '',
) -> Message:
    """A user message whose messageId starts with `prefix` (selects the scripted agent)."""
    return Message(
        message_id=f'{prefix}-{uuid.uuid4()}',
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


@pytest.fixture
async def client_factory(base_url: str):
    """Returns `make(binding, streaming=False)`: resolves the card at A2A_INTEROP_URL and
    builds an official SDK client bound to one transport. Everything is closed at teardown."""
    made = []
    channels = []

    def channel(url: str):
        # The card's GRPC interface is host:port, what grpcio dials.
        c = grpc.aio.insecure_channel(url)
        channels.append(c)
        return c

    async def make(binding: str, *, streaming: bool = False):
        http = httpx.AsyncClient(timeout=httpx.Timeout(30.0))
        made.append(http)
        config = ClientConfig(
            streaming=streaming,
            supported_protocol_bindings=[binding],
            use_client_preference=True,
            httpx_client=http,
            grpc_channel_factory=channel,
        )
        client = await ClientFactory(config).create_from_url(base_url)
        transport = type(getattr(client, '_transport', None)).__name__
        expected = {'JSONRPC': 'JsonRpcTransport', 'HTTP+JSON': 'RestTransport', 'GRPC': 'GrpcTransport'}
        assert transport in (expected[binding], 'TenantTransportDecorator'), (
            f'SDK picked transport {transport} for binding {binding}'
        )
        return client

    yield make
    for http in made:
        await http.aclose()
    for c in channels:
        await c.close()


@dataclass
class Received:
    headers: 'multidict.CIMultiDictProxy[str]'
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1 recording every POST."""

    url: str
    posts: list[Received] = field(default_factory=list)
    event: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for(self, predicate, timeout: float = 15.0) -> Received:
        """Waits until a received POST satisfies predicate(Received)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for p in self.posts:
                try:
                    if predicate(p):
                        return p
                except (ValueError, KeyError, TypeError):
                    continue
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(
                    f'no matching push within {timeout}s; got {len(self.posts)} POSTs: '
                    + '; '.join(p.body.decode(errors='replace')[:300] for p in self.posts)
                )
            self.event.clear()
            try:
                await asyncio.wait_for(self.event.wait(), remaining)
            except asyncio.TimeoutError:
                pass


@pytest.fixture
async def receiver():
    recv: Receiver | None = None

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        assert recv is not None
        # Header names are case-insensitive: keep the multidict, not a plain dict.
        recv.posts.append(Received(request.headers.copy(), body))
        recv.event.set()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post('/{tail:.*}', handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    recv = Receiver(url=f'http://127.0.0.1:{port}/webhook')
    try:
        yield recv
    finally:
        await runner.cleanup()


@pytest.fixture
async def raw_http():
    async with httpx.AsyncClient(timeout=10) as c:
        yield c
