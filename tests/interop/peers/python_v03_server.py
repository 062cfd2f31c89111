"""Interop peer: the same small agent on the official Python a2a-sdk 0.3 (the last 0.3 line),
so our client's automatic 0.3 fallback is proven against a real 0.3-only server.

Behaviour by message text, as in python_v1_server.py:
  "need-input ..." INPUT_REQUIRED, the next message completes; "slow ..." WORKING then
  COMPLETED after 3 s (cancellable); "reply-message" a direct Message; else an "echo" artifact.

A2A 0.3 JSON-RPC on POST /, 0.3 card at /.well-known/agent-card.json, streaming and push on.

    python python_v03_server.py PORT
"""

from __future__ import annotations

import asyncio
import sys

import httpx
import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import new_agent_text_message, new_task


class PeerExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if text.startswith('reply-message'):
            await event_queue.enqueue_event(new_agent_text_message('a direct reply', context_id=context.context_id))
            return
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if context.current_task is None and text.startswith('need-input'):
            await updater.requires_input(updater.new_agent_message([Part(root=TextPart(text='what else?'))]), final=True)
            return
        await updater.start_work()
        if text.startswith('slow'):
            await asyncio.sleep(3)
        await updater.add_artifact(list(context.message.parts), name='echo')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_app(port: int):
    card = AgentCard(
        name='interop peer (a2a-sdk 0.3)',
        description='A 0.3-only agent on the official Python a2a-sdk, driven by a2a-native tests.',
        url=f'http://127.0.0.1:{port}/',
        version='1.0.0',
        protocol_version='0.3.0',
        preferred_transport='JSONRPC',
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='echo', name='echo', description='Echoes, asks for input, or works slowly.', tags=['echo'])],
    )
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=PeerExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(), push_store),
    )
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


if __name__ == '__main__':
    port = int(sys.argv[1])
    uvicorn.run(build_app(port), host='127.0.0.1', port=port, log_level='warning', access_log=False)
