"""Benchmark reference server: the `--echo` agent on the official Python `a2a-sdk` (1.x).

Every message creates a Task with one artifact (name "echo") whose parts are a copy of the
message's parts, then the task is COMPLETED. Streaming yields task, artifactUpdate,
statusUpdate(COMPLETED).

Speaks A2A 1.0: JSON-RPC on POST / (SendMessage, SendStreamingMessage, GetTask, ...; the
client must send `A2A-Version: 1.0`), HTTP+JSON at the root (POST /message:send, ...), card at
/.well-known/agent-card.json. InMemoryTaskStore, one process.

    python server.py [PORT]        # or PORT=... python server.py; default 9001
"""

from __future__ import annotations

import os
import sys

import uvicorn

from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)


class EchoExecutor(AgentExecutor):
    """Echoes the message's parts back as the task's single artifact."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact(list(message.parts), name='echo')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(host: str, port: int) -> AgentCard:
    base = f'http://{host}:{port}'
    return AgentCard(
        name='echo (a2a-sdk reference)',
        description='Echo agent for benchmarks, built on the official Python a2a-sdk.',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(url=f'{base}/', protocol_binding='JSONRPC', protocol_version='1.0'),
            AgentInterface(url=base, protocol_binding='HTTP+JSON', protocol_version='1.0'),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(
                id='echo',
                name='echo',
                description='Returns the message parts as an artifact.',
                tags=['echo', 'benchmark'],
            )
        ],
    )


def build_app(host: str, port: int) -> Starlette:
    card = agent_card(host, port)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = []
    routes += create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, rpc_url='/')
    routes += create_rest_routes(handler)
    return Starlette(routes=routes)


def main() -> None:
    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get('PORT', '9001'))
    host = os.environ.get('HOST', '127.0.0.1')
    uvicorn.run(build_app(host, port), host=host, port=port, log_level='warning', access_log=False)


if __name__ == '__main__':
    main()
