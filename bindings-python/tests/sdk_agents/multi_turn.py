"""A multi-turn agent: asks for the caller's name (input-required), then greets it."""

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, Role, TaskState


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name='Greeter',
        description='Asks your name, then greets you',
        version='1.0.0',
        supported_interfaces=[AgentInterface(url=url, protocol_binding='JSONRPC', protocol_version='1.0')],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='greet', name='greet', description='greets by name', tags=['greeting'])],
    )


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
