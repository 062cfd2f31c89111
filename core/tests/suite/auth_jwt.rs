//! Bearer JWTs against a JWKS served over real HTTP: each algorithm accepted, expired, early,
//! forged and misaddressed tokens refused, key rotation, fetch pacing, an oversized or endless
//! JWKS refused after 1 MiB, and scopes per operation (401 vs 403) through the server.
//! Keys: tests/fixtures (test-only).

use crate::support;

use a2a_native::model::{self, TaskState};
use a2a_native::server::{
    Authenticator, JwtBearer, JwtConfig, KeySource, RequestHandler, RequiredScopes, Server, ServerConfig, Stores,
};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::agent::{Step, TestAgent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const ISS: &str = "https://idp.test";
const AUD: &str = "a2a://agent";

fn key(file: &str, alg: Algorithm) -> EncodingKey {
    let pem = std::fs::read(format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(&pem),
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem),
        _ => EncodingKey::from_ed_pem(&pem),
    }
    .unwrap()
}

fn jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(key, alg).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

fn claims(sub: &str, scope: &str) -> Value {
    json!({"iss": ISS, "aud": AUD, "sub": sub, "scope": scope, "iat": now(), "exp": now() + 300})
}

fn sign(key: &EncodingKey, alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn bearer(token: &str) -> http::request::Parts {
    http::Request::builder().header("authorization", format!("Bearer {token}")).body(()).unwrap().into_parts().0
}

fn config() -> JwtConfig {
    JwtConfig {
        issuers: vec![ISS.into()],
        audiences: vec![AUD.into()],
        leeway: Duration::from_secs(30),
        ..JwtConfig::default()
    }
}

/// A JWKS endpoint on loopback whose key set (and HTTP status) can be swapped, counting fetches.
struct Jwks {
    url: String,
    body: Arc<Mutex<String>>,
    hits: Arc<AtomicUsize>,
    status: Arc<AtomicUsize>,
}

async fn jwks(keys: &[Jwk]) -> Jwks {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    let body = Arc::new(Mutex::new(serde_json::to_string(&JwkSet { keys: keys.to_vec() }).unwrap()));
    let hits = Arc::new(AtomicUsize::new(0));
    let status = Arc::new(AtomicUsize::new(200));
    let (b, h, s) = (body.clone(), hits.clone(), status.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else { return };
            let mut buf = vec![0u8; 4096];
            let mut read = 0;
            while !buf[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf[read..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
            }
            h.fetch_add(1, Ordering::SeqCst);
            let body = b.lock().unwrap().clone();
            let resp = format!(
                "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                s.load(Ordering::SeqCst),
                body.len()
            );
            let _ = conn.write_all(resp.as_bytes()).await;
        }
    });
    Jwks { url, body, hits, status }
}

impl Jwks {
    fn set(&self, keys: &[Jwk]) {
        *self.body.lock().unwrap() = serde_json::to_string(&JwkSet { keys: keys.to_vec() }).unwrap();
    }
}

#[tokio::test]
async fn each_algorithm_is_accepted_with_its_claims() {
    let rsa = key("jwt-rsa.pem", Algorithm::RS256);
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let ed = key("jwt-ed25519.pem", Algorithm::EdDSA);
    let set = JwkSet {
        keys: vec![
            jwk(&rsa, Algorithm::RS256, "rsa"),
            jwk(&ec, Algorithm::ES256, "ec"),
            jwk(&ed, Algorithm::EdDSA, "ed"),
        ],
    };
    let auth = JwtBearer::new(config(), KeySource::Static(set.into()));
    for (k, alg, kid) in [(&rsa, Algorithm::RS256, "rsa"), (&ec, Algorithm::ES256, "ec"), (&ed, Algorithm::EdDSA, "ed")]
    {
        let token = sign(k, alg, Some(kid), &claims("alice", "a2a.read a2a.write"));
        let p = auth.authenticate(&bearer(&token)).await.unwrap().unwrap();
        assert_eq!(
            (p.name.as_str(), p.scopes.clone()),
            ("alice", vec!["a2a.read".to_owned(), "a2a.write".to_owned()]),
            "{alg:?}"
        );
    }
    // No Authorization header, or another scheme: not ours to judge.
    let none = http::Request::builder().body(()).unwrap().into_parts().0;
    assert_eq!(auth.authenticate(&none).await.unwrap(), None);
}

#[tokio::test]
async fn bad_tokens_are_refused() {
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let other = key("jwt-ec-rotated.pem", Algorithm::ES256);
    let rsa = key("jwt-rsa.pem", Algorithm::RS256);
    let set = JwkSet { keys: vec![jwk(&ec, Algorithm::ES256, "ec")] };
    let auth = JwtBearer::new(config(), KeySource::Static(set.into()));
    let refused = |token: String, why: &'static str| {
        let auth = &auth;
        async move {
            let e = auth.authenticate(&bearer(&token)).await.expect_err(why);
            assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated, "{why}: {e}");
            e.message
        }
    };
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims("alice", "");
        f(&mut c);
        sign(&ec, Algorithm::ES256, Some("ec"), &c)
    };
    assert!(refused(with(&|c| c["exp"] = json!(now() - 120)), "expired").await.contains("expired"));
    assert!(refused(with(&|c| c["nbf"] = json!(now() + 120)), "early").await.contains("nbf"));
    assert!(refused(with(&|c| c["iss"] = json!("https://evil.test")), "issuer").await.contains("issuer"));
    assert!(refused(with(&|c| c["aud"] = json!("someone-else")), "audience").await.contains("audience"));
    assert!(refused(with(&|c| _ = c.as_object_mut().unwrap().remove("exp")), "no exp").await.contains("`exp`"));
    // An `exp` of another type is named as such (it read "a required claim is missing").
    let message = refused(with(&|c| c["exp"] = json!("tomorrow")), "a string exp").await;
    assert!(message.contains("`exp`") && message.contains("not of its type"), "{message}");
    refused(with(&|c| _ = c.as_object_mut().unwrap().remove("sub")), "no sub").await;
    // A configured issuer or audience must be in the token: left out, null or another type,
    // the token is refused (jsonwebtoken alone checks them only when present).
    for claim in ["iss", "aud"] {
        refused(with(&|c| _ = c.as_object_mut().unwrap().remove(claim)), "no iss or aud").await;
        refused(with(&|c| c[claim] = Value::Null), "null iss or aud").await;
        refused(with(&|c| c[claim] = json!(5)), "a number as iss or aud").await;
    }
    // `iss` is one string, not a list that happens to hold the accepted one.
    refused(with(&|c| c["iss"] = json!(["https://evil.test", ISS])), "iss as a list").await;
    // A `crit` header names extensions the reader must understand; this one knows none.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec".into());
    header.crit = Some(vec!["exp".into()]);
    let crit = jsonwebtoken::encode(&header, &claims("alice", ""), &ec).unwrap();
    assert!(refused(crit, "crit").await.contains("crit"));
    // Within the leeway is fine.
    let skewed = with(&|c| c["exp"] = json!(now() - 10));
    assert!(auth.authenticate(&bearer(&skewed)).await.is_ok());
    // Forged: signed by another key under the same kid.
    let forged = sign(&other, Algorithm::ES256, Some("ec"), &claims("alice", ""));
    assert!(refused(forged, "forged").await.contains("signature"));
    // An unknown kid, an algorithm not accepted, `none`, and garbage.
    refused(sign(&ec, Algorithm::ES256, Some("nope"), &claims("a", "")), "unknown kid").await;
    refused(sign(&rsa, Algorithm::RS384, Some("ec"), &claims("a", "")), "RS384 not accepted").await;
    let hmac = sign(&EncodingKey::from_secret(b"public key bytes"), Algorithm::HS256, Some("ec"), &claims("a", ""));
    refused(hmac, "HS256 not accepted").await;
    let b64 = |v: &Value| base64_url(serde_json::to_vec(v).unwrap());
    let none = format!("{}.{}.", b64(&json!({"alg": "none", "typ": "JWT"})), b64(&claims("a", "")));
    refused(none, "alg none").await;
    refused("not.a.jwt".into(), "garbage").await;
}

fn base64_url(bytes: Vec<u8>) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn keys_are_fetched_cached_and_rotated() {
    let old = key("jwt-ec.pem", Algorithm::ES256);
    let new = key("jwt-ec-rotated.pem", Algorithm::ES256);
    let server = jwks(&[jwk(&old, Algorithm::ES256, "k1")]).await;
    let cfg = JwtConfig { min_refresh: Duration::from_millis(300), ..config() };
    let auth = JwtBearer::new(cfg, KeySource::Url(server.url.clone()));

    let t1 = sign(&old, Algorithm::ES256, Some("k1"), &claims("alice", ""));
    for _ in 0..5 {
        assert!(auth.authenticate(&bearer(&t1)).await.unwrap().is_some());
    }
    assert_eq!(server.hits.load(Ordering::SeqCst), 1, "cached after the first fetch");

    // The provider rotates: k2 appears. A token with k2 refetches once the pace allows.
    server.set(&[jwk(&old, Algorithm::ES256, "k1"), jwk(&new, Algorithm::ES256, "k2")]);
    let t2 = sign(&new, Algorithm::ES256, Some("k2"), &claims("bob", ""));
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(auth.authenticate(&bearer(&t2)).await.unwrap().unwrap().name, "bob");
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    // A flood of unknown kids costs at most one fetch per pacing interval.
    for i in 0..20 {
        let forged = sign(&new, Algorithm::ES256, Some(&format!("x{i}")), &claims("eve", ""));
        assert!(auth.authenticate(&bearer(&forged)).await.is_err());
    }
    assert!(server.hits.load(Ordering::SeqCst) <= 3, "hits: {}", server.hits.load(Ordering::SeqCst));

    // k1 is retired: after the next refetch its tokens fail.
    server.set(&[jwk(&new, Algorithm::ES256, "k2")]);
    let short = JwtBearer::new(
        JwtConfig { max_key_age: Duration::ZERO, min_refresh: Duration::ZERO, ..config() },
        KeySource::Url(server.url.clone()),
    );
    assert!(short.authenticate(&bearer(&t1)).await.is_err());
    assert!(short.authenticate(&bearer(&t2)).await.is_ok());
}

/// An identity provider that cannot be reached (nothing listens, or it answers 503) is the
/// server's trouble: Unavailable (HTTP 503, to try again), not a bad token (401 told callers their
/// credentials were wrong). A fetch that could not reach the keys is tried again within seconds,
/// not after `min_refresh`: valid tokens were refused for 25 s after the provider came back.
#[tokio::test]
async fn an_unreachable_jwks_is_unavailable_and_is_tried_again_soon() {
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let token = sign(&ec, Algorithm::ES256, Some("k1"), &claims("alice", ""));
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let auth = JwtBearer::new(config(), KeySource::Url(format!("http://{closed}/jwks.json")));
    let e = auth.authenticate(&bearer(&token)).await.unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unavailable, "{e}");

    let server = jwks(&[jwk(&ec, Algorithm::ES256, "k1")]).await;
    server.status.store(503, Ordering::SeqCst);
    let auth = JwtBearer::new(config(), KeySource::Url(server.url.clone()));
    let e = auth.authenticate(&bearer(&token)).await.unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unavailable, "{e}");
    server.status.store(200, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(auth.authenticate(&bearer(&token)).await.unwrap().unwrap().name, "alice");
    // A key set that was read and lacks the key: a token nobody can verify, 401 as before.
    let stranger = sign(&ec, Algorithm::ES256, Some("k9"), &claims("eve", ""));
    let e = auth.authenticate(&bearer(&stranger)).await.unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated, "{e}");

    // An answer that is no key set (garbage) is the provider's trouble too: Unavailable, tried
    // again soon; and the refusal names neither the JWKS URL nor what its host said.
    let good = server.body.lock().unwrap().clone();
    *server.body.lock().unwrap() = "<html>oops</html>".into();
    let auth = JwtBearer::new(config(), KeySource::Url(server.url.clone()));
    let e = auth.authenticate(&bearer(&token)).await.unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unavailable, "{e}");
    assert!(!e.message.contains("jwks.json") && !e.message.contains("127.0.0.1"), "{e}");
    *server.body.lock().unwrap() = good;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(auth.authenticate(&bearer(&token)).await.unwrap().unwrap().name, "alice");
}

/// A JWKS endpoint that serves far more than the 1 MiB limit: 64 MiB with a Content-Length,
/// or chunks without end. Counts what it wrote; the count is final once the client hangs up.
async fn flood(chunked: bool) -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    let serving = tokio::spawn(async move {
        let Ok((mut conn, _)) = listener.accept().await else { return };
        let mut buf = vec![0u8; 4096];
        let mut read = 0;
        while !buf[..read].windows(4).any(|x| x == b"\r\n\r\n") {
            match conn.read(&mut buf[read..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read += n,
            }
        }
        let framing =
            if chunked { "transfer-encoding: chunked".to_owned() } else { format!("content-length: {}", 64 << 20) };
        let head = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{framing}\r\n\r\n{{\"keys\":[");
        if conn.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let block = vec![b' '; 64 * 1024];
        let chunk = if chunked {
            [format!("{:x}\r\n", block.len()).into_bytes(), block, b"\r\n".to_vec()].concat()
        } else {
            block
        };
        // Stops when the client hangs up (or, were the limit broken, after 256 MiB).
        while w.load(Ordering::SeqCst) < 256 << 20 && conn.write_all(&chunk).await.is_ok() {
            w.fetch_add(chunk.len(), Ordering::SeqCst);
        }
    });
    (url, written, serving)
}

#[tokio::test]
async fn an_oversized_or_endless_jwks_is_refused_without_reading_it_all() {
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let token = sign(&ec, Algorithm::ES256, Some("k1"), &claims("alice", ""));
    for chunked in [false, true] {
        let (url, written, serving) = flood(chunked).await;
        let auth = JwtBearer::new(config(), KeySource::Url(url));
        let started = std::time::Instant::now();
        let e = auth.authenticate(&bearer(&token)).await.expect_err("no key could be read");
        // The provider's fault, not the token's: try again.
        assert_eq!(e.kind, a2a_native::ErrorKind::Unavailable, "{e}");
        // Reading everything would run into the 10 s fetch timeout (or never end).
        assert!(started.elapsed() < Duration::from_secs(5), "chunked {chunked}: took {:?}", started.elapsed());
        tokio::time::timeout(Duration::from_secs(5), serving).await.expect("the client hung up").unwrap();
        // 1 MiB read, plus what the loopback socket buffers held: far from the whole body.
        let sent = written.load(Ordering::SeqCst);
        assert!(sent < 16 << 20, "chunked {chunked}: {sent} bytes were sent before the client stopped");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_401_without_a_valid_token_and_403_without_the_scope() {
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let server = jwks(&[jwk(&ec, Algorithm::ES256, "k1")]).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = model::parse_value(json!({
        "name": "jwt agent", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
        "securitySchemes": {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": format!("{ISS}/.well-known/openid-configuration")}}},
        "securityRequirements": [{"schemes": {"oidc": {"list": ["a2a.read"]}}}]
    }))
    .unwrap();
    // The agent completes with the caller's name.
    let agent = TestAgent::new().otherwise([Step::status(TaskState::Completed, "{principal}")]);
    let handler = RequestHandler::new(Arc::new(agent), card, Stores::memory(), ServerConfig::default())
        .with_authenticator(Arc::new(JwtBearer::new(config(), KeySource::Url(server.url.clone()))))
        .with_required_scopes(RequiredScopes::new().require("*", &["a2a.read"]).require("SendMessage", &["a2a.write"]));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::new();
    let call = |method: &str, params: Value, token: Option<String>| {
        let mut req = http
            .post(format!("{base}/"))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            (status, serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).unwrap())
        }
    };
    let send = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    let (status, body) = call("SendMessage", send.clone(), None).await;
    assert_eq!((status, body["error"]["code"].as_i64()), (401, Some(-31401)), "{body}");
    // The refusal answers the request: its id is echoed (JSON-RPC 2.0 §5).
    assert_eq!(body["id"], 1, "{body}");
    let refused_body = |text: String| {
        let req = http.post(format!("{base}/")).header("content-type", "application/json").body(text);
        async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            (status, serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).unwrap())
        }
    };
    let (status, body) =
        refused_body(r#"{"jsonrpc":"2.0","id":"req-7","method":"GetTask","params":{"id":"t"}}"#.into()).await;
    assert_eq!((status, &body["id"]), (401, &json!("req-7")), "{body}");
    // A body that is no JSON-RPC request, or too large to read for its id: id null.
    let (status, body) = refused_body("{not json".into()).await;
    assert_eq!((status, &body["id"]), (401, &Value::Null), "{body}");
    let large = json!({"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {"pad": "x".repeat(20_000)}});
    let (status, body) = refused_body(large.to_string()).await;
    assert_eq!((status, &body["id"]), (401, &Value::Null), "{body}");
    let expired =
        sign(&ec, Algorithm::ES256, Some("k1"), &json!({"iss": ISS, "aud": AUD, "sub": "a", "exp": now() - 600}));
    assert_eq!(call("SendMessage", send.clone(), Some(expired)).await.0, 401);
    let reader = sign(&ec, Algorithm::ES256, Some("k1"), &claims("reader", "a2a.read"));
    let (status, body) = call("SendMessage", send.clone(), Some(reader.clone())).await;
    assert_eq!((status, body["error"]["code"].as_i64()), (403, Some(-31403)), "{body}");
    assert_eq!(call("ListTasks", json!({}), Some(reader)).await.0, 200);
    let writer = sign(&ec, Algorithm::ES256, Some("k1"), &claims("writer", "a2a.read a2a.write"));
    let (status, body) = call("SendMessage", send, Some(writer)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["task"]["status"]["message"]["parts"][0]["text"], "writer");
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwt_subject_never_reaches_the_tasks_of_an_api_key_of_the_same_name() {
    // The identity provider names its users; the operator names the API keys. An IdP user
    // `alice` is not the key `alice`, and each issuer's `alice` is someone else again.
    use a2a_native::server::{AnyOf, ApiKeys, KeyLocation};
    let ec = key("jwt-ec.pem", Algorithm::ES256);
    let set = JwkSet { keys: vec![jwk(&ec, Algorithm::ES256, "k1")] };
    let config = JwtConfig { issuers: vec![ISS.into(), "https://other-idp.test".into()], ..config() };
    let keys = ApiKeys::new(KeyLocation::Header("X-API-Key".into()))
        .with_key("k-alice", a2a_native::auth::Principal::named("alice", vec![]));
    let auth = AnyOf::new(vec![Arc::new(JwtBearer::new(config, KeySource::Static(set.into()))), Arc::new(keys)]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = model::parse_value(json!({
        "name": "two schemes", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
        "securitySchemes": {
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": format!("{ISS}/.well-known/openid-configuration")}},
            "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}
        },
        "securityRequirements": [{"schemes": {"oidc": {"list": []}}}, {"schemes": {"apiKey": {"list": []}}}]
    }))
    .unwrap();
    let agent = TestAgent::new().otherwise([Step::status(TaskState::Completed, "{principal}")]);
    let handler = RequestHandler::new(Arc::new(agent), card, Stores::memory(), ServerConfig::default())
        .with_authenticator(Arc::new(auth));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::new();
    let call = |method: &str, params: Value, credential: (&'static str, String)| {
        let req = http
            .post(format!("{base}/"))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .header(credential.0, credential.1)
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
        async move { serde_json::from_slice::<Value>(&req.send().await.unwrap().bytes().await.unwrap()).unwrap() }
    };
    let jwt = |iss: &str| {
        let claims = json!({"iss": iss, "aud": AUD, "sub": "alice", "exp": now() + 300});
        ("authorization", format!("Bearer {}", sign(&ec, Algorithm::ES256, Some("k1"), &claims)))
    };
    let key_alice = || ("x-api-key", "k-alice".to_owned());
    let send = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    let by_key = call("SendMessage", send.clone(), key_alice()).await;
    let task = by_key["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{by_key}")).to_owned();
    // The executor sees the same name either way.
    assert_eq!(by_key["result"]["task"]["status"]["message"]["parts"][0]["text"], "alice");
    for iss in [ISS, "https://other-idp.test"] {
        let got = call("GetTask", json!({"id": task}), jwt(iss)).await;
        assert_eq!(got["error"]["code"], -32001, "{iss}: {got}");
        let listed = call("ListTasks", json!({}), jwt(iss)).await;
        assert_eq!(listed["result"]["tasks"], json!([]), "{iss}: {listed}");
    }
    // The IdP's alice has tasks of her own, which neither the key nor another issuer's alice sees.
    let by_jwt = call("SendMessage", send, jwt(ISS)).await;
    let hers = by_jwt["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{by_jwt}")).to_owned();
    assert_eq!(call("GetTask", json!({"id": hers}), jwt(ISS)).await["result"]["id"], hers.as_str());
    assert_eq!(call("GetTask", json!({"id": hers}), key_alice()).await["error"]["code"], -32001);
    assert_eq!(call("GetTask", json!({"id": hers}), jwt("https://other-idp.test")).await["error"]["code"], -32001);
    assert_eq!(call("GetTask", json!({"id": task}), key_alice()).await["result"]["id"], task.as_str());
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
