"""Extension methods written in Python: declared with @extension_method on the executor, served
over JSON-RPC and HTTP+JSON by our server, called with Client.call; and what is refused."""

from __future__ import annotations

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


def test_client_calls_a_python_extension_method_over_both_bindings() -> None:
    @run
    async def go() -> None:
        agent = Searching()
        async with AgentServer(card(), agent) as server:
            for binding in ("JSONRPC", "HTTP+JSON"):
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

    with pytest.raises(InvalidParamsError, match="core A2A method"):
        AgentServer(card(), Colliding())
    with pytest.raises(InvalidParamsError, match="do not declare"):
        AgentServer(card(), Undeclared())
