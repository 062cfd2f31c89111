"""Interop, the other direction: OUR client (through the `a2a` CLI) against the OFFICIAL servers.

Peers (tests/interop/peers/ and tests/interop/js/peer_server.mjs), the same small agent on each:
  python   a2a-sdk 1.x   A2A 1.0, JSON-RPC + HTTP+JSON + gRPC (grpcio, its own port),
                         push notifications, extended card
  js       @a2a-js/sdk   A2A 1.0, JSON-RPC + HTTP+JSON (under /rest) + gRPC (@grpc/grpc-js, its
                         own port), no push
  python03 a2a-sdk 0.3   A2A 0.3 only: our client must fall back to 0.3 by itself

Environment: A2A_BIN (our CLI), PEER_V1_PYTHON / PEER_V03_PYTHON (venv interpreters with the
peers' requirements), PEER_JS_DIR (tests/interop/js with node_modules).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import uuid

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parent
A2A = os.environ.get('A2A_BIN', str(INTEROP.parent.parent / 'target' / 'debug' / 'a2a'))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


PEERS = {
    'python': dict(version='1.0', push=True, list=True, extended=True, bindings=['jsonrpc', 'http-json', 'grpc']),
    'js': dict(version='1.0', push=False, list=True, extended=False, bindings=['jsonrpc', 'http-json', 'grpc']),
    'python03': dict(version='0.3', push=True, list=False, extended=False, bindings=['jsonrpc']),
}


def command(name: str, port: int) -> list[str]:
    if name == 'python':
        peer = str(INTEROP / 'peers' / 'python_v1_server.py')
        return [os.environ['PEER_V1_PYTHON'], peer, str(port), str(free_port())]
    if name == 'python03':
        return [os.environ['PEER_V03_PYTHON'], str(INTEROP / 'peers' / 'python_v03_server.py'), str(port)]
    return ['node', str(Path(os.environ.get('PEER_JS_DIR', INTEROP / 'js')) / 'peer_server.mjs'), str(port), str(free_port())]


@pytest.fixture(scope='module', params=list(PEERS))
def peer(request, tmp_path_factory):
    name = request.param
    port = free_port()
    log = tmp_path_factory.mktemp(name) / 'peer.log'
    with open(log, 'w') as out:
        proc = subprocess.Popen(command(name, port), stdout=out, stderr=subprocess.STDOUT)
    url = f'http://127.0.0.1:{port}'
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f'{name} peer exited: {log.read_text()[-2000:]}')
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f'{name} peer did not listen on {port}')
    yield dict(PEERS[name], name=name, url=url)
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def a2a(*args: str, ok: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs our CLI; with ok=True it must succeed."""
    proc = subprocess.run([A2A, *args], capture_output=True, text=True, timeout=timeout)
    if ok:
        assert proc.returncode == 0, f'a2a {" ".join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}'
    return proc


def a2a_json(*args: str) -> dict:
    return json.loads(a2a(*args, '--json').stdout)


def a2a_lines(*args: str) -> list[dict]:
    return [json.loads(line) for line in a2a(*args, '--json').stdout.splitlines() if line.strip()]


def texts(parts: list[dict]) -> list[str]:
    return [p['text'] for p in parts if 'text' in p]


def test_card_names_the_protocol_in_use(peer):
    card = a2a_json('card', peer['url'])
    assert card['name'].startswith('interop peer')
    assert any(i['protocolVersion'].startswith(peer['version']) for i in card['supportedInterfaces']), card
    human = a2a('card', peer['url']).stdout
    assert f'JSONRPC {peer["version"]}' in human, human


@pytest.mark.parametrize('binding', ['jsonrpc', 'http-json', 'grpc'])
def test_send_blocking_completes_with_the_echo(peer, binding):
    if binding not in peer['bindings']:
        pytest.skip(f'{peer["name"]} has no {binding} interface')
    word = f'hello-{uuid.uuid4().hex[:8]}'
    reply = a2a_json('send', peer['url'], word, '--transport', binding)
    task = reply['task']
    assert task['status']['state'] == 'TASK_STATE_COMPLETED', task
    echoed = [t for a in task.get('artifacts', []) for t in texts(a['parts'])]
    assert word in echoed, task
    # The same task, read back.
    got = a2a_json('get', peer['url'], task['id'], '--transport', binding)
    assert got['id'] == task['id'] and got['status']['state'] == 'TASK_STATE_COMPLETED'


def test_direct_message_reply(peer):
    reply = a2a_json('send', peer['url'], 'reply-message')
    assert texts(reply['message']['parts']) == ['a direct reply'], reply
    assert reply['message']['role'] == 'ROLE_AGENT'


def test_stream_shows_task_then_updates_then_ends(peer):
    events = a2a_lines('send', peer['url'], 'stream me', '--stream')
    assert 'task' in events[0], events[0]
    assert any('artifactUpdate' in e for e in events), events
    last = events[-1]
    state = last.get('statusUpdate', last.get('task', {})).get('status', {}).get('state')
    assert state == 'TASK_STATE_COMPLETED', events
    ids = {e.get('statusUpdate', e.get('artifactUpdate', e.get('task', {}))).get('taskId') or e.get('task', {}).get('id') for e in events}
    assert len(ids) == 1, f'every event is about one task: {ids}'


def test_multi_turn_input_required(peer):
    first = a2a_json('send', peer['url'], 'need-input now')['task']
    assert first['status']['state'] == 'TASK_STATE_INPUT_REQUIRED', first
    second = a2a_json('send', peer['url'], 'here is more', '--task', first['id'], '--context', first['contextId'])['task']
    assert second['id'] == first['id']
    assert second['status']['state'] == 'TASK_STATE_COMPLETED', second
    # Streaming stops at the interruption too.
    events = a2a_lines('send', peer['url'], 'need-input again', '--stream')
    last = events[-1]
    assert last.get('statusUpdate', last.get('task', {}))['status']['state'] == 'TASK_STATE_INPUT_REQUIRED', events


def test_cancel_a_running_task(peer):
    task = a2a_json('send', peer['url'], 'slow work', '--return-immediately')['task']
    assert task['status']['state'] in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'), task
    canceled = a2a_json('cancel', peer['url'], task['id'])
    assert canceled['status']['state'] == 'TASK_STATE_CANCELED', canceled
    assert a2a_json('get', peer['url'], task['id'])['status']['state'] == 'TASK_STATE_CANCELED'


def test_subscribe_follows_a_running_task_to_its_end(peer):
    task = a2a_json('send', peer['url'], 'slow subscribe', '--return-immediately')['task']
    events = a2a_lines('subscribe', peer['url'], task['id'])
    assert events, 'no events'
    if peer['version'] == '1.0':
        # 1.0 requires the Task snapshot first; 0.3 servers start with the next live event.
        assert 'task' in events[0] and events[0]['task']['id'] == task['id'], events[0]
    last = events[-1]
    assert last.get('statusUpdate', last.get('task', {}))['status']['state'] == 'TASK_STATE_COMPLETED', events


def test_list_tasks_or_a_clear_unsupported_error(peer):
    word = f'listed-{uuid.uuid4().hex[:8]}'
    task = a2a_json('send', peer['url'], word)['task']
    if not peer['list']:
        proc = a2a('list', peer['url'], ok=False)
        assert proc.returncode != 0
        assert 'UnsupportedOperationError (-32004)' in proc.stderr, proc.stderr
        return
    page = a2a_json('list', peer['url'], '--context', task['contextId'])
    assert [t['id'] for t in page['tasks']] == [task['id']], page
    everything = a2a_lines('list', peer['url'], '--all', '--page-size', '2')
    assert task['id'] in {t['id'] for t in everything}


def test_push_config_crud(peer):
    task = a2a_json('send', peer['url'], 'slow push', '--return-immediately')['task']
    hook = 'http://127.0.0.1:9/webhook'
    if not peer['push']:
        proc = a2a('push', 'set', peer['url'], task['id'], hook, ok=False)
        assert 'PushNotificationNotSupportedError (-32003)' in proc.stderr, proc.stderr
        return
    created = a2a_json('push', 'set', peer['url'], task['id'], hook, '--token', 'tok-1', '--id', 'cfg-1')
    assert created['url'] == hook and created['id'] == 'cfg-1', created
    got = a2a_json('push', 'get', peer['url'], task['id'], 'cfg-1')
    assert got['url'] == hook and got['token'] == 'tok-1', got
    listed = a2a_json('push', 'list', peer['url'], task['id'])
    assert [c['id'] for c in listed.get('configs', [])] == ['cfg-1'], listed
    a2a('push', 'delete', peer['url'], task['id'], 'cfg-1')
    listed = a2a_json('push', 'list', peer['url'], task['id'])
    assert listed.get('configs', []) == [], listed


def test_unknown_task_is_a_typed_error(peer):
    proc = a2a('get', peer['url'], f'no-such-task-{uuid.uuid4()}', ok=False)
    assert proc.returncode == 1
    assert 'TaskNotFoundError (-32001)' in proc.stderr, proc.stderr


def test_extended_card(peer):
    if not peer['extended']:
        pytest.skip(f'{peer["name"]} declares no extended card')
    card = a2a_json('card', peer['url'], '--extended')
    assert card['description'] == 'the extended card of the python peer', card


def test_forcing_1_0_on_a_0_3_agent_is_refused(peer):
    if peer['version'] != '0.3':
        pytest.skip('only for the 0.3 peer')
    proc = a2a('send', peer['url'], 'hi', '--a2a-version', '1.0', ok=False)
    assert proc.returncode == 1
    assert 'declares no interface this client speaks' in proc.stderr, proc.stderr


def test_grpc_streams_multi_turn_cancel_and_errors(peer):
    """Our client over gRPC against the SDK's grpcio server: a stream, a multi-turn task, a
    subscription, a cancel and a typed error, as over the HTTP bindings."""
    if 'grpc' not in peer['bindings']:
        pytest.skip(f'{peer["name"]} has no grpc interface')
    g = ('--transport', 'grpc')
    assert 'over GRPC 1.0' in a2a('card', peer['url'], *g).stdout
    events = a2a_lines('send', peer['url'], 'stream me', '--stream', *g)
    assert 'task' in events[0], events[0]
    assert any('artifactUpdate' in e for e in events), events
    assert events[-1].get('statusUpdate', events[-1].get('task', {}))['status']['state'] == 'TASK_STATE_COMPLETED'
    first = a2a_json('send', peer['url'], 'need-input now', *g)['task']
    assert first['status']['state'] == 'TASK_STATE_INPUT_REQUIRED', first
    second = a2a_json('send', peer['url'], 'more', '--task', first['id'], '--context', first['contextId'], *g)['task']
    assert (second['id'], second['status']['state']) == (first['id'], 'TASK_STATE_COMPLETED'), second
    slow = a2a_json('send', peer['url'], 'slow subscribe', '--return-immediately', *g)['task']
    followed = a2a_lines('subscribe', peer['url'], slow['id'], *g)
    assert followed[-1].get('statusUpdate', followed[-1].get('task', {}))['status']['state'] == 'TASK_STATE_COMPLETED'
    slow = a2a_json('send', peer['url'], 'slow cancel', '--return-immediately', *g)['task']
    assert a2a_json('cancel', peer['url'], slow['id'], *g)['status']['state'] == 'TASK_STATE_CANCELED'
    proc = a2a('get', peer['url'], f'no-such-task-{uuid.uuid4()}', *g, ok=False)
    assert 'TaskNotFoundError (-32001)' in proc.stderr, proc.stderr
