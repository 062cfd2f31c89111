"""tests/vectors/scenario through the Python binding: a scripted Python executor hosted by our
server, driven by our Python client (send and stream); the reply and the event sequence must be
the ones the vector gives, turn after turn on the same task where a case continues (``next``), as
in core and every binding."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from a2a_native import AgentExecutor, AgentServer, Client, EventQueue, RequestContext
from a2a_native.models import SendMessageConfiguration
from conftest import CARD, run

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "vectors" / "scenario" / "basic.json").read_text()
)["cases"]


def turns(case: dict[str, Any]) -> list[dict[str, Any]]:
    """A case and the turns that continue it."""
    chain = [case]
    while "next" in chain[-1]:
        chain.append(chain[-1]["next"])
    return chain


STEPS = {turn["name"]: turn["steps"] for case in CASES for turn in turns(case)}


def history(context: RequestContext) -> str:
    """The history of the task the message continues, as the vectors write it."""
    messages = context.task["history"] if context.task else []
    return "|".join(f"{m['role'].removeprefix('ROLE_').lower()}:{texts(m['parts'])}" for m in messages)


class Scripted(AgentExecutor):
    """Plays the steps of the turn the message names (its text is the turn's name)."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        for step in STEPS[context.get_user_input()]:
            if "status" in step:
                await events.status(step["status"], step.get("text"))
            elif "artifact" in step:
                await events.artifact(
                    step["artifact"],
                    artifact_id=step.get("id"),
                    append=step.get("append", False),
                    last_chunk=step.get("lastChunk", False),
                )
            elif "history" in step:
                await events.artifact(history(context))
            elif "message" in step:
                await events.message(step["message"])
            elif "sleepMs" in step:
                await asyncio.sleep(step["sleepMs"] / 1000)
            elif "raise" in step:
                raise RuntimeError(step["raise"])
            elif "waitForCancel" in step:
                await asyncio.Event().wait()  # until the task is canceled (CancelledError)
            else:
                raise AssertionError(f"unknown step {step}")


def short(state: str) -> str:
    return state.removeprefix("TASK_STATE_").lower()


def texts(parts: Sequence[Any] | None) -> str:
    return "".join(p["text"] for p in parts or [] if "text" in p)


def event(e: dict[str, Any]) -> dict[str, str]:
    if "task" in e:
        return {"task": short(e["task"]["status"]["state"])}
    if "statusUpdate" in e:
        return {"status": short(e["statusUpdate"]["status"]["state"])}
    if "artifactUpdate" in e:
        return {"artifact": texts(e["artifactUpdate"]["artifact"]["parts"])}
    return {"message": texts(e["message"]["parts"])}


def ids(e: dict[str, Any]) -> tuple[str, str]:
    """The task and context ids of an event or reply."""
    if "task" in e:
        return e["task"]["id"], e["task"]["contextId"]
    update = e.get("statusUpdate") or e.get("artifactUpdate")
    return (update["taskId"], update["contextId"]) if update else ("", "")


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
            # Each turn continues the task the one before it started (send, then stream).
            task = ("", "")
            for turn in turns(case):
                where = f"{case['name']} / {turn['name']}"
                config: SendMessageConfiguration = {"returnImmediately": True} if "cancelAfter" in case else {}
                answer = dict(
                    await client.send(turn["name"], task_id=task[0] or None, context_id=task[1] or None, configuration=config)
                )
                if "cancelAfter" in case:
                    # Answered at once: a task that is still running.
                    if reply(answer).get("task") not in ("submitted", "working"):
                        failures.append(f"{where}: the returnImmediately reply is {reply(answer)}, want a running task")
                    answer = {"task": dict(await client.cancel(ids(answer)[0]))}
                if task[0] and ids(answer) != task:
                    failures.append(f"{where}: send answered for task {ids(answer)}, want {task}")
                task, got = ids(answer), reply(answer)
                failures += [f"{where}: send {k} = {got.get(k)!r}, want {v!r}" for k, v in turn["send"].items() if got.get(k) != v]
            task = ("", "")
            for turn in turns(case):
                where = f"{case['name']} / {turn['name']}"
                raw = []
                async for e in client.stream(turn["name"], task_id=task[0] or None, context_id=task[1] or None):
                    raw.append(dict(e))
                    if len(raw) == case.get("cancelAfter"):
                        await client.cancel(ids(raw[0])[0])
                if raw and task[0] and ids(raw[0]) != task:
                    failures.append(f"{where}: stream of task {ids(raw[0])}, want {task}")
                task = ids(raw[0]) if raw else task
                events = [event(e) for e in raw]
                if events != turn["stream"]:
                    failures.append(f"{where}: stream {events}, want {turn['stream']}")
    assert not failures, "\n".join(failures)
