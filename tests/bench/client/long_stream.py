"""Client of tests/bench/long_stream.sh (stdlib only, so no client library is measured): one
blocking JSON-RPC SendMessage per point, whose text N asks the agent for N artifact chunks;
the clock runs from the request to the last byte of the completed task. Prints one JSON line
per point. Exits non-zero, loudly, on any turn that does not come back COMPLETED with exactly
N parts in its one artifact.

    python long_stream.py URL SERVER STORE N... [--repeat K] [--db PATH --pid PID]

--repeat K: K turns per point, the median time reported (a turn of ours lasts milliseconds, so
one turn is noise); bytes are measured on the first.

With --db (the server's SQLite file) and --pid (the server process), also per turn:
  stored   growth of DB + DB-wal, both measured after `PRAGMA wal_checkpoint(TRUNCATE)` from
           this process (so the WAL is folded into the file and empty when it can be), / N
  written  bytes through write syscalls (/proc/PID/io `wchar`) for the turn: the server's
           (journal, WAL, database, its own checkpoints, and whatever else it write()s) from the
           request to 0.5 s after the reply, plus this process's during the checkpoint that
           follows (the WAL pages the server had not yet copied into the database), / N
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
import urllib.request
import uuid


def turn(url: str, n: int) -> float:
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": str(n)}]}},
    }).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"A2A-Version": "1.0", "Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=3600) as resp:
        raw = resp.read()
    seconds = time.perf_counter() - start
    reply = json.loads(raw)
    task = reply.get("result", {}).get("task")
    if task is None:
        sys.exit(f"N={n}: no task in the reply: {raw[:500]!r}")
    state = task.get("status", {}).get("state")
    parts = [len(a.get("parts", [])) for a in task.get("artifacts", [])]
    if state != "TASK_STATE_COMPLETED" or parts != [n]:
        sys.exit(f"N={n}: state {state}, parts per artifact {parts} (want COMPLETED, [{n}])")
    return seconds


def stored(db: str) -> int:
    with sqlite3.connect(db, timeout=30) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    c.close()
    return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))


def wchar(pid: int | str) -> int:
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("server")
    ap.add_argument("store")
    ap.add_argument("ns", type=int, nargs="+")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--db")
    ap.add_argument("--pid", type=int)
    a = ap.parse_args()
    turn(a.url, 100)  # warm-up: first-call costs (imports, schema, connections) stay out
    for n in a.ns:
        if a.db and a.pid:
            s0, w0 = stored(a.db), wchar(a.pid)
        seconds = turn(a.url, n)
        if a.db and a.pid:
            time.sleep(0.5)  # writes the server makes just after replying belong to the turn
            w1, c0 = wchar(a.pid), wchar("self")
            stored_per_event = (stored(a.db) - s0) / n
            written_per_event = (w1 - w0 + wchar("self") - c0) / n
        times = sorted([seconds] + [turn(a.url, n) for _ in range(a.repeat - 1)])
        seconds = times[len(times) // 2]
        row = {"server": a.server, "store": a.store, "n": n, "seconds": seconds}
        if a.db and a.pid:
            row["stored_per_event"] = stored_per_event
            row["written_per_event"] = written_per_event
        print(json.dumps(row), flush=True)
        print(f"  {a.server} {a.store} N={n}: {seconds:.3f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
