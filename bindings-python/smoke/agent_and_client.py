"""The installed package, used as its README says: an agent served by AgentServer and driven by
Client (send and stream). Run by tests/test_dist.py in a fresh venv that has only the wheel and no
Rust toolchain on PATH; prints one line, `smoke ok: <module path>`, on success."""

import asyncio
import shutil

import a2a_native
from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext
from a2a_native.errors import TaskNotFoundError

CARD = {
    "name": "smoke",
    "description": "echoes",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
}


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.artifact(context.get_user_input(), name="echo", last_chunk=True)
        await events.complete()


async def main() -> None:
    for tool in ("cargo", "rustc", "maturin"):
        assert shutil.which(tool) is None, f"{tool} is on PATH: the smoke test must not have it"
    async with AgentServer(CARD, Echo()) as server:
        client = await Client.connect(server.url)
        task = (await client.send("hello"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert task["artifacts"][0]["parts"][0]["text"] == "hello", task
        events = [event async for event in client.stream("streamed")]
        assert "task" in events[0], events
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events
        try:
            await client.get_task("no-such-task")
            raise AssertionError("get_task of an unknown id succeeded")
        except TaskNotFoundError:
            pass
    print(f"smoke ok: {a2a_native.__file__}")


asyncio.run(main())
