"""Hosting one a2a-sdk agent module (tests/sdk_agents) on the SDK's own server or on ours, and
the SDK's client for either: what `test_compat.py` and the compat benchmark share."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import httpx
import uvicorn
from a2a.client import ClientConfig, ClientFactory
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette

from a2a_native import compat


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def executor_of(agent: ModuleType) -> Any:
    """The module's one AgentExecutor subclass, made as its samples make it."""
    [cls] = [v for k, v in vars(agent).items() if k.endswith("AgentExecutor") and k != "AgentExecutor"]
    return cls()


@contextlib.asynccontextmanager
async def sdk_server(agent: ModuleType, executor: Any = None) -> AsyncIterator[str]:
    """The agent on the SDK's DefaultRequestHandler and uvicorn, in this loop."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = agent.agent_card(f"{url}/")
    handler = DefaultRequestHandler(
        agent_executor=executor or executor_of(agent), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/"), *create_rest_routes(handler)]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
        await asyncio.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        await serving


@contextlib.asynccontextmanager
async def our_server(agent: ModuleType, executor: Any = None, **options: Any) -> AsyncIterator[str]:
    """The same agent, unchanged, on a2a-native through `a2a_native.compat`."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with compat.AgentServer(agent.agent_card(f"{url}/"), executor or executor_of(agent), port=port, **options):
        yield url


async def sdk_client(http: httpx.AsyncClient, url: str, *, streaming: bool = False) -> Any:
    config = ClientConfig(streaming=streaming, supported_protocol_bindings=["JSONRPC"], httpx_client=http)
    return await ClientFactory(config).create_from_url(url)
