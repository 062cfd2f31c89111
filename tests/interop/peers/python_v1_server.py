"""Interop peer: a small agent on the official Python a2a-sdk 1.x, for our client to drive.

Behaviour, chosen by the message text (the same in every peer under tests/interop/peers/):
  "need-input ..."   the task goes INPUT_REQUIRED; the next message on it completes it
  "slow ..."         WORKING, then COMPLETED after 3 s (cancel stops it)
  "reply-message"    a direct Message reply, no task
  anything else      one artifact "echo" copying the message's parts, then COMPLETED

A2A 1.0 JSON-RPC on POST /, HTTP+JSON at the root, card at /.well-known/agent-card.json,
streaming and push notifications on, an extended card (served to anyone: the SDK's default);
with GRPC_PORT, the SDK's gRPC server (grpcio) there too, declared on the card.

    python python_v1_server.py PORT [GRPC_PORT]
"""

from __future__ import annotations

import asyncio
import sys

import httpx
import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
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


class PeerExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if text.startswith('reply-message'):
            await event_queue.enqueue_event(new_text_message('a direct reply', context_id=context.context_id))
            return
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
            if text.startswith('need-input'):
                await updater.requires_input(updater.new_agent_message([Part(text='what else?')]))
                return
        await updater.start_work()
        if text.startswith('slow'):
            await asyncio.sleep(3)
        await updater.add_artifact(list(context.message.parts), name='echo')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build(port: int, grpc_port: int | None) -> tuple[Starlette, DefaultRequestHandler]:
    base = f'http://127.0.0.1:{port}'
    grpc_interfaces = (
        [AgentInterface(url=f'127.0.0.1:{grpc_port}', protocol_binding='GRPC', protocol_version='1.0')]
        if grpc_port
        else []
    )
    card = AgentCard(
        name='interop peer (a2a-sdk 1.x)',
        description='A small agent on the official Python a2a-sdk, driven by a2a-native tests.',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(url=f'{base}/', protocol_binding='JSONRPC', protocol_version='1.0'),
            AgentInterface(url=base, protocol_binding='HTTP+JSON', protocol_version='1.0'),
            *grpc_interfaces,
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True, extended_agent_card=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='echo', name='echo', description='Echoes, asks for input, or works slowly.', tags=['echo'])],
    )
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.description = 'the extended card of the python peer'
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=PeerExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(), push_store),
        extended_agent_card=extended,
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url='/') + create_rest_routes(handler)
    return Starlette(routes=routes), handler


async def main(port: int, grpc_port: int | None) -> None:
    app, handler = build(port, grpc_port)
    if grpc_port:
        import grpc

        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        server.add_insecure_port(f'127.0.0.1:{grpc_port}')
        await server.start()
    config = uvicorn.Config(app, host='127.0.0.1', port=port, log_level='warning', access_log=False)
    await uvicorn.Server(config).serve()


if __name__ == '__main__':
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None))
