"""The official a2a-sdk client: sends one message (unary, then streamed) to URL over BINDING and
prints {"state", "artifact", "streamed_state"} as JSON. Usage: sdk_client.py URL BINDING TEXT"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState


def request(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)]))


def state_of(event) -> int | None:
    if event.HasField("task"):
        return event.task.status.state
    if event.HasField("status_update"):
        return event.status_update.status.state
    return None


async def main(url: str, binding: str, text: str) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        result = {}
        for streaming in (False, True):
            config = ClientConfig(streaming=streaming, supported_protocol_bindings=[binding], use_client_preference=True, httpx_client=http)
            client = await ClientFactory(config).create_from_url(url)
            states = []
            async for event in client.send_message(request(text)):
                if event.HasField("task"):
                    result.setdefault("artifact", "".join(p.text for a in event.task.artifacts for p in a.parts))
                if state_of(event) is not None:
                    states.append(TaskState.Name(state_of(event)))
            result["streamed_state" if streaming else "state"] = states[-1]
    print(json.dumps(result))


asyncio.run(main(*sys.argv[1:4]))
