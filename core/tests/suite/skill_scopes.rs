//! Scopes per skill over real HTTP, on both bindings: a caller whose scopes meet a skill's
//! `securityRequirements` may send messages and its executor sees the skill id; a caller who
//! may use no skill gets 403 PermissionDenied (401 when anonymous); skills without requirements
//! stay open; the extended card lists only the caller's skills and is signed again.

use crate::support;

use a2a_native::auth::KeySet;
use a2a_native::model::{self, AgentCard, TaskState};
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores};
use a2a_native::signing::{CardSigner, verify_card};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use std::sync::Arc;
use support::agent::{Step, TestAgent};
use tokio::net::TcpListener;

/// Completes with the ids of the skills the caller may use, comma-separated.
fn skills_agent() -> Arc<TestAgent> {
    Arc::new(TestAgent::new().otherwise([Step::status(TaskState::Completed, "{skills}")]))
}

fn skill(id: &str, requirements: Value) -> Value {
    json!({"id": id, "name": id, "description": "d", "tags": ["t"], "securityRequirements": requirements})
}

fn card(base: &str, skills: Value, requirements: Value) -> AgentCard {
    model::parse_value(json!({
        "name": "scoped agent", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": skills,
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        "securityRequirements": requirements
    }))
    .unwrap()
}

fn tokens() -> BearerTokens {
    let who = |name: &str, scopes: &[&str]| Principal::named(name, scopes.iter().map(|s| (*s).to_owned()).collect());
    BearerTokens::new()
        .with_token("t-translate", who("translator", &["translate"]))
        .with_token("t-admin", who("admin", &["admin"]))
        .with_token("t-both", who("both", &["translate", "reports", "ops"]))
        .with_token("t-none", who("nobody", &[]))
}

struct Running {
    base: String,
    http: reqwest::Client,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(make: impl FnOnce(&str) -> RequestHandler) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handler = make(&base);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async {
        let _ = stopped.await;
    }));
    Running { base, http: reqwest::Client::new(), stop, serving }
}

impl Running {
    /// A JSON-RPC call: (HTTP status, body).
    async fn rpc(&self, method: &str, params: Value, token: Option<&str>) -> (u16, Value) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.send(self.http.post(format!("{}/", self.base)).body(body.to_string()), token).await
    }

    /// An HTTP+JSON call: (HTTP status, body; SSE bodies as a JSON string).
    async fn rest(&self, method: http::Method, path: &str, body: Option<Value>, token: Option<&str>) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            req = req.body(body.to_string());
        }
        self.send(req, token).await
    }

    async fn send(&self, mut req: reqwest::RequestBuilder, token: Option<&str>) -> (u16, Value) {
        req = req.header("A2A-Version", "1.0").header("content-type", "application/json");
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.serving.await.unwrap().unwrap();
    }
}

fn send_params() -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

fn signer_key() -> (Arc<CardSigner>, JwkSet) {
    let pem = std::fs::read(format!("{}/tests/fixtures/jwt-ec.pem", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut jwk = Jwk::from_encoding_key(&EncodingKey::from_ec_pem(&pem).unwrap(), Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("card-1".into());
    (Arc::new(CardSigner::from_pem(&pem, Algorithm::ES256, "card-1").unwrap()), JwkSet { keys: vec![jwk] })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_skill_scoped_callers_need_one_and_see_theirs() {
    let (signer, keys) = signer_key();
    let bearer = json!([{"schemes": {"bearer": {"list": []}}}]);
    let skills = json!([
        skill("translate", json!([{"schemes": {"bearer": {"list": ["translate"]}}}])),
        // admin, or ops and audit together.
        skill(
            "admin",
            json!([{"schemes": {"bearer": {"list": ["admin"]}}}, {"schemes": {"bearer": {"list": ["ops", "audit"]}}}])
        ),
    ]);
    let server = start(|base| {
        let public = card(base, skills.clone(), bearer.clone());
        let mut extended = public.clone();
        extended.skills.push(
            model::parse_value(skill("reports", json!([{"schemes": {"bearer": {"list": ["reports"]}}}]))).unwrap(),
        );
        signer.sign(&mut extended).unwrap();
        RequestHandler::new(skills_agent(), public, Stores::memory(), ServerConfig::default())
            .with_extended_card(extended)
            .with_authenticator(Arc::new(tokens()))
            .with_card_signer(signer.clone())
    })
    .await;
    // The agent's answer in a Task (JSON-RPC: under `result`; HTTP+JSON: the body itself).
    let text = |task: &Value| task["task"]["status"]["message"]["parts"][0]["text"].clone();

    // A caller with a skill's scope: served, and the executor sees that skill only.
    let (status, body) = server.rpc("SendMessage", send_params(), Some("t-translate")).await;
    assert_eq!((status, text(&body["result"])), (200, json!("translate")), "{body}");
    let (status, body) = server.rest(http::Method::POST, "/message:send", Some(send_params()), Some("t-admin")).await;
    assert_eq!((status, text(&body)), (200, json!("admin")), "{body}");
    let (status, body) = server.rpc("SendStreamingMessage", send_params(), Some("t-both")).await;
    assert_eq!(status, 200);
    assert!(body.as_str().unwrap().contains(r#""text":"translate,reports""#), "{body}");

    // A caller who may use none of them: 403 on both bindings, streaming or not, naming the scopes.
    for method in ["SendMessage", "SendStreamingMessage"] {
        let (status, body) = server.rpc(method, send_params(), Some("t-none")).await;
        assert_eq!((status, body["error"]["code"].as_i64()), (403, Some(-31403)), "{method}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("translate: translate") && message.contains("admin: admin or ops audit"), "{message}");
        // A skill only the extended card lists stays hidden from a caller refused that card.
        assert!(!message.contains("reports"), "{message}");
    }
    for path in ["/message:send", "/message:stream"] {
        let (status, body) = server.rest(http::Method::POST, path, Some(send_params()), Some("t-none")).await;
        assert_eq!((status, body["error"]["status"].as_str()), (403, Some("PERMISSION_DENIED")), "{path}: {body}");
    }
    // Anonymous callers were already refused by the card's own requirement.
    assert_eq!(server.rpc("SendMessage", send_params(), None).await.0, 401);

    // The extended card lists the caller's skills only, and is signed for what it now says.
    let ids = |card: &Value| {
        card["skills"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect::<Vec<String>>()
    };
    for (token, expected) in
        [("t-translate", vec!["translate"]), ("t-admin", vec!["admin"]), ("t-both", vec!["translate", "reports"])]
    {
        let expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        let (status, body) = server.rpc("GetExtendedAgentCard", json!({}), Some(token)).await;
        assert_eq!((status, ids(&body["result"])), (200, expected.clone()), "{token}: {body}");
        let (status, rest) = server.rest(http::Method::GET, "/extendedAgentCard", None, Some(token)).await;
        assert_eq!((status, ids(&rest)), (200, expected), "{token}: {rest}");
        let card: AgentCard = model::parse_value(rest).unwrap();
        assert_eq!(card.signatures.len(), 1, "{token}");
        verify_card(&card, &KeySet::from(keys.clone()), &[Algorithm::ES256]).unwrap_or_else(|e| panic!("{token}: {e}"));
    }
    // A card needs a skill: a caller who may use none gets the extended card no more than a reply.
    assert_eq!(server.rpc("GetExtendedAgentCard", json!({}), Some("t-none")).await.0, 403);
    assert_eq!(server.rest(http::Method::GET, "/extendedAgentCard", None, Some("t-none")).await.0, 403);
    server.stop().await;
}

/// The card's own requirements, scopes included, hold for every call on every binding (the
/// card itself stays public): a caller without them is refused 403 naming them, anonymous 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cards_own_scopes_hold_for_every_call() {
    // admin, or ops and reports together.
    let requirements =
        json!([{"schemes": {"bearer": {"list": ["admin"]}}}, {"schemes": {"bearer": {"list": ["ops", "reports"]}}}]);
    let skills = json!([skill("translate", json!([]))]);
    let server = start(|base| {
        RequestHandler::new(
            skills_agent(),
            card(base, skills.clone(), requirements.clone()),
            Stores::memory(),
            ServerConfig::default(),
        )
        .with_authenticator(Arc::new(tokens()))
    })
    .await;
    for token in ["t-admin", "t-both"] {
        let (status, body) = server.rpc("SendMessage", send_params(), Some(token)).await;
        assert_eq!(status, 200, "{token}: {body}");
        assert_eq!(server.rest(http::Method::GET, "/tasks", None, Some(token)).await.0, 200, "{token}");
    }
    for token in ["t-translate", "t-none"] {
        for method in ["SendMessage", "ListTasks", "GetTask"] {
            let params = if method == "GetTask" {
                json!({"id": "x"})
            } else if method == "ListTasks" {
                json!({})
            } else {
                send_params()
            };
            let (status, body) = server.rpc(method, params, Some(token)).await;
            assert_eq!((status, body["error"]["code"].as_i64()), (403, Some(-31403)), "{token} {method}: {body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("admin or ops reports"), "{message}");
        }
        let (status, body) = server.rest(http::Method::GET, "/tasks", None, Some(token)).await;
        assert_eq!((status, body["error"]["status"].as_str()), (403, Some("PERMISSION_DENIED")), "{body}");
    }
    assert_eq!(server.rpc("ListTasks", json!({}), None).await.0, 401);
    // The card is public.
    assert_eq!(server.rest(http::Method::GET, "/.well-known/agent-card.json", None, None).await.0, 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_without_requirements_stay_open() {
    let skills = json!([
        skill("chat", json!([])),
        skill("translate", json!([{"schemes": {"bearer": {"list": ["translate"]}}}]))
    ]);
    // No card-level requirement: anonymous callers are admitted too.
    let server = start(|base| {
        RequestHandler::new(
            skills_agent(),
            card(base, skills.clone(), json!([])),
            Stores::memory(),
            ServerConfig::default(),
        )
        .with_authenticator(Arc::new(tokens()))
    })
    .await;
    let text = |body: &Value| body["result"]["task"]["status"]["message"]["parts"][0]["text"].clone();
    for (token, expected) in [(None, "chat"), (Some("t-none"), "chat"), (Some("t-translate"), "chat,translate")] {
        let (status, body) = server.rpc("SendMessage", send_params(), token).await;
        assert_eq!((status, text(&body)), (200, json!(expected)), "{token:?}: {body}");
    }
    let (status, body) = server.rest(http::Method::POST, "/message:send", Some(send_params()), None).await;
    assert_eq!((status, body["task"]["status"]["message"]["parts"][0]["text"].as_str()), (200, Some("chat")), "{body}");
    server.stop().await;

    // Every skill scoped and no card-level requirement: an anonymous caller must sign in (401).
    let scoped = json!([skill("translate", json!([{"schemes": {"bearer": {"list": ["translate"]}}}]))]);
    let server = start(|base| {
        RequestHandler::new(
            skills_agent(),
            card(base, scoped.clone(), json!([])),
            Stores::memory(),
            ServerConfig::default(),
        )
        .with_authenticator(Arc::new(tokens()))
    })
    .await;
    let (status, body) = server.rpc("SendMessage", send_params(), None).await;
    assert_eq!((status, body["error"]["code"].as_i64()), (401, Some(-31401)), "{body}");
    assert_eq!(server.rpc("SendMessage", send_params(), Some("t-none")).await.0, 403);
    assert_eq!(server.rpc("SendMessage", send_params(), Some("t-translate")).await.0, 200);
    server.stop().await;
}
