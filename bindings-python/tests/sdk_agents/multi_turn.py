"""A multi-turn agent: asks for the caller's name (input-required), then greets it."""

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCard, Part, Role, TaskState

from . import card


def agent_card(url: str) -> AgentCard:
    return card.agent_card('Greeter', 'Asks your name, then greets you', url, 'greet')


class MultiTurnAgentExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if not task:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.requires_input(updater.new_agent_message([Part(text='What is your name?')]))
            return
        asked = sum(1 for m in task.history if m.role == Role.ROLE_USER)
        name = context.get_user_input().strip()
        await updater.add_artifact([Part(text=f'Hello, {name}!')], name='greeting')
        await updater.complete(updater.new_agent_message([Part(text=f'greeted after {asked} earlier user messages')]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
