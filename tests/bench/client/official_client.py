"""The client side of the client benchmark: the OFFICIAL Python a2a-sdk client (httpx) sending
SendMessage (blocking, JSON-RPC, A2A 1.0) to an agent, closed loop, CONNECTIONS calls in flight
on one client, for DURATION seconds after a warm-up. Prints one JSON object shaped like
`a2a bench --json` (rps, p50_ms, p99_ms, errors), so tests/bench/client.sh can put it beside
`a2a bench --via client` against the same server.

    python official_client.py URL CONNECTIONS DURATION [WARMUP]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid

import httpx

from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest


async def main(url: str, connections: int, duration: float, warmup: float) -> None:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0), limits=limits) as http:
        config = ClientConfig(streaming=False, supported_protocol_bindings=['JSONRPC'], httpx_client=http)
        client = await ClientFactory(config).create_from_url(url)
        start = time.perf_counter()
        warm_end = start + warmup
        end = warm_end + duration
        latencies: list[float] = []
        errors = 0
        first_error = None

        async def worker() -> None:
            nonlocal errors, first_error
            while time.perf_counter() < end:
                msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text='hello')])
                began = time.perf_counter()
                try:
                    async for _ in client.send_message(SendMessageRequest(message=msg)):
                        pass
                except Exception as e:  # noqa: BLE001 - counted and reported, like a2a bench
                    errors += 1
                    first_error = first_error or repr(e)
                    continue
                if began >= warm_end:
                    latencies.append((time.perf_counter() - began) * 1000)

        await asyncio.gather(*(worker() for _ in range(connections)))
        latencies.sort()
        n = len(latencies)

        def pct(p: float) -> float:
            return latencies[min(n - 1, round(p / 100 * (n - 1)))] if n else 0.0

        print(json.dumps({
            'url': url, 'connections': connections, 'mode': 'send', 'via': 'a2a-sdk client',
            'requests': n, 'errors': errors, 'seconds': duration, 'rps': n / duration,
            'p50_ms': pct(50), 'p99_ms': pct(99), 'max_ms': pct(100), 'first_error': first_error,
        }))


if __name__ == '__main__':
    url, connections, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    warmup = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    asyncio.run(main(url, connections, duration, warmup))
