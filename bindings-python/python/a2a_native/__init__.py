"""a2a_native: the Agent2Agent (A2A) protocol for asyncio, on one Rust core.

- :class:`AgentExecutor` (subclass it), :class:`RequestContext`, :class:`EventQueue`
- :class:`AgentServer`: serves an executor (JSON-RPC and HTTP+JSON, SSE streams)
- :class:`Client`: talks to any A2A agent
- :mod:`a2a_native.models`: the A2A 1.0 types (ProtoJSON ``TypedDict``s, generated from the spec)
- :mod:`a2a_native.errors`: :class:`A2AError` and one subclass per spec error (generated)
"""

from . import errors, models
from ._native import __version__
from .client import Client, EventStream, user_message
from .errors import *  # noqa: F403 (the generated error classes)
from .errors import A2AError
from .executor import AgentExecutor, EventQueue, RequestContext
from .server import AgentServer

__all__ = [
    "AgentExecutor",
    "AgentServer",
    "Client",
    "EventQueue",
    "EventStream",
    "RequestContext",
    "__version__",
    "errors",
    "models",
    "user_message",
]
__all__ += errors.__all__  # A2AError and its subclasses
