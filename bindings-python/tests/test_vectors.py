"""The shared vectors (tests/vectors) through the Python package: model round trips and 0.3
conversions through the core's readers, the JSON-RPC and HTTP+JSON request vectors sent over
real HTTP to a Python executor on our server, and the task-state operation table played
against it as scenarios."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
from pathlib import Path
from typing import Any

import pytest

from a2a_native import (
    A2AError,
    AgentExecutor,
    AgentServer,
    Client,
    EventQueue,
    RequestContext,
    convert,
    errors,
    validate,
)
from a2a_native import _native
from conftest import CARD, Echo, run

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"


def load(folder: str) -> list[tuple[str, dict[str, Any]]]:
    files = sorted((VECTORS / folder).glob("*.json"))
    assert files, f"no vectors in {VECTORS / folder}"
    return [(f.stem, json.loads(f.read_text())) for f in files]


def model_cases() -> list[Any]:
    cases = []
    for file, doc in load("model"):
        for group in doc["groups"]:
            for kind in ("valid", "invalid"):
                for case in group[kind]:
                    cases.append(pytest.param(group["type"], kind, case, id=f"{file}/{group['type']}/{case['name']}"))
    return cases


@pytest.mark.parametrize(("type_name", "kind", "case"), model_cases())
def test_model_vector(type_name: str, kind: str, case: dict[str, Any]) -> None:
    if kind == "valid":
        assert validate(type_name, case["input"]) == case.get("canonical", case["input"])
        return
    with pytest.raises(A2AError) as info:
        validate(type_name, case["input"])
    assert info.value.code == case["error"]["code"]
    first = info.value.violations[0][0] if info.value.violations else None
    assert first == case["error"]["field"], info.value


def v03_cases() -> list[Any]:
    cases = []
    for file, doc in load("v03"):
        for case in doc["cases"]:
            cases.append(pytest.param(case, id=f"{file}/{case['type']}/{case['name']}"))
    return cases


@pytest.mark.parametrize("case", v03_cases())
def test_v03_vector(case: dict[str, Any]) -> None:
    ty, direction = case["type"], case["direction"]
    if "error" in case:
        source, to = (case["v03"], "1.0") if direction == "to_v10" else (case["v10"], "0.3")
        with pytest.raises(A2AError) as info:
            convert(ty, source, to)
        assert info.value.code == case["error"]["code"]
        if "field" in case["error"]:
            assert info.value.violations[0][0] == case["error"]["field"]
        return
    if direction in ("both", "to_v10"):
        assert convert(ty, case["v03"], "1.0") == case["v10"]
    if direction in ("both", "to_v03"):
        assert convert(ty, case["v10"], "0.3") == case["v03"]


def sse_cases(kind: str) -> list[Any]:
    return [pytest.param(case, id=f"{file}/{case['name']}") for file, doc in load("sse") for case in doc.get(kind, [])]


@pytest.mark.parametrize("case", sse_cases("decode"))
def test_sse_decode_vector(case: dict[str, Any]) -> None:
    """Core's decoder, fed from Python whole, split in two at every byte and one byte at a time:
    the outcomes never depend on the chunking."""
    data = base64.b64decode(case["input_base64"]) if "input_base64" in case else case["input"].encode()
    splits = [[data], *([data[:at], data[at:]] for at in range(len(data) + 1)), [data[i : i + 1] for i in range(len(data))]]
    for chunks in splits:
        out = _native._sse_decode(chunks, case.get("max_event_bytes"))
        assert out["outcomes"] == case["expected"], [len(c) for c in chunks]
        if "last_event_id" in case:
            assert out["last_event_id"] == case["last_event_id"]


@pytest.mark.parametrize("case", sse_cases("encode"))
def test_sse_encode_vector(case: dict[str, Any]) -> None:
    assert _native._sse_encode(case) == case["expected"]


def wire_cases() -> list[Any]:
    return [
        pytest.param(folder, doc.get("kind", ""), case, id=f"{folder}/{file}/{case['name']}")
        for folder in ("jsonrpc", "rest")
        for file, doc in load(folder)
        for case in doc["cases"]
    ]


@pytest.mark.parametrize(("folder", "kind", "case"), wire_cases())
def test_wire_vector(folder: str, kind: str, case: dict[str, Any]) -> None:
    """Every JSON-RPC request and response case and every HTTP+JSON route case, accepted or
    refused, read from Python and checked by the core codec this package ships (the refused
    ones also go over HTTP to a Python-hosted server below)."""
    # As JSON text: integers beyond 64 bits are read as core reads them from the file.
    assert _native._vector_check(folder, kind, json.dumps(case)) is None


def test_a_wire_vector_that_does_not_hold_says_why() -> None:
    case = {"name": "x", "body": {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}}
    wrong = {**case, "expected": {"method": "GetTask", "params": {"id": "u"}, "id": 1}}
    assert 'expected "GetTask" {"id":"u"}' in (_native._vector_check("jsonrpc", "request", json.dumps(wrong)) or "")
    assert "no vectors" in (_native._vector_check("sse", "", json.dumps(case)) or "")


def test_sse_encode_refuses_a_case_without_event_or_comment() -> None:
    with pytest.raises(errors.InvalidParamsError):
        _native._sse_encode({"name": "neither"})


def test_unknown_model_and_direction_are_clear_errors() -> None:
    with pytest.raises(A2AError):
        validate("NoSuchType", {})
    with pytest.raises(ValueError):
        convert("Task", {}, "2.0")


def raw_request(port: int, method: str, path: str, body: bytes | None) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request with the path sent byte for byte (no client-side normalising)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body or b"")
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def body_of(case: dict[str, Any]) -> bytes | None:
    if "body_text" in case:
        return str(case["body_text"]).encode()
    if "body" in case:
        return json.dumps(case["body"], separators=(",", ":")).encode()
    return None


def jsonrpc_error_cases() -> list[Any]:
    cases = []
    for file, doc in load("jsonrpc"):
        if doc["kind"] != "request":
            continue
        for case in doc["cases"]:
            want = case["expected"].get("error")
            # 0.3 method names go to the 0.3 adapter when the server speaks 0.3 (README).
            if want is not None and not case["expected"].get("is_v03_method"):
                cases.append(pytest.param(case, id=f"{file}/{case['name']}"))
    return cases


@run
async def test_jsonrpc_request_vectors_over_http() -> None:
    """Every refused request vector gets its code and id from a Python-hosted server, and a
    refused notification gets no JSON-RPC answer (204)."""
    cases = [p.values[0] for p in jsonrpc_error_cases()]
    assert len(cases) > 60
    failures = []
    async with AgentServer(CARD, Echo()) as server:
        for case in cases:
            want = case["expected"]["error"]
            status, _, body = await asyncio.to_thread(raw_request, server.port, "POST", "/", body_of(case))
            if want.get("notification"):
                if status != 204 or body:
                    failures.append(f"{case['name']}: notification answered {status} {body[:100]!r}")
                continue
            reply = json.loads(body)
            got = (reply.get("error", {}).get("code"), reply.get("id"))
            if got != (want["code"], want["id"]):
                failures.append(f"{case['name']}: got {got}, want {(want['code'], want['id'])}")
    assert not failures, "\n".join(failures)


@run
async def test_rest_error_vectors_over_http() -> None:
    """Every refused HTTP+JSON request vector gets its HTTP status (and Allow header for 405),
    and a google.rpc.Status body whose ErrorInfo reason is the spec error's."""
    reasons = {code: reason for _name, code, reason, *_ in _native.error_table()}
    cases = [
        c
        for _, doc in load("rest")
        for c in doc["cases"]
        # On this server `/` is also the JSON-RPC endpoint (POST), so other methods there get
        # 405 rather than the REST-only 404 the vector expects.
        if "error" in c["expected"] and c["path"] not in ("", "/")
    ]
    assert len(cases) > 40
    failures = []
    async with AgentServer(CARD, Echo()) as server:
        for case in cases:
            want = case["expected"]["error"]
            path = case["path"] + (f"?{case['query']}" if case.get("query") else "")
            status, headers, body = await asyncio.to_thread(raw_request, server.port, case["method"], path, body_of(case))
            if status != want["http_status"]:
                failures.append(f"{case['name']}: HTTP {status}, want {want['http_status']}")
                continue
            if "allow" in want and headers.get("allow") != want["allow"]:
                failures.append(f"{case['name']}: Allow {headers.get('allow')!r}, want {want['allow']!r}")
            details = json.loads(body)["error"].get("details", [])
            got = [d.get("reason") for d in details if d.get("@type", "").endswith("ErrorInfo")]
            if got != [reasons[want["code"]]]:
                failures.append(f"{case['name']}: reasons {got}, want {reasons[want['code']]}")
    assert not failures, "\n".join(failures)


class Parker(AgentExecutor):
    """Takes a task to the state its first message names ("park TASK_STATE_X") and holds it
    there (active states wait to be canceled); a later message on the task completes it."""

    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        if context.task:
            await events.complete("done")
            return
        state = context.get_user_input().removeprefix("park ")
        await events.status(state)  # type: ignore[arg-type]
        if state in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            await asyncio.sleep(60)


def operation_cases() -> list[Any]:
    table = json.loads((VECTORS / "state" / "transitions.json").read_text())["operations"]
    return [
        pytest.param(row["state"], op, row[op], id=f"{row['state']}/{op}")
        for row in table
        for op in ("message", "cancel", "subscribe")
    ]


@pytest.mark.parametrize(("state", "operation", "outcome"), operation_cases())
def test_state_operation_vector(state: str, operation: str, outcome: str) -> None:
    """state/transitions.json `operations`: a message, cancel or subscribe on a task in each
    state is accepted, or refused with the spec error the table names."""

    @run
    async def scenario() -> None:
        async with AgentServer(CARD, Parker()) as server:
            client = await Client.connect(server.url)
            reply = await client.send(f"park {state}", configuration={"returnImmediately": True})
            task_id = reply["task"]["id"]
            for _ in range(200):
                task = await client.get_task(task_id)
                if task["status"]["state"] == state:
                    break
                await asyncio.sleep(0.01)
            assert task["status"]["state"] == state

            async def act() -> None:
                if operation == "message":
                    await client.send("more", task_id=task_id, context_id=task["contextId"],
                                      configuration={"returnImmediately": True})
                elif operation == "cancel":
                    assert (await client.cancel(task_id))["status"]["state"] == "TASK_STATE_CANCELED"
                else:
                    async with await client.subscribe(task_id) as stream:
                        first = await stream.__anext__()
                        assert first["task"]["id"] == task_id

            if outcome == "ok":
                await act()
            else:
                with pytest.raises(getattr(errors, outcome)):
                    await act()

    scenario()


def options_cases(file: str) -> list[Any]:
    doc = json.loads((VECTORS / "options" / file).read_text())
    return [pytest.param(doc["card"], case, id=case["name"]) for case in doc["cases"]]


@pytest.mark.parametrize(("card", "case"), options_cases("server.json"))
def test_server_options_vector(card: dict[str, Any], case: dict[str, Any]) -> None:
    """The options JSON the Python layer hands to core: accepted or refused as core says."""
    if "error" not in case:
        _native.AgentServer(card, Echo(), case["options"])
        return
    with pytest.raises(errors.InvalidParamsError) as info:
        _native.AgentServer(card, Echo(), case["options"])
    assert info.value.message.startswith(case["error"]), info.value


@pytest.mark.parametrize(("card", "case"), options_cases("client.json"))
def test_client_options_vector(card: dict[str, Any], case: dict[str, Any]) -> None:
    if "error" not in case:
        _native.Client.from_card(card, case["options"])
        return
    with pytest.raises(errors.InvalidParamsError) as info:
        _native.Client.from_card(card, case["options"])
    assert info.value.message.startswith(case["error"]), info.value
