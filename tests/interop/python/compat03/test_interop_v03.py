"""Interop: the official Python `a2a-sdk` 0.3.x client (A2A 0.3, JSON-RPC) against the
server at A2A_INTEROP_URL running the `--conformance` agent.

The 0.3 client sends no A2A-Version header, so the server must treat these requests as
0.3 (`message/send`, `message/stream`, `tasks/get`, ... on POST /). The client is built from
a hand-made 0.3 card pointing at `<base>/`, so these tests do not depend on whether the
served card carries 0.3 compat fields; `test_card_resolution_v03` checks that separately.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    Message,
    Part,
    Role,
    Task,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)


BASE_URL = os.environ.get('A2A_INTEROP_URL', '').rstrip('/')
TIMEOUT = 20.0
ROOT = Path(__file__).resolve().parents[4]
A2A = os.environ.get('A2A_BIN', str(ROOT / 'target' / 'debug' / 'a2a'))

pytestmark = pytest.mark.skipif(not BASE_URL, reason='A2A_INTEROP_URL is not set')


def card_v03() -> AgentCard:
    return AgentCard(
        name='interop target',
        description='server under test',
        url=f'{BASE_URL}/',
        version='0.0.0',
        protocol_version='0.3.0',
        preferred_transport='JSONRPC',
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[],
    )


def user_message(prefix: str, text: str = 'hello', **kw) -> Message:
    return Message(
        kind='message',
        message_id=f'{prefix}-{uuid.uuid4()}',
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        **kw,
    )


def texts(parts) -> list[str]:
    return [p.root.text for p in parts if getattr(p.root, 'kind', None) == 'text']


@pytest.fixture
async def http():
    seen: list[httpx.Request] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request)

    async with httpx.AsyncClient(
        timeout=httpx.Timeout(30.0), event_hooks={'request': [hook]}
    ) as c:
        c.seen = seen  # type: ignore[attr-defined]
        yield c


def make_client(http: httpx.AsyncClient, *, streaming: bool):
    return ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card_v03())


async def collect(aiter, timeout: float = TIMEOUT) -> list:
    async def run():
        return [ev async for ev in aiter]

    return await asyncio.wait_for(run(), timeout)


async def test_send_blocking_v03(http):
    client = make_client(http, streaming=False)
    events = await collect(client.send_message(user_message('tck-complete-task', 'hi')))
    assert len(events) == 1
    task, update = events[0]
    assert isinstance(task, Task) and update is None
    assert task.status.state == TaskState.completed, task.status.state
    assert task.id and task.context_id
    # A 0.3 request: no A2A-Version header, 0.3 method name.
    sent = http.seen[-1]
    assert 'a2a-version' not in {k.lower() for k in sent.headers.keys()}
    assert b'"message/send"' in sent.content


async def test_direct_message_v03(http):
    client = make_client(http, streaming=False)
    events = await collect(client.send_message(user_message('tck-message-response', 'ping-03')))
    assert len(events) == 1 and isinstance(events[0], Message), events
    assert events[0].role == Role.agent
    assert 'Direct message response' in texts(events[0].parts)


async def test_stream_v03(http):
    client = make_client(http, streaming=True)
    events = await collect(client.send_message(user_message('tck-stream', 'stream-03')))
    assert events, 'empty stream'
    first_task, first_update = events[0]
    assert first_update is None, 'the first streamed event should be the Task'
    updates = [u for _, u in events if u is not None]
    statuses = [u for u in updates if isinstance(u, TaskStatusUpdateEvent)]
    assert statuses, 'no status-update events'
    assert statuses[-1].status.state == TaskState.completed
    assert statuses[-1].final is True, '0.3 streams mark the last status update final'
    final_task, _ = events[-1]
    assert final_task.status.state == TaskState.completed
    arts = final_task.artifacts or []
    assert any('stream-03' in t for a in arts for t in texts(a.parts)), arts


async def test_get_task_v03(http):
    client = make_client(http, streaming=False)
    [(task, _)] = await collect(client.send_message(user_message('tck-complete-task', 'get-03')))
    got = await client.get_task(TaskQueryParams(id=task.id))
    assert got.id == task.id
    assert got.status.state == TaskState.completed
    assert got.history and any('get-03' in t for m in got.history for t in texts(m.parts))
    one = await client.get_task(TaskQueryParams(id=task.id, history_length=1))
    assert one.history is None or len(one.history) <= 1


async def test_card_resolution_v03(http):
    raw = (await http.get(f'{BASE_URL}/.well-known/agent-card.json')).json()
    ifaces = raw.get('supportedInterfaces') or []
    if 'url' not in raw and not any(
        str(i.get('protocolVersion', '')).startswith('0.3') for i in ifaces
    ):
        pytest.skip('served card declares no 0.3 interface and no top-level url')
    card = await A2ACardResolver(http, BASE_URL).get_agent_card()
    assert card.url and card.name
    client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    [(task, _)] = await collect(client.send_message(user_message('tck-complete-task')))
    assert task.status.state == TaskState.completed


async def test_webhook_registered_by_the_0_3_client_gets_0_3_tasks(http):
    """A 0.3 receiver reads each notification as the 0.3 Task (what the official 0.3 server
    posts), not as a 1.0 StreamResponse."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from a2a.types import MessageSendConfiguration, PushNotificationConfig

    posts: list[tuple[dict, bytes]] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('content-length', 0)))
            posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    receiver = ThreadingHTTPServer(('127.0.0.1', 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        client = make_client(http, streaming=False)
        config = MessageSendConfiguration(
            push_notification_config=PushNotificationConfig(
                url=f'http://127.0.0.1:{receiver.server_port}/hook', token='tok-03'
            )
        )
        [(task, _)] = await collect(
            client.send_message(user_message('tck-complete-task', 'push-03'), configuration=config)
        )
        assert task.status.state == TaskState.completed
        for _ in range(300):
            if any(Task.model_validate_json(b).status.state == TaskState.completed for _, b in posts):
                break
            await asyncio.sleep(0.01)
        assert posts, 'no notification arrived'
        for headers, body in posts:
            got = Task.model_validate_json(body)
            assert got.id == task.id and got.kind == 'task'
            assert headers.get('x-a2a-notification-token') == 'tok-03'
        assert Task.model_validate_json(posts[-1][1]).status.state == TaskState.completed
    finally:
        receiver.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def serve(tmp_path):
    """Starts `a2a serve ARGS` on a free loopback port; yields its URL. Stopped after the test."""
    procs = []

    def start(*args: str) -> str:
        port = free_port()
        log = open(tmp_path / f'serve-{port}.log', 'w')
        proc = subprocess.Popen([A2A, 'serve', '--port', str(port), *args], stdout=log, stderr=subprocess.STDOUT)
        procs.append(proc)
        url = f'http://127.0.0.1:{port}'
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / f'serve-{port}.log').read_text()
            try:
                if httpx.get(f'{url}/.well-known/agent-card.json', timeout=1).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        pytest.fail(f'a2a serve did not answer on {port}')

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def test_signed_card_verifies_with_the_0_3_verifier(serve):
    """a2a-sdk 0.3 verifies a card over its own 0.3 form (canonicalize_agent_card), not over the
    1.0 card's JCS form: our signed cards carry a signature for each form it checks."""
    from cryptography.hazmat.primitives import serialization
    from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier

    pem = ROOT / 'core' / 'tests' / 'fixtures' / 'jwt-ec.pem'
    public = serialization.load_pem_private_key(pem.read_bytes(), None).public_key()
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    verifier = create_signature_verifier(lambda kid, jku: public_pem, ['ES256'])
    url = serve('--echo', '--store', 'memory', '--card-signing-key', str(pem), '--api-key', 'k-03')
    async with httpx.AsyncClient(headers={'X-API-Key': 'k-03'}) as http:
        card = await A2ACardResolver(http, url).get_agent_card(signature_verifier=verifier)
        assert card.supports_authenticated_extended_card
        client = await ClientFactory.connect(url, client_config=ClientConfig(httpx_client=http))
        extended = await client.get_card(signature_verifier=verifier)
        assert extended.name == card.name
        # Not a verifier that passes everything: a card changed after signing fails it.
        tampered = card.model_copy(update={'description': 'changed after signing'})
        with pytest.raises(InvalidSignaturesError):
            verifier(tampered)
        # The credentials the card asks for get through (its 0.3 `security` list names them).
        answers = await collect(client.send_message(user_message('signed', 'hi')))
        assert answers, 'no answer to a call with the API key'
