"""Interop with the official Python SDK (a2a-sdk 1.x from PyPI), both ways: its client driving
a Python executor on our server, and our Python client driving an agent on its server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError as SdkTaskNotFound

from a2a_native import AgentServer, Client, TaskNotFoundError
from conftest import CARD, Echo, run

BINDINGS = ["JSONRPC", "HTTP+JSON"]
PEER = Path(__file__).resolve().parents[2] / "tests" / "interop" / "peers" / "python_v1_server.py"


async def sdk_client(http: httpx.AsyncClient, url: str, binding: str, *, streaming: bool = False) -> Any:
    config = ClientConfig(
        streaming=streaming, supported_protocol_bindings=[binding], use_client_preference=True, httpx_client=http
    )
    return await ClientFactory(config).create_from_url(url)


def sdk_message(text: str, task_id: str = "", context_id: str = "") -> Message:
    import uuid

    return Message(
        message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id, context_id=context_id
    )


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return await asyncio.wait_for(_drain(events), 20)


async def _drain(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [e async for e in events]


def final_state(events: list[StreamResponse]) -> int:
    state = TaskState.TASK_STATE_UNSPECIFIED
    for e in events:
        if e.HasField("task"):
            state = e.task.status.state
        elif e.HasField("status_update"):
            state = e.status_update.status.state
    return state


# ------------------------------------------------- the official client -> our server, Python agent


@pytest.mark.parametrize("binding", BINDINGS)
def test_sdk_client_send_and_multi_turn(binding: str) -> None:
    @run
    async def go() -> None:
        async with AgentServer(CARD, Echo()) as server, httpx.AsyncClient(timeout=20) as http:
            client = await sdk_client(http, server.url, binding)
            [reply] = await collect(client.send_message(SendMessageRequest(message=sdk_message("hi sdk"))))
            task = reply.task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert [p.text for p in task.artifacts[0].parts] == ["hi sdk"]
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.id == task.id and got.status.state == TaskState.TASK_STATE_COMPLETED
            # Multi-turn: INPUT_REQUIRED, then the answer on the same task completes it.
            [first] = await collect(client.send_message(SendMessageRequest(message=sdk_message("ask"))))
            assert first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert first.task.status.message.parts[0].text == "what is your name?"
            follow = sdk_message("Grace", task_id=first.task.id, context_id=first.task.context_id)
            [second] = await collect(client.send_message(SendMessageRequest(message=follow)))
            assert second.task.id == first.task.id
            assert second.task.status.state == TaskState.TASK_STATE_COMPLETED
            assert second.task.status.message.parts[0].text == "hello Grace"
            with pytest.raises(SdkTaskNotFound):
                await client.get_task(GetTaskRequest(id="no-such-task"))

    go()


@pytest.mark.parametrize("binding", BINDINGS)
def test_sdk_client_stream(binding: str) -> None:
    @run
    async def go() -> None:
        async with AgentServer(CARD, Echo()) as server, httpx.AsyncClient(timeout=20) as http:
            client = await sdk_client(http, server.url, binding, streaming=True)
            events = await collect(client.send_message(SendMessageRequest(message=sdk_message("chunks"))))
            assert events[0].HasField("task")
            chunks = [e.artifact_update.artifact.parts[0].text for e in events if e.HasField("artifact_update")]
            assert chunks == ["a", "b"]
            assert final_state(events) == TaskState.TASK_STATE_COMPLETED

    go()


@pytest.mark.parametrize("binding", BINDINGS)
def test_sdk_client_cancel_and_subscribe(binding: str) -> None:
    @run
    async def go() -> None:
        agent = Echo()
        async with AgentServer(CARD, agent) as server, httpx.AsyncClient(timeout=20) as http:
            plain = await sdk_client(http, server.url, binding)
            streaming = await sdk_client(http, server.url, binding, streaming=True)
            request = SendMessageRequest(
                message=sdk_message("slow"), configuration=SendMessageConfiguration(return_immediately=True)
            )
            [reply] = await collect(plain.send_message(request))
            task_id = reply.task.id
            sub = streaming.subscribe(SubscribeToTaskRequest(id=task_id))
            first = await asyncio.wait_for(sub.__anext__(), 10)
            assert first.HasField("task") and first.task.id == task_id
            canceled = await plain.cancel_task(CancelTaskRequest(id=task_id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            await asyncio.wait_for(agent.cancelled.wait(), 5)  # reached the coroutine
            rest = await collect(sub)
            assert final_state([first, *rest]) == TaskState.TASK_STATE_CANCELED

    go()


# ------------------------------------------------- our client -> the official server


@pytest.fixture(scope="module")
def sdk_server() -> Any:
    """The official SDK's agent (tests/interop/peers/python_v1_server.py) on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(PEER), str(port)])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{url}/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                pytest.fail(f"the a2a-sdk peer exited with {proc.returncode}")
            import time

            time.sleep(0.05)
        else:
            pytest.fail("the a2a-sdk peer did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("binding", BINDINGS)
def test_our_client_against_sdk_server(sdk_server: str, binding: str) -> None:
    @run
    async def go() -> None:
        client = await Client.connect(sdk_server, binding=binding)
        assert client.binding == binding and client.protocol_version == "1.0"
        task = (await client.send("hello peer"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "hello peer"}]
        assert (await client.get_task(task["id"]))["id"] == task["id"]
        # Multi-turn.
        asked = (await client.send("need-input now"))["task"]
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        done = (await client.send("more", task_id=asked["id"], context_id=asked["contextId"]))["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        # Streaming.
        events = [e async for e in client.stream("stream me")]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert any("artifactUpdate" in e for e in events)
        # Cancel a slow task, with a subscription open on it.
        slow = (await client.send("slow", configuration={"returnImmediately": True}))["task"]
        async with await client.subscribe(slow["id"]) as sub:
            assert (await sub.__anext__())["task"]["id"] == slow["id"]
            assert (await client.cancel(slow["id"]))["status"]["state"] == "TASK_STATE_CANCELED"
            rest = [e async for e in sub]
        states = [e["statusUpdate"]["status"]["state"] for e in rest if "statusUpdate" in e]
        assert states[-1:] == ["TASK_STATE_CANCELED"], rest
        # Errors map to our classes; the extended card and the pager work against it.
        with pytest.raises(TaskNotFoundError):
            await client.get_task("no-such-task")
        assert (await client.get_extended_card())["description"] == "the extended card of the python peer"
        ids = [t["id"] async for t in client.list_all_tasks({"pageSize": 2})]
        assert len(ids) == len(set(ids)) >= 4 and task["id"] in ids

    go()
