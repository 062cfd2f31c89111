//! Extension methods end to end: declared in the server's options, answered by the executor,
//! called by our client over JSON-RPC, HTTP+JSON and gRPC; and what is refused (core names, undeclared
//! extensions, unknown methods, a required extension not requested, an unauthenticated caller).
#![cfg(all(feature = "server", feature = "client"))]

use crate::support::agent::TestAgent;
use a2a_native::client::{Binding, CardCache, Client};
use a2a_native::methods::MethodSpec;
use a2a_native::server::host::{HostedServer, ServerOptions};
use a2a_native::{A2AError, ErrorKind};
use serde_json::{Value, json};
use std::sync::Arc;

const SEARCH: &str = "https://example.com/ext/task-search/v1";
const AUDIT: &str = "https://example.com/ext/audit/v1";

/// Answers `tasks/search` with what it was given, and `audit/log` with an error of the table.
fn agent() -> Arc<TestAgent> {
    Arc::new(TestAgent::new().otherwise([]).answering(|call| match call.method.as_str() {
        "tasks/search" => Ok(json!({
            "query": call.params["query"],
            "extension": call.extension,
            "principal": call.principal.map(|p| p.name),
            "activated": call.extensions,
            "tenant": call.tenant,
        })),
        "audit/log" => Err(A2AError::task_not_found("t-missing")),
        other => Err(A2AError::method_not_found(other)),
    }))
}

fn card(required_audit: bool) -> Value {
    json!({
        "name": "ext", "description": "serves extension methods", "version": "1",
        "capabilities": {"extensions": [
            {"uri": SEARCH, "description": "search tasks"},
            {"uri": AUDIT, "required": required_audit},
        ]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    })
}

fn methods() -> Vec<MethodSpec> {
    vec![
        MethodSpec { name: "tasks/search".into(), extension: SEARCH.into(), path: None },
        MethodSpec { name: "audit/log".into(), extension: AUDIT.into(), path: Some("/audit:log".into()) },
        // Its tenanted reading, `/tasks` + `/search:cancel`, is also CancelTask's path.
        MethodSpec { name: "search:cancel".into(), extension: SEARCH.into(), path: None },
    ]
}

async fn serve(options: ServerOptions, required_audit: bool) -> HostedServer {
    let server = HostedServer::new(card(required_audit), ServerOptions { methods: methods(), ..options }).unwrap();
    server.start(agent(), "127.0.0.1", 0).await.unwrap();
    server
}

#[tokio::test]
async fn our_client_calls_them_over_every_binding() {
    let server = serve(ServerOptions::default(), false).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .connect(&server.url().unwrap())
            .await
            .unwrap();
        assert_eq!(client.binding(), binding);
        let reply = client.call_method("tasks/search", json!({"query": "open"}), &[SEARCH.into()]).await.unwrap();
        assert_eq!(reply.result["query"], "open", "{binding:?}");
        assert_eq!(reply.result["extension"], SEARCH);
        assert_eq!(reply.result["activated"], json!([SEARCH]));
        assert_eq!(reply.activated, vec![SEARCH.to_owned()], "{binding:?}");
        // Not requested: calling the method activates its (optional) extension all the same.
        let reply = client.call_method("tasks/search", json!({"query": "x"}), &[]).await.unwrap();
        assert_eq!(reply.activated, vec![SEARCH.to_owned()]);
        // An error from the one table reaches the client as that error.
        let e = client.call_method("audit/log", json!({}), &[]).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::TaskNotFound, "{binding:?}: {e}");
        let e = client.call_method("tasks/nosuch", json!({}), &[]).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::MethodNotFound, "{binding:?}: {e}");
        // Any JSON travels as params and result (over gRPC as google.protobuf.Value).
        let odd = json!({"query": [1, 2.5, null, true, {"nested": "x"}]});
        let reply = client.call_method("tasks/search", odd.clone(), &[]).await.unwrap();
        assert_eq!(reply.result["query"], odd["query"], "{binding:?}");
    }
    // The declared HTTP+JSON path, by hand.
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("{}/audit:log", server.url().unwrap()))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert!(body.to_string().contains("t-missing"), "the method's own error: {body}");
    // Under a tenant prefix, as the core routes: percent-decoded; another tenant in the body is refused.
    let post = |path: &str, body: &'static str| {
        http.post(format!("{}{path}", server.url().unwrap())).header("content-type", "application/json").body(body)
    };
    let resp = post("/ac%20me/tasks/search", r#"{"query": "q"}"#).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!((&body["tenant"], &body["query"]), (&json!("ac me"), &json!("q")), "{body}");
    let resp = post("/acme/tasks/search", r#"{"query": "q", "tenant": "other"}"#).send().await.unwrap();
    assert_eq!(resp.status(), 400);
    // A core route is never read as a tenanted extension method: this is CancelTask of task
    // `search` (not found), not `search:cancel` for tenant `tasks`.
    let resp = post("/tasks/search:cancel", "{}").send().await.unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert!(body.to_string().contains("TASK_NOT_FOUND"), "{body}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn unknown_methods_and_missing_required_extensions_get_the_spec_errors() {
    let server = serve(ServerOptions::default(), true).await;
    let url = server.url().unwrap();
    let rpc = |method: &str, extensions: Option<&str>| {
        let mut req = reqwest::Client::new()
            .post(format!("{url}/"))
            .header("a2a-version", "1.0")
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {"query": "q"}}).to_string());
        if let Some(e) = extensions {
            req = req.header("A2A-Extensions", e);
        }
        async move {
            let resp = req.send().await.unwrap();
            let echoed = resp.headers().get("a2a-extensions").map(|v| v.to_str().unwrap().to_owned());
            (serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).unwrap(), echoed)
        }
    };
    let (body, _) = rpc("tasks/nosuch", Some(AUDIT)).await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    // AUDIT is required: any call without it is ExtensionSupportRequired, this one included.
    let (body, echoed) = rpc("tasks/search", None).await;
    assert_eq!(body["error"]["code"], -32008, "{body}");
    // Refused before it was made: the call activated nothing.
    assert_eq!(echoed, None);
    let (body, echoed) = rpc("tasks/search", Some(AUDIT)).await;
    assert_eq!(body["result"]["query"], "q", "{body}");
    assert_eq!(body["id"], 7);
    let echoed = echoed.unwrap();
    assert!(echoed.contains(AUDIT) && echoed.contains(SEARCH), "{echoed}");
    // The same over gRPC: unknown is UNIMPLEMENTED, a missing required extension is refused.
    let grpc = |extensions: Vec<String>| async {
        let client = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(Binding::Grpc)
            .extensions(extensions)
            .connect(&url)
            .await
            .unwrap();
        assert_eq!(client.binding(), Binding::Grpc);
        client
    };
    let client = grpc(vec![]).await;
    let e = client.call_method("tasks/search", json!({}), &[]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ExtensionSupportRequired, "{e}");
    let client = grpc(vec![AUDIT.into()]).await;
    let e = client.call_method("tasks/nosuch", json!({}), &[]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::MethodNotFound, "{e}");
    let reply = client.call_method("tasks/search", json!({"query": "g"}), &[]).await.unwrap();
    assert_eq!(reply.result["query"], "g");
    assert!(reply.activated.contains(&AUDIT.to_owned()) && reply.activated.contains(&SEARCH.to_owned()));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn authentication_applies_to_them() {
    let options = ServerOptions::from_value(json!({"bearerTokens": {"s3cret": "alice"}})).unwrap();
    let server = serve(options, false).await;
    let url = server.url().unwrap();
    let call = |token: Option<&str>| {
        let mut req = reqwest::Client::new()
            .post(format!("{url}/"))
            .header("a2a-version", "1.0")
            .header("content-type", "application/json")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/search", "params": {"query": "mine"}}).to_string(),
            );
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            (status, serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).unwrap())
        }
    };
    let (status, body) = call(None).await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = call(Some("s3cret")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["principal"], "alice");
    server.stop().await.unwrap();
}

#[test]
fn declarations_that_cannot_be_served_are_refused_when_the_server_is_made() {
    let refused = |m: MethodSpec, field: &str| {
        let Err(e) = HostedServer::new(card(false), ServerOptions { methods: vec![m.clone()], ..Default::default() })
        else {
            panic!("{m:?} accepted")
        };
        assert_eq!(e.kind, ErrorKind::InvalidParams, "{m:?}");
        assert!(e.message.contains(field), "{m:?}: {}", e.message);
    };
    let spec = |name: &str, extension: &str, path: Option<&str>| MethodSpec {
        name: name.into(),
        extension: extension.into(),
        path: path.map(Into::into),
    };
    refused(spec("SendMessage", SEARCH, None), "core A2A method");
    refused(spec("message/send", SEARCH, None), "core A2A method");
    refused(spec("tasks/search", "urn:not-declared", None), "do not declare");
    refused(spec("tasks/search", SEARCH, Some("/message:send")), "core HTTP+JSON route");
    refused(spec("has space", SEARCH, None), "name");
    // Reachable nowhere: the JSON-RPC endpoint and the card's paths answer there.
    refused(spec("tasks/search", SEARCH, Some("/")), "core HTTP+JSON route");
    refused(spec("tasks/search", SEARCH, Some("/.well-known/agent-card.json")), "core HTTP+JSON route");
    refused(spec(".well-known/agent.json", SEARCH, None), "core HTTP+JSON route");
    // JSON-RPC 2.0 §4 keeps `rpc.` names for itself.
    refused(spec("rpc.discover", SEARCH, None), "JSON-RPC's own");
    let profiles = ServerOptions { profile_checks: vec![SEARCH.into(), SEARCH.into()], ..Default::default() };
    let Err(e) = HostedServer::new(card(false), profiles) else { panic!("two checks of one extension accepted") };
    assert!(e.message.contains("one check per extension"), "{e}");
    let twice = ServerOptions {
        methods: vec![spec("a/b", SEARCH, None), spec("a/b", AUDIT, Some("/x"))],
        ..Default::default()
    };
    assert!(HostedServer::new(card(false), twice).is_err());
    // Read strictly from JSON, as every binding's options are.
    let e = ServerOptions::from_value(json!({"methods": [{"name": "a/b", "extension": SEARCH, "handler": 1}]}))
        .unwrap_err();
    assert!(e.message.contains("handler"), "{}", e.message);
}

/// A profile extension's rule, checked by the executor: a message with it carries a data part.
/// Passive, so that only the server can mark the passed profile active.
fn profiled() -> Arc<TestAgent> {
    Arc::new(TestAgent::new().passive().checking(|check| {
        if check.message.parts.iter().any(|p| matches!(p.content, a2a_native::model::PartContent::Data(_))) {
            Ok(())
        } else {
            Err(a2a_native::methods::profile_violation(&check.extension, "a message carries a data part"))
        }
    }))
}

#[tokio::test]
async fn a_profile_check_refuses_a_message_before_any_task_is_made() {
    let options = ServerOptions { profile_checks: vec![SEARCH.into()], ..Default::default() };
    let server = HostedServer::new(card(false), options).unwrap();
    server.start(profiled(), "127.0.0.1", 0).await.unwrap();
    let url = server.url().unwrap();
    let send = |parts: Value, extensions: &'static str| {
        let req = reqwest::Client::new()
            .post(format!("{url}/"))
            .header("a2a-version", "1.0")
            .header("content-type", "application/json")
            .header("a2a-extensions", extensions)
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": {"role": "ROLE_USER", "messageId": "m", "parts": parts}}})
                .to_string(),
            );
        async move {
            let resp = req.send().await.unwrap();
            let echoed = resp.headers().get("a2a-extensions").map(|v| v.to_str().unwrap().to_owned());
            (serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).unwrap(), echoed)
        }
    };
    let (body, _) = send(json!([{"text": "no data"}]), SEARCH).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(SEARCH) && message.contains("data part"), "{message}");
    let (body, echoed) = send(json!([{"data": {"k": 1}}]), SEARCH).await;
    assert_eq!(body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{body}");
    assert_eq!(echoed.as_deref(), Some(SEARCH), "a passed profile is active");
    // Not asked for: its rules do not apply.
    let (body, _) = send(json!([{"text": "no data"}]), "urn:other").await;
    assert_eq!(body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{body}");
    server.stop().await.unwrap();
    // A profile of an undeclared extension is refused when the server is made.
    let options = ServerOptions { profile_checks: vec!["urn:undeclared".into()], ..Default::default() };
    assert!(HostedServer::new(card(false), options).is_err());
}

/// A start whose caller gives up half way (here: before the SQLite store has opened) gives its
/// claim back: the next start succeeds instead of "already running" for ever.
#[tokio::test]
async fn a_start_given_up_half_way_leaves_the_server_startable() {
    let dir = std::env::temp_dir().join(format!("a2a-host-start-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("t.db").display());
    let server = HostedServer::new(card(false), ServerOptions { store: Some(store), ..Default::default() }).unwrap();
    let given_up = tokio::time::timeout(std::time::Duration::ZERO, server.start(agent(), "127.0.0.1", 0)).await;
    assert!(given_up.is_err(), "the start finished within its first poll: nothing was given up");
    server.start(agent(), "127.0.0.1", 0).await.unwrap();
    server.stop().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// JSON-RPC 2.0 §4.2: an extension method's params, when present, are an object or an array
/// (a string reached the handler).
#[tokio::test]
async fn an_extension_methods_params_are_structured() {
    let server = serve(ServerOptions::default(), false).await;
    let url = server.url().unwrap();
    let call = |params: Value| {
        let req = reqwest::Client::new()
            .post(format!("{url}/"))
            .header("a2a-version", "1.0")
            .header("a2a-extensions", SEARCH)
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/search", "params": params}).to_string());
        async move { serde_json::from_slice::<Value>(&req.send().await.unwrap().bytes().await.unwrap()).unwrap() }
    };
    let refused = call(json!("x")).await;
    assert_eq!((refused["id"].as_i64(), refused["error"]["code"].as_i64()), (Some(3), Some(-32600)), "{refused}");
    let taken = call(json!({"query": "q"})).await;
    assert!(taken.get("result").is_some(), "{taken}");
    server.stop().await.unwrap();
}
