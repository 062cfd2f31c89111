"""Serving an :class:`~a2a_native.executor.AgentExecutor` over A2A (JSON-RPC and HTTP+JSON on
one port) with the Rust core's server."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypedDict

from . import _native
from .executor import _METHOD_SPEC, _PROFILE_SPEC, AgentExecutor, _marked
from .models import AgentCard

if TYPE_CHECKING:  # only for the type: the SDK is optional
    from a2a.server.agent_execution import AgentExecutor as SdkAgentExecutor
    from a2a.types.a2a_pb2 import AgentCard as SdkAgentCard

__all__ = ["AgentServer", "JwtOptions", "SecurityOptions", "ServerLimits", "TlsOptions"]


class JwtOptions(TypedDict, total=False):
    """Bearer JWTs checked against a JWKS: ``jwks_url`` (fetched, cached, refetched on key
    rotation) or ``jwks`` (a fixed key set). ``issuers`` and ``audiences`` are required: a token
    must name one of each (its ``iss`` and ``aud``)."""

    jwks_url: str
    jwks: dict[str, Any]
    issuers: list[str]
    audiences: list[str]
    #: Clock skew allowed on exp/nbf, seconds (default 60).
    leeway: float
    #: Default ["RS256", "ES256", "EdDSA"].
    algorithms: list[str]


class TlsOptions(TypedDict, total=False):
    """HTTPS with PEM files; ``client_ca`` requires client certificates (mutual TLS)."""

    cert: str
    key: str
    client_ca: str


class SecurityOptions(TypedDict, total=False):
    """How callers authenticate (any one declared scheme admits a caller) and what is signed."""

    #: API key -> the principal it names.
    api_keys: Mapping[str, str]
    #: ``("header" | "query" | "cookie", name)``; default ``("header", "X-API-Key")``.
    api_key_location: tuple[str, str]
    jwt: JwtOptions
    tls: TlsOptions
    #: A2A operation name (``"SendMessage"``, ``"*"`` for all) -> scopes it needs (403 without).
    required_scopes: Mapping[str, list[str]]
    #: ``(PEM private key, "ES256" | "RS256" | "EdDSA", kid)``: signs the served cards.
    card_signing_key: tuple[bytes, str, str]
    #: Same shape: signs push notifications (public key at /.well-known/a2a-push-jwks.json).
    push_signing_key: tuple[bytes, str, str]
    #: ``"principal"`` (default: a task is visible to the principal that made it) or ``"shared"``.
    task_visibility: str
    #: Non-public push targets allowed anyway (all refused by default: SSRF). ``True``: any
    #: target; a list: only these host names (matched by name), IP addresses and CIDR ranges
    #: (matched against the resolved address), e.g. ``["127.0.0.1", "10.0.0.0/8", "hooks.internal"]``.
    allow_private_webhooks: bool | list[str]


class PushOptions(TypedDict, total=False):
    """How push notifications are delivered (absent keys keep the defaults). A delivery that
    fails (a connection error, a timeout, a 5xx or 429) is retried after about
    ``initial_backoff`` seconds, each wait doubling up to ``max_backoff``, until ``max_attempts``
    attempts were made: by default 4 attempts over about 3.5 s."""

    #: Attempts per notification, the first included (default 4; 1: no retry).
    max_attempts: int
    #: Seconds one attempt may take, connecting included (default 10).
    timeout: float
    #: Seconds before the first retry (default 0.5).
    initial_backoff: float
    #: Longest wait between two attempts, in seconds (default 8).
    max_backoff: float


class ServerLimits(TypedDict, total=False):
    """What one client can make the server hold (absent keys keep the defaults)."""

    max_body_bytes: int
    #: Bytes that request bodies larger than 64 KiB may hold at once, server-wide, until their
    #: requests are answered (503 with Retry-After beyond it; default 64 MiB, never less than
    #: ``max_body_bytes``).
    max_body_bytes_in_flight: int
    max_parts_per_message: int
    max_history_length: int
    #: About how many bytes of the client's messages one task may hold: a message that would
    #: take it past is refused (InvalidRequestError; default 64 MiB; the agent's output does
    #: not count).
    max_task_bytes: int
    max_streams_per_task: int
    blocking_timeout: float
    #: Largest request head in bytes (431 beyond it; default 65536).
    max_header_bytes: int
    #: Seconds a client may take to send its first byte, and on HTTP/1 a request head once
    #: begun (408 beyond it; default 30).
    header_read_timeout: float
    #: Seconds a request body may take to arrive (408 beyond it; default 30).
    body_read_timeout: float
    #: Seconds a connection may stay open with no request in flight before it is closed
    #: (an open stream counts; default 120).
    idle_timeout: float
    #: Seconds ``execute`` may run before it is canceled and its task ends FAILED (default:
    #: no limit). Bounds executors that never return.
    executor_timeout: float
    #: Most connections served at once; at the cap accepting waits until one closes (default
    #: 4096).
    max_connections: int
    #: Seconds running executions get to finish at a graceful stop before their tasks end
    #: FAILED (default 1).
    shutdown_grace: float
    #: Most requests one HTTP/2 connection may have open at once (default 100).
    max_streams_per_connection: int


# What SIGTERM stops: every `serve()` waiting now (one handler for them all, installed by the
# first and removed by the last).
_sigterm_stops: list[Callable[[], None]] = []


def _handle_sigterm(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> bool:
    """Makes SIGTERM call ``stop`` on ``loop`` when nothing else handles it (its default
    action would kill the process mid-request); whether it did. Not where the loop cannot
    (another thread than the main one, Windows)."""
    if not _sigterm_stops:
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            return False
        try:
            loop.add_signal_handler(signal.SIGTERM, _stop_all)
        except (NotImplementedError, RuntimeError, ValueError):
            return False
    _sigterm_stops.append(stop)
    return True


def _stop_all() -> None:
    for stop in list(_sigterm_stops):
        stop()


def _unhandle_sigterm(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
    _sigterm_stops.remove(stop)
    if not _sigterm_stops:
        loop.remove_signal_handler(signal.SIGTERM)


def _security(security: SecurityOptions | None) -> dict[str, Any] | None:
    if security is None:
        return None
    # The core reads the JSON form (see core's server::security::SecuritySpec): plain dicts,
    # PEM text, and the key location as an object.
    native: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in security.items()}
    if "api_key_location" in native:
        where, name = native["api_key_location"]
        native["api_key_location"] = {"in": where, "name": name}
    for key in ("card_signing_key", "push_signing_key"):
        if key in native:
            pem, alg, kid = native[key]
            native[key] = {"pem": pem.decode() if isinstance(pem, bytes) else pem, "alg": alg, "kid": kid}
    return native


def _bearer_tokens(tokens: Sequence[str] | Mapping[str, str]) -> list[str] | dict[str, str]:
    """Tokens (principal ``bearer-token``), or token -> principal name; as core reads them."""
    if isinstance(tokens, Mapping):
        return dict(tokens)
    if isinstance(tokens, str):
        raise TypeError("bearer_tokens is a list of tokens (or a token -> principal mapping), not a str")
    return list(tokens)


def _is_sdk_executor(executor: object) -> bool:
    """An a2a-sdk ``AgentExecutor`` (checked by name: the SDK is not imported for it)."""
    return any(
        c.__name__ == "AgentExecutor" and c.__module__.startswith("a2a.server.agent_execution")
        for c in type(executor).__mro__
    )


def _card(card: Any) -> dict[str, Any]:
    """A card dict, or the a2a-sdk's ``AgentCard`` message as one."""
    if hasattr(card, "DESCRIPTOR") and hasattr(card, "SerializeToString"):
        from .compat import to_dict

        return to_dict(card)
    return dict(card)


class AgentServer:
    """An A2A server for one agent.

    ``card`` is the agent card; when it declares no ``supportedInterfaces``, the server's own
    (JSON-RPC and HTTP+JSON at the bound address, gRPC at its host:port) are filled in. ``store`` is ``"memory"`` or
    ``"sqlite:PATH"`` or ``"postgres://..."`` (several servers may share one PostgreSQL
    database). With ``bearer_tokens``, every request must carry one of them: a mapping names
    the principal each token authenticates (a list: all are the principal ``"bearer-token"``).
    A task belongs to the principal that created it: other principals get TaskNotFound.
    ``extended_card`` is served by GetExtendedAgentCard (``card`` then declares
    ``capabilities.extendedAgentCard``, unless it says ``false``: refused). ``limits`` overrides the core's limits,
    each answered with the spec's error when exceeded: ``max_body_bytes``,
    ``max_body_bytes_in_flight`` (bytes large bodies may hold at once, server-wide; 503 beyond it),
    ``max_parts_per_message``, ``max_history_length``, ``max_task_bytes`` (bytes of the client's
    messages one task may hold; a message past it is refused), ``max_streams_per_task``,
    ``blocking_timeout`` (seconds a blocking SendMessage waits), ``max_header_bytes`` (431
    beyond it), ``header_read_timeout`` and ``body_read_timeout`` (seconds for a request's head
    and its body; 408 beyond them), ``idle_timeout`` (seconds a connection
    may stay open with nothing in flight), ``executor_timeout`` (seconds
    ``execute`` may run before its task ends FAILED; no limit by default), ``max_connections``
    (connections served at once; at the cap accepting waits; default 4096). ``push``
    (:class:`PushOptions`) sets how often and how long a failing webhook is retried. The ``memory`` store keeps at
    most ``max_tasks`` tasks (default 10,000) and about ``max_store_bytes`` of their contents
    (default 256 MiB; the oldest finished tasks make room), and a finished task
    ``task_retention`` seconds (default 3600). ``security`` adds API keys,
    JWTs, TLS / mutual TLS, scopes per operation and signing keys (:class:`SecurityOptions`);
    the card declares each scheme, and any one of them admits a caller. A card declaring a 0.3
    interface is served with the 0.3 fields beside the 1.0 ones, for old clients;
    ``strict_v1_card=True`` serves the 1.0 fields alone, for 1.0 clients that refuse unknown
    fields (0.3 requests are still answered). ``metrics_address`` (``"host:port"``; port 0:
    any) serves Prometheus/OpenMetrics text at ``/metrics`` on a listener of its own (see
    ``server.metrics_url``): requests by binding, method and outcome with their latency, open
    streams, task states, events applied, push outcomes, store latency. ``public_url`` is the
    http(s) URL clients reach the server at (behind a proxy or in a container), which the card's
    interfaces name; by default the bound address (``server.url`` is always that).
    ``cors_origins`` lets web pages of those origins call the agent across origins (CORS):
    origins as a browser names them (``["https://app.example.com"]``), or ``["*"]`` for any.

    An a2a-sdk (1.x) ``AgentExecutor`` and ``AgentCard`` are accepted as they are and run
    unchanged (:mod:`a2a_native.compat`).

    Use ``async with AgentServer(card, executor) as server:`` (port 0: see ``server.port``),
    ``await server.start()`` / ``await server.stop()``, or ``await server.serve(host, port)``.
    Executors run on the event loop that started the server.
    """

    def __init__(
        self,
        card: AgentCard | Mapping[str, Any] | SdkAgentCard,
        executor: AgentExecutor | SdkAgentExecutor,
        *,
        store: str = "memory",
        bearer_tokens: Sequence[str] | Mapping[str, str] | None = None,
        extended_card: AgentCard | Mapping[str, Any] | SdkAgentCard | None = None,
        limits: ServerLimits | None = None,
        push: PushOptions | None = None,
        security: SecurityOptions | None = None,
        strict_v1_card: bool = False,
        cors_origins: Sequence[str] | None = None,
        max_tasks: int | None = None,
        task_retention: float | None = None,
        max_store_bytes: int | None = None,
        metrics_address: str | None = None,
        public_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if isinstance(executor, type) or not callable(getattr(executor, "execute", None)):
            what = f"the class {executor.__name__}, not an instance" if isinstance(executor, type) else repr(executor)
            raise TypeError(f"executor must be an AgentExecutor (an object with async execute): got {what}")
        # Core's ServerOptions JSON; core reads it strictly (InvalidParamsError, a ValueError).
        options: dict[str, Any] = {"store": store}
        if bearer_tokens is not None:
            options["bearerTokens"] = _bearer_tokens(bearer_tokens)
        if extended_card is not None:
            options["extendedCard"] = _card(extended_card)
        if limits is not None:
            options["limits"] = dict(limits)
        if push is not None:
            options["push"] = dict(push)
        if security is not None:
            options["security"] = _security(security)
        if strict_v1_card is not False:
            options["strictV1Card"] = strict_v1_card  # core refuses what is not a bool
        if cors_origins is not None:
            # A lone string would be read as its characters: core refuses it, naming the option.
            options["corsOrigins"] = cors_origins if isinstance(cors_origins, str) else list(cors_origins)
        if max_tasks is not None:
            options["maxTasks"] = max_tasks
        if task_retention is not None:
            options["taskRetention"] = task_retention
        if max_store_bytes is not None:
            options["maxStoreBytes"] = max_store_bytes
        if metrics_address is not None:
            options["metricsAddress"] = metrics_address
        if public_url is not None:
            options["publicUrl"] = public_url
        methods = [spec for spec, _ in _marked(executor, _METHOD_SPEC)]
        if methods:
            options["methods"] = methods
        profiles = [uri for uri, _ in _marked(executor, _PROFILE_SPEC)]
        if profiles:
            options["profileChecks"] = profiles
        if not isinstance(executor, AgentExecutor) and _is_sdk_executor(executor):
            from .compat import SdkExecutor  # imports the SDK: only for its executors

            executor = SdkExecutor(executor)
        self._native = _native.AgentServer(_card(card), executor, options)
        self._host, self._port = host, port

    async def start(self, host: str | None = None, port: int | None = None) -> int:
        """Binds and serves in the background; returns the bound port. A start that is
        canceled leaves no server running: the bind goes on to its end, and is undone."""
        port = self._port if port is None else port
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer from 0 to 65535, not {port!r}")
        _native.sync_level()
        starting = asyncio.ensure_future(self._native.start(host or self._host, port))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            try:
                await starting
            except Exception:
                pass  # it did not start (another start had, or the bind failed)
            else:
                await self._native.stop()
            raise

    async def stop(self) -> None:
        """Stops gracefully: open streams end, running requests finish."""
        await self._native.stop()

    async def serve(self, host: str | None = None, port: int | None = None) -> None:
        """Serves until the calling task is canceled (Ctrl-C under ``asyncio.run``), or the
        process gets SIGTERM (a supervisor stopping it), unless the program handles SIGTERM
        itself; then stops gracefully, as :meth:`stop` does, and returns."""
        await self.start(host, port)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        on_sigterm = _handle_sigterm(loop, stopping.set)
        try:
            await stopping.wait()
        finally:
            if on_sigterm:
                _unhandle_sigterm(loop, stopping.set)
            await asyncio.shield(self.stop())

    @property
    def running(self) -> bool:
        return self._native.port is not None

    @property
    def port(self) -> int:
        """The bound port (RuntimeError when not running)."""
        port = self._native.port
        if port is None:
            raise RuntimeError("the server is not running")
        return port

    @property
    def url(self) -> str:
        """``http://host:port`` (RuntimeError when not running)."""
        url = self._native.url
        if url is None:
            raise RuntimeError("the server is not running")
        return url

    @property
    def metrics_url(self) -> str:
        """``http://host:port/metrics`` (RuntimeError when not running with ``metrics_address``)."""
        url = self._native.metrics_url
        if url is None:
            raise RuntimeError("the server is not running with a metrics_address")
        return url

    async def __aenter__(self) -> AgentServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
