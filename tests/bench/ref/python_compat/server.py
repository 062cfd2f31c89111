"""Benchmark server: the a2a-sdk reference agent (../python/server.py), its executor and card
unchanged, hosted by a2a-native through the Python binding (`a2a_native` takes an a2a-sdk
executor as it is; see a2a_native.compat). Set beside `python` (the same executor on the SDK's
own server) for issue 19's comparison.

    python server.py PORT
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from server import EchoExecutor, agent_card  # noqa: E402 (the reference agent, unchanged)

from a2a_native import AgentServer  # noqa: E402


async def main(port: int) -> None:
    await AgentServer(agent_card("127.0.0.1", port), EchoExecutor(), port=port).serve()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
