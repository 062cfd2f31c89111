"""Benchmark reference server: the same `--echo` agent as server.py, served by the official
a2a-sdk's gRPC server (grpcio, `a2a.server.request_handlers.GrpcHandler`), A2A 1.0 over gRPC.

    python grpc_server.py [PORT]     # or PORT=...; default 9011
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc

from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from server import EchoExecutor


async def main() -> None:
    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get('PORT', '9011'))
    host = os.environ.get('HOST', '127.0.0.1')
    card = AgentCard(
        name='echo (a2a-sdk gRPC reference)',
        description='Echo agent for benchmarks, on the official Python a2a-sdk gRPC server.',
        version='1.0.0',
        supported_interfaces=[AgentInterface(url=f'{host}:{port}', protocol_binding='GRPC', protocol_version='1.0')],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='echo', name='echo', description='Returns the message parts.', tags=['echo'])],
    )
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f'{host}:{port}')
    await server.start()
    await server.wait_for_termination()


if __name__ == '__main__':
    asyncio.run(main())
