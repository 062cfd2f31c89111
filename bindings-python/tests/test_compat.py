"""Unchanged a2a-sdk agents (tests/sdk_agents) on the SDK's own server and on ours
(`a2a_native.compat`), driven by the SDK's client: the same conversation must give equivalent
answers (the same events, states, messages and artifacts; only generated ids and timestamps
differ). Then what a foreign executor may do wrong: raise, enqueue a non-event, never return."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.utils.errors import UnsupportedOperationError
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from google.protobuf import json_format

from a2a_native import compat
from conftest import run
from sdk_agents import hello_world, long_running, multi_turn, streaming
from sdk_hosts import our_server, sdk_client, sdk_server

HOSTS = {"sdk": sdk_server, "ours": our_server}
# Generated on each run, so not compared.
VOLATILE = {"id", "messageId", "contextId", "taskId", "timestamp"}


def msg(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id, context_id=context_id
    )


def stable(value: Any) -> Any:
    """ProtoJSON without what each run generates (ids, timestamps, generated artifact ids)."""
    if isinstance(value, dict):
        return {
            k: stable(v)
            for k, v in value.items()
            if k not in VOLATILE and not (k == "artifactId" and len(v) == 36)
        }
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


async def events(client: Any, request: SendMessageRequest) -> list[dict[str, Any]]:
    async def drain() -> list[dict[str, Any]]:
        return [json_format.MessageToDict(e) async for e in client.send_message(request)]

    return await asyncio.wait_for(drain(), 20)


async def conversation(host: Callable[..., Any]) -> dict[str, Any]:
    """One scripted conversation with the four agents; what the SDK's client saw, made stable."""
    seen: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=20) as http:
        async with host(hello_world) as url:
            for stream in (False, True):
                client = await sdk_client(http, url, streaming=stream)
                seen[f"hello stream={stream}"] = await events(client, SendMessageRequest(message=msg("hi")))
        async with host(streaming) as url:
            for stream in (False, True):
                client = await sdk_client(http, url, streaming=stream)
                seen[f"words stream={stream}"] = await events(client, SendMessageRequest(message=msg("one two three")))
        async with host(multi_turn) as url:
            for stream in (False, True):
                client = await sdk_client(http, url, streaming=stream)
                first = await events(client, SendMessageRequest(message=msg("hello")))
                task = first[-1].get("task") or first[-1]["statusUpdate"]
                task_id = task.get("taskId", task.get("id"))
                second = await events(client, SendMessageRequest(message=msg("Ada", task_id, task["contextId"])))
                seen[f"multi-turn stream={stream}"] = [first, second]
                got = await client.get_task(GetTaskRequest(id=task_id))
                seen[f"multi-turn stream={stream} task"] = json_format.MessageToDict(got)
        async with host(long_running) as url:
            client = await sdk_client(http, url)
            watcher = await sdk_client(http, url, streaming=True)
            request = SendMessageRequest(message=msg("go"), configuration=SendMessageConfiguration(return_immediately=True))
            [reply] = await events(client, request)
            task_id = reply["task"]["id"]
            subscription = watcher.subscribe(SubscribeToTaskRequest(id=task_id))
            first = json_format.MessageToDict(await asyncio.wait_for(subscription.__anext__(), 10))
            while first.get("task", {}).get("status", {}).get("state") != "TASK_STATE_WORKING" and "statusUpdate" not in first:
                first = json_format.MessageToDict(await asyncio.wait_for(subscription.__anext__(), 10))
            canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
            rest = [json_format.MessageToDict(e) async for e in subscription]
            seen["cancel reply"] = json_format.MessageToDict(canceled)
            seen["cancel stream end"] = rest[-1]
            seen["cancel task"] = json_format.MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
    return stable(seen)


def test_the_same_conversation_gives_the_same_answers_on_both_servers() -> None:
    @run
    async def go() -> None:
        theirs = await conversation(sdk_server)
        ours = await conversation(our_server)
        assert ours.keys() == theirs.keys()
        # One deliberate difference: the spec has a task's stream begin with a `task` event. On
        # a continued task the SDK's server starts with whatever the agent enqueues first; ours
        # sends the task's snapshot first (here: INPUT_REQUIRED, the new message in history).
        [_, second] = ours["multi-turn stream=True"]
        assert second[0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert second[0]["task"]["history"][-1]["parts"] == [{"text": "Ada"}]
        del second[0]
        for step in theirs:
            assert ours[step] == theirs[step], step
        # And the answers are what the agents meant.
        assert ours["hello stream=False"] == [{"message": {"role": "ROLE_AGENT", "parts": [{"text": "Hello World"}]}}]
        words = ours["words stream=True"]
        assert [next(iter(e)) for e in words] == ["task", "statusUpdate", *["artifactUpdate"] * 3, "statusUpdate"]
        turns = ours["multi-turn stream=False"]
        assert turns[0][0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert turns[1][0]["task"]["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
        assert ours["cancel task"]["status"]["state"] == "TASK_STATE_CANCELED"
        assert ours["cancel task"]["status"]["message"]["parts"] == [{"text": "canceled on request"}]

    go()


def test_models_convert_both_ways_without_loss() -> None:
    task = Task(id="t1", context_id="c1")
    task.status.state = TaskState.TASK_STATE_WORKING
    task.status.timestamp.FromJsonString("2026-01-02T03:04:05.678Z")
    m = task.history.add(message_id="m1", role=Role.ROLE_USER, reference_task_ids=["t0"], extensions=["urn:x"])
    m.parts.add(text="hi", media_type="text/plain").metadata.update({"k": [1, "two", None, {"n": True}]})
    m.parts.add(raw=b"\x00\xffbytes", filename="b.bin")
    m.parts.add(url="https://example.com/f", media_type="image/png")
    m.parts.add(data=None)
    m.parts[-1].data.struct_value.update({"a": {"b": [1.5]}})
    art = task.artifacts.add(artifact_id="a1", name="n", description="d")
    art.parts.add(text="x")
    as_dict = compat.to_dict(task)
    from a2a_native import validate

    assert validate("Task", as_dict) == as_dict  # our core reads it, field for field
    assert compat.to_proto(as_dict, Task) == task


class Raises(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.start_work()
        raise ValueError("the model is down")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        pass


class EnqueuesJunk(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        try:
            await event_queue.enqueue_event({"kind": "task"})  # type: ignore[arg-type]
        except TypeError:
            pass  # swallowed: the task must fail all the same

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        pass


class NeverReturns(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await asyncio.Event().wait()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        pass


@pytest.mark.parametrize(
    ("executor", "says"),
    [
        (Raises(), "the model is down"),
        (EnqueuesJunk(), "enqueued a dict, not a Task"),
        (NeverReturns(), "did not return within 0.5 s"),
    ],
)
def test_a_faulty_sdk_executor_fails_its_task_and_the_server_lives_on(executor: AgentExecutor, says: str) -> None:
    @run
    async def go() -> None:
        async with our_server(hello_world, executor, executor_timeout=0.5) as url, httpx.AsyncClient(timeout=20) as http:
            client = await sdk_client(http, url)
            for _ in range(2):  # and again: the server still serves
                [reply] = await events(client, SendMessageRequest(message=msg("hi")))
                status = reply["task"]["status"]
                assert status["state"] == "TASK_STATE_FAILED"
                assert says in status["message"]["parts"][0]["text"]

    go()


class Refuses(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError("this agent reads text only")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        pass


def test_an_sdk_error_raised_before_any_event_refuses_the_request_as_on_the_sdks_server() -> None:
    @run
    async def go() -> None:
        for host in (sdk_server, our_server):
            async with host(hello_world, Refuses()) as url, httpx.AsyncClient(timeout=20) as http:
                for streaming in (False, True):
                    client = await sdk_client(http, url, streaming=streaming)
                    with pytest.raises(UnsupportedOperationError, match="reads text only"):
                        await events(client, SendMessageRequest(message=msg("hi")))

    go()


def test_the_sdk_executor_sees_the_caller() -> None:
    """call_context: the authenticated user, the tenant and the requested extensions."""
    seen: list[RequestContext] = []

    class Records(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            seen.append(context)
            await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            pass

    @run
    async def go() -> None:
        async with our_server(hello_world, Records(), bearer_tokens={"s3cret": "alice"}) as url:
            headers = {"Authorization": "Bearer s3cret"}
            async with httpx.AsyncClient(timeout=20, headers=headers) as http:
                client = await sdk_client(http, url)
                await events(client, SendMessageRequest(message=msg("first line\nsecond")))
        [context] = seen
        assert context.call_context.user.is_authenticated
        assert context.call_context.user.user_name == "alice"
        assert context.get_user_input() == "first line\nsecond"
        assert context.current_task is None and context.task_id and context.context_id
        assert context.message is not None and context.message.task_id == context.task_id

    go()


def test_our_agent_server_takes_the_sdk_card_and_executor_as_they_are() -> None:
    @run
    async def go() -> None:
        from a2a_native import AgentServer

        card = hello_world.agent_card("http://127.0.0.1:1/")
        del card.supported_interfaces[:]  # ours fills in its own
        async with AgentServer(card, hello_world.HelloWorldAgentExecutor()) as server:
            async with httpx.AsyncClient(timeout=20) as http:
                client = await sdk_client(http, server.url)
                served = (await http.get(f"{server.url}/.well-known/agent-card.json")).json()
                assert served["name"] == "Hello World Agent" and served["skills"][0]["tags"] == ["hello_world"]
                [reply] = await events(client, SendMessageRequest(message=msg("hi")))
                assert reply["message"]["parts"] == [{"text": "Hello World"}]

    go()


def test_executor_timeout_is_cores_limit_and_cannot_disagree_with_it() -> None:
    card = hello_world.agent_card("http://127.0.0.1:1/")
    executor = hello_world.HelloWorldAgentExecutor()
    # The same value twice is one limit; a zero limit is refused by core, as in `limits`.
    compat.AgentServer(card, executor, executor_timeout=2, limits={"executor_timeout": 2})
    compat.AgentServer(card, executor, executor_timeout=2, limits={"executorTimeout": 2, "max_parts_per_message": 10})
    with pytest.raises(ValueError, match="differ"):
        compat.AgentServer(card, executor, executor_timeout=1, limits={"executor_timeout": 2})
    from a2a_native.errors import InvalidParamsError

    with pytest.raises(InvalidParamsError):
        compat.AgentServer(card, executor, executor_timeout=0)
