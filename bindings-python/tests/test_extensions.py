"""Extension methods written in Python: declared with @extension_method on the executor, served
over JSON-RPC and HTTP+JSON by our server, called with Client.call; and what is refused."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from a2a_native import (
    AgentExecutor,
    AgentServer,
    Client,
    EventQueue,
    ExtensionSupportRequiredError,
    InternalError,
    InvalidParamsError,
    MethodContext,
    MethodNotFoundError,
    RequestContext,
    TaskNotFoundError,
    UnauthenticatedError,
    extension_method,
    profile_check,
)
from conftest import CARD, run

SEARCH = "https://example.com/ext/task-search/v1"
AUDIT = "https://example.com/ext/audit/v1"


def card(*, audit_required: bool = False) -> dict[str, Any]:
    return {
        **CARD,
        "capabilities": {
            "streaming": True,
            "extensions": [{"uri": SEARCH, "description": "search"}, {"uri": AUDIT, "required": audit_required}],
        },
    }


class Searching(AgentExecutor):
    def __init__(self) -> None:
        self.contexts: list[MethodContext] = []

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.complete("done")

    @extension_method("tasks/search", extension=SEARCH)
    async def search(self, params: Any, context: MethodContext) -> Any:
        self.contexts.append(context)
        if params.get("query") == "missing":
            raise TaskNotFoundError("no task matches 'missing'")
        if params.get("query") == "boom":
            raise RuntimeError("the index is down")
        return {"matches": [params["query"].upper()], "caller": context.principal and context.principal["name"]}

    @extension_method("audit/log", extension=AUDIT, path="/audit:log")
    async def audit(self, params: Any, context: MethodContext) -> Any:
        return {"logged": True}


def test_client_calls_a_python_extension_method_over_every_binding() -> None:
    @run
    async def go() -> None:
        agent = Searching()
        async with AgentServer(card(), agent) as server:
            for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
                client = await Client.connect(server.url, binding=binding)
                assert await client.call("tasks/search", {"query": "open"}, extensions=[SEARCH]) == {
                    "matches": ["OPEN"],
                    "caller": None,
                }
                assert client.last_activated == [SEARCH]
                context = agent.contexts[-1]
                assert (context.method, context.extension, context.extensions) == ("tasks/search", SEARCH, [SEARCH])
                with pytest.raises(TaskNotFoundError, match="missing"):
                    await client.call("tasks/search", {"query": "missing"})
                with pytest.raises(InternalError, match="the index is down"):
                    await client.call("tasks/search", {"query": "boom"})
                with pytest.raises(MethodNotFoundError):
                    await client.call("tasks/nosuch", {})
                # The core methods are still there beside them.
                assert (await client.send("hi"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # The declared HTTP+JSON path.
            async with httpx.AsyncClient() as http:
                resp = await http.post(f"{server.url}/audit:log", json={})
                assert resp.status_code == 200 and resp.json() == {"logged": True}
                assert AUDIT in resp.headers["a2a-extensions"]

    go()


def test_a_required_extension_must_be_requested_and_auth_applies() -> None:
    @run
    async def go() -> None:
        agent = Searching()
        async with AgentServer(card(audit_required=True), agent, bearer_tokens={"s3cret": "alice"}) as server:
            anonymous = await Client.connect(server.url)
            with pytest.raises(UnauthenticatedError):
                await anonymous.call("tasks/search", {"query": "q"}, extensions=[AUDIT])
            client = await Client.connect(server.url, bearer_token="s3cret")
            with pytest.raises(ExtensionSupportRequiredError):
                await client.call("tasks/search", {"query": "q"})
            result = await client.call("tasks/search", {"query": "q"}, extensions=[AUDIT])
            assert result["caller"] == "alice"
            assert set(client.last_activated) == {AUDIT, SEARCH}

    go()


def test_method_names_of_the_core_and_undeclared_extensions_are_refused() -> None:
    class Colliding(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            pass

        @extension_method("SendMessage", extension=SEARCH)
        async def send(self, params: Any, context: MethodContext) -> Any:
            return None

    class Undeclared(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            pass

        @extension_method("x/y", extension="urn:nobody-declares-this")
        async def xy(self, params: Any, context: MethodContext) -> Any:
            return None

    class Twice(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventQueue) -> None:
            pass

        @extension_method("x/do", extension=SEARCH)
        async def first(self, params: Any, context: MethodContext) -> Any:
            return "first"

        @extension_method("x/do", extension=SEARCH)
        async def second(self, params: Any, context: MethodContext) -> Any:
            return "second"

    with pytest.raises(InvalidParamsError, match="core A2A method"):
        AgentServer(card(), Colliding())
    with pytest.raises(InvalidParamsError, match="do not declare"):
        AgentServer(card(), Undeclared())
    # One name, two handlers: refused (the later in dir() order silently won).
    with pytest.raises(InvalidParamsError, match="declared twice"):
        AgentServer(card(), Twice())


# The Timestamp extension of the A2A samples (a2a-samples/samples/extensions/timestamp/v1): a
# client that asks for it gets an RFC 3339 UTC timestamp in the metadata of every Message and
# Artifact; the agent activates it only then, and only then is it echoed.
TIMESTAMP = "https://github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1"
TIMESTAMP_KEY = "github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1/timestamp"
UNUSED = "https://example.com/ext/declared-but-never-used/v1"


class Stamping(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        import datetime

        stamp = events.activate_extension(TIMESTAMP)

        def metadata() -> dict[str, Any] | None:
            if not stamp:
                return None
            return {TIMESTAMP_KEY: datetime.datetime.now(datetime.timezone.utc).isoformat()}

        await events.artifact(context.get_user_input(), name="echo", metadata=metadata())
        message: dict[str, Any] = {"role": "ROLE_AGENT", "messageId": "done", "parts": [{"text": "done"}]}
        if stamp:
            message["metadata"] = metadata()
        await events.complete(message)  # type: ignore[arg-type]


def test_the_timestamp_extension_is_activated_only_when_asked_for() -> None:
    import datetime

    @run
    async def go() -> None:
        stamped_card = {
            **CARD,
            "capabilities": {"extensions": [{"uri": TIMESTAMP, "description": "timestamps"}, {"uri": UNUSED}]},
        }
        async with AgentServer(stamped_card, Stamping()) as server, httpx.AsyncClient() as http:
            async def send(extensions: str | None) -> httpx.Response:
                headers = {"A2A-Version": "1.0", **({"A2A-Extensions": extensions} if extensions else {})}
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": "hi"}]}}}
                return await http.post(f"{server.url}/", json=body, headers=headers)

            # Asked for (with another declared one the agent does not use): only it is echoed.
            resp = await send(f"{TIMESTAMP}, {UNUSED}")
            assert resp.headers["a2a-extensions"] == TIMESTAMP
            task = resp.json()["result"]["task"]
            for meta in (task["artifacts"][0]["metadata"], task["status"]["message"]["metadata"]):
                when = datetime.datetime.fromisoformat(meta[TIMESTAMP_KEY])
                assert when.tzinfo is not None and when.utcoffset() == datetime.timedelta(0)
            # Not asked for: no timestamps, nothing echoed (declared is not activated).
            resp = await send(UNUSED)
            assert "a2a-extensions" not in resp.headers
            task = resp.json()["result"]["task"]
            assert "metadata" not in task["artifacts"][0]
            assert "metadata" not in task["status"]["message"]

    go()


ORDERS = "https://example.com/ext/order-profile/v1"


class Orders(AgentExecutor):
    """A profile extension: with it, every message carries a DataPart {"orderId": str}."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.complete("accepted")

    @profile_check(extension=ORDERS)
    def one_order_per_message(self, message: dict[str, Any]) -> None:
        data = [p["data"] for p in message.get("parts", []) if "data" in p]
        if not any(isinstance(d, dict) and isinstance(d.get("orderId"), str) for d in data):
            raise ValueError('every message carries a DataPart {"orderId": string}')


def test_a_profile_check_refuses_a_message_that_breaks_its_rule() -> None:
    @run
    async def go() -> None:
        orders_card = {**CARD, "capabilities": {"extensions": [{"uri": ORDERS, "description": "orders"}]}}
        async with AgentServer(orders_card, Orders()) as server:
            client = await Client.connect(server.url, extensions=[ORDERS])
            with pytest.raises(InvalidParamsError) as refused:
                await client.send("no order here")
            assert ORDERS in refused.value.message and "orderId" in refused.value.message
            assert refused.value.code == -32602
            assert (await client.list_tasks()).get("tasks", []) == []  # refused before any task
            ok = await client.send({"role": "ROLE_USER", "messageId": "m1", "parts": [{"data": {"orderId": "o-1"}}]})
            assert ok["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # Without the extension, its rules do not apply.
            plain = await Client.connect(server.url)
            assert (await plain.send("no order here"))["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    go()


def test_a_profile_check_for_an_undeclared_extension_is_refused() -> None:
    with pytest.raises(InvalidParamsError, match="do not declare"):
        AgentServer(CARD, Orders())

    class TwoRules(Orders):
        @profile_check(extension=ORDERS)
        def another_rule(self, message: dict[str, Any]) -> None:
            pass

    # Two checks of one extension: refused (one of them never ran).
    orders_card = {**CARD, "capabilities": {"extensions": [{"uri": ORDERS, "description": "orders"}]}}
    with pytest.raises(InvalidParamsError, match="one check per extension"):
        AgentServer(orders_card, TwoRules())


class Slow(AgentExecutor):
    """An extension method that takes a long time, and a profile check that does too."""

    def __init__(self) -> None:
        self.canceled: list[str] = []

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.complete("done")

    @extension_method("tasks/search", extension=SEARCH)
    async def search(self, params: Any, context: MethodContext) -> Any:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.canceled.append("method")
            raise
        return {}


def test_an_extension_method_whose_caller_leaves_is_canceled() -> None:
    @run
    async def go() -> None:
        agent = Slow()
        async with AgentServer(card(), agent) as server:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/search", "params": {}}
            async with httpx.AsyncClient() as http:
                with pytest.raises(httpx.TimeoutException):
                    await http.post(server.url, json=body, timeout=0.3)
            # The connection is gone: the handler's task is canceled, not left running.
            for _ in range(100):
                if agent.canceled:
                    break
                await asyncio.sleep(0.02)
            assert agent.canceled == ["method"]

    go()
