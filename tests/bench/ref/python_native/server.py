"""Benchmark server: the echo agent written in Python on a2a-native (bindings-python), so the
same `async def` agent can be measured hosted by our Rust server (this file) and by the official
a2a-sdk on uvicorn (../python/server.py).

Every message creates a Task with one artifact (name "echo") copying the message's parts, then
COMPLETED. A2A 1.0 JSON-RPC on POST /, HTTP+JSON at the root, card at
/.well-known/agent-card.json, memory store (bounded), one process.

    python server.py PORT
"""

from __future__ import annotations

import asyncio
import sys

from a2a_native import AgentExecutor, AgentServer, EventQueue, RequestContext

CARD = {
    "name": "echo (a2a-native Python binding)",
    "description": "Echo agent for benchmarks: a Python executor on the a2a-native server.",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "echo", "description": "Returns the message parts as an artifact.", "tags": ["echo", "benchmark"]}],
}


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.artifact(list(context.message["parts"]), name="echo", last_chunk=True)
        await events.complete()


async def main(port: int) -> None:
    await AgentServer(CARD, Echo(), port=port).serve()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
