"""A Python executor's OpenTelemetry spans join the caller's trace: the server hands the
request's W3C trace context to ``execute`` (``context.trace_context``) and makes it current, so
a span the executor opens is a child of the caller's span, with no code of ours in the agent."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext
from conftest import CARD, run

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
tracer = provider.get_tracer("agent")


class Traced(AgentExecutor):
    """Opens a span around its work, the way an instrumented agent does."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        self.seen.append(context.trace_context)
        with tracer.start_as_current_span("agent-work"):
            await events.complete("done")

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        await events.canceled()


@run
async def test_executor_spans_join_the_callers_trace() -> None:
    exporter.clear()
    agent = Traced()
    async with AgentServer(CARD, agent) as server:
        traced = await Client.connect(server.url, headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01", "tracestate": "v=1"})
        await traced.send("traced")
        plain = await Client.connect(server.url)
        await plain.send("plain")
        malformed = await Client.connect(server.url, headers={"traceparent": "00-zz-yy-01"})
        await malformed.send("malformed")

    assert agent.seen[0] == {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01", "tracestate": "v=1"}
    assert agent.seen[1] == {} and agent.seen[2] == {}
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["agent-work"] * 3
    joined = spans[0]
    assert format(joined.context.trace_id, "032x") == TRACE_ID
    assert joined.parent is not None and format(joined.parent.span_id, "016x") == PARENT_ID
    # Without (or with a malformed) trace context, the agent's span starts a trace of its own.
    for span in spans[1:]:
        assert span.parent is None
        assert format(span.context.trace_id, "032x") != TRACE_ID
