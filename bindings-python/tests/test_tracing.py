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


def test_one_trace_crosses_client_server_python_executor_and_webhook() -> None:
    """An application span → our client (its CLIENT span) → our server (the SERVER span) →
    the execution (`a2a.execute`) → the Python agent's own span, and the push notification
    carries the same trace: every span exported over OTLP/HTTP to one receiver, the Rust ones by
    core's exporter and the Python ones by the application's SDK, decoded with OpenTelemetry's
    own protobuf messages, and linked parent to child. The server's metrics reach the same
    receiver (/v1/metrics)."""
    import json
    import os
    import subprocess
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from pathlib import Path
    from typing import Any

    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans: list[dict[str, Any]] = []
    metrics: dict[str, set[str]] = {}  # service -> metric names

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.path == "/v1/metrics":
                exported = ExportMetricsServiceRequest.FromString(body)
                for rm in exported.resource_metrics:
                    service = next(a.value.string_value for a in rm.resource.attributes if a.key == "service.name")
                    metrics.setdefault(service, set()).update(m.name for sm in rm.scope_metrics for m in sm.metrics)
                request = ExportTraceServiceRequest()
            else:
                request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                service = next(a.value.string_value for a in resource.resource.attributes if a.key == "service.name")
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        spans.append({"name": span.name, "service": service, "kind": span.kind,
                                      "trace": span.trace_id.hex(), "id": span.span_id.hex(),
                                      "parent": span.parent_span_id.hex()})
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    receiver = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
           "OTEL_SERVICE_NAME": "a2a-core", "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_METRIC_EXPORT_INTERVAL": "200"}
    run_ = subprocess.run([sys.executable, str(Path(__file__).with_name("trace_chain_agent.py"))],
                          env=env, capture_output=True, text=True, timeout=60)
    receiver.shutdown()
    assert run_.returncode == 0, run_.stderr
    result = json.loads(run_.stdout.strip().splitlines()[-1])

    send = "lf.a2a.v1.A2AService/SendMessage"  # {rpc.service}/{rpc.method}, OTel's RPC span name

    def one(name: str, **where: Any) -> dict[str, Any]:
        found = [s for s in spans if s["name"] == name and all(s[k] == v for k, v in where.items())]
        assert len(found) == 1, (name, where, spans)
        return found[0]

    caller = one("caller", service="python-app")
    client = one(send, service="a2a-core", parent=caller["id"], kind=3)
    request = one(send, service="a2a-core", parent=client["id"], kind=2)
    execute = one("a2a.execute", service="a2a-core", parent=request["id"])
    work = one("agent-work", service="python-app", parent=execute["id"])
    assert {s["trace"] for s in (caller, client, request, execute, work)} == {caller["trace"]}
    # OTLP span kinds: CLIENT is 3, SERVER is 2.
    assert (client["kind"], request["kind"]) == (3, 2)
    assert {"a2a.server.requests", "a2a.server.request.duration"} <= metrics.get("a2a-core", set()), metrics
    # The push notification carries the task's trace; its parent is one of the trace's spans.
    assert result["pushes"], result
    for push in result["pushes"]:
        version, trace_id, parent, _flags = push["traceparent"].split("-")
        assert trace_id == caller["trace"], (push, caller)
        assert push.get("tracestate", "x"), push  # no empty header
        assert parent in {s["id"] for s in spans if s["trace"] == caller["trace"]}, (push, spans)


class BaggageReader(AgentExecutor):
    """Reads W3C baggage the way an instrumented agent does: from OpenTelemetry's context."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, dict[str, str]]] = []

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        from opentelemetry import baggage

        self.seen.append((baggage.get_baggage("user"), context.trace_context))
        await events.complete("done")

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        await events.canceled()


@run
async def test_baggage_reaches_the_executor_and_leaves_with_our_client() -> None:
    from opentelemetry import baggage, context as otel_context

    agent = BaggageReader()
    async with AgentServer(CARD, agent) as server:
        # Sent as a header by any client, without a trace.
        headed = await Client.connect(server.url, headers={"baggage": "user=ada"})
        await headed.send("headed")
        # Our client inside the application's context: its baggage goes along.
        client = await Client.connect(server.url)
        token = otel_context.attach(baggage.set_baggage("user", "grace"))
        try:
            await client.send("from the context")
        finally:
            otel_context.detach(token)
        await client.send("none")

    assert agent.seen[0] == ("ada", {"baggage": "user=ada"})
    assert agent.seen[1][0] == "grace" and agent.seen[1][1].get("baggage") == "user=grace"
    assert agent.seen[2] == (None, {})
