//! `a2a serve` as users run it: the real binary on a free port, the embedded SQLite default
//! keeping tasks across a restart, SIGTERM ending it cleanly, a bad `--store` refused, and the
//! listener timeouts from the command line.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Served {
    child: Child,
    base: String,
}

/// Starts `a2a serve ARGS --port 0` and reads the URL it announces on stderr.
fn serve(args: &[&str]) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_a2a"));
    command.arg("serve").args(args);
    served(command)
}

/// `command` (an `a2a serve`) on a free port, once it has announced where it listens.
fn served(mut command: Command) -> Served {
    let mut child =
        command.args(["--port", "0"]).env("RUST_LOG", "warn").stderr(Stdio::piped()).spawn().expect("a2a starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let announce = lines.next().expect("an announcement line").unwrap();
    let base = announce
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap_or_else(|| panic!("no URL in {announce:?}"))
        .trim_end_matches('/')
        .to_owned();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Served { child, base }
}

/// A test that fails (panics) before `stop` still stops the server it started.
impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Served {
    /// One A2A 1.0 HTTP/1.1 request on a fresh connection; returns (status, JSON body).
    fn request(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.request_as(Some("1.0"), method, path, body)
    }

    /// [`Served::request`] with this `A2A-Version` header, or none (as a 0.3 client sends).
    fn request_as(&self, version: Option<&str>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let host = self.base.trim_start_matches("http://");
        let mut stream = TcpStream::connect(host).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let version = version.map(|v| format!("A2A-Version: {v}\r\n")).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{version}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP response");
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn rpc(&self, method: &str, params: Value) -> Value {
        let (status, body) =
            self.request("POST", "/", Some(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})));
        assert_eq!(status, 200, "{body}");
        body
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().unwrap();
        panic!("a2a serve did not stop on SIGTERM");
    }
}

#[test]
fn echo_agent_on_sqlite_keeps_tasks_across_a_restart() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let db = dir.join("tasks.db");
    let store = format!("sqlite:{}", db.display());

    let server = serve(&["--store", &store]);
    let (status, card) = server.request("GET", "/.well-known/agent-card.json", None);
    assert_eq!(status, 200);
    assert_eq!(card["capabilities"]["streaming"], true);
    assert!(card["supportedInterfaces"][0]["url"].as_str().unwrap().starts_with(&server.base));

    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello there"}]});
    let reply = server.rpc("SendMessage", json!({"message": message}));
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello there");
    let id = task["id"].as_str().unwrap().to_owned();
    assert!(server.stop().success(), "SIGTERM is a clean exit");

    let server = serve(&["--store", &store]);
    let (status, again) = server.request("GET", &format!("/tasks/{id}"), None);
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(again["artifacts"][0]["parts"][0]["text"], "hello there");

    // A second process on the same file is refused at once (it would end the first one's
    // running tasks as interrupted); the first goes on serving.
    let mut second = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["serve", "--store", &store, "--port", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let exit = (0..100)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            second.try_wait().unwrap()
        })
        .unwrap_or_else(|| {
            let _ = second.kill();
            panic!("a second a2a serve on the same SQLite file kept running")
        });
    let mut err = String::new();
    second.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(!exit.success());
    assert!(err.contains("in use by another process"), "{err}");
    assert_eq!(server.request("GET", &format!("/tasks/{id}"), None).0, 200);
    assert!(server.stop().success());
}

#[test]
fn conformance_agent_is_scripted_by_message_id() {
    let server = serve(&["--conformance", "--store", "memory"]);
    let send = |id: &str| {
        let message = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": "x"}]});
        server.rpc("SendMessage", json!({"message": message}))["result"].clone()
    };
    assert_eq!(send("tck-message-response-1")["message"]["parts"][0]["text"], "Direct message response");
    assert_eq!(
        send("tck-artifact-data-1")["task"]["artifacts"][0]["parts"][0]["data"],
        json!({"key": "value", "count": 42})
    );
    assert_eq!(send("tck-artifact-file-url-1")["task"]["artifacts"][0]["parts"][0]["filename"], "output.txt");
    assert_eq!(send("tck-reject-task-1")["task"]["status"]["state"], "TASK_STATE_REJECTED");
    let waiting = send("tck-input-required-1");
    assert_eq!(waiting["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let task_id = waiting["task"]["id"].as_str().unwrap();
    let follow =
        json!({"messageId": "tck-complete-task-2", "taskId": task_id, "role": "ROLE_USER", "parts": [{"text": "y"}]});
    let done = server.rpc("SendMessage", json!({"message": follow}));
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    // The conformance card is strictly 1.0: no 0.3 fields merged in.
    let (_, card) = server.request("GET", "/.well-known/agent-card.json", None);
    assert!(card.get("url").is_none() && card.get("protocolVersion").is_none(), "{card}");
    // Yet a 0.3 client that asks for the extended card gets it in 0.3 form, describing the
    // endpoints that answer its calls (it was InternalError).
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"});
    let (status, extended) = server.request_as(None, "POST", "/", Some(call));
    assert_eq!(status, 200, "{extended}");
    let extended = &extended["result"];
    assert_eq!(extended["url"], format!("{}/", server.base), "{extended}");
    assert_eq!(extended["preferredTransport"], "JSONRPC", "{extended}");
    // Asked for by name, 0.3 is refused by a card without it (the client spoke 1.0 quietly).
    let url = format!("{}/", server.base);
    let (code, _, err) = a2a(&["send", &url, "hi", "--a2a-version", "0.3"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("VersionNotSupportedError") && err.contains("no A2A 0.3 interface"), "{err}");
    assert!(server.stop().success());
}

#[test]
fn one_task_holds_at_most_max_task_bytes() {
    let server = serve(&["--conformance", "--store", "memory", "--max-task-bytes", "4000"]);
    let message = |id: &str, task: Option<&str>, text: &str| {
        let mut m = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
        if let Some(task) = task {
            m["taskId"] = json!(task);
        }
        server.rpc("SendMessage", json!({"message": m}))
    };
    let waiting = message("tck-input-required-1", None, "x");
    let task_id = waiting["result"]["task"]["id"].as_str().unwrap().to_owned();
    let big = "y".repeat(1500);
    let mut refused = Value::Null;
    for i in 0..6 {
        let answer = message(&format!("tck-input-required-{}", i + 2), Some(&task_id), &big);
        if answer.get("error").is_some() {
            refused = answer;
            break;
        }
    }
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("limits.maxTaskBytes 4000"), "{refused}");
    assert!(server.stop().success());
    serve_refuses(&["--max-task-bytes", "0"], "--max-task-bytes");
}

#[test]
fn a_sigterm_right_after_the_announcement_stops_the_server_cleanly() {
    // The signal handlers are installed before the server says it serves: a supervisor that
    // stops it at once gets a graceful exit, not the default action's kill.
    for _ in 0..5 {
        let server = serve(&["--echo", "--store", "memory"]);
        assert!(server.stop().success());
    }
}

/// A request whose body never comes holds a graceful shutdown until the body read times out;
/// a second signal stops the server at once (exit 130), as a second Ctrl-C is expected to.
#[test]
fn a_second_signal_stops_at_once() {
    let mut server = serve(&["--echo", "--store", "memory"]);
    let host = server.base.trim_start_matches("http://").to_owned();
    let mut stalled = TcpStream::connect(&host).unwrap();
    write!(
        stalled,
        "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let pid = server.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(server.child.try_wait().unwrap().is_none(), "the first signal waits for the request in flight");
    let began = std::time::Instant::now();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(began.elapsed() < Duration::from_secs(3), "a second signal did not stop the server");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
}

/// --shutdown-grace: a task running at SIGTERM gets that long to finish before it ends FAILED.
#[test]
fn running_tasks_finish_within_the_shutdown_grace() {
    let server = serve(&["--conformance", "--store", "memory", "--shutdown-grace", "10"]);
    let sender = {
        let base = server.base.clone();
        std::thread::spawn(move || {
            let probe = Served { child: Command::new("true").spawn().unwrap(), base };
            let message = json!({"messageId": "tck-delayed-complete-grace", "role": "ROLE_USER",
                "parts": [{"text": "delay_ms=1500"}]});
            probe.rpc("SendMessage", json!({"message": message}))
        })
    };
    std::thread::sleep(Duration::from_millis(400));
    assert!(server.stop().success());
    let reply = sender.join().unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
}

#[test]
fn the_echo_card_carries_the_0_3_fields_unless_strict_v1_is_asked() {
    let card_of = |args: &[&str]| {
        let server = serve(args);
        let (_, card) = server.request("GET", "/.well-known/agent-card.json", None);
        assert!(server.stop().success());
        card
    };
    let compat = card_of(&["--echo", "--store", "memory"]);
    assert_eq!((&compat["protocolVersion"], &compat["preferredTransport"]), (&json!("0.3.0"), &json!("JSONRPC")));
    let strict = card_of(&["--echo", "--store", "memory", "--strict-v1-card"]);
    for compat_field in ["url", "protocolVersion", "preferredTransport", "additionalInterfaces"] {
        assert!(strict.get(compat_field).is_none(), "{compat_field} in {strict}");
    }
    // The 0.3 interface stays declared (0.3 requests are answered either way).
    assert!(strict["supportedInterfaces"].as_array().unwrap().iter().any(|i| i["protocolVersion"] == "0.3"));
}

#[test]
fn a_bad_store_is_refused_with_a_message() {
    serve_refuses(&["--store", "redis://x"], "unknown store");
}

// ---- The client commands (`a2a card/send/get/list`) against `a2a serve`.

#[test]
fn the_message_and_stream_limits_from_the_command_line() {
    let server = serve(&["--store", "memory", "--max-parts-per-message", "2", "--max-history-length", "1"]);
    let parts = |n: usize| (0..n).map(|i| json!({"text": i.to_string()})).collect::<Vec<_>>();
    let send = |n| {
        server.rpc(
            "SendMessage",
            json!({"message": {"messageId": format!("m{n}"), "role": "ROLE_USER", "parts": parts(n)}}),
        )
    };
    assert!(send(2).get("result").is_some());
    let refused = send(3);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // The echo task's history holds the message and the agent's reply: one is returned.
    let task = &send(1)["result"]["task"];
    let got = server.rpc("GetTask", json!({"id": task["id"]}));
    assert_eq!(got["result"]["history"].as_array().map(Vec::len), Some(1), "{got}");
    assert!(server.stop().success());
    // One stream on a waiting task holds the only slot: a second subscriber is refused.
    let server = serve(&["--conformance", "--store", "memory", "--max-streams-per-task", "1"]);
    let message = json!({"messageId": "tck-input-required-1", "role": "ROLE_USER", "parts": [{"text": "x"}]});
    let task_id = server.rpc("SendMessage", json!({"message": message}))["result"]["task"]["id"].clone();
    let host = server.base.trim_start_matches("http://").to_owned();
    let mut first = TcpStream::connect(&host).unwrap();
    first.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}).to_string();
    write!(
        first,
        "POST / HTTP/1.1\r\nHost: {host}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {}\r\n\r\n{subscribe}",
        subscribe.len()
    )
    .unwrap();
    let mut head = String::new();
    let mut reader = BufReader::new(first);
    while !head.ends_with("\r\n\r\n") {
        assert!(reader.read_line(&mut head).unwrap() > 0, "closed early: {head}");
    }
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    let (_, second) = server.request("POST", "/", Some(serde_json::from_str(&subscribe).unwrap()));
    assert_eq!(second["error"]["code"], -32603, "{second}");
    assert!(second["error"]["message"].as_str().unwrap().contains("maxStreamsPerTask 1"), "{second}");
    drop(reader);
    assert!(server.stop().success());
    serve_refuses(&["--max-streams-per-task", "0"], "--max-streams-per-task");
}

/// `a2a serve` with `args` (on any port) exits at once with an error that says `says`.
fn serve_refuses(args: &[&str], says: &str) {
    // In the temporary directory: a refusal found after the default store is opened leaves its
    // file there, not in the source tree.
    let out = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .arg("serve")
        .args(args)
        .args(["--port", "0"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a2a serve {args:?} started");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(says), "a2a serve {args:?}: {err}");
}

/// Runs the `a2a` CLI; returns (exit code, stdout, stderr).
fn a2a(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a")).args(args).env_remove("A2A_BEARER").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn a2a_json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = a2a(&all);
    assert_eq!(code, 0, "a2a {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn client_commands_speak_1_0_and_0_3_to_the_echo_agent() {
    // The echo agent's card declares JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and gRPC 1.0.
    let server = serve(&["--store", "memory"]);
    let url = server.base.as_str();
    let (code, card, _) = a2a(&["card", url]);
    assert_eq!(code, 0);
    assert!(card.contains("over JSONRPC 1.0"), "{card}");
    let (_, card03, _) = a2a(&["card", url, "--a2a-version", "0.3"]);
    assert!(card03.contains("over JSONRPC 0.3"), "{card03}");

    let (_, card_grpc, _) = a2a(&["card", url, "--transport", "grpc"]);
    assert!(card_grpc.contains("over GRPC 1.0"), "{card_grpc}");
    let extras =
        [&["--a2a-version", "0.3"][..], &["--transport", "http-json"][..], &["--transport", "grpc"][..], &[][..]];
    for extra in extras {
        let mut args = vec!["send", url, "hello there"];
        args.extend_from_slice(extra);
        let task = a2a_json(&args)["task"].clone();
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{extra:?}: {task}");
        assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello there", "{extra:?}");
        let id = task["id"].as_str().unwrap();
        let mut get = vec!["get", url, id];
        get.extend_from_slice(extra);
        assert_eq!(a2a_json(&get)["id"], id, "{extra:?}");
    }
    let listed = a2a_json(&["list", url]);
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(4), "{listed}");
    let streamed = a2a(&["send", url, "streamed over grpc", "--stream", "--transport", "grpc", "--json"]);
    assert_eq!(streamed.0, 0, "{}", streamed.2);
    assert!(streamed.1.lines().last().unwrap_or_default().contains("TASK_STATE_COMPLETED"), "{}", streamed.1);
    let (code, _, err) = a2a(&["list", url, "--a2a-version", "0.3"]);
    assert_eq!(code, 1);
    assert!(err.contains("UnsupportedOperationError (-32004)"), "ListTasks has no 0.3 form: {err}");
    let (code, _, err) = a2a(&["get", url, "no-such-task"]);
    assert_eq!(code, 1);
    assert!(err.contains("TaskNotFoundError (-32001)"), "{err}");
    let (code, _, err) = a2a(&["get", url, "no-such-task", "--transport", "grpc"]);
    assert_eq!(code, 1);
    assert!(err.contains("TaskNotFoundError (-32001)"), "over gRPC: {err}");
    assert!(server.stop().success());
}

#[test]
fn a_bearer_token_guards_the_agent_and_the_cli_sends_it() {
    let server = serve(&["--store", "memory", "--bearer-token", "s3cret"]);
    let url = server.base.as_str();
    // The card is public and says which scheme to use.
    let card = a2a_json(&["card", url]);
    assert_eq!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer");
    let (code, _, err) = a2a(&["send", url, "hi"]);
    assert_eq!(code, 1);
    assert!(err.contains("UnauthenticatedError"), "{err}");
    let (code, _, err) = a2a(&["send", url, "hi", "--bearer", "wrong"]);
    assert_eq!(code, 1, "{err}");
    let reply = a2a_json(&["send", url, "hi", "--bearer", "s3cret"]);
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let extended = a2a_json(&["card", url, "--extended", "--header", "Authorization: Bearer s3cret"]);
    assert_eq!(extended["skills"].as_array().map(Vec::len), Some(2), "the extended card lists one more skill");
    assert!(server.stop().success());
}

fn fixture(name: &str) -> String {
    format!("{}/../core/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A JWKS file with the public half of a fixture's ES256 key, as `kid`.
fn jwks_file(dir: &std::path::Path, key: &str, kid: &str) -> String {
    let pem = std::fs::read(fixture(key)).unwrap();
    let encoding = jsonwebtoken::EncodingKey::from_ec_pem(&pem).unwrap();
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&encoding, jsonwebtoken::Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.into());
    let path = dir.join(format!("{kid}-{key}.json"));
    std::fs::write(&path, serde_json::to_vec(&json!({"keys": [jwk]})).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// Serves `body` as JSON to every request on a loopback port, from a thread; its URL.
fn json_server(body: Vec<u8>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    url
}

#[test]
fn jwt_bearer_tokens_from_a_jwks_with_issuer_and_audience() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let jwks = json_server(std::fs::read(jwks_file(&dir, "jwt-ec.pem", "idp-1")).unwrap());
    let (iss, aud) = ("https://idp.test", "a2a://agent");
    let server = serve(&["--store", "memory", "--jwt-jwks", &jwks, "--jwt-issuer", iss, "--jwt-audience", aud]);
    let url = server.base.as_str();
    let key = jsonwebtoken::EncodingKey::from_ec_pem(&std::fs::read(fixture("jwt-ec.pem")).unwrap()).unwrap();
    let exp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 300;
    let token = |claims: Value| {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("idp-1".into());
        jsonwebtoken::encode(&header, &claims, &key).unwrap()
    };
    let good = token(json!({"iss": iss, "aud": aud, "sub": "alice", "exp": exp}));
    let reply = a2a_json(&["send", url, "hi", "--bearer", &good]);
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    for claims in [
        json!({"iss": "https://evil.test", "aud": aud, "sub": "alice", "exp": exp}),
        json!({"aud": aud, "sub": "alice", "exp": exp}),
        json!({"iss": iss, "sub": "alice", "exp": exp}),
    ] {
        let (code, _, err) = a2a(&["send", url, "hi", "--bearer", &token(claims.clone())]);
        assert_eq!(code, 1, "{claims}: {err}");
        assert!(err.contains("UnauthenticatedError"), "{claims}: {err}");
    }
    assert!(server.stop().success());
    // Without an issuer or an audience, any issuer's token for any service would be accepted:
    // the server does not start.
    for given in [&["--jwt-issuer", iss][..], &["--jwt-audience", aud], &[]] {
        serve_refuses(
            &[&["--jwt-jwks", &jwks][..], given].concat(),
            "--jwt-jwks needs --jwt-issuer and --jwt-audience",
        );
    }
}

#[test]
fn a_base64_api_key_with_padding_is_the_key_not_a_named_one() {
    // Split at its first `=`, it had become the caller "MDEyMzQ1Njc4OWFiY2RlZg" with the key "=".
    let server = serve(&["--store", "memory", "--api-key", "MDEyMzQ1Njc4OWFiY2RlZg=="]);
    let url = server.base.as_str();
    for wrong in ["=", "MDEyMzQ1Njc4OWFiY2RlZg"] {
        let (code, _, err) = a2a(&["send", url, "hi", "--api-key", wrong]);
        assert_eq!(code, 1, "{wrong}: {err}");
    }
    let reply = a2a_json(&["send", url, "hi", "--api-key", "MDEyMzQ1Njc4OWFiY2RlZg=="]);
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    assert!(server.stop().success());
}

#[test]
fn https_a_signed_card_and_an_api_key() {
    let (cert, key, ca, card_key) =
        (fixture("tls-server.pem"), fixture("tls-server.key"), fixture("tls-ca.pem"), fixture("jwt-ec.pem"));
    let server = serve(&[
        "--store",
        "memory",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--card-signing-key",
        &card_key,
        "--api-key",
        "k3y",
    ]);
    let url = server.base.as_str();
    assert!(url.starts_with("https://"), "{url}");
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let good = jwks_file(&dir, "jwt-ec.pem", "card-1");
    let other = jwks_file(&dir, "jwt-ec-rotated.pem", "card-1");

    // The server's certificate is from a private CA: refused until the CLI trusts it.
    let (code, _, err) = a2a(&["card", url]);
    assert_eq!(code, 1, "{err}");
    let card = a2a_json(&["card", url, "--ca-cert", &ca]);
    assert_eq!(card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"], "X-API-Key");
    // The 1.0 card's signature, and one over the form a2a-sdk 0.3 verifies (the echo card
    // declares 0.3): a verifier accepts the card when any one holds.
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(2));
    let (code, _, err) = a2a(&["card", url, "--ca-cert", &ca, "--verify", &good]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("signature verified"), "{err}");
    let (code, _, err) = a2a(&["card", url, "--ca-cert", &ca, "--verify", &other]);
    assert_eq!(code, 1, "a card checked against another key must fail: {err}");

    let (code, _, err) = a2a(&["send", url, "hi", "--ca-cert", &ca]);
    assert_eq!(code, 1);
    assert!(err.contains("UnauthenticatedError"), "{err}");
    let reply = a2a_json(&["send", url, "hi", "--ca-cert", &ca, "--api-key", "k3y"]);
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(server.stop().success());
}

#[test]
fn the_client_options_do_not_configure_the_server() {
    // Nor do the shared store's lease settings configure any other store.
    serve_refuses(&["--store", "memory", "--lease-ms", "1000"], "--lease-ms applies to a PostgreSQL store");
    // A public URL is checked as the bindings check theirs.
    serve_refuses(&["--store", "memory", "--public-url", "notaurl"], "--public-url: \"notaurl\" is not an http(s) URL");
    serve_refuses(&["--store", "memory", "--reap-interval-ms", "100"], "--reap-interval-ms applies to a PostgreSQL");
    // `--bearer` is what a client sends: given to serve it used to be ignored, starting an open
    // server; now it is refused, as is every client-only option.
    serve_refuses(&["--store", "memory", "--bearer", "secret"], "--bearer-token");
    serve_refuses(&["--store", "memory", "--api-key", "k", "--api-key-header", "X-Foo"], "--api-key-header");
    // The client's A2A_API_KEY, exported for talking to other agents, no longer locks this
    // server with it: the server reads A2A_SERVE_API_KEY only.
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["serve", "--store", "memory", "--port", "0"])
        .env("A2A_API_KEY", "client-key")
        .env_remove("A2A_SERVE_API_KEY")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let announce = BufReader::new(child.stderr.take().unwrap()).lines().next().unwrap().unwrap();
    let url = announce.split_whitespace().find(|w| w.starts_with("http://")).unwrap().trim_end_matches('/').to_owned();
    let reply = a2a_json(&["send", &url, "hi"]);
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "an open server: {reply}");
    let card = a2a_json(&["card", &url]);
    assert!(card.get("securitySchemes").is_none_or(|s| s.as_object().is_some_and(|o| o.is_empty())), "{card}");
    let _ = child.kill();
    let _ = child.wait();
    // serve's help lists them apart, under their own heading, not among its options.
    let (code, help, _) = a2a(&["serve", "--help"]);
    assert_eq!(code, 0);
    let (own, client) = help.split_once("Client options (serve takes none").expect("a heading of their own");
    for flag in ["--bearer <TOKEN>", "--transport <TRANSPORT>", "--a2a-version", "--ca-cert", "--json"] {
        assert!(!own.contains(flag) && client.contains(flag), "{flag} among serve's options:\n{help}");
    }
    assert!(own.contains("--bearer-token <TOKEN>") && own.contains("--api-key <"), "{help}");
}

/// A server that requires credentials can be benchmarked: --api-key, --bearer and --header go
/// with every request, raw (JSON-RPC and gRPC) and through the client (the key was ignored:
/// every request got 401).
#[test]
fn bench_sends_the_credentials_it_is_given() {
    let key = "MDEyMzQ1Njc4OWFiY2RlZg==";
    let server = serve(&["--store", "memory", "--api-key", key, "--bearer-token", "t0ken"]);
    let url = format!("{}/", server.base);
    let target = server.base.trim_start_matches("http://").to_owned();
    let run =
        |extra: &[&str]| a2a(&[&["bench", "--url", &url, "--requests", "3", "--connections", "1"], extra].concat());
    let (code, _, err) = run(&[]);
    assert_eq!(code, 1, "no credentials: every request is refused: {err}");
    for extra in [
        &["--api-key", key][..],
        &["--api-key", key, "--via", "client"],
        &["--bearer", "t0ken"],
        &["--header", "Authorization: Bearer t0ken"],
    ] {
        let (code, _, err) = run(extra);
        assert_eq!(code, 0, "{extra:?}: {err}");
    }
    let (code, _, err) = a2a(&[
        "bench",
        "--url",
        &target,
        "--protocol",
        "grpc",
        "--requests",
        "3",
        "--connections",
        "1",
        "--bearer",
        "t0ken",
    ]);
    assert_eq!(code, 0, "gRPC: {err}");
}

#[test]
fn bench_fails_when_nothing_was_measured_and_refuses_what_it_does_not_do() {
    let server = serve(&["--store", "memory"]);
    let wrong = format!("{}/nope", server.base);
    let (code, _, err) = a2a(&["bench", "--url", &wrong, "--requests", "5", "--connections", "1"]);
    assert_eq!(code, 1, "every request failed: {err}");
    assert!(err.contains("every request failed"), "{err}");
    let url = format!("{}/", server.base);
    for (flag, value) in
        [("--timeout", "1"), ("--connect-timeout", "1"), ("--transport", "http-json"), ("--connections", "0")]
    {
        let (code, _, err) = a2a(&["bench", "--url", &url, "--requests", "5", flag, value]);
        assert_eq!(code, 2, "{flag}: {err}");
    }
    let (code, _, err) = a2a(&["bench", "--url", &url, "--requests", "5", "--connections", "1"]);
    assert_eq!(code, 0, "{err}");
    // A server that takes the connection and never answers: each request gives up at
    // --request-timeout, and the run ends (it hung).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/", silent.local_addr().unwrap());
    let began = std::time::Instant::now();
    let (code, _, err) =
        a2a(&["bench", "--url", &silent_url, "--requests", "2", "--connections", "2", "--request-timeout", "0.5"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("every request failed") && began.elapsed() < Duration::from_secs(20), "{err}");
    let (code, _, err) = a2a(&["bench", "--url", &url, "--requests", "1", "--request-timeout", "0"]);
    assert_eq!(code, 2, "{err}");
    drop(silent);
    // A client's timeout that is no positive, finite number of seconds is refused (it was
    // quietly 1 ms).
    for timeout in ["0", "nan", "inf"] {
        let (code, _, err) = a2a(&["card", &url, "--timeout", timeout]);
        assert_eq!(code, 1, "--timeout {timeout}: {err}");
        assert!(err.contains("InvalidParamsError") && err.contains("timeout"), "{err}");
    }
    // The connect and stream idle timeouts are core's client options, checked alike.
    for flag in ["--connect-timeout", "--stream-idle-timeout"] {
        let (code, _, err) = a2a(&["card", &url, flag, "0"]);
        assert_eq!(code, 1, "{flag} 0: {err}");
        assert!(err.contains("InvalidParamsError") && err.contains("a positive, finite number of seconds"), "{err}");
        let (code, out, err) = a2a(&["card", &url, flag, "5"]);
        assert_eq!(code, 0, "{flag} 5: {err}");
        assert!(!out.is_empty());
    }
    assert!(server.stop().success());
}

#[test]
fn mutual_tls_beside_an_api_key_admits_either() {
    // The card offers the two as alternatives; the handshake used to demand a certificate of
    // everyone, locking out key holders and the public card.
    let (cert, key, ca) = (fixture("tls-server.pem"), fixture("tls-server.key"), fixture("tls-ca.pem"));
    let (client_cert, client_key) = (fixture("tls-client.pem"), fixture("tls-client.key"));
    let server = serve(&[
        "--store",
        "memory",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--tls-client-ca",
        &ca,
        "--api-key",
        "k3y",
    ]);
    let url = server.base.as_str();
    let card = a2a_json(&["card", url, "--ca-cert", &ca]);
    assert!(card["securitySchemes"]["mtls"].is_object() && card["securitySchemes"]["apiKey"].is_object(), "{card}");
    let (code, _, err) = a2a(&["send", url, "hi", "--ca-cert", &ca]);
    assert_eq!(code, 1, "neither scheme: {err}");
    assert!(err.contains("UnauthenticatedError"), "{err}");
    for with in [vec!["--api-key", "k3y"], vec!["--client-cert", &client_cert, "--client-key", &client_key]] {
        let mut args = vec!["send", url, "hi", "--ca-cert", &ca];
        args.extend(with.iter().copied());
        let reply = a2a_json(&args);
        assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{with:?}: {reply}");
    }
    assert!(server.stop().success());
}

/// `a2a send` carries files (bytes with their name and media type, or a URL) and metadata.
#[test]
fn send_carries_files_and_metadata() {
    let server = serve(&["--store", "memory"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.json");
    std::fs::write(&file, b"{\"a\": 1}").unwrap();
    let file = file.to_string_lossy().into_owned();
    let reply = a2a_json(&[
        "send",
        &server.base,
        "hi",
        "--file",
        &file,
        "--file-url",
        "https://files.example/r.pdf",
        "--metadata",
        r#"{"k": "v"}"#,
    ]);
    let parts = &reply["task"]["artifacts"][0]["parts"];
    assert_eq!(
        parts[1],
        json!({"raw": "eyJhIjogMX0=", "filename": "notes.json", "mediaType": "application/json"}),
        "{reply}"
    );
    assert_eq!(parts[2], json!({"url": "https://files.example/r.pdf"}));
    assert_eq!(reply["task"]["history"][0]["metadata"], json!({"k": "v"}), "{reply}");
    let (code, _, err) = a2a(&["send", &server.base, "hi", "--metadata", "[1]"]);
    assert_eq!(code, 1);
    assert!(err.contains("--metadata must be a JSON object"), "{err}");
    let (code, _, err) = a2a(&["send", &server.base, "hi", "--file", "/no/such/file"]);
    assert!(code == 1 && err.contains("--file /no/such/file"), "{err}");
    assert!(server.stop().success());
}

/// `a2a push list` pages with --page-size, and the hint it prints names the next page.
#[test]
fn push_configs_are_listed_page_by_page() {
    let server = serve(&["--store", "memory", "--allow-private-webhooks"]);
    let url = server.base.as_str();
    let task = a2a_json(&["send", url, "hi"])["task"]["id"].as_str().unwrap().to_owned();
    for id in ["c0", "c1", "c2"] {
        let (code, _, err) = a2a(&["push", "set", url, &task, "http://127.0.0.1:9/hook", "--id", id]);
        assert_eq!(code, 0, "{err}");
    }
    let (code, out, err) = a2a(&["push", "list", url, &task, "--page-size", "2"]);
    assert_eq!(code, 0, "{err}");
    let token = out.split("--page-token ").nth(1).expect("a next page hint").trim().to_owned();
    assert!(out.contains("2 configs"), "{out}");
    let rest = a2a_json(&["push", "list", url, &task, "--page-size", "2", "--page-token", &token]);
    assert_eq!(rest["configs"].as_array().unwrap().len(), 1, "{rest}");
    assert!(server.stop().success());
}

#[test]
fn private_webhooks_all_or_an_allow_list() {
    // A push config for `url` on a fresh task: true when created, false when refused.
    let accepts = |server: &Served, url: &str| {
        let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]});
        let task =
            server.rpc("SendMessage", json!({"message": message}))["result"]["task"]["id"].as_str().unwrap().to_owned();
        let body = server.rpc("CreateTaskPushNotificationConfig", json!({"taskId": task, "url": url}));
        match body.get("error") {
            None => true,
            Some(e) => {
                assert_eq!(e["code"], -32602, "{body}");
                false
            }
        }
    };
    let closed = serve(&["--store", "memory"]);
    assert!(!accepts(&closed, "http://127.0.0.1:9/hook"));
    assert!(closed.stop().success());

    let open = serve(&["--store", "memory", "--allow-private-webhooks"]);
    assert!(accepts(&open, "http://127.0.0.1:9/hook"));
    assert!(accepts(&open, "http://192.168.1.1/hook"));
    assert!(open.stop().success());

    let listed = serve(&["--store", "memory", "--allow-private-webhooks=127.0.0.1,10.0.0.0/8,::1,hooks.internal"]);
    for (url, ok) in [
        ("http://127.0.0.1:9/hook", true),
        ("http://0177.0.0.1:9/hook", true),
        ("http://10.1.2.3/hook", true),
        ("http://[::1]/hook", true),
        ("http://hooks.internal/hook", true),
        ("http://127.0.0.2/hook", false),
        ("http://192.168.1.1/hook", false),
        ("http://localhost/hook", false),
    ] {
        assert_eq!(accepts(&listed, url), ok, "{url}");
    }
    assert!(listed.stop().success());

    // --conformance opens every private address, unless the operator gave a list.
    let conformance = serve(&["--conformance", "--store", "memory", "--allow-private-webhooks=203.0.113.9"]);
    assert!(!accepts(&conformance, "http://127.0.0.1:9/hook"));
    assert!(conformance.stop().success());

    serve_refuses(&["--store", "memory", "--allow-private-webhooks=10.0.0.0/99"], "10.0.0.0/99");
}

#[test]
fn several_api_keys_each_a_caller_and_memory_bounds_from_the_command_line() {
    let server =
        serve(&["--store", "memory", "--max-tasks", "2", "--api-key", "alice=k-alice", "--api-key", "bob=k-bob"]);
    let url = server.base.as_str();
    let as_alice = ["--api-key", "k-alice"];
    let as_bob = ["--api-key", "k-bob"];
    let mut ids = Vec::new();
    for n in 0..3 {
        let text = format!("task {n}");
        let mut args = vec!["send", url, text.as_str()];
        args.extend_from_slice(&as_alice);
        ids.push(a2a_json(&args)["task"]["id"].as_str().unwrap().to_owned());
    }
    // The store holds two tasks: the oldest made room for the third.
    let mut list = vec!["list", url];
    list.extend_from_slice(&as_alice);
    let listed: Vec<String> =
        a2a_json(&list)["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(!listed.contains(&ids[0]), "the oldest task was kept: {listed:?}");
    // Each key is its own caller: bob sees none of alice's tasks; an unknown key is refused.
    let mut list = vec!["list", url];
    list.extend_from_slice(&as_bob);
    assert_eq!(a2a_json(&list)["tasks"].as_array().map(Vec::len), Some(0));
    // A bearer token given beside the key does not hold the key back.
    assert_eq!(
        a2a_json(&["list", url, "--bearer", "not-this-one", "--api-key", "k-bob"])["tasks"].as_array().map(Vec::len),
        Some(0)
    );
    let (code, _, err) = a2a(&["list", url, "--api-key", "k-eve"]);
    assert_eq!(code, 1);
    assert!(err.contains("UnauthenticatedError"), "{err}");
    assert!(server.stop().success());
    // The bounds apply to the memory store only.
    serve_refuses(&["--store", "sqlite::memory:", "--max-tasks", "5"], "memory store only");
}

#[test]
fn the_listener_timeouts_from_the_command_line() {
    // An idle keep-alive connection is closed after --idle-timeout (looked at every period).
    let server = serve(&["--store", "memory", "--idle-timeout", "0.3"]);
    let host = server.base.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(stream, "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut card = vec![0; length];
    reader.read_exact(&mut card).unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).expect("closed by the server, not timed out");
    assert!(rest.is_empty() && started.elapsed() < Duration::from_secs(3));
    assert!(server.stop().success());
    // A request head begun and not finished within --header-read-timeout gets 408.
    let server = serve(&["--store", "memory", "--header-read-timeout", "0.3"]);
    let host = server.base.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(stream, "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\nAcc").unwrap();
    let mut answer = String::new();
    BufReader::new(stream).read_to_string(&mut answer).expect("answered and closed, not timed out");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(server.stop().success());
    // Zero is refused, naming the flag.
    for flag in ["--idle-timeout", "--body-read-timeout", "--header-read-timeout"] {
        serve_refuses(&[flag, "0"], flag);
    }
}

#[test]
fn the_body_limits_from_the_command_line() {
    let server = serve(&["--store", "memory", "--max-body-bytes", "100000", "--max-body-bytes-in-flight", "150000"]);
    let host = server.base.trim_start_matches("http://").to_owned();
    let head = |len: usize| {
        format!("POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n")
    };
    // Past --max-body-bytes: 413.
    let mut big = TcpStream::connect(&host).unwrap();
    big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(big, "{}", head(100_001)).unwrap();
    let mut answer = String::new();
    BufReader::new(big).read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    // 80 kB of a body under way hold most of the 150 kB budget: a second 90 kB body gets 503.
    let mut first = TcpStream::connect(&host).unwrap();
    write!(first, "{}{}", head(90_000), " ".repeat(80_000)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut second = TcpStream::connect(&host).unwrap();
    second.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(second, "{}{}", head(90_000), " ".repeat(90_000)).unwrap();
    let mut reader = BufReader::new(second);
    let mut answer = String::new();
    while !answer.ends_with("\r\n\r\n") {
        assert!(reader.read_line(&mut answer).unwrap() > 0, "closed early: {answer}");
    }
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    drop(first);
    assert!(server.stop().success());
    // A budget below the largest body is refused, naming the flag.
    serve_refuses(&["--max-body-bytes", "100000", "--max-body-bytes-in-flight", "99999"], "--max-body-bytes-in-flight");
}

#[test]
fn the_connection_cap_from_the_command_line() {
    let server = serve(&["--store", "memory", "--max-connections", "1"]);
    let host = server.base.trim_start_matches("http://").to_owned();
    let get = format!("GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let status_line = |s: &TcpStream| {
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).map(|_| line)
    };
    let mut first = TcpStream::connect(&host).unwrap();
    first.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    first.write_all(get.as_bytes()).unwrap();
    assert!(status_line(&first).unwrap().starts_with("HTTP/1.1 200 "));
    // The one slot is held by `first` (keep-alive): a second client waits, unanswered.
    let mut second = TcpStream::connect(&host).unwrap();
    second.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    second.write_all(get.as_bytes()).unwrap();
    assert!(status_line(&second).is_err(), "served past --max-connections 1");
    drop(first);
    second.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(status_line(&second).unwrap().starts_with("HTTP/1.1 200 "));
    drop(second);
    assert!(server.stop().success());
    serve_refuses(&["--max-connections", "0"], "--max-connections");
}

/// `a2a serve` raises its open file limit to the hard one: a descriptor per connection, and a
/// soft limit of 1024 (the usual default) would refuse connections long before --max-connections.
#[cfg(target_os = "linux")]
#[test]
fn the_open_file_limit_is_raised_to_the_hard_one() {
    let mut child = Command::new("bash")
        .args(["-c", "ulimit -Sn 64 && exec \"$0\" serve --store memory --port 0", env!("CARGO_BIN_EXE_a2a")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let limits = format!("/proc/{}/limits", child.id());
    let exe = format!("/proc/{}/exe", child.id());
    let open_files = || -> Option<(String, String)> {
        // Only once bash has exec'd the server (before, the limits are bash's, unlowered at first).
        std::fs::read_link(&exe).ok().filter(|p| p.ends_with("a2a"))?;
        let text = std::fs::read_to_string(&limits).ok()?;
        let line = text.lines().find(|l| l.starts_with("Max open files"))?;
        let mut values = line["Max open files".len()..].split_whitespace();
        Some((values.next()?.to_owned(), values.next()?.to_owned()))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut seen = None;
    while std::time::Instant::now() < deadline {
        seen = open_files();
        if seen.as_ref().is_some_and(|(soft, hard)| soft == hard) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let (soft, hard) = seen.expect("the server's limits");
    assert_eq!(soft, hard, "soft open file limit not raised");
    assert_ne!(soft, "64");
}

/// A webhook on loopback that answers every delivery 503; counts the deliveries it saw.
fn failing_webhook() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut reader = BufReader::new(conn);
            let (mut line, mut length) = (String::new(), 0usize);
            // The head, then the body its Content-Length announces.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                line.clear();
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok() {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (url, hits)
}

/// `--push-max-attempts` and the backoff flags decide how often a failing webhook is tried.
#[test]
fn push_retries_follow_the_push_flags() {
    use std::sync::atomic::Ordering;
    let deliveries = |flags: &[&str]| {
        let (hook, hits) = failing_webhook();
        let mut args = vec!["--store", "memory", "--allow-private-webhooks=127.0.0.1"];
        args.extend_from_slice(flags);
        let server = serve(&args);
        let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]});
        let configuration = json!({"taskPushNotificationConfig": {"url": hook}});
        let sent = server.rpc("SendMessage", json!({"message": message, "configuration": configuration}));
        assert!(sent.get("result").is_some(), "{sent}");
        // Done when no attempt came for 800 ms (the retries wait 20 ms), or after 15 s.
        let (mut last, mut quiet_since) = (0, std::time::Instant::now());
        let start = std::time::Instant::now();
        while quiet_since.elapsed() < Duration::from_millis(800) && start.elapsed() < Duration::from_secs(15) {
            std::thread::sleep(Duration::from_millis(50));
            let now = hits.load(Ordering::SeqCst);
            if now != last || now == 0 {
                (last, quiet_since) = (now, std::time::Instant::now());
            }
        }
        assert!(server.stop().success());
        hits.load(Ordering::SeqCst)
    };
    let fast = ["--push-initial-backoff", "0.02", "--push-max-backoff", "0.02"];
    // Each of the echo task's notifications tried once, then 6 times.
    let once = deliveries(&[&fast[..], &["--push-max-attempts", "1"]].concat());
    assert!(once > 0);
    assert_eq!(deliveries(&[&fast[..], &["--push-max-attempts", "6"]].concat()), 6 * once);
    serve_refuses(&["--push-max-attempts", "0"], "--push-max-attempts");
    serve_refuses(&["--push-timeout", "0"], "--push-timeout");
    serve_refuses(&["--push-initial-backoff", "2", "--push-max-backoff", "1"], "--push-max-backoff");
}

/// `a2a validate`: the canonical form of a valid document; unknown members warned of (or, with
/// `--strict`, refused); a document missing a required field refused naming it.
#[test]
fn validate_prints_the_canonical_form_and_names_unknown_fields() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let file = |name: &str, doc: Value| {
        let path = dir.join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let good = file("good.json", json!({"message_id": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}));
    let (code, out, err) = a2a(&["validate", "Message", &good]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["messageId"], "m", "{out}");
    assert!(err.is_empty(), "{err}");

    let typo = file(
        "typo.json",
        json!({"messageId": "m", "role": "ROLE_USER", "contxtId": "c", "parts": [{"text": "hi", "mediaTyp": "x"}]}),
    );
    let (code, out, err) = a2a(&["validate", "Message", &typo]);
    assert_eq!(code, 0, "{err}");
    assert!(serde_json::from_str::<Value>(&out).unwrap().get("contxtId").is_none(), "{out}");
    assert!(err.contains("warning: Message has no field `contxtId`"), "{err}");
    assert!(err.contains("`parts[0].mediaTyp`"), "{err}");
    let (code, out, err) = a2a(&["validate", "Message", &typo, "--strict"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("error: Message has no field `contxtId`"), "{err}");

    let missing = file("missing.json", json!({"role": "ROLE_USER", "parts": []}));
    let (code, _, err) = a2a(&["validate", "Message", &missing]);
    assert_eq!(code, 1);
    assert!(err.contains("messageId"), "{err}");
    // A refusal whose likely cause is a misspelling names it too.
    let misspelt = file("misspelt.json", json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"txt": "hi"}]}));
    let (code, _, err) = a2a(&["validate", "Message", &misspelt]);
    assert_eq!(code, 1);
    assert!(err.contains("`parts[0].txt`") && err.contains("exactly one of text"), "{err}");
    let (code, _, err) = a2a(&["validate", "Message", &dir.join("absent.json").to_string_lossy()]);
    assert_eq!(code, 2, "{err}");
    // A member given twice: readers differ on which counts, so it is named (and refused strictly).
    let twice = dir.join("twice.json");
    std::fs::write(&twice, r#"{"messageId":"a","role":"ROLE_USER","parts":[{"text":"x","text":"y"}],"messageId":"b"}"#)
        .unwrap();
    let (code, out, err) = a2a(&["validate", "Message", &twice.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["messageId"], "b", "{out}");
    assert!(
        err.contains("warning: `parts[0].text` is given twice") && err.contains("`messageId` is given twice"),
        "{err}"
    );
    let (code, _, err) = a2a(&["validate", "Message", &twice.to_string_lossy(), "--strict"]);
    assert_eq!(code, 1);
    assert!(err.contains("error: `messageId` is given twice"), "{err}");
}

/// Output to a reader that has gone (`a2a list | head`) ends a command quietly with status 141,
/// as SIGPIPE would, while SIGPIPE itself stays ignored (a default SIGPIPE would kill the process
/// by the signal: no status): a client whose peer hangs up on its socket (a TLS server refusing
/// its certificate) died without a word in a write to that socket.
#[test]
fn a_closed_standard_output_ends_quietly_and_sigpipe_kills_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("m.json");
    std::fs::write(&file, r#"{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["validate", "Message", &file.to_string_lossy()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before anything is written
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{:?} {err}", out.status);
    assert!(err.is_empty(), "{err}");
}

/// An agent's text cannot drive the terminal: control characters in what the CLI prints (here
/// a card's name and description) are shown escaped, never written as they are.
#[test]
fn control_characters_from_an_agent_are_printed_escaped() {
    let card = json!({
        "name": "\u{1b}]0;PWNED\u{7}\u{1b}[2Jevil", "description": "line1\rOVERWRITE\nline2", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    });
    let url = json_server(card.to_string().into_bytes());
    let base = url.trim_end_matches("/jwks.json");
    let (code, out, err) = a2a(&["card", base]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('\u{1b}') && !out.contains('\r') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("\\u{1b}]0;PWNED\\u{7}\\u{1b}[2Jevil"), "{out}");
    assert!(out.contains("line1\\u{d}OVERWRITE\n"), "{out}");
}

/// Under a file-size limit (`ulimit -f`, systemd's `LimitFSIZE=`) a write past it fails, and
/// the server says so to the request; it was killed by SIGXFSZ at once, and again at the next
/// write after every restart.
#[test]
fn a_file_size_limit_fails_writes_instead_of_killing_the_server() {
    let temp = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", temp.path().join("tasks.db").display());
    let mut command = Command::new("sh");
    // 512 KiB (ulimit counts 1 KiB blocks in sh), then the server itself.
    command.args(["-c", r#"ulimit -f 512 && exec "$0" "$@""#, env!("CARGO_BIN_EXE_a2a"), "serve", "--store", &store]);
    let mut server = served(command);
    let text = "x".repeat(20_000);
    let mut refused = None;
    for i in 0..100 {
        let message = json!({"messageId": format!("m{i}"), "role": "ROLE_USER", "parts": [{"text": text}]});
        let (status, body) = server.request("POST", "/message:send", Some(json!({"message": message})));
        assert!(server.child.try_wait().unwrap().is_none(), "the server died at message {i}");
        if status != 200 {
            refused = Some((status, body));
            break;
        }
    }
    let (status, body) = refused.expect("the store never reached the limit");
    assert!(status >= 500, "{status}: {body}");
    // Still answering.
    let (status, _) = server.request("GET", "/.well-known/agent-card.json", None);
    assert_eq!(status, 200);
    assert!(server.stop().success());
}
