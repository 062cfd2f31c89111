"""a2a_native: the Agent2Agent (A2A) protocol for asyncio, on one Rust core.

- :class:`AgentExecutor` (subclass it), :class:`RequestContext`, :class:`EventQueue`
- :class:`AgentServer`: serves an executor (JSON-RPC and HTTP+JSON, SSE streams)
- :class:`Client`: talks to any A2A agent
- :mod:`a2a_native.models`: the A2A 1.0 types (ProtoJSON ``TypedDict``s, generated from the spec)
- :func:`validate` (read a model as the core does, canonical ProtoJSON back) and
  :func:`convert` (A2A 0.3 wire form <-> 1.0)
- :mod:`a2a_native.signing`: signed Agent Cards (JCS + JWS)
- :mod:`a2a_native.errors`: :class:`A2AError` and one subclass per spec error (generated)
"""

import atexit

from . import _native, errors, models, signing
from ._native import __version__, convert, validate
from .client import Client, CredentialProvider, EventStream, user_message
from .errors import *  # noqa: F403 (the generated error classes)
from .errors import A2AError
from .executor import (
    AgentExecutor,
    EventQueue,
    MethodContext,
    Principal,
    RequestContext,
    extension_method,
    profile_check,
)
from .push import PushVerifier
from .server import AgentServer, JwtOptions, PushOptions, SecurityOptions, ServerLimits, TlsOptions

__all__ = [
    "AgentExecutor",
    "AgentServer",
    "Client",
    "CredentialProvider",
    "EventQueue",
    "EventStream",
    "JwtOptions",
    "MethodContext",
    "Principal",
    "PushVerifier",
    "RequestContext",
    "SecurityOptions",
    "PushOptions",
    "ServerLimits",
    "TlsOptions",
    "__version__",
    "convert",
    "errors",
    "extension_method",
    "models",
    "profile_check",
    "signing",
    "user_message",
    "validate",
    # A2AError and its subclasses (errors.__all__, written out: type checkers read a literal
    # list only; a test keeps the two alike).
    "A2AError",
    "JSONParseError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "InvalidParamsError",
    "InternalError",
    "TaskNotFoundError",
    "TaskNotCancelableError",
    "PushNotificationNotSupportedError",
    "UnsupportedOperationError",
    "ContentTypeNotSupportedError",
    "InvalidAgentResponseError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "VersionNotSupportedError",
    "UnauthenticatedError",
    "PermissionDeniedError",
    "UnavailableError",
    "TransportError",
    "A2ATimeoutError",
]

# The native runtime's threads are not Python's: one that touches Python while the interpreter
# finalizes crashes the process. Close their way in (and stop the runtime) while the interpreter
# is still whole; see bindings-python/src/runtime.rs.
atexit.register(_native._shutdown)
