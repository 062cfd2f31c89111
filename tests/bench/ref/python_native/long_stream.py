"""Long artifact stream agent in Python on a2a-native (bindings-python): the same agent as
../python/long_stream.py (a2a-sdk), for tests/bench/long_stream.sh.

A message whose text is a number N gets a task that goes WORKING, then receives N chunks of
one artifact (same artifact id; append after the first, last_chunk on the last), one event
per chunk, then COMPLETED.

    python long_stream.py PORT STORE        # STORE: memory | sqlite:PATH
"""

from __future__ import annotations

import asyncio
import sys

from a2a_native import AgentExecutor, AgentServer, EventQueue, RequestContext

CARD = {
    "name": "long stream (a2a-native Python binding)",
    "description": "Appends N chunks to one artifact, for benchmarks.",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "long", "name": "long", "description": "N artifact chunks.", "tags": ["benchmark"]}],
}


class LongStream(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        n = int(context.get_user_input())
        await events.working()
        for i in range(n):
            await events.artifact(
                [{"text": f"chunk {i} of a long answer, some forty bytes"}],
                artifact_id="answer",
                name="answer" if i == 0 else None,
                append=i > 0,
                last_chunk=i == n - 1,
            )
        await events.complete()


async def main(port: int, store: str) -> None:
    await AgentServer(CARD, LongStream(), port=port, store=store).serve()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
