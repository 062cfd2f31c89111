"""A Python executor served by our server, driven by our Python client, end to end."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any, cast

import pytest

from a2a_native import (
    A2AError,
    AgentExecutor,
    AgentServer,
    Client,
    EventQueue,
    RequestContext,
    TaskNotCancelableError,
    TaskNotFoundError,
    errors,
    user_message,
    validate,
)
from a2a_native import _native
from a2a_native.models import StreamResponse
from conftest import CARD, Echo, run


@run
async def test_send_blocking() -> None:
    async with AgentServer(CARD, Echo()) as server:
        assert server.port and server.url == f"http://127.0.0.1:{server.port}"
        client = await Client.connect(server.url)
        assert client.card["name"] == "py-test-agent"
        reply = await client.send("hi there")
        task = reply["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "hi there"}]
        assert (await client.get_task(task["id"]))["id"] == task["id"]
        listed = await client.list_tasks()
        assert [t["id"] for t in listed["tasks"]] == [task["id"]]
        reply = await client.send("reply")
        assert reply["message"]["parts"] == [{"text": "a direct reply"}]


@run
async def test_stream_async_for() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url, binding="HTTP+JSON")
        assert client.binding == "HTTP+JSON"
        events = [e async for e in client.stream("chunks")]
        kinds = [next(iter(e)) for e in events]
        assert kinds[0] == "task" and kinds[-1] == "statusUpdate", kinds
        arts = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
        assert [a["artifact"]["parts"][0]["text"] for a in arts] == ["a", "b"]
        assert arts[1].get("append") and arts[1].get("lastChunk")
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


class RawEvents(AgentExecutor):
    """Sends StreamResponse dicts that leave the task's ids out."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.send({"artifactUpdate": {"artifact": {"artifactId": "a", "parts": [{"text": "raw"}]}}})
        await events.send({"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}})


@run
async def test_events_sent_as_dicts_get_the_ids_they_leave_out() -> None:
    async with AgentServer(CARD, RawEvents()) as server:
        task = (await (await Client.connect(server.url)).send("x"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert task["artifacts"][0]["parts"] == [{"text": "raw"}]


class Ticker(AgentExecutor):
    """Counts: one artifact chunk per number, a little apart, then COMPLETED."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.executions = 0

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        self.executions += 1
        for i in range(self.count):
            await events.artifact(str(i), artifact_id="a", append=i > 0)
            await asyncio.sleep(0.001 * (i % 3))
        await events.complete("end")


@run
async def test_a_timed_out_wait_for_the_next_event_loses_no_event() -> None:
    """Polling a stream with `wait_for(..., short)`: an event read for a wait that timed out is
    returned by the next one, so every event arrives, in order."""
    async with AgentServer(CARD, Ticker(300)) as server:
        client = await Client.connect(server.url)
        stream = await client.stream("go")
        got, timeouts = [], 0
        while True:
            try:
                event = await asyncio.wait_for(stream.__anext__(), 0.001)
            except asyncio.TimeoutError:
                timeouts += 1
                continue
            except StopAsyncIteration:
                break
            if "artifactUpdate" in event:
                got.append(int(event["artifactUpdate"]["artifact"]["parts"][0]["text"]))
        assert got == list(range(300)), (len(got), timeouts)
        assert timeouts > 0


@run
async def test_one_stream_awaited_by_several_tasks_sends_its_message_once() -> None:
    agent = Ticker(1)
    async with AgentServer(CARD, agent) as server:
        client = await Client.connect(server.url)
        call = client.stream("once")
        first, second = await asyncio.gather(call, call)
        assert first is second
        assert [e async for e in first][-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert agent.executions == 1
        assert len((await client.list_tasks())["tasks"]) == 1


@run
async def test_a_canceled_start_leaves_no_server_running() -> None:
    for _ in range(10):
        server = AgentServer(CARD, Echo())
        start = asyncio.ensure_future(server.start())
        await asyncio.sleep(0)  # the bind is in flight
        start.cancel()
        with pytest.raises(asyncio.CancelledError):
            await start
        assert not server.running
        # And it can be started again.
        await server.start()
        await server.stop()


@run
async def test_a_port_outside_0_to_65535_is_a_value_error() -> None:
    for port in (-1, 65536, True, 1.5):
        with pytest.raises(ValueError):
            await AgentServer(CARD, Echo()).start(port=port)  # type: ignore[arg-type]


@run
async def test_grpc_call_stream_and_error() -> None:
    """Our server serves gRPC too (its card declares it at host:port); the Python client
    speaks it when asked: a call, a stream, and a typed error."""
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url, binding="GRPC")
        assert client.binding == "GRPC"
        assert client.url == f"127.0.0.1:{server.port}"
        task = (await client.send("over grpc"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "over grpc"}]
        events = [e async for e in client.stream("chunks")]
        assert [next(iter(e)) for e in events][0] == "task"
        arts = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events if "artifactUpdate" in e]
        assert arts == ["a", "b"]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        with pytest.raises(TaskNotFoundError):
            await client.get_task("no-such-task")


@run
async def test_memory_store_bounds_and_listener_limits_are_options() -> None:
    async with AgentServer(CARD, Echo(), max_tasks=2, task_retention=60, limits={"max_header_bytes": 9000}) as server:
        client = await Client.connect(server.url)
        ids = [(await client.send(f"t{n}"))["task"]["id"] for n in range(3)]
        listed = [t["id"] for t in (await client.list_tasks())["tasks"]]
        assert len(listed) == 2 and ids[0] not in listed, listed
    with pytest.raises(ValueError, match="maxTasks"):
        AgentServer(CARD, Echo(), max_tasks=0)
    with pytest.raises(ValueError, match="memory store only"):
        AgentServer(CARD, Echo(), store="sqlite:/tmp/a2a-bounds.db", max_tasks=5)
    with pytest.raises(ValueError, match="maxHeaderBytes"):
        AgentServer(CARD, Echo(), limits={"max_header_bytes": 100})
    # The byte budget: the oldest finished tasks make room for large ones.
    async with AgentServer(CARD, Echo(), max_store_bytes=1_000_000) as server:
        client = await Client.connect(server.url)
        # About 600 kB a task: the text in its history and its artifact, and the same again in
        # the log kept for resuming streams. One fits; each new one evicts the one before.
        # Streamed, so every task is logged: a send whose events all land in one commit that
        # ends the task is not, and two such tasks would fit.
        big = "x" * 150_000
        ids = [[e async for e in client.stream(big)][0]["task"]["id"] for _ in range(3)]
        listed = [t["id"] for t in (await client.list_tasks())["tasks"]]
        assert listed == [ids[2]], listed
    with pytest.raises(ValueError, match="maxStoreBytes"):
        AgentServer(CARD, Echo(), max_store_bytes=0)


async def raw_connection(server: AgentServer) -> tuple[str, asyncio.StreamReader, asyncio.StreamWriter]:
    """A plain TCP connection to the server, and the host to name in its requests."""
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    return host, reader, writer


@run
async def test_idle_timeout_closes_a_keep_alive_connection_with_nothing_in_flight() -> None:
    async with AgentServer(CARD, Echo(), limits={"idle_timeout": 0.3}) as server:
        host, reader, writer = await raw_connection(server)
        writer.write(f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200"), head
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        await reader.readexactly(length)
        # Kept alive, then closed once idle (looked at every 0.3 s: within 0.6 s).
        assert await asyncio.wait_for(reader.read(1), 3) == b""
        writer.close()
    with pytest.raises(ValueError, match="idleTimeout"):
        AgentServer(CARD, Echo(), limits={"idle_timeout": 0})


@run
async def test_a_request_head_slower_than_header_read_timeout_gets_408() -> None:
    async with AgentServer(CARD, Echo(), limits={"header_read_timeout": 0.3}) as server:
        host, reader, writer = await raw_connection(server)
        writer.write(f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\nAcc".encode())
        answer = await asyncio.wait_for(reader.read(), 5)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        writer.close()
    with pytest.raises(ValueError, match="headerReadTimeout"):
        AgentServer(CARD, Echo(), limits={"header_read_timeout": 0})


@run
async def test_an_executor_that_never_returns_ends_failed_at_the_executor_timeout() -> None:
    class Stuck(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            await events.status("TASK_STATE_WORKING")
            await asyncio.Event().wait()  # never set

    async with AgentServer(CARD, Stuck(), limits={"executor_timeout": 0.3}) as server:
        client = await Client.connect(server.url)
        for _ in range(2):  # and again: the server goes on
            task = (await client.send("hi"))["task"]
            assert task["status"]["state"] == "TASK_STATE_FAILED", task
            assert "did not return within 0.3 s" in task["status"]["message"]["parts"][0]["text"]
    with pytest.raises(ValueError, match="executorTimeout"):
        AgentServer(CARD, Stuck(), limits={"executor_timeout": 0})


@run
async def test_an_executor_runs_as_a_real_task_and_through_the_loops_task_factory() -> None:
    """From Python 3.12 an executor's first step runs eagerly, inside the server's callback: it
    must still be the current task (timeouts, TaskGroups, cancellation), whether it ends before
    its first suspension or after; and a task factory the application set is used."""
    seen: list[str] = []

    class Tasky(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            current = asyncio.current_task()
            assert current is not None and not current.done()
            text = context.get_user_input()
            if text == "sync":  # never suspends: done within its first step
                await events.complete("sync done")
                return
            async with asyncio.timeout(5):
                async with asyncio.TaskGroup() as group:
                    parts = [group.create_task(asyncio.sleep(0.01, result=p)) for p in ("a", "b")]
            await events.artifact([{"text": t.result()} for t in parts], name="joined", last_chunk=True)
            try:
                async with asyncio.timeout(0.05):
                    await asyncio.sleep(10)
            except TimeoutError:
                await events.complete("timed out as asked")

    loop = asyncio.get_running_loop()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        seen.append(getattr(coro, "__qualname__", "?"))
        return asyncio.Task(coro, loop=loop, **kwargs)

    async with AgentServer(CARD, Tasky()) as server:
        client = await Client.connect(server.url)
        for with_factory in (False, True):
            seen.clear()
            loop.set_task_factory(factory if with_factory else None)
            try:
                task = (await client.send("sync"))["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
                assert task["status"]["message"]["parts"] == [{"text": "sync done"}]
                task = (await client.send("group"))["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
                assert task["artifacts"][0]["parts"] == [{"text": "a"}, {"text": "b"}]
                assert task["status"]["message"]["parts"] == [{"text": "timed out as asked"}]
            finally:
                loop.set_task_factory(None)
            # The executor's coroutine went through the factory exactly when one was set.
            assert ("_body" in seen) == with_factory, seen


def test_a_value_that_contains_itself_or_nests_too_deep_is_refused_not_a_crash() -> None:
    from a2a_native import validate

    looped: dict[str, Any] = {}
    looped["again"] = looped
    with pytest.raises(errors.InvalidParamsError, match="contains itself"):
        validate("Message", {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": looped}]})
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(errors.InvalidParamsError, match="nests more than"):
        validate("Message", {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": deep}]})


@run
async def test_an_exception_message_with_a_lone_surrogate_still_fails_the_task() -> None:
    class Bad(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            raise ValueError("bad " + b"\xff".decode("utf-8", "surrogateescape"))

    async with AgentServer(CARD, Bad()) as server:
        client = await Client.connect(server.url)
        task = (await asyncio.wait_for(client.send("hi"), 10))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED", task
        assert task["status"]["message"]["parts"][0]["text"] == "bad \\udcff"


@run
async def test_aclose_ends_a_stream_that_another_task_is_waiting_on() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        stream = await client.stream("slow")  # works, then waits 30 s
        async for event in stream:
            if "statusUpdate" in event:
                break
        waiting = asyncio.create_task(stream.__anext__())
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await asyncio.wait_for(stream.aclose(), 2)
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiting, 2)


@run
async def test_multi_turn_input_required() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("ask"))["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert task["status"]["message"]["parts"] == [{"text": "what is your name?"}]
        task2 = (await client.send("Ada", task_id=task["id"], context_id=task["contextId"]))["task"]
        assert task2["id"] == task["id"]
        assert task2["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task2["status"]["message"]["parts"] == [{"text": "hello Ada"}]


class Greeter(AgentExecutor):
    """The README's multi-turn agent."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        if context.task is None:
            await events.input_required("What is your name?")
        else:
            turns = len(context.task["history"]) - 1
            await events.complete(f"Hello, {context.get_user_input()} ({turns} earlier messages)")


@run
async def test_the_answering_turn_sees_the_earlier_turns_and_its_message_last() -> None:
    async with AgentServer(CARD, Greeter()) as server:
        client = await Client.connect(server.url)
        asked = (await client.send("hi"))["task"]
        done = (await client.send("Ada", task_id=asked["id"], context_id=asked["contextId"]))["task"]
        # "hi" and the question came before the answer.
        assert done["status"]["message"]["parts"] == [{"text": "Hello, Ada (2 earlier messages)"}], done


@run
async def test_cancel_reaches_the_coroutine_and_subscribe() -> None:
    agent = Echo()
    async with AgentServer(CARD, agent) as server:
        client = await Client.connect(server.url)
        stream = await client.stream("slow")
        first = await stream.__anext__()
        task_id = first["task"]["id"]
        working = await stream.__anext__()  # the coroutine is now in its sleep
        assert working["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
        sub = client.subscribe(task_id)
        sub_stream = await sub
        assert (await sub_stream.__anext__())["task"]["id"] == task_id
        canceled = await client.cancel(task_id)
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        await asyncio.wait_for(agent.cancelled.wait(), 5)
        # Both streams end with the CANCELED event.
        for rest in ([e async for e in stream], [e async for e in sub_stream]):
            assert rest and rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED", rest
        assert (await client.get_task(task_id))["status"]["state"] == "TASK_STATE_CANCELED"
        with pytest.raises(TaskNotCancelableError) as info:
            await client.cancel(task_id)
        assert info.value.code == -32002


@run
async def test_an_agent_that_swallows_its_cancellation_is_refused_its_next_event() -> None:
    refused: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

    class Stubborn(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            await events.working()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                pass  # ignores the cancel, and reports on
            try:
                await events.working("still here")
            except BaseException as exc:
                refused.set_result(exc)
                raise
            refused.set_result(None)

    async with AgentServer(CARD, Stubborn()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("x", configuration={"returnImmediately": True}))["task"]
        await client.cancel(task["id"])
        # The task ended: the event is refused to the agent, not taken and dropped in silence.
        exc = await asyncio.wait_for(refused, 5)
        assert isinstance(exc, errors.UnsupportedOperationError), exc
        assert (await client.get_task(task["id"]))["status"]["state"] == "TASK_STATE_CANCELED"


@run
async def test_exception_fails_the_task() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("boom"))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert task["status"]["message"]["parts"] == [{"text": "the agent blew up"}]


class Picky(AgentExecutor):
    """Refuses an input it does not read with a typed A2A error, before any event or after one."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        if context.text == "late":
            await events.working()
        if context.text in ("png", "late"):
            raise errors.ContentTypeNotSupportedError("only text/plain is read")
        if context.text == "internal":
            raise errors.InternalError("our own fault")
        await events.complete("ok")


@run
async def test_an_a2a_error_raised_before_the_first_event_is_the_callers_error() -> None:
    """As a2a-sdk answers: the caller gets the executor's A2A error (blocking and streamed), and
    no task is made. Raised after an event, or as InternalError, it fails the task."""
    async with AgentServer(CARD, Picky()) as server:
        client = await Client.connect(server.url)
        with pytest.raises(errors.ContentTypeNotSupportedError, match="only text/plain is read"):
            await client.send("png")
        with pytest.raises(errors.ContentTypeNotSupportedError):
            [event async for event in client.stream("png")]
        assert (await client.list_tasks({})).get("tasks", []) == []
        for text in ("late", "internal"):
            task = (await client.send(text))["task"]
            assert task["status"]["state"] == "TASK_STATE_FAILED", text


class Plain(AgentExecutor):
    def execute(self, context: RequestContext, events: EventQueue) -> None:  # type: ignore[override]
        pass  # not `async def`


@run
async def test_an_execute_that_is_not_async_fails_the_task_saying_so() -> None:
    async with AgentServer(CARD, Plain()) as server:
        task = (await (await Client.connect(server.url)).send("hi"))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "Plain.execute must be `async def`" in task["status"]["message"]["parts"][0]["text"]


class Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("no text for this one")


class RaisesUnprintable(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        raise Unprintable()


@run
async def test_an_exception_whose_str_fails_still_fails_the_task_at_once() -> None:
    """The outcome is reported even when the exception cannot be turned into text: the task
    fails with its class name, not after the blocking timeout."""
    async with AgentServer(CARD, RaisesUnprintable(), limits={"blocking_timeout": 30}) as server:
        client = await Client.connect(server.url)
        task = (await asyncio.wait_for(client.send("x"), 10))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert task["status"]["message"]["parts"] == [{"text": "Unprintable"}]


def test_a_server_outlives_the_loop_that_started_it() -> None:
    """The executors run on the loop that started the server. When that loop is closed under a
    running server, a new task fails at once with a clear message (it does not wait for a loop
    that will never run it), and the server still answers and stops."""
    first = asyncio.new_event_loop()
    server = AgentServer(CARD, Echo())
    first.run_until_complete(server.start())
    first.close()

    async def after() -> None:
        client = await Client.connect(server.url)
        task = (await asyncio.wait_for(client.send("hi"), 10))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "event loop is closed" in task["status"]["message"]["parts"][0]["text"]
        await server.stop()
        assert not server.running

    asyncio.run(asyncio.wait_for(after(), 30))


@run
async def test_a_burst_of_requests_all_run() -> None:
    """Many requests at once reach the loop through one queue; each runs once."""
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        replies = await asyncio.gather(*(client.send(f"n{i}") for i in range(300)))
        texts = sorted(r["task"]["artifacts"][0]["parts"][0]["text"] for r in replies)
        assert texts == sorted(f"n{i}" for i in range(300))
        assert all(r["task"]["status"]["state"] == "TASK_STATE_COMPLETED" for r in replies)


@run
async def test_errors_map_to_subclasses() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("no-such-task")
        err = info.value
        assert isinstance(err, A2AError)
        assert (err.code, err.name, err.reason) == (-32001, "TaskNotFoundError", "TASK_NOT_FOUND")
        assert err.metadata.get("taskId") == "no-such-task"
        # A bad request is refused locally, naming the field.
        with pytest.raises(errors.InvalidParamsError) as bad:
            await client.send({"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]})
        assert bad.value.violations[0][0] == "message.messageId"
    # The server is gone: the client's failure to reach it is a TransportError.
    with pytest.raises(errors.TransportError) as gone:
        await client.get_task("any")
    assert gone.value.code == -31502
    # What `except ConnectionError` (or OSError) code catches from any network library.
    assert isinstance(gone.value, ConnectionError)
    assert str(gone.value) == gone.value.message


def test_error_classes_match_the_core_table() -> None:
    table = _native.error_table()
    assert table, "core's table is empty"
    for name, code, reason, http, _grpc, _msg in table:
        cls = getattr(errors, name)
        assert issubclass(cls, A2AError)
        assert (cls.code, cls.reason, cls.http_status) == (code, reason, http)


def test_the_package_exports_every_error_class() -> None:
    # Written out in __init__ (type checkers read a literal __all__ only): kept alike here.
    import a2a_native

    assert set(errors.__all__) <= set(a2a_native.__all__)
    assert all(getattr(a2a_native, name) is getattr(errors, name) for name in errors.__all__)


def test_models_are_validated_by_the_core() -> None:
    m = user_message("hi")
    assert _native.validate("Message", m)["parts"] == [{"text": "hi"}]
    with pytest.raises(errors.InvalidParamsError) as info:
        _native.validate("Message", {"messageId": "m", "role": "ROLE_USER", "parts": []})
    assert info.value.violations[0][0] == "parts"


class Caller(AgentExecutor):
    """An agent that asks another agent (through our client) and reports its answer."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        client = await Client.connect(self.url)
        reply = await client.send(f"relay: {context.get_user_input()}")
        answer = reply["task"]["artifacts"][0]["parts"][0]["text"]
        await events.artifact(f"the other agent said {answer!r}", last_chunk=True)
        await events.complete()


@run
async def test_agent_calls_agent_in_one_process() -> None:
    async with AgentServer(CARD, Echo()) as inner, AgentServer(CARD, Caller(inner.url)) as outer:
        client = await Client.connect(outer.url)
        replies = await asyncio.gather(*(client.send(f"q{i}") for i in range(5)))
        for i, reply in enumerate(replies):
            task = reply["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
            assert task["artifacts"][0]["parts"][0]["text"] == f"the other agent said 'relay: q{i}'"


@run
async def test_many_concurrent_streams() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)

        async def one(i: int) -> str:
            events = [e async for e in client.stream(f"n{i}")]
            return events[-1]["statusUpdate"]["status"]["state"]

        states = await asyncio.gather(*(one(i) for i in range(200)))
        assert states == ["TASK_STATE_COMPLETED"] * 200


def test_rust_tracing_reaches_python_logging(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_native")

    @run
    async def serve_once() -> None:
        async with AgentServer(CARD, Echo()) as server:
            await (await Client.connect(server.url)).send("hi")

    serve_once()
    listening = [r for r in caplog.records if r.name == "a2a_native.server" and "listening" in r.getMessage()]
    assert listening and listening[0].levelno == logging.INFO, caplog.records


def test_an_executor_that_raises_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    # The operator hears of it (the core's WARNING); the traceback is there at DEBUG.
    caplog.set_level(logging.DEBUG, logger="a2a_native")

    @run
    async def fail_once() -> None:
        async with AgentServer(CARD, Echo()) as server:
            reply = await (await Client.connect(server.url)).send("boom")
            assert reply["task"]["status"]["state"] == "TASK_STATE_FAILED"

    fail_once()
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "executor failed" in r.getMessage()]
    assert warned and "the agent blew up" in warned[0].getMessage(), caplog.records
    traced = [r for r in caplog.records if r.name == "a2a_native.executor" and r.exc_info]
    assert traced and isinstance(traced[0].exc_info[1], RuntimeError), caplog.records  # type: ignore[index]


@run
async def test_push_config_crud_and_credentials() -> None:
    async with AgentServer(CARD, Echo(), bearer_tokens=["s3cret"]) as server:
        # The card is public; every call needs the token.
        anonymous = await Client.connect(server.url)
        with pytest.raises(errors.UnauthenticatedError):
            await anonymous.send("hi")
        client = await Client.connect(server.url, bearer_token="s3cret", headers={"x-trace": "1"})
        task = (await client.send("hi"))["task"]
        # `.invalid` never resolves: nothing is ever delivered anywhere.
        created = await client.create_push_config(
            {"taskId": task["id"], "url": "https://push.invalid/hook", "token": "t"}
        )
        assert created["id"] and created["url"] == "https://push.invalid/hook"
        got = await client.get_push_config(task["id"], created["id"])
        assert got["token"] == "t"
        listed = await client.list_push_configs(task["id"])
        assert [c["id"] for c in listed.get("configs", [])] == [created["id"]]
        await client.delete_push_config(task["id"], created["id"])
        assert (await client.list_push_configs(task["id"])).get("configs", []) == []
        # Page by page.
        for i in range(3):
            await client.create_push_config({"taskId": task["id"], "id": f"c{i}", "url": "https://push.invalid/hook"})
        first = await client.list_push_configs(task["id"], page_size=2)
        assert len(first["configs"]) == 2 and first["nextPageToken"], first
        rest = await client.list_push_configs(task["id"], page_size=2, page_token=first["nextPageToken"])
        ids = [c["id"] for c in first["configs"] + rest["configs"]]
        assert sorted(ids) == ["c0", "c1", "c2"] and not rest.get("nextPageToken"), rest


class Flood(AgentExecutor):
    """Sends far more events than the sink holds (64), without yielding in between: the
    sink fills, and the awaitable the native side then returns is the backpressure."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.working()
        for i in range(500):
            await events.artifact(str(i), artifact_id="flood", append=i > 0, last_chunk=i == 499)
        await events.complete()


@run
async def test_a_flood_of_events_arrives_whole_and_in_order() -> None:
    async with AgentServer(CARD, Flood()) as server:
        client = await Client.connect(server.url)
        events = [e async for e in client.stream("go")]
        chunks = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events if "artifactUpdate" in e]
        assert chunks == [str(i) for i in range(500)]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        task = await client.get_task(events[0]["task"]["id"])
        assert [p["text"] for p in task["artifacts"][0]["parts"]] == [str(i) for i in range(500)]


@run
async def test_a_start_canceled_half_way_leaves_nothing_watched_on_the_loop(tmp_path: Any) -> None:
    """A start whose awaiting task is canceled (here while SQLite opens) leaves the loop
    watching nothing of it, and the server can start afterwards."""
    loop = asyncio.get_running_loop()
    watched = getattr(loop, "_selector").get_map
    before = len(watched())
    server = AgentServer(CARD, Echo(), store=f"sqlite:{tmp_path / 'tasks.db'}")
    starting = asyncio.ensure_future(server.start())
    await asyncio.sleep(0)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    for _ in range(20):  # the inbox is closed through the loop itself
        await asyncio.sleep(0.01)
    if not server.running:
        assert len(watched()) == before, "the canceled start's inbox is still watched"
    async with server:
        client = await Client.connect(server.url)
        assert (await client.send("hi"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert len(watched()) == before


FORKING = """
import asyncio, os, sys, warnings
sys.path.insert(0, sys.argv[1])
from a2a_native import AgentServer, Client
from conftest import CARD, Echo

async def round_trip():
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        return (await client.send("hi"))["task"]["status"]["state"]

assert asyncio.run(asyncio.wait_for(round_trip(), 20)) == "TASK_STATE_COMPLETED"
warnings.simplefilter("ignore", DeprecationWarning)  # forking a multi-threaded process
pid = os.fork()
if pid == 0:
    # The child serves and calls, then exits normally (atexit stops its runtime).
    sys.exit(0 if asyncio.run(asyncio.wait_for(round_trip(), 20)) == "TASK_STATE_COMPLETED" else 2)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_serves_and_calls_with_a_runtime_of_its_own() -> None:
    """After the parent used the package (its runtime runs), a forked child (a pre-forking
    server's worker, multiprocessing's fork start) can start a server, call it, and exit."""
    import subprocess
    import sys
    from pathlib import Path

    tests = str(Path(__file__).parent)
    try:
        done = subprocess.run([sys.executable, "-c", FORKING, tests], timeout=60, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        pytest.fail("the forked child (or its exit) hung")
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_value_json_cannot_hold_is_invalid_params_naming_where_it_is() -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
    for bad, why in ((float("nan"), "NaN"), (float("inf"), "NaN"), (10**30, "range"), ("\ud800", "surrogate")):
        with pytest.raises(errors.InvalidParamsError) as info:
            validate("Message", {**message, "metadata": {"scores": [1, {"score": bad}]}})
        assert info.value.violations[0][0] == "metadata.scores.1.score", info.value
        assert why in str(info.value)
    with pytest.raises(TypeError):
        validate("Message", {**message, "metadata": {"when": object()}})


@run
async def test_agent_events_are_read_by_core_as_in_every_language() -> None:
    """What an agent reports is read and checked by core, so each language accepts and refuses
    alike: an empty artifact and an unknown state are InvalidParamsError (a ValueError); a
    Message dict without role or messageId is the agent's, with a fresh id."""
    refused: list[str] = []

    class Strict(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            for attempt in (lambda: events.artifact([]), lambda: events.status("finished")):  # type: ignore[arg-type]
                try:
                    await attempt()
                except errors.InvalidParamsError as e:
                    assert isinstance(e, ValueError)
                    refused.append(str(e))
            await events.artifact("kept", name="out")
            bare: Any = {"parts": [{"text": "done"}]}
            await events.complete(bare)

        async def cancel(self, context: RequestContext, events: EventQueue) -> None:
            pass

    async with AgentServer(CARD, Strict()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("go"))["task"]
    assert len(refused) == 2, refused
    assert "artifact.parts" in refused[0] and "state" in refused[1], refused
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    reply = task["status"]["message"]
    assert reply["role"] == "ROLE_AGENT" and reply["messageId"], reply
    assert reply["parts"] == [{"text": "done"}]
    assert [a["name"] for a in task["artifacts"]] == ["out"] and task["artifacts"][0]["artifactId"]


@run
async def test_the_loop_and_the_runtime_go_idle_between_requests() -> None:
    """After a request the loop and the runtime's worker stay awake only for a moment (they
    look for the next job instead of sleeping, to save wake-ups); an idle server costs no CPU."""
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        for _ in range(20):
            await client.send("busy")
        await asyncio.sleep(0.05)
        before = time.process_time()
        await asyncio.sleep(1.0)
        spent = time.process_time() - before
        # Spinning for the whole second would cost about 1 s of CPU; idle costs next to none.
        assert spent < 0.2, f"an idle server used {spent:.3f} s of CPU in 1 s"
        assert (await client.send("after"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@run
async def test_a_client_closes_and_then_refuses_calls() -> None:
    async with AgentServer(CARD, Echo()) as server:
        async with await Client.connect(server.url) as client:
            assert (await client.send("hi"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        with pytest.raises(RuntimeError, match="closed"):
            await client.send("again")
        await client.close()  # twice is fine


def test_an_executor_that_is_none_or_a_class_is_refused_when_the_server_is_made() -> None:
    for bad in (None, object(), Echo):
        with pytest.raises(TypeError, match="executor"):
            AgentServer(CARD, bad)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidParamsError, match="strictV1Card"):
        AgentServer(CARD, Echo(), strict_v1_card="yes")  # type: ignore[arg-type]


@run
async def test_an_extended_card_given_is_declared_and_served() -> None:
    extended = {**CARD, "name": "py-test-agent (extended)"}
    async with AgentServer(CARD, Echo(), extended_card=extended, bearer_tokens=["t"]) as server:
        client = await Client.connect(server.url, bearer_token="t")
        assert client.card["capabilities"]["extendedAgentCard"] is True
        extended_served = await client.get_extended_card()
        assert extended_served["name"] == "py-test-agent (extended)"
        # A client that takes the extended card in the public one's place still sees it offered.
        assert extended_served["capabilities"]["extendedAgentCard"] is True


@run
async def test_the_card_names_the_public_url_and_the_server_url_stays_the_bound_one() -> None:
    async with AgentServer(CARD, Echo(), public_url="https://agent.example.com/a2a") as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        client = await Client.connect(server.url)
        urls = [i["url"] for i in client.card["supportedInterfaces"]]
        assert urls == ["https://agent.example.com/a2a/", "https://agent.example.com/a2a", "agent.example.com"], urls
    with pytest.raises(errors.InvalidParamsError, match="publicUrl"):
        AgentServer(CARD, Echo(), public_url="agent.example.com")


@run
async def test_a_stream_open_when_the_server_stops_ends_with_the_failed_status() -> None:
    """An executor that never returns is stopped at shutdown (after the grace) and its task
    ends FAILED: the client's stream receives that status as its last event, on both HTTP
    bindings, rather than retrying a stopped server and raising TransportError."""

    class Forever(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            await events.working("on it")
            await asyncio.Event().wait()

    for binding in ("JSONRPC", "HTTP+JSON"):
        server = AgentServer(CARD, Forever())
        await server.start()
        client = await Client.connect(server.url, binding=binding)
        events: list[StreamResponse] = []

        async def read() -> None:
            async for event in client.stream("hi"):
                events.append(event)

        reading = asyncio.ensure_future(read())
        for _ in range(500):  # the task and WORKING, within 10 s
            if len(events) >= 2:
                break
            await asyncio.sleep(0.02)
        assert len(events) == 2, events
        await server.stop()
        await asyncio.wait_for(reading, 20)
        last = events[-1].get("statusUpdate")
        assert last and last["status"]["state"] == "TASK_STATE_FAILED", (binding, events)
        assert "shut down" in str(last["status"].get("message"))


@run
async def test_a_misspelt_member_a_wrong_message_and_options_beside_a_request_are_refused() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        await client.send("one")
        bad: Any = {"contextID": "c"}  # sent on, it would list every task
        with pytest.raises(errors.InvalidParamsError, match="contextID"):
            await client.list_tasks(bad)
        config: Any = {"returnImmediatly": True}
        with pytest.raises(errors.InvalidParamsError, match=r"configuration\.returnImmediatly"):
            await client.send("x", configuration=config)
        with pytest.raises(errors.InvalidParamsError, match="expected a JSON object"):
            await client.list_tasks(cast(Any, "abc"))
        for wrong in (42, None, ["x"]):
            with pytest.raises(TypeError, match="message must be"):
                await client.send(cast(Any, wrong))
        request: Any = {"message": user_message("x")}
        with pytest.raises(TypeError, match="metadata given beside it"):
            await client.send(request, metadata={"k": 1})
        assert (await client.send(request))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@run
async def test_an_event_after_the_one_that_ended_the_task_is_refused() -> None:
    """A second ``complete`` raises, as a2a-sdk's TaskUpdater does, instead of vanishing."""
    seen: list[BaseException] = []

    class Twice(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            await events.complete("one")
            try:
                await events.complete("two")
            except errors.UnsupportedOperationError as e:
                seen.append(e)

    async with AgentServer(CARD, Twice()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("hi"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["status"]["message"]["parts"] == [{"text": "one"}]
        assert len(seen) == 1 and "already ended" in str(seen[0])


@run
async def test_stop_cancels_every_executor_of_the_blocking_sends_it_ends() -> None:
    """Blocking sends whose executors work on: at stop each executor's coroutine is canceled
    (some ran on after the server stopped), and each caller gets an answer, not a cut
    connection: FAILED for a task that began, Unavailable for one whose agent said nothing."""
    counts = {"started": 0, "cancelled": 0}

    class Hang(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            counts["started"] += 1
            try:
                if context.get_user_input() != "silent":
                    await events.working()
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                counts["cancelled"] += 1
                raise

    server = AgentServer(CARD, Hang(), limits={"blocking_timeout": 30, "shutdown_grace": 0.2})
    await server.start()
    client = await Client.connect(server.url, timeout=20)

    async def one(text: str) -> str:
        try:
            task = (await client.send(text))["task"]
            return str(task["status"]["state"])
        except A2AError as e:
            return e.name

    calls = [asyncio.ensure_future(one("silent" if i % 5 == 0 else f"x{i}")) for i in range(30)]
    while counts["started"] < 30:
        await asyncio.sleep(0.02)
    started = time.monotonic()
    await server.stop()
    assert time.monotonic() - started < 5
    assert counts["cancelled"] == 30, counts
    answers = await asyncio.wait_for(asyncio.gather(*calls), 5)
    assert sorted(set(answers)) == ["TASK_STATE_FAILED", "UnavailableError"], answers
