"""One process as an instrumented Python application would run: its own OpenTelemetry SDK
exporting over OTLP/HTTP, a Python agent on our server that opens its own span, our client
called inside the application's span, and a push webhook. Run by test_tracing.py with
OTEL_EXPORTER_OTLP_ENDPOINT set (so our core exports its spans to the same receiver); prints
one JSON line: the task id and the trace headers each push notification carried."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext

provider = TracerProvider(resource=Resource({"service.name": "python-app"}))
provider.add_span_processor(
    SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']}/v1/traces"))
)
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("app")

pushes: list[dict[str, str]] = []


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        pushes.append({k: v for k, v in self.headers.items() if k.lower() in ("traceparent", "tracestate")})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        with tracer.start_as_current_span("agent-work"):
            await events.complete("done")

    async def cancel(self, context: RequestContext, events: EventQueue) -> None:
        await events.canceled()


CARD = {
    "name": "traced", "description": "traced", "version": "1.0.0",
    "capabilities": {"streaming": True, "pushNotifications": True},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["s"]}],
}


async def main() -> None:
    httpd = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    async with AgentServer(CARD, Agent(), security={"allow_private_webhooks": True}) as server:
        client = await Client.connect(server.url)
        with tracer.start_as_current_span("caller"):
            config: Any = {"taskPushNotificationConfig": {"url": hook}}
            task = (await client.send("hi", configuration=config))["task"]
        for _ in range(250):
            if pushes:
                break
            await asyncio.sleep(0.02)
    httpd.shutdown()
    provider.shutdown()
    print(json.dumps({"task": task["id"], "pushes": pushes}))


asyncio.run(main())
