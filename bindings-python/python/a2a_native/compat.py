"""Run an unchanged a2a-sdk (1.x) agent on a2a-native.

An agent written for the official Python SDK keeps its ``AgentExecutor`` as it is: its
``RequestContext``, ``EventQueue`` and whatever the SDK's helpers do on top of them
(``TaskUpdater``, ``new_task_from_user_message``, ``new_text_message``...). Only the hosting
changes::

    from a2a_native import AgentServer            # instead of DefaultRequestHandler + uvicorn
    await AgentServer(agent_card, MyAgentExecutor()).serve(port=9999)

``agent_card`` may be the SDK's ``AgentCard`` message or a dict. :func:`AgentServer` here
does the same and takes ``executor_timeout`` (core's ``limits["executor_timeout"]``). The
SDK's protobuf messages and our dict models (ProtoJSON) convert both ways with
:func:`to_proto` and :func:`to_dict`.

What the SDK executor sees:

- ``RequestContext``: the SDK's own class, with the request (message, configuration,
  metadata, tenant), ``task_id``, ``context_id``, ``current_task`` and a ``call_context``
  whose ``user`` is the authenticated principal, ``tenant`` the request's tenant and
  ``requested_extensions`` the extensions the client asked for that the card declares.
- ``EventQueue``: a subclass of the SDK's, whose ``enqueue_event`` hands each ``Task``,
  ``Message``, ``TaskStatusUpdateEvent`` and ``TaskArtifactUpdateEvent`` to our core, which
  checks it and applies it (and waits when the client reads slowly).

An executor that raises, enqueues something that is not an A2A event, or does not return
within ``executor_timeout`` seconds (when given) ends its task FAILED with a message saying
so; the server lives on. An SDK ``A2AError`` (``UnsupportedOperationError``, ...) raised before
the first event refuses the request with the same error, as the SDK's own server answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

try:
    from a2a.auth.user import User
    from a2a.server.agent_execution import AgentExecutor as SdkAgentExecutor
    from a2a.server.agent_execution import RequestContext as SdkRequestContext
    from a2a.server.context import ServerCallContext
    from a2a.server.events import EventQueue as SdkEventQueue
    from a2a.types import a2a_pb2
    from a2a.utils.errors import A2AError as SdkA2AError
    # protobuf ships no type stubs.
    from google.protobuf import json_format  # type: ignore[import-untyped, unused-ignore]
    from google.protobuf.message import Message as ProtoMessage  # type: ignore[import-untyped, unused-ignore]
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("a2a_native.compat needs the official SDK: pip install 'a2a-sdk>=1,<2'") from None

from . import errors as _errors
from . import server as _server
from .executor import AgentExecutor, EventQueue, RequestContext

__all__ = ["AgentServer", "SdkExecutor", "to_dict", "to_proto"]

P = TypeVar("P", bound=ProtoMessage)

# The StreamResponse member each SDK event travels in.
_EVENT_KINDS: dict[type[ProtoMessage], str] = {
    a2a_pb2.Task: "task",
    a2a_pb2.Message: "message",
    a2a_pb2.TaskStatusUpdateEvent: "statusUpdate",
    a2a_pb2.TaskArtifactUpdateEvent: "artifactUpdate",
}


def to_dict(message: ProtoMessage) -> dict[str, Any]:
    """An SDK protobuf message as our dict model (its ProtoJSON form)."""
    return cast(dict[str, Any], json_format.MessageToDict(message))


def to_proto(value: Mapping[str, Any], message_type: type[P]) -> P:
    """Our dict model (ProtoJSON) as the SDK's protobuf message of ``message_type``. Fields
    the SDK's schema does not know are dropped, as a 1.0 peer drops them."""
    return cast(P, json_format.ParseDict(dict(value), message_type(), ignore_unknown_fields=True))


class _Principal(User):
    """The authenticated caller, as the SDK's ``User``."""

    def __init__(self, name: str, scopes: list[str]) -> None:
        self._name, self.scopes = name, scopes

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Queue(SdkEventQueue):
    """The SDK's ``EventQueue`` interface over our event sink."""

    def __init__(self, events: EventQueue) -> None:
        self._events = events
        #: The first thing enqueued that is not an A2A event: the task fails with it even if
        #: the executor catches the error.
        self.invalid: str | None = None

    async def enqueue_event(self, event: Any) -> None:
        kind = _EVENT_KINDS.get(type(event))
        if kind is None:
            self.invalid = self.invalid or (
                f"the a2a-sdk executor enqueued a {type(event).__name__}, not a Task, Message, "
                "TaskStatusUpdateEvent or TaskArtifactUpdateEvent"
            )
            raise TypeError(self.invalid)
        await self._events.send({kind: to_dict(event)})

    async def close(self, immediate: bool = False) -> None:
        """Kept for executors that close their queue; our core ends the stream itself."""

    def is_closed(self) -> bool:
        return False


def _sdk_context(context: RequestContext, with_request: bool) -> SdkRequestContext:
    call = ServerCallContext(
        tenant=context.tenant,
        requested_extensions=set(context.extensions),
        state={"trace_context": dict(context.trace_context), "skills": list(context.skills)},
    )
    if context.principal:
        call.user = _Principal(context.principal["name"], list(context.principal["scopes"]))
    request = None
    if with_request and context.message is not None:
        params: dict[str, Any] = {"message": context.message, "tenant": context.tenant}
        if context.configuration:
            params["configuration"] = context.configuration
        if context.metadata:
            params["metadata"] = context.metadata
        request = to_proto(params, a2a_pb2.SendMessageRequest)
    task = to_proto(context.task, a2a_pb2.Task) if context.task else None
    if task is not None and request is not None and task.history:
        # Our core's task already holds the incoming message; the SDK's current_task does not.
        if task.history[-1].message_id == request.message.message_id:
            del task.history[-1]
    return SdkRequestContext(
        call, request=request, task_id=context.task_id, context_id=context.context_id, task=task
    )


class SdkExecutor(AgentExecutor):
    """Our executor around an a2a-sdk ``AgentExecutor``, which runs unchanged."""

    def __init__(self, executor: SdkAgentExecutor) -> None:
        self.sdk_executor = executor

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await self._run("execute", _sdk_context(context, with_request=True), events)

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        await self._run("cancel", _sdk_context(context, with_request=False), events)

    async def _run(self, method: str, context: SdkRequestContext, events: EventQueue) -> None:
        queue = _Queue(events)
        try:
            await getattr(self.sdk_executor, method)(context, queue)
        except SdkA2AError as exc:
            # The SDK's A2A error as ours of the same name: raised before the first event it
            # refuses the request, as on the SDK's own server.
            ours = getattr(_errors, type(exc).__name__, None)
            if isinstance(ours, type) and issubclass(ours, _errors.A2AError):
                raise ours(exc.message) from exc
            raise
        if queue.invalid:
            raise TypeError(queue.invalid)


def AgentServer(  # noqa: N802 (reads as the class it returns)
    card: a2a_pb2.AgentCard | Mapping[str, Any],
    executor: SdkAgentExecutor | AgentExecutor,
    *,
    executor_timeout: float | None = None,
    **options: Any,
) -> _server.AgentServer:
    """Our :class:`~a2a_native.AgentServer` for an a2a-sdk executor and card (which it also
    takes directly). ``executor_timeout`` is core's ``limits["executor_timeout"]``, the one
    time limit of every executor. ``options`` are the server's own (``store``,
    ``bearer_tokens``, ``security``, ``limits``, ``extended_card``, ``host``, ``port``...)."""
    if executor_timeout is not None:
        limits = dict(options.get("limits") or {})
        # Core reads either spelling of the limit.
        given = {limits.pop(k) for k in ("executor_timeout", "executorTimeout") if limits.get(k) is not None}
        if given - {executor_timeout}:
            raise ValueError("executor_timeout and limits['executor_timeout'] differ: give one")
        options["limits"] = {**limits, "executor_timeout": executor_timeout}
    if isinstance(executor, SdkAgentExecutor):
        executor = SdkExecutor(executor)
    return _server.AgentServer(card, executor, **options)
