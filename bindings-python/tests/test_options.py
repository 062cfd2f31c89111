"""Server and client options: limits, the extended card, stores, credential callables,
retries, the task pager, and loud failures for options that do not exist."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import contextvars
import http.client
import json
import os
import tempfile
from typing import Any

import pytest

from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext, ServerLimits, errors, user_message
from conftest import CARD, Echo, run


@run
async def test_limits_are_enforced_with_the_spec_errors() -> None:
    limits: ServerLimits = {"max_parts_per_message": 2, "max_body_bytes": 4096, "max_history_length": 1}
    async with AgentServer(CARD, Echo(), limits=limits) as server:
        client = await Client.connect(server.url)
        parts: list[Any] = [{"text": "a"}, {"text": "b"}, {"text": "c"}]
        with pytest.raises(errors.InvalidParamsError):
            await client.send(user_message(parts))
        with pytest.raises(A2AErrorOfBody):
            await client.send("x" * 10_000)
        task = (await client.send("ask"))["task"]
        await client.send("Ada", task_id=task["id"], context_id=task["contextId"])
        assert len((await client.get_task(task["id"]))["history"]) == 1  # capped


# A body over the limit is refused before it is read: the HTTP status is 413, which the
# client reports as the JSON-RPC error the server put in the body, or a transport error.
A2AErrorOfBody = (errors.InvalidRequestError, errors.TransportError)


def test_bad_options_fail_loudly() -> None:
    # Core reads every option (InvalidParamsError, also a ValueError), naming the bad one.
    with pytest.raises(errors.InvalidParamsError, match="max_partz"):
        AgentServer(CARD, Echo(), limits={"max_partz": 1})  # type: ignore[arg-type]
    # Core names a field in its JSON form, camelCase, whether a type or a range is wrong.
    with pytest.raises(ValueError, match="maxBodyBytes"):
        AgentServer(CARD, Echo(), limits={"max_body_bytes": "big"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="blockingTimeout"):
        AgentServer(CARD, Echo(), limits={"blocking_timeout": -1.0})
    with pytest.raises(errors.InvalidParamsError, match="taskRetention: a finite number of seconds, 0 or more"):
        AgentServer(CARD, Echo(), task_retention=-1)
    card = {**CARD, "supportedInterfaces": [{"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    with pytest.raises(ValueError, match="binding"):
        Client.from_card(card, binding="CARRIER-PIGEON")
    with pytest.raises(errors.InvalidParamsError, match="connectTimeout: a positive"):
        Client.from_card(card, connect_timeout=0)
    assert Client.from_card(card, connect_timeout=2, stream_idle_timeout=30).url == "http://127.0.0.1:9/"
    with pytest.raises(TypeError, match="callable"):
        Client.from_card(card, credentials="not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="caCertFile.*no-such.pem"):
        Client.from_card(card, ca_cert_file="/no-such.pem")
    with pytest.raises(ValueError, match="caCert"):  # PEM text, as in every language
        Client.from_card(card, ca_cert="/no-such.pem")
    with pytest.raises(ValueError, match="timeout"):
        Client.from_card(card, timeout=-1.0)


@run
async def test_extended_card_is_served() -> None:
    card = {**CARD, "capabilities": {**CARD["capabilities"], "extendedAgentCard": True}}
    extended = {**card, "description": "for callers who asked"}
    async with AgentServer(card, Echo(), extended_card=extended) as server:
        client = await Client.connect(server.url)
        got = await client.get_extended_card()
        assert got["description"] == "for callers who asked"
        assert got["supportedInterfaces"][0]["url"].startswith(server.url)


@run
async def test_async_credentials_callable_and_retries() -> None:
    seen: list[tuple[str, str]] = []

    async def credentials(method: str, url: str) -> dict[str, str]:
        seen.append((method, url))
        return {"Authorization": "Bearer tok-1"}

    async with AgentServer(CARD, Echo(), bearer_tokens=["tok-1"]) as server:
        client = await Client.connect(server.url, credentials=credentials, retries=0, timeout=5)
        task = (await client.send("hi"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        await client.get_task(task["id"])
        assert [m for m, _ in seen] == ["SendMessage", "GetTask"]
        assert all(u.startswith(server.url) for _, u in seen)

        def wrong(method: str, url: str) -> dict[str, str]:
            return {"Authorization": "Bearer nope"}

        with pytest.raises(errors.UnauthenticatedError):
            await Client.from_card(client.card, credentials=wrong).send("hi")

        def broken(method: str, url: str) -> dict[str, str]:
            raise RuntimeError("vault is sealed")

        with pytest.raises(errors.InternalError, match="vault is sealed"):
            await Client.from_card(client.card, credentials=broken).send("hi")

        async def never(method: str, url: str) -> dict[str, str]:
            await asyncio.Event().wait()  # a vault that never answers
            return {}

        # The provider gets the call's timeout: no hang.
        with pytest.raises(errors.A2ATimeoutError, match="credentials provider gave no headers"):
            await Client.from_card(client.card, credentials=never, timeout=0.3).send("hi")

        # A call that gives up on its provider (its timeout, or its caller leaving) cancels the
        # provider's task: slow vaults pile up no tasks.
        canceled = asyncio.Event()

        async def slow(method: str, url: str) -> dict[str, str]:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                canceled.set()
                raise
            return {}

        with pytest.raises(errors.A2ATimeoutError):
            await Client.from_card(client.card, credentials=slow, timeout=0.3).send("hi")
        await asyncio.wait_for(canceled.wait(), 5)
        canceled.clear()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(Client.from_card(client.card, credentials=slow).send("hi"), 0.3)
        await asyncio.wait_for(canceled.wait(), 5)


@run
async def test_async_credentials_run_on_the_loop_that_awaits_the_call() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def credentials(method: str, url: str) -> dict[str, str]:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return {"Authorization": "Bearer tok-1"}

    async with AgentServer(CARD, Echo(), bearer_tokens=["tok-1"]) as server:
        # Made on a loop that is closed by the time the client is used (asyncio.run's, in a
        # thread): the provider ran there and every call failed with "Event loop is closed".
        connect = Client.connect(server.url, credentials=credentials, retries=0, timeout=5)
        client = await asyncio.to_thread(asyncio.run, connect)
        assert (await client.send("hi"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert loops[-1] is asyncio.get_running_loop()


TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("TENANT", default="none")


@run
async def test_async_credentials_run_in_the_client_makers_context_and_fail_with_their_message() -> None:
    async def credentials(method: str, url: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {TENANT.get()}"}

    async def failing(method: str, url: str) -> dict[str, str]:
        await asyncio.sleep(0)
        raise RuntimeError("vault is sealed")

    async with AgentServer(CARD, Echo(), bearer_tokens=["tok-acme"]) as server:
        TENANT.set("tok-acme")  # seen by the provider: the context the client was made in
        client = await Client.connect(server.url, credentials=credentials, retries=0, timeout=5)
        TENANT.set("tok-other")
        assert (await client.send("hi"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        with pytest.raises(errors.InternalError, match="vault is sealed"):
            await Client.from_card(client.card, credentials=failing).send("hi")


@run
async def test_list_all_tasks_follows_pages() -> None:
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        made = {(await client.send(f"t{i}"))["task"]["id"] for i in range(7)}
        # A short state name, as executors' status events take it, filters as the wire name.
        for status in ("completed", "TASK_STATE_COMPLETED"):
            assert len((await client.list_tasks({"status": status}))["tasks"]) == 7, status  # type: ignore[arg-type]
        assert (await client.list_tasks({"status": "input_required"})).get("tasks", []) == []
        with pytest.raises(errors.InvalidParamsError, match="status"):
            await client.list_tasks({"status": "done"})  # type: ignore[arg-type]
        # The pager reads its request as list_tasks does: a short state name is taken, and a
        # misspelt member (which would list every task) is refused.
        assert len([t async for t in client.list_all_tasks({"status": "completed"})]) == 7
        with pytest.raises(errors.InvalidParamsError, match="contextID"):
            [t async for t in client.list_all_tasks({"contextID": "c"})]  # type: ignore[arg-type]
        pages = await client.list_tasks({"pageSize": 3})
        assert len(pages["tasks"]) == 3 and pages.get("nextPageToken")
        seen = [t["id"] async for t in client.list_all_tasks({"pageSize": 3})]
        assert len(seen) == 7 and set(seen) == made


@run
async def test_sqlite_store_keeps_tasks_across_restarts() -> None:
    with tempfile.TemporaryDirectory() as d:
        store = f"sqlite:{d}/tasks.db"
        async with AgentServer(CARD, Echo(), store=store) as server:
            task = (await (await Client.connect(server.url)).send("keep me"))["task"]
        async with AgentServer(CARD, Echo(), store=store) as server:
            again = await (await Client.connect(server.url)).get_task(task["id"])
            assert again["artifacts"][0]["parts"] == [{"text": "keep me"}]


def test_postgres_store_is_shared_by_two_servers() -> None:
    """Two servers on one PostgreSQL database see each other's tasks (tests/pg.sh provides
    the database under tests/run-all.sh; A2A_REQUIRE_POSTGRES=1 makes its absence a failure)."""
    url = os.environ.get("A2A_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("A2A_REQUIRE_POSTGRES") == "1":
            pytest.fail("A2A_REQUIRE_POSTGRES=1 but A2A_TEST_POSTGRES_URL is not set")
        pytest.skip("no PostgreSQL (set A2A_TEST_POSTGRES_URL)")

    @run
    async def go() -> None:
        async with AgentServer(CARD, Echo(), store=url) as a, AgentServer(CARD, Echo(), store=url) as b:
            task = (await (await Client.connect(a.url)).send("shared"))["task"]
            seen = await (await Client.connect(b.url)).get_task(task["id"])
            assert seen["status"]["state"] == "TASK_STATE_COMPLETED"

    go()


class HoldOrSteps(AgentExecutor):
    """"hold": working, then waits until canceled (records that it saw it); "steps": working,
    waits for `go` (bounded), two artifact chunks with short sleeps, completed. Records every run."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.cancel_hooks = 0
        self.holding = asyncio.Event()
        self.saw_cancel = asyncio.Event()
        self.go = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        text = context.get_user_input()
        self.ran.append(text)
        await events.working()
        if text == "hold":
            self.holding.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.saw_cancel.set()
                raise
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.go.wait(), 10)
        await asyncio.sleep(0.05)
        await events.artifact("a", artifact_id="steps", name="steps", last_chunk=False)
        await asyncio.sleep(0.05)
        await events.artifact("b", artifact_id="steps", append=True, last_chunk=True)
        await events.complete()

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        self.cancel_hooks += 1


def test_two_servers_on_postgres_stream_and_cancel_across_instances() -> None:
    """A task runs on A: a subscriber on B sees its events to the end, and a cancel on B stops
    A's coroutine and ends the streams on both instances CANCELED."""
    url = os.environ.get("A2A_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("A2A_REQUIRE_POSTGRES") == "1":
            pytest.fail("A2A_REQUIRE_POSTGRES=1 but A2A_TEST_POSTGRES_URL is not set")
        pytest.skip("no PostgreSQL (set A2A_TEST_POSTGRES_URL)")

    def state(event: Any) -> str | None:
        for key in ("task", "statusUpdate"):
            if key in event:
                return str(event[key]["status"]["state"])
        return None

    @run
    async def go() -> None:
        on_a, on_b = HoldOrSteps(), HoldOrSteps()
        async with AgentServer(CARD, on_a, store=url) as a, AgentServer(CARD, on_b, store=url) as b:
            client_a, client_b = await Client.connect(a.url), await Client.connect(b.url)

            # 1. A subscriber on B follows a task that runs on A to its end.
            task = (await client_a.send("steps", configuration={"returnImmediately": True}))["task"]
            sub_b = await client_b.subscribe(task["id"])
            assert (await sub_b.__anext__())["task"]["id"] == task["id"]
            on_a.go.set()
            rest = await asyncio.wait_for(_collect(sub_b), 15)
            assert rest and state(rest[-1]) == "TASK_STATE_COMPLETED", rest
            chunks = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in rest if "artifactUpdate" in e]
            assert chunks == ["a", "b"], rest
            assert (await client_b.get_task(task["id"]))["status"]["state"] == "TASK_STATE_COMPLETED"

            # 2. A cancel on B stops A's coroutine; the streams on A and on B end CANCELED.
            held = (await client_a.send("hold", configuration={"returnImmediately": True}))["task"]
            await asyncio.wait_for(on_a.holding.wait(), 10)
            sub_a = await client_a.subscribe(held["id"])
            sub_b = await client_b.subscribe(held["id"])
            for sub in (sub_a, sub_b):
                assert (await sub.__anext__())["task"]["id"] == held["id"]
            canceled = await client_b.cancel(held["id"])
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
            for sub in (sub_a, sub_b):
                rest = await asyncio.wait_for(_collect(sub), 15)
                assert rest and state(rest[-1]) == "TASK_STATE_CANCELED", rest
            await asyncio.wait_for(on_a.saw_cancel.wait(), 5)  # A's coroutine was canceled
            assert (await client_a.get_task(held["id"]))["status"]["state"] == "TASK_STATE_CANCELED"
            assert on_a.ran == ["steps", "hold"] and on_b.ran == [], (on_a.ran, on_b.ran)

    go()


async def _collect(stream: Any) -> list[Any]:
    return [e async for e in stream]


@run
async def test_an_unknown_store_fails_at_start() -> None:
    with pytest.raises(errors.InvalidParamsError, match="unknown store"):
        await AgentServer(CARD, Echo(), store="nosuch:thing").start()


class WhoAmI(Echo):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        who = context.principal["name"] if context.principal else "anonymous"
        await events.complete(who)


@run
async def test_tasks_belong_to_the_principal_that_made_them() -> None:
    tokens = {"tok-ada": "ada", "tok-bob": "bob"}
    async with AgentServer(CARD, WhoAmI(), bearer_tokens=tokens) as server:
        ada = await Client.connect(server.url, bearer_token="tok-ada")
        bob = await Client.connect(server.url, bearer_token="tok-bob")
        task = (await ada.send("hi"))["task"]
        assert task["status"]["message"]["parts"] == [{"text": "ada"}]  # the executor knows
        with pytest.raises(errors.TaskNotFoundError):
            await bob.get_task(task["id"])
        assert (await bob.list_tasks()).get("tasks", []) == []
        assert [t["id"] for t in (await ada.list_tasks())["tasks"]] == [task["id"]]


def test_import_star_does_not_shadow_the_builtin_timeout_error() -> None:
    scope: dict[str, Any] = {}
    exec("from a2a_native import *", scope)
    assert "TimeoutError" not in scope
    assert scope["A2ATimeoutError"] is errors.A2ATimeoutError
    assert errors.A2ATimeoutError.name == "TimeoutError" and errors.A2ATimeoutError.code == -31504
    assert errors.TimeoutError is errors.A2ATimeoutError  # the spec's name, as an alias
    # ... and the built-in too, as InvalidParamsError is a ValueError: `except TimeoutError`
    # catches an A2A timeout as it catches asyncio's.
    assert issubclass(errors.A2ATimeoutError, builtins.TimeoutError)
    assert isinstance(errors.A2ATimeoutError("slow"), errors.A2AError)


@run
async def test_a_second_start_is_refused_not_raced() -> None:
    server = AgentServer(CARD, Echo())
    first, second = await asyncio.gather(server.start(), server.start(), return_exceptions=True)
    try:
        ports = [r for r in (first, second) if isinstance(r, int)]
        refused = [r for r in (first, second) if isinstance(r, errors.A2AError)]
        assert len(ports) == 1 and len(refused) == 1, (first, second)
        assert "already running" in str(refused[0])
        assert server.port == ports[0]
    finally:
        await server.stop()
    assert not server.running


def test_a_bad_store_is_refused_when_the_server_is_made() -> None:
    # Not at start, as an InternalError: at once, naming the option.
    for store in ("sqlite:/no/such/dir/agent.db", "mongodb://x", "postgres"):
        with pytest.raises(errors.InvalidParamsError, match="store"):
            AgentServer(CARD, Echo(), store=store)


@run
async def test_a_strict_v1_card_leaves_out_the_0_3_fields() -> None:
    # A card declaring a 0.3 interface is served with the 0.3 fields too (for old clients);
    # strict_v1_card serves the 1.0 card alone (for 1.0 clients that refuse unknown fields).
    interfaces = [
        {"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": v} for v in ("1.0", "0.3")
    ]
    card = {**CARD, "supportedInterfaces": interfaces}
    for strict in (False, True):
        async with AgentServer(card, Echo(), strict_v1_card=strict) as server:
            _, _, body = await asyncio.to_thread(_get, server.port, "/.well-known/agent-card.json")
            served = json.loads(body)
        assert ("protocolVersion" in served) is not strict, served
        assert ("preferredTransport" in served) is not strict, served
        assert len(served["supportedInterfaces"]) == 2


@run
async def test_cors_origins_let_web_pages_of_those_origins_call() -> None:
    page = "http://localhost:5173"
    preflight = {"Origin": page, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    async with AgentServer(CARD, Echo(), cors_origins=[page]) as server:
        status, headers, _ = await asyncio.to_thread(_request, server.port, "OPTIONS", "/", preflight)
        assert status == 204
        assert headers["access-control-allow-origin"] == page
        status, headers, _ = await asyncio.to_thread(
            _request, server.port, "GET", "/.well-known/agent-card.json", {"Origin": page}
        )
        assert status == 200 and headers["access-control-allow-origin"] == page
        other = {**preflight, "Origin": "https://elsewhere.example"}
        status, headers, _ = await asyncio.to_thread(_request, server.port, "OPTIONS", "/", other)
        assert status == 403 and "access-control-allow-origin" not in headers
    with pytest.raises(errors.InvalidParamsError, match="corsOrigins"):
        AgentServer(CARD, Echo(), cors_origins=["https://app.example.com/"])
    with pytest.raises(errors.InvalidParamsError, match="corsOrigins"):
        AgentServer(CARD, Echo(), cors_origins="https://app.example.com")


def _request(port: int, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers=headers)
        resp = conn.getresponse()
        # Names in lower case (as HTTP/2 and hyper write them): one spelling to look up.
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    return _request(port, "GET", path, {})


def test_from_card_reads_a_0_3_card_as_connect_does() -> None:
    # The card an a2a-sdk 0.3 agent serves (no supportedInterfaces): spoken to in 0.3.
    card03 = {
        "name": "old", "description": "a 0.3 agent", "version": "1", "url": "http://127.0.0.1:9/",
        "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
    }
    client = Client.from_card(card03)
    assert (client.url, client.protocol_version) == ("http://127.0.0.1:9/", "0.3")
    # Its faults name the field, as the caller's.
    with pytest.raises(errors.InvalidParamsError, match="skills"):
        Client.from_card({**card03, "skills": "none"})
