//! Signed push notifications end to end: our server signs each notification (JWT with the body
//! hash), publishes its JWKS, and the receiver-side PushVerifier accepts the genuine deliveries
//! and refuses replays, altered bodies, other audiences, wrong tokens and unsigned posts.

use crate::support;
use a2a_native::client::{PushVerifier, PushVerifierOptions};

use a2a_native::model;
use a2a_native::push::{JWKS_PATH, PushSigner};
use a2a_native::server::{RequestHandler, Server, ServerConfig, Stores};
use http::{HeaderMap, HeaderName, HeaderValue};
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::agent::{Step, TestAgent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type Posts = Arc<Mutex<Vec<(HeaderMap, Vec<u8>)>>>;

/// A webhook on loopback recording each POST's headers and exact body.
async fn receiver() -> (String, Posts) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let posts: Posts = Arc::default();
    let log = posts.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else { return };
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let mut headers = HeaderMap::new();
                for line in head.lines().skip(1).filter(|l| !l.is_empty()) {
                    if let Some((k, v)) = line.split_once(':') {
                        headers
                            .append(HeaderName::try_from(k.trim()).unwrap(), HeaderValue::try_from(v.trim()).unwrap());
                    }
                }
                let len: usize = headers.get("content-length").and_then(|v| v.to_str().ok()?.parse().ok()).unwrap_or(0);
                while buf.len() < head_end + len {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                log.lock().unwrap().push((headers, buf[head_end..head_end + len].to_vec()));
                let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            });
        }
    });
    (url, posts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_are_signed_and_verified_by_the_receiver() {
    let (hook, posts) = receiver().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let pem = std::fs::read(format!("{}/tests/fixtures/jwt-ec.pem", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let signer = PushSigner::from_pem(&pem, Algorithm::ES256, "push-1", base.clone()).unwrap();
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    config.push.signer = Some(Arc::new(signer));
    let card = model::parse_value(json!({
        "name": "pusher", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"pushNotifications": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap();
    // Two notifications: WORKING, then COMPLETED.
    let agent = TestAgent::new().otherwise([Step::working(), Step::complete()]);
    let metrics = config.metrics.clone();
    let handler = RequestHandler::new(Arc::new(agent), card, Stores::memory(), config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async {
        let _ = stopped.await;
    }));

    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "tok-123"}}
    }});
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(send.to_string())
        .send()
        .await
        .unwrap();
    let reply: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    let task_id = reply["result"]["task"]["id"].as_str().expect("a task").to_owned();

    for _ in 0..100 {
        if posts.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let posts = posts.lock().unwrap().clone();
    assert!(posts.len() >= 2, "got {} notifications", posts.len());
    // Every delivery is counted as a metric too (the receiver answers before it is counted).
    let delivered = || {
        let text = metrics.encode();
        let prefix = r#"a2a_push_notifications_total{outcome="delivered"} "#;
        text.lines().find_map(|l| l.strip_prefix(prefix)).map_or(0, |v| v.parse::<usize>().unwrap())
    };
    for _ in 0..50 {
        if delivered() >= posts.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(delivered() >= posts.len(), "{}", metrics.encode());

    let keys = a2a_native::client::fetch_jwks(&format!("{base}{JWKS_PATH}")).await.unwrap();
    assert!(keys.usable("push-1").is_ok(), "the served JWKS has the signer's key");
    let verifier = PushVerifier::new(keys.clone(), hook.clone()).with_issuer(base.clone()).with_token("tok-123");
    let mut jtis = Vec::new();
    for (headers, body) in &posts {
        let v = verifier.verify(headers, body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)));
        assert_eq!(v.task_id, task_id);
        jtis.push(v.jti);
    }
    jtis.dedup();
    assert_eq!(jtis.len(), posts.len(), "one jti per notification");

    let (headers, body) = &posts[0];
    let why = |r: a2a_native::Result<_>| r.expect_err("refused").message;
    assert!(why(verifier.verify(headers, body)).contains("replayed"));
    let fresh = || PushVerifier::new(keys.clone(), hook.clone()).with_issuer(base.clone());
    let mut altered = body.clone();
    altered.extend_from_slice(b" ");
    assert!(why(fresh().verify(headers, &altered)).contains("body"));
    assert!(why(PushVerifier::new(keys.clone(), "http://elsewhere/hook").verify(headers, body)).contains("not valid"));
    assert!(why(fresh().with_issuer("http://impostor").verify(headers, body)).contains("not valid"));
    assert!(why(fresh().with_token("other").verify(headers, body)).contains("token"));
    let mut unsigned = headers.clone();
    unsigned.remove("a2a-notification-signature");
    assert!(why(fresh().verify(&unsigned, body)).contains("not signed"));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(why(fresh().with_max_age(Duration::ZERO).verify(headers, body)).contains("stale"));
    // A verifier that has not seen it accepts the genuine delivery.
    assert!(fresh().with_token("tok-123").verify(headers, body).is_ok());

    // The same verifier as every binding describes it: JSON options, `maxAge` in seconds,
    // headers as (name, value) pairs in any case.
    let jwks_body = http.get(format!("{base}{JWKS_PATH}")).send().await.unwrap().bytes().await.unwrap();
    let jwks: Value = serde_json::from_slice(&jwks_body).unwrap();
    let described = |extra: Value| {
        let mut options = json!({"jwks": jwks, "audience": hook, "issuer": base, "token": "tok-123"});
        options.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        PushVerifierOptions::from_value(options).and_then(PushVerifierOptions::verifier)
    };
    let pairs = || headers.iter().map(|(k, v)| (k.as_str().to_uppercase(), v.to_str().unwrap().to_owned()));
    // Over a second old and fresh at 60: the unit is seconds (60 ms would be stale).
    let verified = described(json!({"maxAge": 60})).unwrap().verify_pairs(pairs(), body).unwrap();
    assert_eq!(verified.task_id, task_id);
    assert_eq!(serde_json::to_value(&verified).unwrap()["taskId"], task_id.as_str());
    let refused = described(json!({"maxAgeMs": 5})).err().expect("an unknown option is refused");
    assert_eq!(refused.kind, a2a_native::error::ErrorKind::InvalidParams);
    assert!(refused.message.contains("maxAgeMs"), "{}", refused.message);
    // `iat` counts whole seconds: a window under one second (or over 30 days) is refused.
    for bad in [
        json!({"maxAge": 0}),
        json!({"maxAge": 0.5}),
        json!({"maxAge": -1}),
        json!({"maxAge": 1e19}),
        json!({"token": 5}),
    ] {
        let e = described(bad.clone()).err().unwrap_or_else(|| panic!("{bad} accepted"));
        assert_eq!(e.kind, a2a_native::error::ErrorKind::InvalidParams, "{bad}: {e}");
    }
    let bad_header = described(json!({})).unwrap().verify_pairs([("bad name".to_owned(), "x".to_owned())], body);
    assert_eq!(bad_header.unwrap_err().kind, a2a_native::error::ErrorKind::InvalidParams);

    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// Signs notifications for `HOOK` with the test key (kid `k1`), the header and claims edited
/// by each test; `verifier` checks them.
struct Signed {
    key: jsonwebtoken::EncodingKey,
    verifier: PushVerifier,
    now: u64,
}

const HOOK: &str = "http://127.0.0.1:9/hook";
const BODY: &[u8] = br#"{"task":{}}"#;

impl Signed {
    fn new() -> Self {
        let pem = std::fs::read(format!("{}/tests/fixtures/jwt-ec.pem", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let key = jsonwebtoken::EncodingKey::from_ec_pem(&pem).unwrap();
        let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some("k1".into());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        Self { key, verifier: PushVerifier::new(jsonwebtoken::jwk::JwkSet { keys: vec![jwk] }, HOOK), now }
    }

    /// The headers of a notification of `BODY` signed with these edits of the usual token.
    fn delivery(&self, edit: impl FnOnce(&mut jsonwebtoken::Header, &mut serde_json::Value)) -> HeaderMap {
        let mut header = jsonwebtoken::Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        let mut claims = json!({"aud": HOOK, "iat": self.now, "exp": self.now + 60, "jti": "j", "taskId": "t1",
            "bodySha256": a2a_native::signing::body_digest(BODY)});
        edit(&mut header, &mut claims);
        let token = jsonwebtoken::encode(&header, &claims, &self.key).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("a2a-notification-signature", HeaderValue::from_str(&token).unwrap());
        headers
    }
}

/// A notification token whose header names critical extensions is refused (RFC 7515 §4.1.11: a
/// reader refuses those it does not implement), as the server's JWT check refuses such tokens;
/// the same token without them verifies.
#[test]
fn a_signature_naming_critical_extensions_is_refused() {
    let s = Signed::new();
    let crit = s.delivery(|h, c| {
        h.crit = Some(vec!["urn:x-unknown".into()]);
        c["jti"] = json!("j1");
    });
    let refused = s.verifier.verify(&crit, BODY).unwrap_err();
    assert_eq!(refused.kind, a2a_native::ErrorKind::Unauthenticated);
    assert!(refused.message.contains("crit"), "{}", refused.message);
    assert_eq!(s.verifier.verify(&s.delivery(|_, c| c["jti"] = json!("j2")), BODY).unwrap().task_id, "t1");
}

/// A signature without a usable `jti` (missing, empty, not a string) is refused: accepted, it
/// made every such notification the same replay, and the first one went through unchecked.
#[test]
fn a_signature_without_a_string_jti_is_refused() {
    let s = Signed::new();
    for jti in [None, Some(json!("")), Some(json!(7))] {
        let delivery = s.delivery(|_, c| match jti.clone() {
            Some(jti) => c["jti"] = jti,
            None => drop(c.as_object_mut().unwrap().remove("jti")),
        });
        let refused = s.verifier.verify(&delivery, BODY).unwrap_err();
        assert_eq!(refused.kind, a2a_native::ErrorKind::Unauthenticated, "{jti:?}");
    }
    assert_eq!(s.verifier.verify(&s.delivery(|_, c| c["jti"] = json!("j1")), BODY).unwrap().jti, "j1");
}
