"""Shared helpers: each test is a plain function running one event loop (no plugin needed)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

from a2a_native import AgentExecutor, EventQueue, RequestContext

CARD: dict[str, Any] = {
    "name": "py-test-agent",
    "description": "a Python executor on the a2a-native server",
    "version": "1.0.0",
    "capabilities": {"streaming": True, "pushNotifications": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
}


def run(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Runs an async test in a fresh event loop, with a deadline."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 60))

    return wrapper


class Echo(AgentExecutor):
    """Echo; "ask" asks for more input; "boom" raises; "slow" waits to be canceled;
    "chunks" streams an artifact in pieces; "reply" answers with a message."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        text = context.get_user_input()
        if text == "reply":
            await events.message("a direct reply")
            return
        if text == "boom":
            raise RuntimeError("the agent blew up")
        if text == "ask":
            await events.input_required("what is your name?")
            return
        if context.task and text:  # the answer to "ask"
            await events.complete(f"hello {text}")
            return
        await events.working()
        if text == "slow":
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        if text == "chunks":
            await events.artifact("a", artifact_id="art", name="c", last_chunk=False)
            await events.artifact("b", artifact_id="art", append=True, last_chunk=True)
        else:
            await events.artifact(text, name="echo", last_chunk=True)
        await events.complete()
