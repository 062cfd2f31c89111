//! `a2a serve` exporting traces as an operator configures it (OTEL_EXPORTER_OTLP_ENDPOINT) to an
//! OTLP/HTTP receiver in this test, whose requests are decoded with OpenTelemetry's own OTLP
//! messages: the request span continues the caller's W3C trace (trace id and parent span id from
//! `traceparent`), the execution span is its child, a malformed `traceparent` starts a fresh
//! trace and fails nothing, the service name comes from OTEL_SERVICE_NAME, and a push
//! notification carries the execution's trace context to its webhook. Metrics are exported to
//! the same receiver (OTLP/HTTP, /v1/metrics) and decoded likewise.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

#[derive(Default)]
struct Received {
    /// Every POST body to /v1/traces, decoded.
    exports: Vec<ExportTraceServiceRequest>,
    /// Every POST body to /v1/metrics, decoded.
    metrics: Vec<ExportMetricsServiceRequest>,
    /// The `traceparent` of every POST to /hook (push notifications).
    hooks: Vec<Option<String>>,
}

/// An OTLP/HTTP receiver that is also a push webhook (at /hook).
fn receiver() -> (String, Arc<Mutex<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Received::default()));
    let sink = got.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let sink = sink.clone();
            std::thread::spawn(move || serve_connection(conn, &sink));
        }
    });
    (url, got)
}

fn serve_connection(conn: TcpStream, sink: &Mutex<Received>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut writer = conn;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut traceparent = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                } else if name.eq_ignore_ascii_case("traceparent") {
                    traceparent = Some(value.trim().to_owned());
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        if request_line.starts_with("POST /v1/traces") {
            let export = ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP trace export");
            sink.lock().unwrap().exports.push(export);
        } else if request_line.starts_with("POST /v1/metrics") {
            let export = ExportMetricsServiceRequest::decode(body.as_slice()).expect("an OTLP metrics export");
            sink.lock().unwrap().metrics.push(export);
        } else if request_line.starts_with("POST /hook") {
            sink.lock().unwrap().hooks.push(traceparent);
        }
        let _ =
            writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n");
    }
}

struct Served {
    child: Child,
    host: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

type Lines = std::io::Lines<BufReader<std::process::ChildStderr>>;

/// Starts `a2a serve` as `command` says (stderr piped), and reads its announcement line for the
/// address; the rest of stderr is the caller's.
fn start(command: &mut Command) -> (Served, Lines) {
    let mut child = command.stderr(Stdio::piped()).spawn().expect("a2a starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let announce = lines.next().expect("an announcement line").unwrap();
    let host = announce
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("no URL in {announce:?}"))
        .trim_end_matches('/')
        .to_owned();
    (Served { child, host }, lines)
}

fn a2a_serve(extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_a2a"));
    command.args(["serve", "--store", "memory", "--port", "0"]).args(extra);
    command
}

fn serve(collector: &str) -> Served {
    let (served, lines) = start(
        a2a_serve(&["--allow-private-webhooks"])
            .env("RUST_LOG", "warn")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
            .env("OTEL_SERVICE_NAME", "a2a-telemetry-test")
            .env("OTEL_BSP_SCHEDULE_DELAY", "50"),
    );
    std::thread::spawn(move || for _ in lines {});
    served
}

/// SendMessage over JSON-RPC with `traceparent` (and a push webhook, if given); the HTTP status.
fn send(host: &str, traceparent: &str, text: &str, hook: Option<&str>) -> u16 {
    let push = hook
        .map_or(String::new(), |url| format!(r#","configuration":{{"taskPushNotificationConfig":{{"url":"{url}"}}}}"#));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"{text}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}{push}}}}}"#
    );
    let (status, raw) = post_rpc(host, traceparent, &body);
    assert!(raw.contains(r#""result""#), "{raw}");
    status
}

/// A JSON-RPC request with `traceparent`; the HTTP status and the whole answer.
fn post_rpc(host: &str, traceparent: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {host}\r\nA2A-Version: 1.0\r\ntraceparent: {traceparent}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    (raw.split_whitespace().nth(1).unwrap().parse().unwrap(), raw)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    span.attributes.iter().find(|a| a.key == key).and_then(|a| match a.value.as_ref()?.value.as_ref()? {
        Value::StringValue(s) => Some(s.clone()),
        other => Some(format!("{other:?}")),
    })
}

#[test]
fn request_spans_continue_the_callers_trace_and_executions_are_their_children() {
    let (collector, exported) = receiver();
    let server = serve(&collector);
    let hook = format!("{collector}/hook");
    assert_eq!(send(&server.host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), "traced", Some(&hook)), 200);
    assert_eq!(send(&server.host, "00-not-a-trace-context", "untraced", None), 200);
    let missing = r#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"no-such-task"}}"#;
    let (status, raw) = post_rpc(&server.host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), missing);
    assert!(status == 200 && raw.contains("-32001"), "{raw}");

    let collected = || -> Vec<(Span, Vec<String>)> {
        exported
            .lock()
            .unwrap()
            .exports
            .iter()
            .flat_map(|r| &r.resource_spans)
            .flat_map(|rs| {
                let service: Vec<String> = rs
                    .resource
                    .iter()
                    .flat_map(|r| &r.attributes)
                    .filter(|a| a.key == "service.name")
                    .map(|a| format!("{:?}", a.value))
                    .collect();
                rs.scope_spans.iter().flat_map(|ss| &ss.spans).map(move |s| (s.clone(), service.clone()))
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while collected().iter().filter(|(s, _)| s.name == "a2a.execute").count() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let spans = collected();
    // Named `{rpc.service}/{rpc.method}`, as OpenTelemetry's RPC conventions say.
    let requests: Vec<&Span> = spans
        .iter()
        .map(|(s, _)| s)
        .filter(|s| s.name == "lf.a2a.v1.A2AService/SendMessage" && s.kind == SpanKind::Server as i32)
        .collect();
    let traced = requests.iter().find(|s| hex(&s.trace_id) == TRACE_ID).unwrap_or_else(|| {
        panic!(
            "no request span in the caller's trace: {:?}",
            spans.iter().map(|(s, _)| (&s.name, s.kind)).collect::<Vec<_>>()
        )
    });
    assert_eq!(hex(&traced.parent_span_id), PARENT_ID, "the request span's parent is the caller's span");
    assert_eq!(traced.kind, SpanKind::Server as i32);
    assert_eq!(attribute(traced, "method").as_deref(), Some("SendMessage"));
    assert_eq!(attribute(traced, "binding").as_deref(), Some("jsonrpc"));
    assert!(attribute(traced, "task_id").is_some_and(|id| !id.is_empty()), "{traced:#?}");
    // OpenTelemetry's semantic conventions for RPC and HTTP servers, beside ours.
    assert_eq!(attribute(traced, "rpc.system").as_deref(), Some("jsonrpc"));
    assert_eq!(attribute(traced, "rpc.service").as_deref(), Some("lf.a2a.v1.A2AService"));
    assert_eq!(attribute(traced, "rpc.method").as_deref(), Some("SendMessage"));
    assert_eq!(attribute(traced, "http.request.method").as_deref(), Some("POST"));
    assert_eq!(attribute(traced, "url.path").as_deref(), Some("/"));
    assert_eq!(attribute(traced, "http.response.status_code").as_deref(), Some("IntValue(200)"));

    // A failed call says so on its span (JSON-RPC answers HTTP 200 whatever happened): its
    // reason and code; a caller's mistake is no Error status.
    let refused = spans
        .iter()
        .map(|(s, _)| s)
        .find(|s| s.name == "lf.a2a.v1.A2AService/GetTask" && hex(&s.trace_id) == TRACE_ID)
        .unwrap_or_else(|| panic!("no GetTask span: {spans:#?}"));
    assert_eq!(attribute(refused, "error.type").as_deref(), Some("TASK_NOT_FOUND"));
    assert_eq!(attribute(refused, "rpc.jsonrpc.error_code").as_deref(), Some("IntValue(-32001)"));
    assert!(refused.status.as_ref().is_none_or(|s| s.code == 0), "{refused:#?}");

    let execute = spans
        .iter()
        .map(|(s, _)| s)
        .find(|s| s.name == "a2a.execute" && s.parent_span_id == traced.span_id)
        .unwrap_or_else(|| panic!("no execution span under the request span: {spans:#?}"));
    assert_eq!(execute.trace_id, traced.trace_id);
    assert_eq!(attribute(execute, "task_id"), attribute(traced, "task_id"));

    // A malformed traceparent is ignored: the request is answered, in a trace of its own.
    let fresh: Vec<&&Span> = requests.iter().filter(|s| hex(&s.trace_id) != TRACE_ID).collect();
    assert_eq!(fresh.len(), 1, "{requests:#?}");
    assert!(fresh[0].parent_span_id.is_empty());
    assert!(spans.iter().all(|(_, service)| service.iter().any(|s| s.contains("a2a-telemetry-test"))), "{spans:#?}");

    // The task's push notifications continue the trace: each delivery is an `a2a.push` client
    // span under the execution span, and the webhook gets that span as its parent.
    let deadline = Instant::now() + Duration::from_secs(10);
    while exported.lock().unwrap().hooks.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let hooks = exported.lock().unwrap().hooks.clone();
    assert!(hooks.len() >= 2, "the task's notifications did not arrive: {hooks:?}");
    let pushes = |spans: &[(Span, Vec<String>)]| -> Vec<Span> {
        spans.iter().map(|(s, _)| s).filter(|s| s.name == "a2a.push").cloned().collect()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while pushes(&collected()).len() < hooks.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let pushes = pushes(&collected());
    assert_eq!(pushes.len(), hooks.len(), "one a2a.push span per delivery: {pushes:#?}");
    for push in &pushes {
        assert_eq!(push.kind, SpanKind::Client as i32);
        assert_eq!(push.parent_span_id, execute.span_id, "a delivery's parent is the execution: {push:#?}");
        assert_eq!(push.trace_id, execute.trace_id);
        assert_eq!(attribute(push, "outcome").as_deref(), Some("delivered"));
        assert_eq!(attribute(push, "attempts").as_deref(), Some("IntValue(1)"));
        assert_eq!(attribute(push, "task_id"), attribute(traced, "task_id"));
    }
    let mut sent: Vec<String> = hooks.iter().map(|h| h.clone().unwrap_or_default()).collect();
    let mut expected: Vec<String> = pushes.iter().map(|p| format!("00-{TRACE_ID}-{}-01", hex(&p.span_id))).collect();
    sent.sort();
    expected.sort();
    assert_eq!(sent, expected, "each webhook post carries its delivery span");
}

#[test]
fn json_log_lines_carry_the_requests_trace_id() {
    // No exporter: the ids come from the caller's traceparent.
    let (mut server, lines) = start(
        a2a_serve(&["--log-format", "json"])
            .env("RUST_LOG", "a2a_native=debug")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT"),
    );
    let host = server.host.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    assert_eq!(send(&host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), "logged", None), 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    let found = loop {
        let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) else { break None };
        let value: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if value["span"]["trace_id"] == TRACE_ID {
            break Some(value);
        }
        seen.push(line);
    };
    let _ = server.child.kill();
    let line = found.unwrap_or_else(|| panic!("no log line with the trace id: {seen:#?}"));
    assert_eq!(line["span"]["name"], "a2a.request", "{line}");
    assert_eq!(line["span"]["method"], "SendMessage", "{line}");
}

#[test]
fn a_collector_that_never_answers_slows_no_request_and_its_drops_are_counted() {
    // A collector that accepts connections and never answers: every export hangs until the
    // exporter's own timeout.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let collector = format!("http://{}", silent.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for conn in silent.incoming().map_while(Result::ok) {
            keep.lock().unwrap().push(conn);
        }
    });
    let (mut server, lines) = start(
        a2a_serve(&["--metrics", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "30000")
            .env("OTEL_BSP_MAX_QUEUE_SIZE", "4")
            .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")
            .env("OTEL_BSP_SCHEDULE_DELAY", "10"),
    );
    let host = server.host.clone();
    let mut lines = lines.map_while(Result::ok);
    let metrics = lines
        .find(|l| l.starts_with("metrics at "))
        .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("http://")).map(str::to_owned))
        .expect("the metrics line");
    std::thread::spawn(move || for _ in lines {});

    // Each request makes two spans (request, execution); the queue holds four and the export
    // thread is stuck on its first batch, so most are dropped, and no request waits for it.
    let started = Instant::now();
    for i in 0..40 {
        assert_eq!(send(&host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), &format!("m{i}"), None), 200);
    }
    let took = started.elapsed();
    let (addr, path) = metrics.split_once('/').unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET /{path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    // A graceful stop flushes what is queued, but a hung collector holds it two seconds at most.
    let stopping = Instant::now();
    Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    let deadline = stopping + Duration::from_secs(10);
    while server.child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = stopping.elapsed();
    assert!(took < Duration::from_secs(10), "40 requests took {took:?} with the collector hung");
    assert!(stopped < Duration::from_secs(5), "a2a serve took {stopped:?} to stop with the collector hung");
    let dropped: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("a2a_telemetry_spans_dropped_total "))
        .unwrap_or_else(|| panic!("no drop counter in {text}"))
        .trim()
        .parse()
        .unwrap();
    assert!(dropped >= 60.0, "{dropped} dropped of 80 spans: {text}");
}

/// The value of the newest data point of the metric `name` whose attributes include `with`:
/// a sum's value, or a histogram's count.
fn point(exports: &[ExportMetricsServiceRequest], name: &str, with: &[(&str, &str)]) -> Option<f64> {
    use opentelemetry_proto::tonic::common::v1::KeyValue;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
    let matches = |attributes: &[KeyValue]| {
        with.iter().all(|(k, v)| {
            attributes.iter().any(|a| {
                a.key == *k
                    && matches!(a.value.as_ref().and_then(|v| v.value.as_ref()), Some(Value::StringValue(s)) if s == v)
            })
        })
    };
    let metrics =
        exports.iter().flat_map(|e| &e.resource_metrics).flat_map(|r| &r.scope_metrics).flat_map(|s| &s.metrics);
    metrics.filter(|m| m.name == name).filter_map(|m| m.data.as_ref()).fold(None, |last, data| {
        let found = match data {
            Data::Sum(sum) => sum.data_points.iter().filter(|p| matches(&p.attributes)).find_map(|p| match p.value? {
                Number::AsInt(i) => Some(i as f64),
                Number::AsDouble(d) => Some(d),
            }),
            Data::Histogram(h) => h.data_points.iter().find(|p| matches(&p.attributes)).map(|p| p.count as f64),
            _ => None,
        };
        found.or(last)
    })
}

#[test]
fn metrics_are_exported_over_otlp_when_the_variables_ask() {
    let (collector, exported) = receiver();
    let (served, lines) = start(
        a2a_serve(&[])
            .env("RUST_LOG", "warn")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
            .env("OTEL_TRACES_EXPORTER", "none")
            .env("OTEL_SERVICE_NAME", "a2a-metrics-test")
            .env("OTEL_METRIC_EXPORT_INTERVAL", "200"),
    );
    std::thread::spawn(move || for _ in lines {});
    for i in 0..3 {
        assert_eq!(send(&served.host, "00-not-a-trace-context", &format!("m{i}"), None), 200);
    }
    let requests = |e: &[ExportMetricsServiceRequest]| {
        point(
            e,
            "a2a.server.requests",
            &[("a2a.method", "SendMessage"), ("a2a.outcome", "OK"), ("a2a.binding", "jsonrpc")],
        )
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while requests(&exported.lock().unwrap().metrics).unwrap_or(0.0) < 3.0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let got = exported.lock().unwrap();
    assert_eq!(requests(&got.metrics), Some(3.0), "cumulative: the three requests");
    let latency = point(&got.metrics, "a2a.server.request.duration", &[("a2a.method", "SendMessage")]);
    assert_eq!(latency, Some(3.0), "one latency sample per request");
    let completed = point(&got.metrics, "a2a.task.state_changes", &[("a2a.task.state", "TASK_STATE_COMPLETED")]);
    assert_eq!(completed, Some(3.0));
    assert!(point(&got.metrics, "a2a.store.operation.duration", &[]).is_some_and(|n| n > 0.0));
    let service = got.metrics[0].resource_metrics[0]
        .resource
        .as_ref()
        .unwrap()
        .attributes
        .iter()
        .any(|a| a.key == "service.name" && format!("{:?}", a.value).contains("a2a-metrics-test"));
    assert!(service, "the resource names the service");
    assert!(got.exports.is_empty(), "OTEL_TRACES_EXPORTER=none exports no spans");
    drop(got);

    // OTEL_METRICS_EXPORTER=none: nothing is sent.
    let (collector, quiet) = receiver();
    let (served, lines) = start(
        a2a_serve(&[])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
            .env("OTEL_METRICS_EXPORTER", "none")
            .env("OTEL_METRIC_EXPORT_INTERVAL", "100"),
    );
    std::thread::spawn(move || for _ in lines {});
    assert_eq!(send(&served.host, "00-not-a-trace-context", "quiet", None), 200);
    std::thread::sleep(Duration::from_millis(600));
    assert!(quiet.lock().unwrap().metrics.is_empty());
}

#[test]
fn push_notifications_from_a_stores_outbox_carry_the_tasks_trace_context() {
    // SQLite keeps notifications in an outbox (delivered after the commit, by any instance):
    // the trace context travels in the outbox with them.
    let (collector, exported) = receiver();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("tasks.db").display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_a2a"));
    command
        .args(["serve", "--store", &store, "--port", "0", "--allow-private-webhooks"])
        .env("RUST_LOG", "warn")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50");
    let (served, lines) = start(&mut command);
    std::thread::spawn(move || for _ in lines {});
    let hook = format!("{collector}/hook");
    assert_eq!(send(&served.host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), "outboxed", Some(&hook)), 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while exported.lock().unwrap().hooks.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(served);
    let hooks = exported.lock().unwrap().hooks.clone();
    assert!(hooks.len() >= 2, "the task's notifications did not arrive: {hooks:?}");
    for hook in &hooks {
        let parts: Vec<&str> = hook.as_deref().unwrap_or_default().split('-').collect();
        assert_eq!(parts.get(1), Some(&TRACE_ID), "{hooks:?}");
        assert_ne!(parts.get(2), Some(&PARENT_ID), "the parent is our execution span, not the caller's: {hooks:?}");
    }
}

/// With `--log-format json` every line the server writes is a JSON log line: the announcement,
/// its warnings and the metrics address too (a JSON log pipeline choked on plain ones).
#[test]
fn json_logs_are_json_from_the_first_line() {
    let mut child = a2a_serve(&["--log-format", "json", "--host", "0.0.0.0", "--metrics", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .expect("a2a starts");
    let lines: Vec<String> =
        BufReader::new(child.stderr.take().unwrap()).lines().take(3).map_while(Result::ok).collect();
    let _ = child.kill();
    let _ = child.wait();
    let parsed: Vec<serde_json::Value> =
        lines.iter().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let messages: Vec<&str> = parsed.iter().map(|v| v["fields"]["message"].as_str().unwrap_or("")).collect();
    assert!(messages[0].contains("serving A2A 1.0") && messages[0].contains("http://0.0.0.0:"), "{messages:?}");
    assert_eq!(parsed[1]["level"], "WARN", "{lines:?}");
    assert!(messages[1].contains("--public-url"), "{messages:?}");
    assert!(messages[2].starts_with("metrics at http://127.0.0.1:"), "{messages:?}");
}

/// A collector that cannot be reached is said (once, not per batch), and so is a protocol other
/// than the one built in; the spans dropped are counted.
#[test]
fn an_unreachable_collector_and_an_unsupported_protocol_are_said() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let collector = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut child = a2a_serve(&[])
        .env("RUST_LOG", "warn")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .stderr(Stdio::piped())
        .spawn()
        .expect("a2a starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut host: Option<String> = None;
    while Instant::now() < deadline && !seen.iter().any(|l: &String| l.contains("exporting spans failed")) {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
            if let Some(host) = &host {
                let _ = send(host, &format!("00-{TRACE_ID}-{PARENT_ID}-01"), "lost", None);
            }
            continue;
        };
        if host.is_none() && line.contains("serving A2A") {
            host = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("http://"))
                .map(|h| h.trim_end_matches('/').to_owned());
        }
        seen.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.iter().any(|l| l.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported")), "{seen:#?}");
    let failed = seen.iter().filter(|l| l.contains("exporting spans failed")).count();
    assert_eq!(failed, 1, "said once: {seen:#?}");
}

/// Logs to a pipe carry no colour codes; a RUST_LOG that is no filter is said, not silently
/// replaced.
#[test]
fn logs_to_a_pipe_are_plain_and_a_bad_filter_is_said() {
    let mut child =
        a2a_serve(&[]).env("RUST_LOG", "garbage[[").env_remove("NO_COLOR").stderr(Stdio::piped()).spawn().unwrap();
    let lines: Vec<String> =
        BufReader::new(child.stderr.take().unwrap()).lines().take(3).map_while(Result::ok).collect();
    let _ = child.kill();
    let _ = child.wait();
    assert!(lines.iter().any(|l| l.contains("RUST_LOG=\"garbage[[\" is not a filter")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("A2A server listening")), "the default filter applies: {lines:#?}");
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "colour codes in a pipe: {lines:#?}");
}

/// What a caller sends (a task id with a newline in it) cannot forge a log line of its own: a
/// request's failure is logged as an escaped field.
#[test]
fn a_caller_cannot_forge_a_log_line() {
    let (mut server, lines) = start(a2a_serve(&[]).env("RUST_LOG", "a2a_native=debug"));
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
        "params": {"id": "x\n2026-11-29T00:00:00Z  ERROR forged: admin logged in"}})
    .to_string();
    let mut stream = TcpStream::connect(&server.host).unwrap();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.host,
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.contains("-32001"), "{answer}");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
        seen.push(line);
    }
    let _ = server.child.kill();
    assert!(seen.iter().any(|l| l.contains("request failed")), "{seen:#?}");
    assert!(!seen.iter().any(|l| l.starts_with("2026-11-29T00:00:00Z")), "a forged line: {seen:#?}");
}

#[test]
fn without_export_push_notifications_carry_the_callers_trace_context() {
    // No exporter and no propagator of our own: the webhook gets the context the request came
    // with (a trace started upstream, by a mesh or a gateway, goes on through the webhook).
    let (collector, exported) = receiver();
    let (server, lines) = start(
        a2a_serve(&["--allow-private-webhooks"]).env("RUST_LOG", "warn").env_remove("OTEL_EXPORTER_OTLP_ENDPOINT"),
    );
    std::thread::spawn(move || for _ in lines {});
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    assert_eq!(send(&server.host, &traceparent, "pushed", Some(&format!("{collector}/hook"))), 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while exported.lock().unwrap().hooks.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let hooks = exported.lock().unwrap().hooks.clone();
    assert!(hooks.len() >= 2, "the task's notifications did not arrive: {hooks:?}");
    assert!(hooks.iter().all(|h| h.as_deref() == Some(traceparent.as_str())), "{hooks:?}");
}
