"""A streaming agent on the SDK's TaskUpdater: a task, a working status with a message, one
artifact streamed word by word, then completed."""

import asyncio

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCard, Part

from . import card


def agent_card(url: str) -> AgentCard:
    return card.agent_card('Word streamer', 'Streams the words of your message back, one artifact chunk each', url, 'words')


class StreamingAgentExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if not task:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(updater.new_agent_message([Part(text='streaming your words')]))
        words = context.get_user_input().split()
        for i, word in enumerate(words):
            await updater.add_artifact(
                [Part(text=word)], artifact_id='words', name='words', append=i > 0, last_chunk=i == len(words) - 1
            )
            await asyncio.sleep(0.01)
        await updater.complete(updater.new_agent_message([Part(text=f'streamed {len(words)} words')]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()
