"""A Python agent on our server, instrumented as an application would be: its own OpenTelemetry
SDK exports the agent's span ("agent-work", in the request's trace) over OTLP/HTTP, while our
core exports the server's spans (OTEL_EXPORTER_OTLP_ENDPOINT is set). For the other bindings'
clients to drive in their cross-language trace tests (Node, Kotlin). Push webhooks may be on
loopback. Prints the server's URL, then serves until stdin closes.

    OTEL_EXPORTER_OTLP_ENDPOINT=http://... python python_agent.py
"""

from __future__ import annotations

import asyncio
import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from a2a_native import AgentExecutor, AgentServer, EventQueue, RequestContext

provider = TracerProvider(resource=Resource({"service.name": "python-agent-code"}))
provider.add_span_processor(
    SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']}/v1/traces"))
)
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("agent")


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        with tracer.start_as_current_span("agent-work"):
            await events.complete("done")


CARD = {
    "name": "python-agent", "description": "a traced Python agent", "version": "1.0.0",
    "capabilities": {"streaming": True, "pushNotifications": True},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["s"]}],
}


async def main() -> None:
    async with AgentServer(CARD, Agent(), security={"allow_private_webhooks": True}) as server:
        print(server.url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    provider.shutdown()


asyncio.run(main())
