"""The seam an agent fills: subclass :class:`AgentExecutor` and write ``async def execute``.

``execute(context, events)`` does the work asked by ``context.message`` and reports through
``events`` (an :class:`EventQueue`). Returning ends the work; an exception fails the task with
its message, except an A2A error (``errors.ContentTypeNotSupportedError``, ...) raised before the
first event, which refuses the request: the caller gets that error and no task is made. When
the task is canceled the coroutine gets ``asyncio.CancelledError``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from . import _native
from .errors import A2AError
from .models import Message, Part, SendMessageConfiguration, StreamResponse, Task, TaskStateName

_log = logging.getLogger("a2a_native.executor")

__all__ = [
    "AgentExecutor",
    "EventQueue",
    "MethodContext",
    "Principal",
    "RequestContext",
    "extension_method",
    "profile_check",
]


class Principal(TypedDict):
    """The authenticated caller: a stable name and its granted scopes."""

    name: str
    scopes: list[str]

StateName = TaskStateName


@dataclass(frozen=True)
class RequestContext:
    """What an executor knows about the call it serves."""

    task_id: str
    context_id: str
    #: The client's message (``None`` for cancel).
    message: Message | None = None
    #: The task this message continues, the message already in its history (``None`` for a
    #: new task).
    task: Task | None = None
    configuration: SendMessageConfiguration | None = None
    metadata: dict[str, Any] | None = None
    tenant: str = ""
    #: The authenticated caller (``None`` when anonymous); the task belongs to it.
    principal: Principal | None = None
    #: Extension URIs the client asked for that the agent declares: those the executor may
    #: activate (:meth:`EventQueue.activate_extension`).
    extensions: list[str] = field(default_factory=list)
    #: Ids of the card's skills the caller may use, in card order: skills without
    #: ``securityRequirements`` and those whose scopes the caller holds (a message names no skill).
    skills: list[str] = field(default_factory=list)
    #: The W3C trace context this work continues (``traceparent``, ``tracestate``,
    #: ``baggage``): the caller's, as received. When ``opentelemetry`` is installed,
    #: ``execute`` already runs in it (baggage included), so the executor's spans join the
    #: caller's trace.
    trace_context: dict[str, str] = field(default_factory=dict)

    def get_user_input(self) -> str:
        """The text parts of the client's message, joined by newlines."""
        if not self.message:
            return ""
        return "\n".join(p["text"] for p in self.message.get("parts", []) if "text" in p)

    @property
    def text(self) -> str:
        return self.get_user_input()


class EventQueue:
    """How an executor reports: every method is a coroutine. Messages may be given as ``str``
    (one text part from the agent) or as a :class:`~a2a_native.models.Message` dict."""

    __slots__ = ("_sink",)

    def __init__(self, sink: _native.EventSink) -> None:
        self._sink = sink

    @property
    def task_id(self) -> str:
        return self._sink.task_id

    @property
    def context_id(self) -> str:
        return self._sink.context_id

    def activate_extension(self, uri: str) -> bool:
        """Marks the extension ``uri`` activated for this request: it is echoed in the
        response's ``A2A-Extensions`` (in a blocking SendMessage's answer; a stream's headers
        leave before the executor runs). Only one of ``context.extensions`` (asked for by the
        client, declared by the card) can be; returns whether ``uri`` is."""
        return self._sink.activate_extension(uri)

    async def status(self, state: StateName, message: str | Message | None = None) -> None:
        """A new status (``"working"`` or ``"TASK_STATE_WORKING"``; core's one table of state
        names reads it), with an optional message."""
        await _settled(self._sink.status(state, message))

    async def working(self, message: str | Message | None = None) -> None:
        await self.status("working", message)

    async def complete(self, message: str | Message | None = None) -> None:
        await self.status("completed", message)

    async def fail(self, message: str | Message | None = None) -> None:
        await self.status("failed", message)

    async def reject(self, message: str | Message | None = None) -> None:
        await self.status("rejected", message)

    async def input_required(self, message: str | Message | None = None) -> None:
        await self.status("input_required", message)

    async def auth_required(self, message: str | Message | None = None) -> None:
        await self.status("auth_required", message)

    async def canceled(self, message: str | Message | None = None) -> None:
        await self.status("canceled", message)

    async def artifact(
        self,
        parts: str | list[Part],
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool = False,
        last_chunk: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """An artifact (a fresh id unless ``artifact_id`` is given), or with ``append`` more
        parts for an earlier one with the same id."""
        artifact: dict[str, Any] = {"parts": [{"text": parts}] if isinstance(parts, str) else list(parts)}
        # Without an id, core gives the artifact a fresh one.
        for key, value in (("artifactId", artifact_id), ("name", name), ("description", description)):
            if value:
                artifact[key] = value
        if metadata is not None:
            artifact["metadata"] = metadata
        await _settled(self._sink.artifact(artifact, append, last_chunk))

    async def message(self, message: str | Message) -> None:
        """A direct reply instead of a task (only as the first and only event)."""
        await _settled(self._sink.message(message))

    async def send(self, event: StreamResponse | Mapping[str, Any]) -> None:
        """Any event, as a StreamResponse dict (ids left out are this task's: so typed, the
        dict may leave out what the StreamResponse type requires)."""
        await _settled(self._sink.send(event))


async def _settled(pending: Awaitable[None] | None) -> None:
    """The native sink sends at once when it has room (``None``) and returns an awaitable only
    when it is full: awaiting that is the backpressure."""
    if pending is not None:
        await pending


@dataclass(frozen=True)
class MethodContext:
    """What an extension method's handler knows about the call it serves."""

    method: str
    #: The URI of the extension the method belongs to (activated by the call).
    extension: str
    tenant: str = ""
    #: The authenticated caller (``None`` when anonymous).
    principal: Principal | None = None
    #: Extension URIs the client asked for that the agent declares.
    extensions: list[str] = field(default_factory=list)
    trace_context: dict[str, str] = field(default_factory=dict)


MethodHandler = Callable[[Any, Any, MethodContext], Coroutine[Any, Any, Any]]
_METHOD_SPEC = "_a2a_extension_method"


def extension_method(
    name: str, *, extension: str, path: str | None = None
) -> Callable[[MethodHandler], MethodHandler]:
    """Marks an ``async def handler(self, params, context)`` of an :class:`AgentExecutor` as the
    extension method ``name`` (JSON-RPC), tied to the extension URI ``extension``, which the
    card must declare. It is also served over HTTP+JSON at ``POST {base}/{name}`` (and at
    ``path`` when given). ``params`` is the request's params (a dict, or ``None``); the return
    value (JSON-able) is the result; an :class:`~a2a_native.errors.A2AError` raised is sent as
    that error, any other exception as InternalError. Auth, tenancy, limits and tracing apply
    as to the core methods; a name of a core method is refused when the server is made."""

    def mark(handler: MethodHandler) -> MethodHandler:
        setattr(handler, _METHOD_SPEC, {"name": name, "extension": extension, **({"path": path} if path else {})})
        return handler

    return mark


_PROFILE_SPEC = "_a2a_profile_check"
ProfileCheck = Callable[[Any, Any], Any]


def profile_check(*, extension: str) -> Callable[[ProfileCheck], ProfileCheck]:
    """Marks a method ``check(self, message)`` (plain or ``async``) of an :class:`AgentExecutor`
    as the rules of the profile extension ``extension`` (a URI the card declares). It runs on
    every incoming message of a request that activates the extension (the client asks for it,
    or the card requires it), before any task is made. Raising refuses the message with
    InvalidParamsError naming the extension and, in the exception's words, the rule (an
    :class:`~a2a_native.errors.A2AError` of another kind is sent as it is)."""

    def mark(check: ProfileCheck) -> ProfileCheck:
        setattr(check, _PROFILE_SPEC, extension)
        return check

    return mark


def _marked(executor: object, mark: str) -> list[tuple[Any, Callable[..., Any]]]:
    """Every (mark's value, bound method) an executor's class marks, duplicates included: the
    core refuses a name or an extension marked twice when the server is made."""
    found: list[tuple[Any, Callable[..., Any]]] = []
    for attr in dir(type(executor)):
        value = getattr(getattr(type(executor), attr, None), mark, None)
        if value is not None:
            found.append((value, getattr(executor, attr)))
    return found


def _profile_checks(executor: object) -> dict[str, Callable[..., Any]]:
    """The profile checks an executor's class marks: extension URI -> bound check."""
    return dict(_marked(executor, _PROFILE_SPEC))


def _methods(executor: object) -> dict[str, tuple[dict[str, str], Callable[..., Any]]]:
    """The extension methods an executor's class marks: name -> (spec, bound handler)."""
    return {spec["name"]: (spec, handler) for spec, handler in _marked(executor, _METHOD_SPEC)}


class AgentExecutor:
    """Base class of an agent. Override :meth:`execute`; :meth:`cancel` is optional (the
    running ``execute`` is canceled either way, and the task set to CANCELED)."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        raise NotImplementedError

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        return None


def _context(view: dict[str, Any]) -> RequestContext:
    """Core's view of the call (its JSON form, camelCase) as the executor's RequestContext."""
    return RequestContext(
        task_id=view["taskId"],
        context_id=view["contextId"],
        message=view.get("message"),
        task=view.get("task"),
        configuration=view.get("configuration"),
        metadata=view.get("metadata"),
        tenant=view["tenant"],
        principal=view.get("principal"),
        extensions=view["extensions"],
        skills=view["skills"],
        trace_context=view["traceContext"],
    )


def _attach_trace(carrier: dict[str, str]) -> Callable[[], None]:
    """Makes ``carrier``'s trace context current for this task when OpenTelemetry is installed
    (its global propagator reads it; W3C by default); returns how to undo it."""
    if not carrier:
        return lambda: None
    try:
        from opentelemetry import context, propagate
    except ImportError:
        return lambda: None
    token = context.attach(propagate.extract(carrier))
    return lambda: context.detach(token)


async def _body(
    executor: AgentExecutor, method: str, context: dict[str, Any], sink: _native.EventSink, done: _native.Completion
) -> None:
    request = _context(context)
    detach = _attach_trace(request.trace_context)
    try:
        outcome = getattr(executor, method)(request, EventQueue(sink))
        if not inspect.isawaitable(outcome):
            # A plain `def`: said so, instead of "object NoneType can't be used in 'await'".
            kind = type(outcome).__name__
            raise TypeError(f"{type(executor).__name__}.{method} must be `async def` (it returned {kind}, not an awaitable)")
        await outcome
    except asyncio.CancelledError:
        done("the executor's coroutine was canceled")
        raise
    except A2AError as exc:
        # Raised before the first event, it answers the request (core's refusal); after, it
        # fails the task like any exception.
        done(_utf8(exc.message), exc.name)
    except Exception as exc:
        # Reported here, so nobody else needs to retrieve it from the task. The core logs the
        # failure (WARNING); its traceback is here, for whoever debugs the agent.
        _log.debug("%s.%s raised", type(executor).__name__, method, exc_info=exc)
        done(_describe(exc))
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: reported, and they go on
        done(_describe(exc))
        raise
    else:
        done(None)
    finally:
        detach()


def _describe(exc: BaseException) -> str:
    """The failure's message: its text, else its class name (also when ``str()`` itself fails,
    so that the outcome is always reported and no task waits on an executor that ended)."""
    try:
        return _utf8(str(exc) or type(exc).__name__)
    except BaseException:
        return type(exc).__name__


def _utf8(text: str) -> str:
    """``text`` with lone surrogates (``surrogateescape`` bytes) escaped: a str holding one
    cannot cross to the native side, and the report carrying it would be lost."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _begin(
    loop: asyncio.AbstractEventLoop,
    executor: AgentExecutor,
    method: str,
    context: dict[str, Any],
    sink: _native.EventSink,
    done: _native.Completion,
) -> asyncio.Task[None]:
    """Called by the native server on the loop's thread (its inbox): runs the executor's
    coroutine as a task, which reports its outcome to ``done`` itself as it ends, with no
    further callbacks or loop turns (each costs more than the call it carries)."""
    return _task(loop, _body(executor, method, context, sink, done))


def _task(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """A task for ``coro`` that starts at once (Python 3.12's eager start), so an agent that
    answers without waiting costs no further loop turn; a loop with a task factory of its own
    gets ``create_task``, which follows it."""
    if _EAGER and loop.get_task_factory() is None:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    return loop.create_task(coro)


_EAGER = sys.version_info >= (3, 12)


def _call_method(
    loop: asyncio.AbstractEventLoop, executor: AgentExecutor, view: dict[str, Any], reply: Callable[..., None]
) -> asyncio.Task[None]:
    """Called by the native server on the loop's thread (its inbox): runs the extension method's
    handler as a task that reports to ``reply`` (canceled if its caller leaves)."""
    return _task(loop, _method_body(executor, view, reply))


async def _method_body(executor: AgentExecutor, view: dict[str, Any], reply: Callable[..., None]) -> None:
    async def work() -> Any:
        _, handler = _methods(executor)[view["method"]]
        context = MethodContext(
            method=view["method"],
            extension=view["extension"],
            tenant=view["tenant"],
            principal=view.get("principal"),
            extensions=view["extensions"],
            trace_context=view["traceContext"],
        )
        detach = _attach_trace(context.trace_context)
        try:
            return await handler(view.get("params"), context)
        finally:
            detach()

    await _reporting(reply, work, other_error="InternalError")


async def _reporting(reply: Callable[..., None], work: Callable[[], Awaitable[Any]], *, other_error: str) -> None:
    """Runs ``work`` and tells ``reply`` its outcome: the result, or an A2A error's class name
    and message (another exception's: ``other_error``)."""
    try:
        result = await work()
    except A2AError as exc:
        reply(None, exc.name, _utf8(exc.message))
    except Exception as exc:
        reply(None, other_error, _describe(exc))
    except BaseException:
        reply(None, "InternalError", "the handler was canceled")
        raise
    else:
        reply(result)


def _check_message(
    loop: asyncio.AbstractEventLoop, executor: AgentExecutor, view: dict[str, Any], reply: Callable[..., None]
) -> asyncio.Task[None]:
    """Called by the native server on the loop's thread: runs a profile check as a task that
    reports to ``reply`` (canceled if its caller leaves)."""
    return _task(loop, _check_body(executor, view, reply))


async def _check_body(executor: AgentExecutor, view: dict[str, Any], reply: Callable[..., None]) -> None:
    async def work() -> None:
        outcome = _profile_checks(executor)[view["extension"]](view["message"])
        if asyncio.iscoroutine(outcome):
            await outcome

    # A plain exception is the rule the message breaks: InvalidParams.
    await _reporting(reply, work, other_error="InvalidParamsError")
