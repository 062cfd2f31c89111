"""The metrics endpoint of a Python agent's server, read with prometheus_client's own
OpenMetrics parser: requests by binding, method and outcome, latency histograms, task states,
the events the Python executor emitted, and the open-streams gauge."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from a2a_native import AgentServer, Client, TaskNotFoundError, errors
from conftest import CARD, Echo, run


def scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """name -> {sorted labels -> value}, for every sample."""
    with urllib.request.urlopen(url, timeout=5) as resp:
        assert resp.headers["Content-Type"].startswith("application/openmetrics-text")
        text = resp.read().decode()
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return samples


def value(samples: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str, **labels: str) -> float:
    return samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)


@run
async def test_metrics_are_served_and_parse() -> None:
    async with AgentServer(CARD, Echo(), metrics_address="127.0.0.1:0") as server:
        assert server.metrics_url.startswith("http://127.0.0.1:") and server.metrics_url.endswith("/metrics")
        client = await Client.connect(server.url)
        await client.send("one")
        await client.send("two")
        with pytest.raises(TaskNotFoundError):
            await client.get_task("missing")
        grpc = await Client.connect(server.url, binding="GRPC")
        await grpc.send("three")
        events = [e async for e in client.stream("chunks")]
        assert events

        samples = await asyncio.to_thread(scrape, server.metrics_url)
        requests = "a2a_server_requests_total"
        assert value(samples, requests, binding="jsonrpc", method="SendMessage", outcome="OK") == 2
        assert value(samples, requests, binding="jsonrpc", method="GetTask", outcome="TASK_NOT_FOUND") == 1
        assert value(samples, requests, binding="grpc", method="SendMessage", outcome="OK") == 1
        assert value(samples, requests, binding="jsonrpc", method="SendStreamingMessage", outcome="OK") == 1
        count = "a2a_server_request_duration_seconds_count"
        assert value(samples, count, binding="jsonrpc", method="SendMessage") == 2
        buckets = samples["a2a_server_request_duration_seconds_bucket"]
        inf = [v for k, v in buckets.items() if ("le", "+Inf") in k and ("method", "SendMessage") in k]
        assert sum(inf) == 3
        assert value(samples, "a2a_task_state_changes_total", state="TASK_STATE_COMPLETED") == 4
        # The Python executor's events (status, artifacts) were applied by core.
        assert value(samples, "a2a_task_events_applied_total") >= 8
        assert value(samples, "a2a_server_open_streams") == 0
    with pytest.raises(RuntimeError):
        server.metrics_url


def test_a_bad_metrics_address_is_refused_when_the_server_is_made() -> None:
    with pytest.raises(errors.InvalidParamsError, match="metricsAddress: \"not an address\" is not host:port"):
        AgentServer(CARD, Echo(), metrics_address="not an address")

    async def start() -> None:
        # Well formed but not bindable: refused at start, naming it.
        async with AgentServer(CARD, Echo(), metrics_address="192.0.2.1:9464"):
            pass

    with pytest.raises(errors.TransportError, match="cannot serve metrics on 192.0.2.1:9464"):
        asyncio.run(start())
