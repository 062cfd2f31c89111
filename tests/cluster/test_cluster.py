#!/usr/bin/env python3
"""Two `a2a serve --conformance --store postgres://…` processes on one database must act as ONE
agent: a task started on one instance is streamed, canceled, continued and resumed on the other.

Standard library only. Every test starts its own two servers on free loopback ports and stops
them (also on failure); every wait is bounded. Run it with tests/cluster/run.sh, or directly:

    A2A_TEST_POSTGRES_URL=postgres://... python3 tests/cluster/test_cluster.py [-k NAME] [-v]

Environment:
    A2A_TEST_POSTGRES_URL  the PostgreSQL database both servers share (required)
    A2A_BIN                the server binary (default: target/debug/a2a)
    CLUSTER_SUMMARY_FILE   if set, the summary line is also written there (run.sh reads it)
Server logs go to target/cluster/<test>-<A|B>.log; a failing test prints their last lines.
"""

import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
import uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("A2A_BIN", os.path.join(ROOT, "target", "debug", "a2a"))
PG_URL = os.environ.get("A2A_TEST_POSTGRES_URL", "")
LOG_DIR = os.path.join(ROOT, "target", "cluster")

HTTP_TIMEOUT = 10.0  # any single non-streaming request
START_TIMEOUT = 20.0  # a server's card answers (connecting to PostgreSQL, migrations)
# A turn that keeps its executor running (and so its instance's lease on the task) until it is
# canceled: `hold-*` is not one, since the conformance agent's unscripted turn returns right
# after WORKING (the task stays WORKING, but nothing runs and no instance holds it).
RUNNING_PREFIX, RUNNING_TEXT = "tck-delayed-complete", "delay_ms=30000"
CONCURRENT_ROUNDS = 10
# What an instance logs when another instance ended a task it runs (core/src/task/manager.rs).
STOPPED_HERE = "stopping its execution here"  # test 7: a race that hides in one round shows in another
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"}


# ------------------------------------------------------------------------------------------
# Processes


RUNNING = []  # every server process started, killed if this runner is stopped


def kill_all(*_):
    for proc in RUNNING:
        if proc.poll() is None:
            proc.kill()
    if _:  # a signal: stop here (unittest would catch SystemExit and go on)
        sys.stderr.write("cluster: stopped by a signal; servers killed\n")
        os._exit(1)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `a2a serve --conformance` process on the shared database."""

    def __init__(self, name, log_path, extra_args=()):
        self.name = name
        self.log_path = log_path
        self.extra_args = list(extra_args)
        self.proc = None
        self.port = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        for _attempt in range(3):
            self.port = free_port()
            args = [BIN, "serve", "--conformance", "--store", PG_URL,
                    "--port", str(self.port), "--public-url", self.base, *self.extra_args]
            with open(self.log_path, "ab") as log:
                log.write(f"$ {' '.join(args)}\n".encode())
                log.flush()
                self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            RUNNING.append(self.proc)
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    status, _ = http_json(self.port, "GET", "/.well-known/agent-card.json", timeout=1.0)
                    if status == 200:
                        return self
                except OSError:
                    pass
                time.sleep(0.1)
            if self.proc.poll() is None:
                self.stop()
                raise AssertionError(f"server {self.name} did not answer within {START_TIMEOUT} s:\n{self.tail()}")
            if "cannot listen" not in self.tail():  # lost the free port to someone else: try another
                raise AssertionError(f"server {self.name} exited with {self.proc.returncode}:\n{self.tail()}")
        raise AssertionError(f"server {self.name} found no free port:\n{self.tail()}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def kill9(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=5)

    def tail(self, lines=40):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # tracing's colours
        return "\n".join(text.splitlines()[-lines:])

    # -------------------------------------------------------------- requests

    def rpc(self, method, params, headers=None, timeout=HTTP_TIMEOUT):
        """The whole JSON-RPC response object (result or error)."""
        body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
        status, answer = http_json(self.port, "POST", "/", body, headers, timeout)
        if not isinstance(answer, dict) or ("result" not in answer and "error" not in answer):
            raise AssertionError(f"{self.name} {method}: HTTP {status}, not a JSON-RPC response: {answer!r}")
        return answer

    def rpc_ok(self, method, params, **kw):
        answer = self.rpc(method, params, **kw)
        if "error" in answer:
            raise AssertionError(f"{self.name} {method} {json.dumps(params)}: error {answer['error']}")
        return answer["result"]

    def rest(self, verb, path, body=None, headers=None, timeout=HTTP_TIMEOUT):
        return http_json(self.port, verb, path, body, headers, timeout)

    def get_task(self, task_id, rest=False):
        if rest:
            status, task = self.rest("GET", f"/tasks/{task_id}")
            if status != 200:
                raise AssertionError(f"{self.name} GET /tasks/{task_id}: HTTP {status} {task}")
            return task
        return self.rpc_ok("GetTask", {"id": task_id})

    def send(self, message_id, text="", return_immediately=True, task_id=None, context_id=None):
        """SendMessage; the whole JSON-RPC response."""
        params = {"message": message(message_id, text, task_id, context_id)}
        if return_immediately:
            params["configuration"] = {"returnImmediately": True}
        return self.rpc("SendMessage", params)

    def subscribe_rest(self, task_id, last_event_id=None, timeout=5.0):
        headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        return Sse(self, "GET", f"/tasks/{task_id}:subscribe", None, headers, timeout)

    def subscribe_rpc(self, task_id, last_event_id=None, timeout=5.0):
        headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "SubscribeToTask", "params": {"id": task_id}}
        return Sse(self, "POST", "/", body, headers, timeout)

    def stream_message(self, message_id, text="", timeout=5.0):
        body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "SendStreamingMessage",
                "params": {"message": message(message_id, text)}}
        return Sse(self, "POST", "/", body, {}, timeout)


def message(message_id, text="", task_id=None, context_id=None):
    m = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text or message_id}]}
    if task_id:
        m["taskId"] = task_id
    if context_id:
        m["contextId"] = context_id
    return m


def mid(prefix):
    return f"{prefix}-{uuid.uuid4()}"


def http_json(port, verb, path, body=None, headers=None, timeout=HTTP_TIMEOUT):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = {"A2A-Version": "1.0"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        conn.request(verb, path, body=data, headers=h)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw.decode("utf-8", "replace")
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------
# Server-sent events


class Event:
    """One SSE event: its `id:` and its StreamResponse (the JSON-RPC `result` unwrapped)."""

    def __init__(self, event_id, data):
        self.id = event_id
        self.data = data
        self.payload = data.get("result", data) if isinstance(data, dict) and "jsonrpc" in data else data
        p = self.payload if isinstance(self.payload, dict) else {}
        if isinstance(data, dict) and "error" in data:
            self.kind = "error"
        else:
            self.kind = next((k for k in ("task", "statusUpdate", "artifactUpdate", "message") if k in p), "?")
        self.state = ((p.get("statusUpdate") or {}).get("status") or {}).get("state") \
            or ((p.get("task") or {}).get("status") or {}).get("state")

    def __repr__(self):
        return f"<{self.id} {self.kind} {self.state or ''}>"


class Sse:
    """An SSE response read line by line from its socket, each read bounded by a deadline."""

    def __init__(self, server, verb, path, body, headers, timeout):
        self.server = server
        self.events = []
        self.ended = False
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
        h = {"A2A-Version": "1.0", "Accept": "text/event-stream"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers)
        self.conn.request(verb, path, body=data, headers=h)
        self.sock = self.conn.sock  # the response keeps reading it after the connection lets go
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.content_type = self.resp.getheader("Content-Type", "")
        self.body = None
        if not self.content_type.startswith("text/event-stream"):
            self.body = self.resp.read().decode("utf-8", "replace")
            self.ended = True
            self.close()
            raise AssertionError(f"{server.name} {verb} {path}: HTTP {self.status} {self.content_type}, not SSE: {self.body}")

    def next(self, timeout):
        """The next event, or None at the end of the stream; TimeoutError if none came in time."""
        deadline = time.monotonic() + timeout
        event_id, data = None, []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.server.name}: no complete SSE event within {timeout} s (so far: {self.events})")
            self.sock.settimeout(remaining)
            try:
                line = self.resp.readline()
            except (socket.timeout, TimeoutError):
                raise TimeoutError(f"{self.server.name}: no SSE event within {timeout} s (so far: {self.events})") from None
            except (ConnectionError, http.client.IncompleteRead, OSError, ValueError):
                line = b""
            if not line:
                self.ended = True
                return None
            line = line.decode("utf-8").rstrip("\r\n")
            if line == "":
                if data:
                    event = Event(event_id, json.loads("\n".join(data)))
                    self.events.append(event)
                    return event
                event_id, data = None, []
            elif line.startswith(":"):
                continue  # a keep-alive comment
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "id":
                    event_id = int(value)
                elif field == "data":
                    data.append(value)

    def read_to_end(self, timeout):
        """Every event until the server ends the stream (all events seen, this call's first)."""
        deadline = time.monotonic() + timeout
        while not self.ended:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0 or self.next(remaining) is None:
                    break
            except TimeoutError:
                break
        if not self.ended:
            raise AssertionError(f"{self.server.name}: the stream did not end within {timeout} s; events: {self.events}")
        return self.events

    def close(self):
        for closing in (self.resp.close if hasattr(self, "resp") else None, self.conn.close):
            try:
                if closing:
                    closing()
            except OSError:
                pass
        try:
            self.sock.close()
        except (OSError, AttributeError):
            pass


def state_at(log, event_id):
    """The task's state after the log's events up to event_id."""
    state = None
    for e in log:
        if e.id > event_id:
            break
        state = e.state or state
    return state


# ------------------------------------------------------------------------------------------
# PostgreSQL side


def psql_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                   key=lambda p: int(re.search(r"/(\d+)/bin/", p).group(1)) if re.search(r"/(\d+)/bin/", p) else 0,
                   reverse=True)
    return found[0] if found else shutil.which("psql")


def psql(sql):
    args = [psql_bin(), "-X", "-q", "-tA", "-d", PG_URL, "-c", sql]
    if os.geteuid() == 0:
        args += ["-U", "postgres"]
    done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise AssertionError(f"psql failed ({done.returncode}): {done.stderr}")
    return [line for line in done.stdout.splitlines() if line]


def pg_port():
    m = re.match(r"postgres(?:ql)?://[^/]*?:(\d+)(?:/|$)", PG_URL)
    return int(m.group(1)) if m else 5432


def client_ports(pid, remote_port):
    """The local ports of the TCP connections process `pid` holds to `remote_port` (Linux /proc)."""
    inodes = set()
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            local, remote, inode = cols[1], cols[2], cols[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


def listening_backends(servers):
    """`pid client_port` of each PostgreSQL backend that is a LISTEN connection of one of
    `servers` (found by the client ports of their connections: only ours, since other suites
    may share this PostgreSQL)."""
    ports = set()
    for s in servers:
        ports |= client_ports(s.proc.pid, pg_port())
    if not ports:
        return []
    where = f"query LIKE 'LISTEN%' AND pid <> pg_backend_pid() AND client_port IN ({','.join(map(str, sorted(ports)))})"
    return psql(f"SELECT pid || ' ' || client_port FROM pg_stat_activity WHERE {where}")


def serve_help():
    try:
        return subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


# ------------------------------------------------------------------------------------------
# Tests


class ClusterTest(unittest.TestCase):
    def setUp(self):
        if not PG_URL:
            self.fail("A2A_TEST_POSTGRES_URL is not set (eval \"$(tests/pg.sh start)\")")
        self.servers = []
        self.tasks = []
        self.streams = []
        self.addCleanup(self._cleanup)

    def _cleanup(self):
        for s in self.streams:
            s.close()
        # Best effort: nothing this test started keeps running (a CancelTask of an ended task
        # is refused, which is fine).
        alive = [s for s in self.servers if s.alive()]
        for task_id in self.tasks:
            for server in alive:
                try:
                    server.rpc("CancelTask", {"id": task_id}, timeout=3)
                    break
                except (OSError, AssertionError):
                    continue
        for s in self.servers:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 (a cleanup must reach every server)
                if s.proc is not None:
                    s.proc.kill()

    def start_servers(self, extra_args=()):
        os.makedirs(LOG_DIR, exist_ok=True)
        name = self.id().rsplit(".", 1)[-1]
        started = []
        for tag in ("A", "B"):
            path = os.path.join(LOG_DIR, f"{name}-{tag}.log")
            open(path, "wb").close()
            server = Server(tag, path, extra_args)
            self.servers.append(server)  # stopped by _cleanup even if start fails half-way
            started.append(server.start())
        return started

    def track(self, answer_or_task):
        """The task id of a SendMessage answer (or a Task), remembered for the cleanup."""
        task = answer_or_task
        if "result" in task:
            task = task["result"]
        task = task.get("task", task)
        self.assertIn("id", task, f"not a task: {answer_or_task}")
        self.tasks.append(task["id"])
        return task

    def stream(self, sse):
        self.streams.append(sse)
        return sse

    def wait_state(self, server, task_id, states, timeout):
        deadline = time.monotonic() + timeout
        task = None
        while time.monotonic() < deadline:
            task = server.get_task(task_id)
            if task["status"]["state"] in states:
                return task
            time.sleep(0.1)
        self.fail(f"task {task_id} on {server.name} not in {states} within {timeout} s: {task and task['status']}")

    def assert_ids_increase(self, events):
        ids = [e.id for e in events]
        self.assertTrue(all(i is not None for i in ids), f"every event has an id: {events}")
        self.assertEqual(ids, sorted(set(ids)), f"ids strictly increase: {events}")

    def full_log(self, server, task_id):
        """Every event of the task's log (SubscribeToTask with Last-Event-ID: 0), ids 1..n."""
        log = self.stream(server.subscribe_rpc(task_id, last_event_id=0)).read_to_end(5)
        self.assertEqual([e.id for e in log], list(range(1, len(log) + 1)), f"the log has no gap: {log}")
        return log

    def delayed_task_seen_from_b(self, a, b, timeout):
        """Test 1's scenario: a delayed task on A, two subscribers (both bindings) on B."""
        task = self.track(a.send(mid("tck-delayed-complete"), "delay_ms=1500"))
        self.assertIn(task["status"]["state"], ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"), task)
        task_id = task["id"]
        rest = self.stream(b.subscribe_rest(task_id))
        rpc = self.stream(b.subscribe_rpc(task_id))
        for name, sse in (("HTTP+JSON", rest), ("JSON-RPC", rpc)):
            events = sse.read_to_end(timeout)
            self.assertTrue(events, f"{name}: no events")
            self.assertEqual(events[0].kind, "task", f"{name}: the stream starts with the Task: {events}")
            self.assertEqual(events[0].payload["task"]["id"], task_id)
            self.assertEqual(events[-1].state, "TASK_STATE_COMPLETED", f"{name}: {events}")
            self.assert_ids_increase(events)
        self.assertEqual(b.get_task(task_id, rest=True)["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(b.get_task(task_id)["status"]["state"], "TASK_STATE_COMPLETED")
        return task_id

    # 1 ------------------------------------------------------------------------------------
    def test_streaming_and_subscribing_across_instances(self):
        a, b = self.start_servers()
        self.delayed_task_seen_from_b(a, b, timeout=6)

    # 1b -----------------------------------------------------------------------------------
    def test_a_turn_that_returns_with_the_task_active_ends_streams_on_both_instances(self):
        # The turn runs on A and returns after 1.5 s, the task still WORKING: A's streams end
        # there (the README's "when the turn running the task ends without one"), and B's,
        # which only hear of it through the store, must end too (they stayed open for good).
        a, b = self.start_servers()
        task_id = self.track(a.send(mid("plain-turn"), "delay_ms=1500"))["id"]
        streams = [self.stream(a.subscribe_rest(task_id)), self.stream(b.subscribe_rest(task_id)),
                   self.stream(b.subscribe_rpc(task_id))]
        for sse in streams:
            events = sse.read_to_end(10)
            self.assertTrue(events, f"{sse.server.name}: no events")
            self.assertEqual(events[0].kind, "task", f"{sse.server.name}: {events}")
        self.assertEqual(b.get_task(task_id)["status"]["state"], "TASK_STATE_WORKING")

    # 2 ------------------------------------------------------------------------------------
    def test_cancel_on_b_ends_a_executor_and_both_streams(self):
        a, b = self.start_servers()
        task_id = self.track(a.send(mid(RUNNING_PREFIX), RUNNING_TEXT))["id"]  # its executor runs on A
        on_a = self.stream(a.subscribe_rest(task_id))
        on_b = self.stream(b.subscribe_rpc(task_id))
        for sse in (on_a, on_b):
            first = sse.next(5)
            self.assertIsNotNone(first, f"{sse.server.name}: the stream ended at once")
            self.assertEqual((first.kind, first.state), ("task", "TASK_STATE_WORKING"), sse.events)
        canceled = b.rpc_ok("CancelTask", {"id": task_id})
        self.assertEqual(canceled["status"]["state"], "TASK_STATE_CANCELED", canceled)
        for sse in (on_a, on_b):
            events = sse.read_to_end(5)
            self.assertEqual(events[-1].state, "TASK_STATE_CANCELED", f"{sse.server.name}: {events}")
            self.assert_ids_increase(events)
        # A, which ran the task, knows it ended and stopped the executor (its log says so: the
        # only outside sign, since a late event of the executor would be refused anyway).
        self.assertEqual(a.get_task(task_id)["status"]["state"], "TASK_STATE_CANCELED")
        deadline = time.monotonic() + 5
        while STOPPED_HERE not in a.tail(10_000) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertIn(STOPPED_HERE, a.tail(10_000), f"A's log says it stopped the execution of {task_id}")
        time.sleep(0.5)
        log = self.full_log(a, task_id)
        self.assertEqual(log[-1].state, "TASK_STATE_CANCELED", log)
        self.assertEqual(sum(e.state == "TASK_STATE_CANCELED" for e in log), 1, log)

    # 3 ------------------------------------------------------------------------------------
    def test_multi_turn_across_instances(self):
        a, b = self.start_servers()
        first_id = mid("tck-input-required")
        task = self.track(a.send(first_id, "first turn", return_immediately=False))
        self.assertEqual(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", task)
        second_id = mid("tck-complete-task")
        answer = b.send(second_id, "second turn", return_immediately=False,
                        task_id=task["id"], context_id=task["contextId"])
        self.assertNotIn("error", answer, answer)
        done = answer["result"]["task"]
        self.assertEqual((done["id"], done["status"]["state"]), (task["id"], "TASK_STATE_COMPLETED"), done)
        on_a = a.get_task(task["id"])
        self.assertEqual(on_a["status"]["state"], "TASK_STATE_COMPLETED", on_a)
        history = on_a.get("history", [])
        user_turns = [m["messageId"] for m in history if m.get("role") == "ROLE_USER"]
        self.assertEqual(user_turns, [first_id, second_id], f"both turns, in order: {history}")
        texts = [p.get("text") for m in history if m.get("role") == "ROLE_AGENT" for p in m.get("parts", [])]
        self.assertIn("Please provide more input.", texts, f"the agent's question is in the history: {history}")
        asked = next(i for i, m in enumerate(history) if m.get("messageId") == first_id)
        answered = next(i for i, m in enumerate(history) if m.get("messageId") == second_id)
        question = next(i for i, m in enumerate(history)
                        if m.get("role") == "ROLE_AGENT" and any(p.get("text") == "Please provide more input." for p in m.get("parts", [])))
        self.assertLess(asked, question, history)
        self.assertLess(question, answered, history)

    # 4 ------------------------------------------------------------------------------------
    def test_reconnect_with_last_event_id_no_gap_no_duplicate(self):
        a, b = self.start_servers()
        for read_first in (1, 2):
            with self.subTest(events_read_before_the_drop=read_first):
                sse = self.stream(a.stream_message(mid("tck-delayed-complete"), "delay_ms=1500"))
                before = [sse.next(5) for _ in range(read_first)]
                self.assertTrue(all(before), f"the stream ended early: {sse.events}")
                sse.close()  # the client goes away
                self.assertEqual(before[0].kind, "task", before)
                task_id = self.track(before[0].payload)["id"]
                self.assert_ids_increase(before)
                last = before[-1].id
                self.wait_state(b, task_id, ("TASK_STATE_COMPLETED",), timeout=6)

                replay = self.stream(b.subscribe_rest(task_id, last_event_id=last)).read_to_end(5)
                ids = [e.id for e in replay]
                self.assertTrue(replay, "something happened after the drop")
                self.assertEqual(ids, list(range(last + 1, last + 1 + len(replay))),
                                 f"contiguous after {last}, each once: {replay}")
                self.assertNotEqual(replay[0].kind, "task", f"no snapshot on a resumed stream: {replay}")
                self.assertEqual(replay[-1].state, "TASK_STATE_COMPLETED", replay)

                log = self.full_log(b, task_id)
                seen = {e.id: (e.kind, e.state) for e in before + replay}
                self.assertEqual(len(seen), len(before) + len(replay), "no id seen twice")
                self.assertEqual(seen, {e.id: (e.kind, e.state) for e in log},
                                 f"before {before} + after {replay} = the log {log}")

    # 5 ------------------------------------------------------------------------------------
    def test_listener_connection_killed_then_caught_up(self):
        if not psql_bin():
            self.skipTest("psql not found (/usr/lib/postgresql/*/bin/psql or PATH)")
        a, b = self.start_servers()
        deadline = time.monotonic() + 5
        while len(listening_backends([a, b])) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        backends = listening_backends([a, b])
        self.assertEqual(len(backends), 2, f"each server has one LISTEN connection: {backends}")
        # Only our two servers' listeners: other suites may share this PostgreSQL.
        ports = ",".join(row.split()[1] for row in backends)
        killed = psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' "
                      f"AND pid <> pg_backend_pid() AND client_port IN ({ports})")
        self.assertEqual(killed, ["t", "t"], "both listeners terminated")

        # B's subscriber still sees the end (by the re-listen, or at worst the 5 s safety poll).
        self.delayed_task_seen_from_b(a, b, timeout=10)

        # And both servers listen again.
        deadline = time.monotonic() + 10
        while len(listening_backends([a, b])) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        again = listening_backends([a, b])
        self.assertEqual(len(again), 2, f"both servers LISTEN again within 10 s: {again}")
        self.assertFalse({r.split()[0] for r in again} & {r.split()[0] for r in backends}, "on new connections")

    # 6 ------------------------------------------------------------------------------------
    def test_kill_9_of_owner_mid_task(self):
        if "--lease-ms" not in serve_help() or "--reap-interval-ms" not in serve_help():
            self.skipTest("`a2a serve` has no --lease-ms/--reap-interval-ms yet (task leases with a reaper)")
        a, b = self.start_servers(["--lease-ms", "1500", "--reap-interval-ms", "500"])
        task_id = self.track(a.send(mid(RUNNING_PREFIX), RUNNING_TEXT))["id"]
        on_b = self.stream(b.subscribe_rest(task_id))
        first = on_b.next(5)
        self.assertIsNotNone(first, "the stream ended at once")
        self.assertEqual((first.kind, first.state), ("task", "TASK_STATE_WORKING"), on_b.events)
        time.sleep(0.3)  # A renews its lease at least once before it dies
        a.kill9()
        events = on_b.read_to_end(10)
        self.assertEqual(events[-1].state, "TASK_STATE_FAILED",
                         f"B ends the orphaned task FAILED within 10 s: {events}")
        self.assertEqual(b.get_task(task_id)["status"]["state"], "TASK_STATE_FAILED")
        self.assert_ids_increase(events)

        log = self.full_log(b, task_id)
        by_id = {e.id: e for e in log}
        for e in events:
            self.assertIn(e.id, by_id, f"event {e} B saw is in the log {log}")
            if e.kind == "task" and e is events[0]:  # the snapshot: the state at its place in the log
                self.assertEqual(e.state, state_at(log, e.id), f"snapshot {e} vs log {log}")
            else:
                self.assertEqual((e.kind, e.state), (by_id[e.id].kind, by_id[e.id].state), f"{e} vs log {log}")
        self.assertEqual(log[-1].state, "TASK_STATE_FAILED", log)

    # 7 ------------------------------------------------------------------------------------
    def test_concurrent_sends_one_wins(self):
        """Concurrent follow-ups on A and B to one waiting task: one turn starts, one is refused.

        Several rounds (CONCURRENT_ROUNDS), since a race may hide in one."""
        a, b = self.start_servers()
        rounds = []
        for _ in range(CONCURRENT_ROUNDS):
            task, answers = self.concurrent_follow_ups(a, b)
            won = sorted(n for n, r in answers.items() if "result" in r)
            rounds.append((task, answers, won))
        both = [r for r in rounds if len(r[2]) == 2]
        if len(both) == len(rounds):
            self.skipTest(f"in each of {len(rounds)} rounds both concurrent follow-ups were accepted (refusing a "
                          "message to a task another instance is running is not implemented yet)")
        for task, answers, won in rounds:
            summary = {n: r.get("error") or r["result"].get("task", {}).get("status") for n, r in answers.items()}
            self.assertEqual(len(won), 1, f"exactly one of the concurrent follow-ups wins, in every round "
                                          f"({len(both)} of {len(rounds)} accepted both): task {task['id']}: {summary}")
            lost = "B" if won == ["A"] else "A"
            error = answers[lost]["error"]
            self.assertEqual(error.get("code"), -32004, f"UnsupportedOperationError: {error}")
            self.assertRegex(error.get("message", ""), r"(?i)work", f"the message says the task is being worked on: {error}")
            winner = answers[won[0]]["result"]
            winner = winner.get("task", winner)
            self.assertEqual(winner["status"]["state"], "TASK_STATE_WORKING", winner)
            on_a = a.get_task(task["id"])
            self.assertEqual(on_a["status"]["state"], "TASK_STATE_WORKING", on_a)
            turns = [m["messageId"] for m in on_a.get("history", []) if m.get("role") == "ROLE_USER"]
            self.assertEqual(turns, [task["history"][0]["messageId"], answers[won[0]]["sent"]],
                             "the first turn and the winner's, not the loser's")

    def concurrent_follow_ups(self, a, b):
        task = self.track(a.send(mid("tck-input-required"), return_immediately=False))
        self.assertEqual(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", task)
        barrier = threading.Barrier(2, timeout=5)
        answers = {}

        def send(server):
            message_id = mid(RUNNING_PREFIX)
            try:
                barrier.wait()
                answer = server.send(message_id, RUNNING_TEXT, task_id=task["id"], context_id=task["contextId"])
            except Exception as e:  # noqa: BLE001 (reported below)
                answer = {"exception": repr(e)}
            answers[server.name] = dict(answer, sent=message_id)

        threads = [threading.Thread(target=send, args=(s,), daemon=True) for s in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(HTTP_TIMEOUT + 5)
        self.assertEqual(set(answers), {"A", "B"}, f"both sends answered: {answers}")
        for name, answer in answers.items():
            self.assertNotIn("exception", answer, f"{name}: {answer}")
        return task, answers

    # 8 ------------------------------------------------------------------------------------
    def test_postgres_outage_unavailable_then_recovered(self):
        """PostgreSQL stopped mid-run: requests get a prompt Unavailable, nothing is acknowledged
        that was not stored, a task running across the outage does not stay active forever, and
        both instances serve again once PostgreSQL is back."""
        pg_sh = os.path.join(ROOT, "tests", "pg.sh")
        a, b = self.start_servers(["--lease-ms", "1500", "--reap-interval-ms", "500"])
        before = self.track(a.send(mid("tck-complete-task"), return_immediately=False))
        self.assertEqual(before["status"]["state"], "TASK_STATE_COMPLETED", before)
        # Its completion falls in the outage.
        running = self.track(a.send(mid("tck-delayed-complete"), "delay_ms=1500"))

        subprocess.run([pg_sh, "stop"], check=True, capture_output=True, timeout=60)
        self.addCleanup(lambda: subprocess.run([pg_sh, "start"], capture_output=True, timeout=120))
        acknowledged = []
        for server in (a, b):
            for attempt in range(3):
                started = time.monotonic()
                answer = server.send(mid("tck-complete-task"), return_immediately=False)
                took = time.monotonic() - started
                if "result" in answer:
                    acknowledged.append(answer["result"].get("task", answer["result"]))
                    continue
                self.assertEqual(answer["error"]["code"], -32603, f"{server.name}: {answer}")
                self.assertRegex(answer["error"]["message"], r"(?i)task store", answer)
                self.assertLess(took, 5.0, f"{server.name}: the error took {took:.1f} s")
            status, body = server.rest("GET", f"/tasks/{before['id']}")
            self.assertEqual(status, 503, f"{server.name} HTTP+JSON GetTask: {body}")
            status, card = server.rest("GET", "/.well-known/agent-card.json")
            self.assertEqual(status, 200, "the card needs no database")
        self.assertEqual(acknowledged, [], "nothing is acknowledged while nothing can be stored")
        time.sleep(2.0)  # the running task tries to complete meanwhile

        subprocess.run([pg_sh, "start"], check=True, capture_output=True, timeout=120)
        for server in (a, b):
            deadline = time.monotonic() + 15
            while True:
                answer = server.send(mid("tck-complete-task"), return_immediately=False)
                if "result" in answer:
                    break
                self.assertLess(time.monotonic(), deadline, f"{server.name} serves again within 15 s: {answer}")
                time.sleep(0.2)
            # And keeps serving: no request fails once it has recovered.
            for _ in range(10):
                done = self.track(server.send(mid("tck-complete-task"), return_immediately=False))
                self.assertEqual(done["status"]["state"], "TASK_STATE_COMPLETED", done)
            self.assertEqual(server.get_task(before["id"])["status"]["state"], "TASK_STATE_COMPLETED")
        # The task whose completion could not be stored ends (its lease lapses; a reaper fails it).
        ended = self.wait_state(b, running["id"], TERMINAL, timeout=10)
        self.assertIn(ended["status"]["state"], ("TASK_STATE_FAILED", "TASK_STATE_COMPLETED"), ended)
        # Cross-instance streaming works again (both LISTEN connections came back, or the poll).
        self.delayed_task_seen_from_b(a, b, timeout=10)

    # 8b -----------------------------------------------------------------------------------
    def test_an_outage_longer_than_a_lease_does_not_reap_a_healthy_instances_task(self):
        """Leases lapse while nobody reaches the database; when it is back, the instance that
        runs nothing must not reap A's task (alive, renewing again) before A has renewed: it
        ended FAILED, "the instance ... was lost", in 1 of 3 runs."""
        pg_sh = os.path.join(ROOT, "tests", "pg.sh")
        a, b = self.start_servers(["--lease-ms", "1500", "--reap-interval-ms", "100"])
        running = self.track(a.send(mid("tck-delayed-complete"), "delay_ms=9000"))
        subprocess.run([pg_sh, "stop"], check=True, capture_output=True, timeout=60)
        self.addCleanup(lambda: subprocess.run([pg_sh, "start"], capture_output=True, timeout=120))
        time.sleep(3.0)  # two leases
        subprocess.run([pg_sh, "start"], check=True, capture_output=True, timeout=120)
        ended = self.wait_state(b, running["id"], TERMINAL, timeout=20)
        self.assertEqual(ended["status"]["state"], "TASK_STATE_COMPLETED", ended)

    # 9 ------------------------------------------------------------------------------------
    def test_sigterm_of_a_subscribers_instance_ends_its_streams_retryable(self):
        """A rolling restart: B, which only follows a task A runs, is stopped (SIGTERM). Its
        streams end with UnavailableError, not a clean end that reads as the stream's end, and
        the subscriber continues on A after the last event id it saw."""
        a, b = self.start_servers()
        task_id = self.track(a.send(mid(RUNNING_PREFIX), RUNNING_TEXT))["id"]  # its executor runs on A
        streams = [self.stream(b.subscribe_rest(task_id)), self.stream(b.subscribe_rpc(task_id))]
        for sse in streams:
            first = sse.next(5)
            self.assertIsNotNone(first, "the stream ended at once")
            self.assertEqual((first.kind, first.state), ("task", "TASK_STATE_WORKING"), sse.events)
        b.stop()
        for name, sse in zip(("HTTP+JSON", "JSON-RPC"), streams):
            events = sse.read_to_end(5)
            self.assertEqual(events[-1].kind, "error", f"{name}: {events}")
            error = events[-1].data["error"]
            details = error.get("details") or error.get("data")
            self.assertEqual(details[0]["reason"], "UNAVAILABLE", f"{name}: {error}")
        # The task went on; following it on A picks up where B's stream stopped.
        last = streams[0].events[0].id
        on_a = self.stream(a.subscribe_rest(task_id, last_event_id=last))
        self.assertEqual(a.get_task(task_id)["status"]["state"], "TASK_STATE_WORKING")
        canceled = a.rpc_ok("CancelTask", {"id": task_id})
        self.assertEqual(canceled["status"]["state"], "TASK_STATE_CANCELED", canceled)
        events = on_a.read_to_end(5)
        self.assertEqual(events[-1].state, "TASK_STATE_CANCELED", events)
        self.assertTrue(all(e.id > last for e in events), f"nothing before id {last} again: {events}")


# ------------------------------------------------------------------------------------------
# Runner


class Result(unittest.TextTestResult):
    """Prints the servers' last log lines of a failing test."""

    def _logs(self, test):
        for s in getattr(test, "servers", []) or []:
            self.stream.writeln(f"--- server {s.name} ({s.log_path}), last lines:")
            self.stream.writeln(s.tail(25))
        self.stream.flush()

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._logs(test)

    def addError(self, test, err):
        super().addError(test, err)
        self._logs(test)


def main():
    signal.signal(signal.SIGTERM, kill_all)
    signal.signal(signal.SIGINT, kill_all)
    runner = unittest.TextTestRunner(resultclass=Result, verbosity=2, stream=sys.stderr)
    program = unittest.main(module=__name__, argv=[sys.argv[0], *sys.argv[1:]], testRunner=runner, exit=False)
    r = program.result
    # A test with failing subtests counts once.
    failed = len({getattr(t, "test_case", t).id() for t, _ in r.failures + r.errors}) + len(r.unexpectedSuccesses)
    skipped = len(r.skipped)
    passed = r.testsRun - failed - skipped - len(r.expectedFailures)
    for test, reason in r.skipped:
        sys.stderr.write(f"skipped: {test.id().rsplit('.', 1)[-1]}: {reason}\n")
    sys.stderr.flush()
    line = f"cluster: {passed} passed, {failed} failed, {skipped} skipped"
    if os.environ.get("CLUSTER_SUMMARY_FILE"):
        with open(os.environ["CLUSTER_SUMMARY_FILE"], "w") as f:
            f.write(line + "\n")
    print(line, flush=True)
    kill_all()
    return 1 if failed or r.testsRun == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
