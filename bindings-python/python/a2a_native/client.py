"""An A2A client on the Rust core: card resolution, JSON-RPC or HTTP+JSON (1.0, or 0.3 for
agents that only speak it), streams as async iterators, credentials."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping, Sequence
from typing import Any, TypeAlias, cast

from . import _native
from .models import (
    AgentCard,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)

__all__ = ["Client", "CredentialProvider", "EventStream", "user_message"]

#: Called before each call with ``(method, url)`` (the A2A 1.0 operation name and the interface
#: URL); returns the headers to add, e.g. ``{"Authorization": "Bearer ..."}``. May be ``async``.
CredentialProvider: TypeAlias = Callable[
    [str, str], Mapping[str, str] | None | Awaitable[Mapping[str, str] | None]
]


def user_message(
    content: str | list[Part], *, task_id: str | None = None, context_id: str | None = None
) -> Message:
    """A user message with a fresh id: ``str`` becomes one text part."""
    parts: list[Part] = [{"text": content}] if isinstance(content, str) else content
    m: Message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    if task_id:
        m["taskId"] = task_id
    if context_id:
        m["contextId"] = context_id
    return m


def _request(
    message: str | Message | SendMessageRequest,
    task_id: str | None,
    context_id: str | None,
    configuration: SendMessageConfiguration | None,
    metadata: dict[str, Any] | None,
) -> SendMessageRequest:
    if isinstance(message, str):
        message = user_message(message, task_id=task_id, context_id=context_id)
    elif not isinstance(message, Mapping):
        raise TypeError(
            f"message must be a str, a Message or a SendMessageRequest dict, got {type(message).__name__}"
        )
    elif "message" in message:  # already a SendMessageRequest, which carries its own options
        given = [name for name, value in (("task_id", task_id), ("context_id", context_id),
                                          ("configuration", configuration), ("metadata", metadata))
                 if value is not None]
        if given:
            raise TypeError(f"a SendMessageRequest carries its own options; {', '.join(given)} given beside it")
        return cast(SendMessageRequest, message)
    msg = cast(Message, dict(message))
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    req: SendMessageRequest = {"message": msg}
    if configuration:
        req["configuration"] = configuration
    if metadata:
        req["metadata"] = metadata
    return req


def _find_inject() -> Callable[[dict[str, str]], None] | None:
    try:
        from opentelemetry.propagate import inject
    except ImportError:
        return None
    return inject


_inject: list[Callable[[dict[str, str]], None] | None] = []  # looked up once, on first use


def _trace() -> dict[str, str] | None:
    """The caller's current OpenTelemetry context as W3C headers (``traceparent``,
    ``tracestate``), handed to the native call so its request joins the caller's trace; None
    without OpenTelemetry installed or without a current span."""
    if not _inject:
        _inject.append(_find_inject())
    inject = _inject[0]
    if inject is None:
        return None
    carrier: dict[str, str] = {}
    inject(carrier)
    return carrier or None


class EventStream:
    """The events of one stream (StreamResponse dicts), ended by the server when the task
    ends. ``async with`` or ``aclose()`` ends it early; the task goes on."""

    def __init__(self, native: _native.Feed) -> None:
        self._native = native

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamResponse:
        # Taken only once this task runs again: an event read for a wait that was canceled
        # meanwhile (a timed-out wait_for) stays for the next call, in order.
        while (event := self._native.take()) is None:
            await self._native.fetch()
        return cast(StreamResponse, event)

    async def aclose(self) -> None:
        await self._native.aclose()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _StreamCall:
    """``client.stream(...)``: usable as ``async for event in client.stream(...)`` or awaited
    for an :class:`EventStream` (which opens the stream first, so errors surface at once)."""

    def __init__(self, opener: Any) -> None:
        self._opener = opener
        # One request however many tasks await the stream at once; a lone waiter that is
        # canceled cancels it.
        self._opening: asyncio.Future[EventStream] | None = None
        self._waiting = 0

    def __await__(self) -> Generator[Any, None, EventStream]:
        return self._open().__await__()

    async def _open(self) -> EventStream:
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._make())
        opening = self._opening
        self._waiting += 1
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            if self._waiting == 1 and not opening.done():
                opening.cancel()
                self._opening = None
            raise
        finally:
            self._waiting -= 1

    async def _make(self) -> EventStream:
        return EventStream(await self._opener())

    def __aiter__(self) -> AsyncIterator[StreamResponse]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[StreamResponse]:
        stream = await self._open()
        try:
            async for event in stream:
                yield event
        finally:
            await stream.aclose()


def _paths(value: Any) -> Any:
    """A path (or a pair of them) as core reads it: text."""
    if isinstance(value, (tuple, list)):
        return [os.fspath(v) for v in value]
    return os.fspath(value)


def _options(args: dict[str, Any]) -> dict[str, Any]:
    """The native client's options: the keyword arguments that were given, as core's
    ClientOptions JSON (which core reads strictly), plus the ``credentials`` callable."""
    opts = {k: v for k, v in args.items() if k not in ("cls", "url", "card") and v is not None}
    for file_option in ("ca_cert_file", "client_cert_files"):
        if file_option in opts:
            opts[file_option] = _paths(opts[file_option])
    if "headers" in opts:
        opts["headers"] = dict(opts["headers"])
    return opts


class Client:
    """A client of one agent. Build with ``await Client.connect(url)`` or
    ``Client.from_card(card)``. Every call raises an :class:`~a2a_native.errors.A2AError`
    subclass on failure."""

    def __init__(self, native: _native.Client) -> None:
        self._native = native
        #: The extensions the agent activated for the last :meth:`call`.
        self.last_activated: list[str] = []

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        bearer_token: str | None = None,
        api_key: tuple[str, str] | None = None,
        credentials: CredentialProvider | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        stream_idle_timeout: float | None = None,
        binding: str | None = None,
        retries: int | None = None,
        stream_reconnects: int | None = None,
        allow_v03: bool | None = None,
        extensions: list[str] | None = None,
        card_bearer_token: str | None = None,
        card_api_key: str | None = None,
        client_credentials: tuple[str, str] | None = None,
        ca_cert: str | None = None,
        client_identity: str | None = None,
        ca_cert_file: str | os.PathLike[str] | None = None,
        client_cert_files: tuple[str | os.PathLike[str], str | os.PathLike[str]] | None = None,
        max_response_bytes: int | None = None,
    ) -> Client:
        """Resolves the agent card at ``url`` and picks an interface.

        ``timeout`` bounds each call (seconds, default 60; for a stream, its response head),
        ``connect_timeout`` each connection (default 10) and ``stream_idle_timeout`` a stream's
        silence (no event, no keep-alive; default 300) before it is resubscribed.
        ``api_key`` is ``(header_name, value)``; ``credentials`` is called before each call
        (see :data:`CredentialProvider`); ``binding`` is ``"JSONRPC"`` (default),
        ``"HTTP+JSON"`` or ``"GRPC"`` (used when the card declares it); ``retries`` bounds the retries of idempotent calls on connection
        failures and 502/503/504 (default 2); ``stream_reconnects`` how often a dropped stream
        is resubscribed; ``allow_v03=False`` refuses agents that only speak A2A 0.3;
        ``extensions`` are the extension URIs asked for on every call; ``max_response_bytes``
        bounds each response and stream event (default 64 MiB).

        ``card_bearer_token``, ``card_api_key`` and ``client_credentials`` (``(client_id,
        client_secret)``, the OAuth 2.0 grant: token fetched, cached and refreshed; sent only
        to an https ``tokenUrl``, or http on this machine) are used the way the agent card asks,
        per call. ``ca_cert`` trusts a private CA (PEM text; ``ca_cert_file``: read from a PEM
        file); ``client_identity`` is a certificate and its key (PEM text) for agents that
        require mTLS (``client_cert_files``: ``(cert PEM path, key PEM path)``). The names are
        core's, as in every language."""
        _native.sync_level()
        native = await _native.Client.connect(url, _options(locals()))
        return cls(native)

    @classmethod
    def from_card(
        cls,
        card: AgentCard | Mapping[str, Any],
        *,
        bearer_token: str | None = None,
        api_key: tuple[str, str] | None = None,
        credentials: CredentialProvider | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        stream_idle_timeout: float | None = None,
        binding: str | None = None,
        retries: int | None = None,
        stream_reconnects: int | None = None,
        allow_v03: bool | None = None,
        extensions: list[str] | None = None,
        card_bearer_token: str | None = None,
        card_api_key: str | None = None,
        client_credentials: tuple[str, str] | None = None,
        ca_cert: str | None = None,
        client_identity: str | None = None,
        ca_cert_file: str | os.PathLike[str] | None = None,
        client_cert_files: tuple[str | os.PathLike[str], str | os.PathLike[str]] | None = None,
        max_response_bytes: int | None = None,
    ) -> Client:
        """A client for ``card`` without fetching it; options as in :meth:`connect`. An
        ``async`` ``credentials`` callable runs on the loop that awaits each call, in the
        ``contextvars`` context this is called in."""
        return cls(_native.Client.from_card(dict(card), _options(locals())))

    @property
    def card(self) -> AgentCard:
        return cast(AgentCard, self._native.card)

    @property
    def url(self) -> str:
        return self._native.url

    @property
    def binding(self) -> str:
        return self._native.binding

    @property
    def protocol_version(self) -> str:
        return self._native.protocol_version

    async def send(
        self,
        message: str | Message | SendMessageRequest,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        configuration: SendMessageConfiguration | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SendMessageResponse:
        """SendMessage: waits (unless ``configuration.returnImmediately``) until the task is
        terminal or interrupted; returns ``{"task": ...}`` or ``{"message": ...}``."""
        req = _request(message, task_id, context_id, configuration, metadata)
        return cast(SendMessageResponse, await self._native.call("SendMessage", req, _trace()))

    def stream(
        self,
        message: str | Message | SendMessageRequest,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        configuration: SendMessageConfiguration | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> _StreamCall:
        """SendStreamingMessage: ``async for event in client.stream("hi")``."""
        req, trace = _request(message, task_id, context_id, configuration, metadata), _trace()
        return _StreamCall(lambda: self._native.stream("SendStreamingMessage", req, trace))

    def subscribe(self, task_id: str) -> _StreamCall:
        """SubscribeToTask: the task first, then its live events."""
        trace = _trace()
        return _StreamCall(lambda: self._native.stream("SubscribeToTask", {"id": task_id}, trace))

    async def call(self, method: str, params: Any = None, *, extensions: Sequence[str] = ()) -> Any:
        """Calls an extension method the agent serves (JSON-RPC ``method``; over HTTP+JSON
        ``POST {base}/{method}``), asking for ``extensions`` on this call beside the client's
        own. Returns the result; :attr:`last_activated` then holds the extensions the agent
        activated for it. Errors are the A2AError subclasses, as for every call."""
        result, activated = await self._native.call_method(method, params, list(extensions), _trace())
        self.last_activated = list(activated)
        return result

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        req: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            req["historyLength"] = history_length
        return cast(Task, await self._native.call("GetTask", req, _trace()))

    async def list_tasks(self, request: ListTasksRequest | None = None) -> ListTasksResponse:
        request = {} if request is None else request
        return cast(ListTasksResponse, await self._native.call("ListTasks", request, _trace()))

    async def list_all_tasks(self, request: ListTasksRequest | None = None) -> AsyncIterator[Task]:
        """Every task matching ``request``, following ``nextPageToken`` page by page as the
        iteration goes: ``async for task in client.list_all_tasks({"status": ...})``."""
        pager = self._native.list_all_tasks({} if request is None else request)
        while True:
            task = pager.take()
            if task is None:
                try:
                    await pager.fetch()
                except StopAsyncIteration:
                    return
                continue
            yield cast(Task, task)

    async def cancel(self, task_id: str, *, metadata: dict[str, Any] | None = None) -> Task:
        req: dict[str, Any] = {"id": task_id}
        if metadata:
            req["metadata"] = metadata
        return cast(Task, await self._native.call("CancelTask", req, _trace()))

    async def create_push_config(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        created = await self._native.call("CreateTaskPushNotificationConfig", config, _trace())
        return cast(TaskPushNotificationConfig, created)

    async def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        req = {"taskId": task_id, "id": config_id}
        return cast(TaskPushNotificationConfig, await self._native.call("GetTaskPushNotificationConfig", req, _trace()))

    async def list_push_configs(
        self, task_id: str, *, page_size: int | None = None, page_token: str | None = None
    ) -> ListTaskPushNotificationConfigsResponse:
        """One page of the task's push configs; ``nextPageToken`` (when not empty) asks for the next."""
        req: dict[str, Any] = {"taskId": task_id}
        if page_size is not None:
            req["pageSize"] = page_size
        if page_token:
            req["pageToken"] = page_token
        listed = await self._native.call("ListTaskPushNotificationConfigs", req, _trace())
        return cast(ListTaskPushNotificationConfigsResponse, listed)

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        req = {"taskId": task_id, "id": config_id}
        await self._native.call("DeleteTaskPushNotificationConfig", req, _trace())

    async def get_extended_card(self) -> AgentCard:
        return cast(AgentCard, await self._native.call("GetExtendedAgentCard", {}, _trace()))

    async def close(self) -> None:
        """Lets go of this client's connections (streams already open go on); a call made
        later, or a read of ``card``, ``url`` and the like, raises ``RuntimeError``. Closing is optional: a client dropped lets go of them
        too. Also ``async with client:``."""
        self._native = cast(_native.Client, _Closed())

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


class _Closed:
    """What a closed client calls into."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("this a2a_native Client is closed")
