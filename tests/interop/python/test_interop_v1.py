"""Interop: the official Python `a2a-sdk` 1.x client (A2A 1.0) against the server at
A2A_INTEROP_URL running the `--conformance` agent. Most tests run on JSON-RPC, HTTP+JSON and
gRPC (a2a-sdk[grpc], grpcio), chosen through the SDK's ClientConfig.supported_protocol_bindings."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from google.protobuf import json_format

from a2a.client import A2ACardResolver
from a2a.types.a2a_pb2 import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from conftest import user_message


TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
TIMEOUT = 20.0


def state_name(state: int) -> str:
    return TaskState.Name(state)


def text_parts(parts) -> list[str]:
    return [p.text for p in parts if p.HasField('text')]


async def collect(aiter, timeout: float = TIMEOUT) -> list[StreamResponse]:
    """Drains an SDK event iterator; fails if the stream does not close in time."""

    async def run():
        return [ev async for ev in aiter]

    return await asyncio.wait_for(run(), timeout)


async def send_blocking(client, msg: Message, **config) -> StreamResponse:
    events = await collect(
        client.send_message(
            SendMessageRequest(
                message=msg, configuration=SendMessageConfiguration(**config)
            )
        )
    )
    assert len(events) == 1, f'non-streaming send yielded {len(events)} events'
    return events[0]


async def send_for_task(client, msg: Message, **config) -> Task:
    resp = await send_blocking(client, msg, **config)
    assert resp.HasField('task'), f'expected a Task, got {resp}'
    return resp.task


async def wait_state(client, task_id: str, states, timeout: float = TIMEOUT) -> Task:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        task = await client.get_task(GetTaskRequest(id=task_id))
        if task.status.state in states:
            return task
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(
                f'task {task_id} still {state_name(task.status.state)} after {timeout}s'
            )
        await asyncio.sleep(0.1)


def final_state_of_stream(events: list[StreamResponse]) -> int:
    """The task state after applying every event of a task-lifecycle stream."""
    state = TaskState.TASK_STATE_UNSPECIFIED
    for ev in events:
        if ev.HasField('task'):
            state = ev.task.status.state
        elif ev.HasField('status_update'):
            state = ev.status_update.status.state
    return state


# --------------------------------------------------------------------------- card


async def test_card_resolution(base_url: str, raw_http: httpx.AsyncClient):
    card = await A2ACardResolver(raw_http, base_url).get_agent_card()
    assert card.name
    assert card.description
    assert card.version
    assert card.capabilities.streaming
    assert card.capabilities.push_notifications
    assert card.default_input_modes and card.default_output_modes
    bindings = {
        (i.protocol_binding, i.protocol_version.split('.')[0:2] == ['1', '0'])
        for i in card.supported_interfaces
    }
    assert ('JSONRPC', True) in bindings, f'no JSONRPC 1.0 interface: {card.supported_interfaces}'
    assert ('HTTP+JSON', True) in bindings, f'no HTTP+JSON 1.0 interface: {card.supported_interfaces}'
    assert ('GRPC', True) in bindings, f'no GRPC 1.0 interface: {card.supported_interfaces}'
    for iface in card.supported_interfaces:
        if iface.protocol_binding == 'GRPC':
            # A gRPC target is host:port (what grpcio dials), on the same port.
            assert iface.url == base_url.split('://', 1)[1], iface
        else:
            assert iface.url.startswith('http://') or iface.url.startswith('https://'), iface

    # The raw document is ProtoJSON (camelCase) with every REQUIRED AgentCard field.
    raw = (await raw_http.get(f'{base_url}/.well-known/agent-card.json')).json()
    for key in (
        'name',
        'description',
        'supportedInterfaces',
        'version',
        'capabilities',
        'defaultInputModes',
        'defaultOutputModes',
        'skills',
    ):
        assert key in raw, f'agent card lacks {key}'
    legacy = await raw_http.get(f'{base_url}/.well-known/agent.json')
    assert legacy.status_code == 200


async def test_extended_agent_card(client_factory, binding):
    client = await client_factory(binding)
    card = client._card  # noqa: SLF001 - the resolved public card
    if not card.capabilities.extended_agent_card:
        pytest.skip('card does not declare capabilities.extendedAgentCard')
    ext = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert ext.name
    assert ext.supported_interfaces


# --------------------------------------------------------------------------- send


async def test_send_blocking_completed(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message('tck-complete-task', 'hi'))
    assert task.id and task.context_id
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, state_name(task.status.state)
    assert task.status.HasField('message'), 'COMPLETED status should carry the agent message'
    assert task.status.message.role == Role.ROLE_AGENT
    assert 'Hello from TCK' in text_parts(task.status.message.parts)


@pytest.mark.parametrize(
    'prefix',
    ['tck-artifact-text', 'tck-artifact-file', 'tck-artifact-file-url', 'tck-artifact-data'],
)
async def test_send_artifact_kinds(client_factory, binding, prefix):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message(prefix, 'make an artifact'))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(task.artifacts) == 1, task.artifacts
    art = task.artifacts[0]
    assert art.artifact_id
    assert len(art.parts) >= 1
    part = art.parts[0]
    if prefix == 'tck-artifact-text':
        assert part.HasField('text') and part.text
    elif prefix == 'tck-artifact-file':
        assert part.HasField('raw') and len(part.raw) > 0
        assert part.media_type == 'text/plain'
        assert part.filename
    elif prefix == 'tck-artifact-file-url':
        assert part.HasField('url') and part.url
    else:
        assert part.HasField('data')
        assert json_format.MessageToDict(part.data) == {'key': 'value', 'count': 42}


async def test_send_echo_artifact(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message('tck-stream', 'echo me please'))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    texts = [t for a in task.artifacts for t in text_parts(a.parts)]
    assert any('echo me please' in t for t in texts), texts


@pytest.mark.parametrize(
    ('prefix', 'state'),
    [
        ('tck-reject-task', TaskState.TASK_STATE_REJECTED),
        ('tck-fail-task', TaskState.TASK_STATE_FAILED),
    ],
)
async def test_send_terminal_states(client_factory, binding, prefix, state):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message(prefix))
    assert task.status.state == state, state_name(task.status.state)


async def test_send_return_immediately(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(
        client,
        user_message('tck-delayed-complete', 'delay_ms=1500'),
        return_immediately=True,
    )
    assert task.status.state in (
        TaskState.TASK_STATE_SUBMITTED,
        TaskState.TASK_STATE_WORKING,
    ), f'returnImmediately returned {state_name(task.status.state)}'
    done = await wait_state(client, task.id, TERMINAL)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED


async def test_direct_message_response(client_factory, binding):
    client = await client_factory(binding)
    resp = await send_blocking(client, user_message('tck-message-response', 'ping-123'))
    assert resp.HasField('message'), f'expected a direct Message, got {resp}'
    msg = resp.message
    assert msg.role == Role.ROLE_AGENT
    assert msg.message_id
    assert msg.context_id, 'server messages MUST carry contextId'
    assert not msg.task_id, 'no task was created, so no taskId'
    assert 'Direct message response' in text_parts(msg.parts)


async def test_stream_direct_message(client_factory, binding):
    client = await client_factory(binding, streaming=True)
    events = await collect(
        client.send_message(
            SendMessageRequest(message=user_message('tck-message-response', 'ping-stream'))
        )
    )
    assert len(events) == 1 and events[0].HasField('message'), events


# --------------------------------------------------------------------------- stream


async def test_stream_task_then_updates(client_factory, binding):
    client = await client_factory(binding, streaming=True)
    events = await collect(
        client.send_message(
            SendMessageRequest(message=user_message('tck-stream', 'stream me'))
        )
    )
    assert events, 'empty stream'
    assert events[0].HasField('task'), f'first event must be the Task, got {events[0]}'
    task_id = events[0].task.id
    kinds = [ev.WhichOneof('payload') for ev in events]
    assert 'message' not in kinds, kinds
    for ev in events[1:]:
        which = ev.WhichOneof('payload')
        inner = getattr(ev, which)
        assert (inner.id if which == 'task' else inner.task_id) == task_id
    assert 'artifact_update' in kinds, kinds
    arts = [ev.artifact_update.artifact for ev in events if ev.HasField('artifact_update')]
    assert any('stream me' in t for a in arts for t in text_parts(a.parts))
    # The last event is the terminal status (a server MAY resend a final Task snapshot).
    assert kinds[-1] in ('status_update', 'task'), f'last event: {kinds[-1]}'
    assert final_state_of_stream(events) == TaskState.TASK_STATE_COMPLETED
    # Nothing after the terminal status (the stream closed).
    states = [ev.status_update.status.state for ev in events if ev.HasField('status_update')]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED, [state_name(s) for s in states]
    assert all(s not in TERMINAL for s in states[:-1]), [state_name(s) for s in states]


# --------------------------------------------------------------------------- get


async def test_get_task_history_length(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message('tck-complete-task', 'history please'))
    full = await client.get_task(GetTaskRequest(id=task.id))
    assert full.id == task.id
    assert full.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(full.history) >= 1, 'the user message should be in the history'
    assert any(
        m.role == Role.ROLE_USER and 'history please' in text_parts(m.parts)
        for m in full.history
    )
    one = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
    assert len(one.history) <= 1, len(one.history)
    if len(full.history) >= 1:
        assert len(one.history) == 1
        assert one.history[0] == full.history[-1], 'historyLength keeps the most recent'
    zero = await client.get_task(GetTaskRequest(id=task.id, history_length=0))
    assert len(zero.history) == 0


async def test_get_unknown_task(client_factory, binding):
    client = await client_factory(binding)
    with pytest.raises(TaskNotFoundError):
        await client.get_task(GetTaskRequest(id='no-such-task-00000000'))


# --------------------------------------------------------------------------- cancel


async def test_cancel_running_task(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(
        client,
        user_message('tck-delayed-complete', 'delay_ms=15000'),
        return_immediately=True,
    )
    assert task.status.state not in TERMINAL
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.id == task.id
    if canceled.status.state != TaskState.TASK_STATE_CANCELED:
        canceled = await wait_state(client, task.id, TERMINAL, timeout=5)
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED, state_name(
        canceled.status.state
    )
    # Stays canceled (the agent stopped; it never completes later).
    await asyncio.sleep(0.3)
    again = await client.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_CANCELED
    # Re-cancel: TaskNotCancelable (the task is terminal) or, read as idempotent, the
    # CANCELED task. The official SDK servers differ here (Python: error, JS: the task).
    try:
        again = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_CANCELED
    except TaskNotCancelableError:
        pass


# --------------------------------------------------------------------------- multi-turn


async def test_multi_turn_input_required(client_factory, binding):
    client = await client_factory(binding)
    first = await send_for_task(client, user_message('tck-input-required', 'start'))
    assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, state_name(
        first.status.state
    )
    assert first.status.HasField('message'), 'INPUT_REQUIRED should say what is needed'
    assert first.status.message.role == Role.ROLE_AGENT
    second = await send_for_task(
        client,
        user_message(
            'tck-complete-task', 'here is more', task_id=first.id, context_id=first.context_id
        ),
    )
    assert second.id == first.id
    assert second.context_id == first.context_id
    assert second.status.state == TaskState.TASK_STATE_COMPLETED, state_name(
        second.status.state
    )
    final = await client.get_task(GetTaskRequest(id=first.id))
    user_texts = [t for m in final.history if m.role == Role.ROLE_USER for t in text_parts(m.parts)]
    assert 'start' in user_texts and 'here is more' in user_texts, user_texts


async def test_message_to_terminal_task_rejected(client_factory, binding):
    client = await client_factory(binding)
    task = await send_for_task(client, user_message('tck-complete-task'))
    with pytest.raises(UnsupportedOperationError):
        await send_blocking(
            client,
            user_message('tck-complete-task', task_id=task.id, context_id=task.context_id),
        )


# --------------------------------------------------------------------------- subscribe


async def test_subscribe_running_task(client_factory, binding):
    client = await client_factory(binding, streaming=True)
    # returnImmediately through the non-streaming path of the same transport.
    plain = await client_factory(binding)
    task = await send_for_task(
        plain,
        user_message('tck-delayed-complete', 'delay_ms=2000'),
        return_immediately=True,
    )
    events = await collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))
    assert events, 'empty subscription stream'
    assert events[0].HasField('task'), f'first event must be the Task snapshot: {events[0]}'
    assert events[0].task.id == task.id
    assert events[0].task.status.state not in TERMINAL
    assert len(events) >= 2, 'expected updates after the snapshot'
    for ev in events[1:]:
        assert ev.WhichOneof('payload') in ('status_update', 'artifact_update', 'task'), ev
    assert final_state_of_stream(events) == TaskState.TASK_STATE_COMPLETED


async def test_subscribe_terminal_task_fails(client_factory, binding):
    client = await client_factory(binding, streaming=True)
    plain = await client_factory(binding)
    task = await send_for_task(plain, user_message('tck-complete-task'))
    with pytest.raises(UnsupportedOperationError):
        await collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))


# --------------------------------------------------------------------------- push


def check_push(p, token: str, credentials: str, task_id: str) -> dict:
    ctype = p.headers.get('Content-Type', '').split(';')[0].strip().lower()
    assert ctype == 'application/a2a+json', f'push Content-Type is {ctype!r}'
    assert p.headers.get('Authorization') == f'Bearer {credentials}', p.headers
    assert p.headers.get('X-A2A-Notification-Token') == token, p.headers
    body = p.json()
    # Exactly one StreamResponse member, and it parses strictly as a StreamResponse.
    members = [k for k in ('task', 'message', 'statusUpdate', 'artifactUpdate') if k in body]
    assert len(members) == 1, f'push body is not a StreamResponse: {body}'
    sr = json_format.ParseDict(body, StreamResponse())
    which = sr.WhichOneof('payload')
    inner = getattr(sr, which)
    got_task = inner.id if which == 'task' else getattr(inner, 'task_id', '')
    assert got_task == task_id, f'push for task {got_task}, expected {task_id}'
    return body


def is_completed(body: dict) -> bool:
    su = body.get('statusUpdate') or {}
    t = body.get('task') or {}
    return (su.get('status') or t.get('status') or {}).get('state') == 'TASK_STATE_COMPLETED'


async def test_push_via_send_configuration(client_factory, binding, receiver):
    client = await client_factory(binding)
    token, creds = f'tok-{binding}', f'secret-{binding}'
    push = TaskPushNotificationConfig(
        url=receiver.url,
        token=token,
        authentication=AuthenticationInfo(scheme='Bearer', credentials=creds),
    )
    task = await send_for_task(
        client, user_message('tck-complete-task'), task_push_notification_config=push
    )
    await receiver.wait_for(lambda p: is_completed(p.json()))
    for p in receiver.posts:
        check_push(p, token, creds, task.id)


async def test_push_config_crud_on_running_task(client_factory, binding, receiver):
    client = await client_factory(binding)
    task = await send_for_task(
        client,
        user_message('tck-delayed-complete', 'delay_ms=2000'),
        return_immediately=True,
    )
    token, creds = f'crud-{binding}', f'crud-secret-{binding}'
    created = await client.create_task_push_notification_config(
        TaskPushNotificationConfig(
            task_id=task.id,
            url=receiver.url,
            token=token,
            authentication=AuthenticationInfo(scheme='Bearer', credentials=creds),
        )
    )
    assert created.id, 'server must assign a config id'
    assert created.task_id == task.id
    assert created.url == receiver.url

    got = await client.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )
    assert got.id == created.id and got.url == receiver.url
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert created.id in [c.id for c in listed.configs]

    await receiver.wait_for(lambda p: is_completed(p.json()))
    for p in receiver.posts:
        check_push(p, token, creds, task.id)

    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )
    after = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert created.id not in [c.id for c in after.configs]
    # Delete is idempotent.
    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )


# --------------------------------------------------------------------------- list


async def test_list_tasks(client_factory, binding):
    client = await client_factory(binding)
    t1 = await send_for_task(client, user_message('tck-stream', 'first'))
    await asyncio.sleep(0.02)  # distinct status timestamps (millisecond precision)
    t2 = await send_for_task(
        client, user_message('tck-stream', 'second', context_id=t1.context_id)
    )
    assert t2.context_id == t1.context_id and t2.id != t1.id

    listed = await client.list_tasks(ListTasksRequest(context_id=t1.context_id))
    ids = [t.id for t in listed.tasks]
    assert set(ids) == {t1.id, t2.id}, ids
    assert listed.next_page_token == ''
    assert all(len(t.artifacts) == 0 for t in listed.tasks), 'artifacts only with includeArtifacts'
    assert ids[0] == t2.id, 'newest first'

    with_art = await client.list_tasks(
        ListTasksRequest(context_id=t1.context_id, include_artifacts=True)
    )
    assert all(len(t.artifacts) == 1 for t in with_art.tasks)

    page1 = await client.list_tasks(ListTasksRequest(context_id=t1.context_id, page_size=1))
    assert len(page1.tasks) == 1 and page1.next_page_token
    page2 = await client.list_tasks(
        ListTasksRequest(context_id=t1.context_id, page_size=1, page_token=page1.next_page_token)
    )
    assert len(page2.tasks) == 1
    assert {page1.tasks[0].id, page2.tasks[0].id} == {t1.id, t2.id}

    done = await client.list_tasks(
        ListTasksRequest(context_id=t1.context_id, status=TaskState.TASK_STATE_COMPLETED)
    )
    assert {t.id for t in done.tasks} == {t1.id, t2.id}


# --------------------------------------------------------------------------- raw wire


async def test_version_header_and_wire_shape(base_url: str, raw_http: httpx.AsyncClient):
    """What the SDK puts on the wire for SendMessage, replayed by hand: the server must
    answer the 1.0 wrapper shape when A2A-Version: 1.0 is sent."""
    body = {
        'jsonrpc': '2.0',
        'id': 'wire-1',
        'method': 'SendMessage',
        'params': {
            'message': {
                'messageId': 'tck-complete-task-wire',
                'role': 'ROLE_USER',
                'parts': [{'text': 'hi'}],
            }
        },
    }
    r = await raw_http.post(f'{base_url}/', json=body, headers={'A2A-Version': '1.0'})
    assert r.status_code == 200
    data = r.json()
    assert data.get('jsonrpc') == '2.0' and data.get('id') == 'wire-1', data
    assert 'task' in data['result'], data
    assert data['result']['task']['status']['state'] == 'TASK_STATE_COMPLETED'
    assert 'kind' not in data['result']['task']


async def test_grpc_health_service_with_grpcio_health_checking(base_url: str) -> None:
    """The standard gRPC health service (grpcio-health-checking's own client, as Kubernetes'
    gRPC probes and grpc_health_probe call it) on the agent's port, without credentials."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(base_url.split('://', 1)[1]) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ('', 'lf.a2a.v1.A2AService'):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await health.Check(health_pb2.HealthCheckRequest(service='no.such.Service'), timeout=TIMEOUT)
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        watch = health.Watch(health_pb2.HealthCheckRequest(service=''))
        first = await asyncio.wait_for(watch.read(), TIMEOUT)
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()
