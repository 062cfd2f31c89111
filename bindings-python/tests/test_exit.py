"""Exit: a script exits cleanly whatever the native runtime's threads are doing when the
interpreter finalizes. (A runtime thread that touched Python then killed the process: SIGABRT,
SIGSEGV or "Fatal Python error: PyGILState_Release", about 1 run in 5 with 4 run at once.)

Each script runs many times, several at once: the race needs a busy machine to show."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

# Exits with the runtime busy: requests in flight, streams open, the server never stopped, and
# tracing events forwarded to `logging` throughout.
MID_FLIGHT = """
import asyncio, logging
from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext

class Slow(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.working()
        for i in range(1000):
            await events.artifact(f"chunk {i}", artifact_id="a", append=i > 0)
            await asyncio.sleep(0.001)
        await events.complete()

CARD = {"name": "slow", "description": "slow", "version": "1.0.0", "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "s", "tags": ["s"]}]}

async def consume(client: Client) -> None:
    async for _ in client.stream("go"):
        pass

async def main() -> None:
    logging.basicConfig(level=logging.DEBUG)
    server = AgentServer(CARD, Slow())
    await server.start()
    client = await Client.connect(server.url)
    for _ in range(8):
        asyncio.ensure_future(consume(client))
        asyncio.ensure_future(client.send("go"))
    await asyncio.sleep(0.2)

asyncio.run(main())
"""

# After the exit hook, calls fail at once instead of waiting for a runtime that is gone.
AFTER_SHUTDOWN = """
import asyncio
from a2a_native import Client, _native

_native._shutdown()
_native._shutdown()
try:
    asyncio.run(Client.connect("http://127.0.0.1:9"))
except RuntimeError as e:
    print(e)
"""


def quick_start() -> str:
    """The README's quick start (its first Python block), as a script."""
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert block and "asyncio.run(main())" in block.group(1), "README.md: no runnable quick start"
    return block.group(1)


def run(script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)


def failures(script: Path, runs: int, parallel: int = 4) -> list[str]:
    """How the runs that did not exit cleanly ended."""

    def one(_: int) -> str | None:
        try:
            p = run(script)
        except subprocess.TimeoutExpired:
            return "timed out"
        if p.returncode != 0 or "Fatal Python error" in p.stderr:
            return f"exit status {p.returncode}: {p.stderr[-2000:]}"
        return None

    with ThreadPoolExecutor(parallel) as pool:
        return [f for f in pool.map(one, range(runs)) if f is not None]


def test_readme_quick_start_exits_cleanly(tmp_path: Path) -> None:
    script = tmp_path / "quick_start.py"
    script.write_text(quick_start())
    failed = failures(script, 32)
    assert not failed, f"{len(failed)} of 32 runs failed; the first: {failed[0]}"


def test_exit_mid_flight_is_clean(tmp_path: Path) -> None:
    script = tmp_path / "mid_flight.py"
    script.write_text(MID_FLIGHT)
    failed = failures(script, 16)
    assert not failed, f"{len(failed)} of 16 runs failed; the first: {failed[0]}"


def test_calls_after_shutdown_fail_at_once(tmp_path: Path) -> None:
    script = tmp_path / "after_shutdown.py"
    script.write_text(AFTER_SHUTDOWN)
    p = run(script)
    assert p.returncode == 0, p.stderr
    assert "the Python interpreter is exiting" in p.stdout


# An agent that raises SystemExit before its first await: like any asyncio task's, it ends
# the program (the first step may run inside the native inbox's callback: an eager start).
SYSTEM_EXIT = """
import asyncio
from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext

class Quits(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        raise SystemExit(7)

CARD = {"name": "quits", "description": "quits", "version": "1.0.0", "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "s", "tags": ["s"]}]}

async def main() -> None:
    server = AgentServer(CARD, Quits())
    await server.start()
    client = await Client.connect(server.url)
    asyncio.ensure_future(client.send("go"))
    await asyncio.sleep(30)
    print("still running")

asyncio.run(main())
"""


def test_an_agent_raising_system_exit_ends_the_program(tmp_path: Path) -> None:
    script = tmp_path / "system_exit.py"
    script.write_text(SYSTEM_EXIT)
    p = run(script)
    assert p.returncode == 7, (p.returncode, p.stdout, p.stderr[-2000:])
    assert "still running" not in p.stdout
    assert "Fatal Python error" not in p.stderr


# A service run as the README runs one: `asyncio.run(server.serve())`. It prints its port once
# serving; a blocking send is in flight when the supervisor's SIGTERM comes.
SERVED = """
import asyncio, sys
from a2a_native import AgentExecutor, AgentServer, EventQueue, RequestContext

class Slow(AgentExecutor):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.working()
        await asyncio.sleep(1.5)
        await events.complete("done")

CARD = {"name": "slow", "description": "slow", "version": "1.0.0", "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "s", "tags": ["s"]}]}

async def main() -> None:
    server = AgentServer(CARD, Slow(), limits={"shutdown_grace": 10})
    # A second server served beside it: SIGTERM stops both.
    other = AgentServer(CARD, Slow())
    task = asyncio.ensure_future(server.serve())
    beside = asyncio.ensure_future(other.serve())
    while not (server.running and other.running):
        await asyncio.sleep(0.01)
    print(server.port, flush=True)
    await task
    await beside
    print("stopped", flush=True)

asyncio.run(main())
"""


def test_serve_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    """SIGTERM (a supervisor's stop) ends `serve()` as `stop()` does: the request in flight is
    answered, and the program goes on to exit 0 (SIGTERM's default action killed it mid-request)."""
    script = tmp_path / "served.py"
    script.write_text(SERVED)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/", body, {"Content-Type": "application/json", "A2A-Version": "1.0"})
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(lambda: json.load(urllib.request.urlopen(request, timeout=20)))
            time.sleep(0.4)
            proc.send_signal(signal.SIGTERM)
            reply = answer.result(timeout=20)
        assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", reply
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read().strip() == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
