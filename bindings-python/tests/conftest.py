"""Shared helpers: each test is a plain function running one event loop (no plugin needed)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

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
