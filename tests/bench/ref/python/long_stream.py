"""Long artifact stream agent on the official Python `a2a-sdk` (1.x), SQL task store on SQLite.

A message whose text is a number N gets a task that goes WORKING, then receives N chunks of
one artifact (same artifact id; append after the first, last_chunk on the last), one event
per chunk, then COMPLETED. Used by tests/bench/long_stream.sh beside
../python_native/long_stream.py (the same agent on a2a-native).

    python long_stream.py PORT DB_PATH      # a fresh SQLite file per run
"""

from __future__ import annotations

import sys

import uvicorn

from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)


class LongStream(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        n = int(context.get_user_input())
        if context.current_task is None:
            # As in server.py: the first event must create the task.
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for i in range(n):
            await updater.add_artifact(
                [Part(text=f'chunk {i} of a long answer, some forty bytes')],
                artifact_id='answer',
                name='answer' if i == 0 else None,
                append=i > 0,
                last_chunk=i == n - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def main() -> None:
    port, db = int(sys.argv[1]), sys.argv[2]
    card = AgentCard(
        name='long stream (a2a-sdk reference)',
        description='Appends N chunks to one artifact, for benchmarks.',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(url=f'http://127.0.0.1:{port}/', protocol_binding='JSONRPC', protocol_version='1.0')
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='long', name='long', description='N artifact chunks.', tags=['benchmark'])],
    )
    store = DatabaseTaskStore(create_async_engine(f'sqlite+aiosqlite:///{db}'))
    handler = DefaultRequestHandler(agent_executor=LongStream(), task_store=store, agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url='/'))
    uvicorn.run(app, host='127.0.0.1', port=port, log_level='warning', access_log=False)


if __name__ == '__main__':
    main()
