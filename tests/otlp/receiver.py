"""An OTLP/HTTP receiver for the bindings' tests that have no OTLP decoder of their own (Node):
exports are decoded with OpenTelemetry's own protobuf messages (opentelemetry-proto), and POSTs
to /hook (push notifications) are recorded with their traceparent.

    python receiver.py     prints its port, then serves on 127.0.0.1 until stdin closes
    GET /received          what arrived, as JSON: spans, metric names, hook traceparents
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

received: dict[str, list[Any]] = {"spans": [], "metrics": [], "hooks": []}
lock = threading.Lock()


def service_of(resource: Any) -> str:
    return next((a.value.string_value for a in resource.attributes if a.key == "service.name"), "")


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with lock:
            if self.path == "/v1/traces":
                for rs in ExportTraceServiceRequest.FromString(body).resource_spans:
                    for scope in rs.scope_spans:
                        received["spans"].extend(
                            {"name": s.name, "service": service_of(rs.resource), "kind": s.kind,
                             "trace": s.trace_id.hex(), "id": s.span_id.hex(), "parent": s.parent_span_id.hex()}
                            for s in scope.spans
                        )
            elif self.path == "/v1/metrics":
                for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                    received["metrics"].extend(
                        {"name": m.name, "service": service_of(rm.resource)} for sm in rm.scope_metrics for m in sm.metrics
                    )
            elif self.path == "/hook":
                received["hooks"].append(self.headers.get("traceparent"))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        with lock:
            body = json.dumps(received).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
sys.stdin.read()  # until the test closes it
server.shutdown()
