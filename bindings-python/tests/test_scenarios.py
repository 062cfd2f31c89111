"""tests/vectors/scenario through the Python binding: a scripted Python executor hosted by our
server, driven by our Python client (send and stream); the reply and the event sequence must be
the ones the vector gives, as in core and every binding."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext
from conftest import CARD, run

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "vectors" / "scenario" / "basic.json").read_text()
)["cases"]


class Scripted(AgentExecutor):
    """Plays the steps of the case the message names (its text is the case's name)."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        steps = next(c["steps"] for c in CASES if c["name"] == context.get_user_input())
        for step in steps:
            if "status" in step:
                await events.status(step["status"], step.get("text"))
            elif "artifact" in step:
                await events.artifact(
                    step["artifact"],
                    artifact_id=step.get("id"),
                    append=step.get("append", False),
                    last_chunk=step.get("lastChunk", False),
                )
            elif "message" in step:
                await events.message(step["message"])
            elif "sleepMs" in step:
                await asyncio.sleep(step["sleepMs"] / 1000)
            elif "raise" in step:
                raise RuntimeError(step["raise"])
            else:
                raise AssertionError(f"unknown step {step}")


def short(state: str) -> str:
    return state.removeprefix("TASK_STATE_").lower()


def texts(parts: list[dict[str, Any]] | None) -> str:
    return "".join(p["text"] for p in parts or [] if "text" in p)


def event(e: dict[str, Any]) -> dict[str, str]:
    if "task" in e:
        return {"task": short(e["task"]["status"]["state"])}
    if "statusUpdate" in e:
        return {"status": short(e["statusUpdate"]["status"]["state"])}
    if "artifactUpdate" in e:
        return {"artifact": texts(e["artifactUpdate"]["artifact"]["parts"])}
    return {"message": texts(e["message"]["parts"])}


def reply(r: dict[str, Any]) -> dict[str, Any]:
    if "task" in r:
        t = r["task"]
        return {
            "task": short(t["status"]["state"]),
            "artifacts": [texts(a["parts"]) for a in t.get("artifacts", [])],
            "statusText": texts(t["status"].get("message", {}).get("parts")),
        }
    return {"message": texts(r["message"]["parts"])}


@run
async def test_scenario_vectors_through_our_server_and_client() -> None:
    failures = []
    async with AgentServer(CARD, Scripted()) as server:
        client = await Client.connect(server.url)
        for case in CASES:
            name = case["name"]
            got = reply(dict(await client.send(name)))
            failures += [f"{name}: send {k} = {got.get(k)!r}, want {v!r}" for k, v in case["send"].items() if got.get(k) != v]
            events = [event(dict(e)) async for e in client.stream(name)]
            if events != case["stream"]:
                failures.append(f"{name}: stream {events}, want {case['stream']}")
    assert not failures, "\n".join(failures)
