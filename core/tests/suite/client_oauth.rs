//! Credentials chosen from the agent card: OAuth 2.0 client credentials (token fetched with
//! HTTP Basic client authentication, cached, refreshed before expiry, refusals reported) and an
//! API key sent where the card's scheme says (query parameter here).

use crate::support;
use a2a_native::client::{CardCache, CardCredentials, Client};

use a2a_native::model::{self, Message, Role, SendMessageRequest, TaskState};
use a2a_native::server::Authenticator;
use a2a_native::server::auth::{ApiKeys, KeyLocation};
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::agent::{Step, TestAgent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A token endpoint: answers `tok-N` (N = hit count) for client `id`/`secret`, with
/// `expires_in` seconds; records each request's head and body.
async fn token_endpoint(expires_in: u64) -> (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (h, l) = (hits.clone(), log.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else { return };
            let mut buf = vec![0u8; 8192];
            let mut n = 0;
            while !String::from_utf8_lossy(&buf[..n]).contains("grant_type") {
                match conn.read(&mut buf[n..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(m) => n += m,
                }
            }
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            l.lock().unwrap().push(request.clone());
            // base64("id:secret") = aWQ6c2VjcmV0
            let (status, body) = if request
                .to_ascii_lowercase()
                .contains("authorization: basic aWQ6c2VjcmV0".to_ascii_lowercase().as_str())
            {
                let n = h.fetch_add(1, Ordering::SeqCst) + 1;
                (
                    "200 OK",
                    json!({"access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": expires_in}),
                )
            } else {
                ("401 Unauthorized", json!({"error": "invalid_client"}))
            };
            let body = body.to_string();
            let resp = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(resp.as_bytes()).await;
        }
    });
    (url, hits, log)
}

async fn agent(schemes: Value, requirement: &str, auth: Arc<dyn Authenticator>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = model::parse_value(json!({
        "name": "guarded", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
        "securitySchemes": schemes,
        // Every caller below holds the scope.
        "securityRequirements": [{"schemes": {requirement: {"list": ["a2a.call"]}}}]
    }))
    .unwrap();
    // The agent completes with the caller's name.
    let agent = TestAgent::new().otherwise([Step::status(TaskState::Completed, "{principal}")]);
    let handler =
        RequestHandler::new(Arc::new(agent), card, Stores::memory(), ServerConfig::default()).with_authenticator(auth);
    tokio::spawn(Server::new(Arc::new(handler)).serve(listener, std::future::pending()));
    base
}

fn hi() -> SendMessageRequest {
    SendMessageRequest::new(Message::text(Role::User, "hi"))
}

fn reply_text(r: &a2a_native::model::SendMessageResponse) -> String {
    let v = model::to_value(r);
    v["task"]["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// A token endpoint's `expires_in` of u64::MAX seconds is read as 2^31 s (RFC 9111's bound on
/// delta-seconds): the token is used and cached; the client does not panic on the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expires_in_beyond_any_clock_is_bounded_not_a_panic() {
    let (token_url, hits, _) = token_endpoint(u64::MAX).await;
    let tokens = BearerTokens::new().with_token("tok-1", Principal::named("svc-1", vec!["a2a.call".into()]));
    let schemes = json!({"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {"a2a.call": "call the agent"}}}}}});
    let base = agent(schemes, "oauth", Arc::new(tokens)).await;
    let creds = Arc::new(CardCredentials::new().with_client_credentials("id", "secret"));
    let client =
        Client::builder().card_cache(Arc::new(CardCache::new())).credentials(creds).connect(&base).await.unwrap();
    for _ in 0..2 {
        assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "svc-1");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the token is cached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_from_the_card_are_fetched_cached_and_refreshed() {
    let (token_url, hits, log) = token_endpoint(31).await;
    let tokens = (1..=5).fold(BearerTokens::new(), |b, n| {
        b.with_token(format!("tok-{n}"), Principal::named(format!("svc-{n}"), vec!["a2a.call".into()]))
    });
    let schemes = json!({"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {"a2a.call": "call the agent"}}}}}});
    let base = agent(schemes, "oauth", Arc::new(tokens)).await;

    let creds = Arc::new(CardCredentials::new().with_client_credentials("id", "secret").with_api_key("unused"));
    let client =
        Client::builder().card_cache(Arc::new(CardCache::new())).credentials(creds).connect(&base).await.unwrap();
    assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "svc-1");
    assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "svc-1", "the token is cached");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let first = log.lock().unwrap()[0].clone();
    assert!(first.contains("grant_type=client_credentials") && first.contains("scope=a2a.call"), "{first}");
    // expires_in 31 s minus the 30 s margin: after a second the token is refreshed.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "svc-2");
    assert_eq!(hits.load(Ordering::SeqCst), 2);

    // A wrong secret: the endpoint's refusal, as Unauthenticated, and the call is not sent.
    let bad = Arc::new(CardCredentials::new().with_client_credentials("id", "wrong"));
    let e = Client::builder()
        .card_cache(Arc::new(CardCache::new()))
        .credentials(bad)
        .connect(&base)
        .await
        .unwrap()
        .send_message(hi())
        .await
        .unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated, "{e}");
    assert!(e.message.contains("invalid_client"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_goes_where_the_card_says() {
    let keys = ApiKeys::new(KeyLocation::Query("key".into()))
        .with_key("k-1", Principal::named("keyholder", vec!["a2a.call".into()]));
    let schemes = json!({"apiKey": {"apiKeySecurityScheme": {"location": "query", "name": "key"}}});
    let base = agent(schemes, "apiKey", Arc::new(keys)).await;
    let creds = Arc::new(CardCredentials::new().with_bearer_token("not-asked-for").with_api_key("k-1"));
    let client =
        Client::builder().card_cache(Arc::new(CardCache::new())).credentials(creds).connect(&base).await.unwrap();
    assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "keyholder");
    // Without a secret the card asks for, nothing is sent and the agent refuses.
    let none = Arc::new(CardCredentials::new().with_bearer_token("t"));
    let e = Client::builder()
        .card_cache(Arc::new(CardCache::new()))
        .credentials(none)
        .connect(&base)
        .await
        .unwrap()
        .send_message(hi())
        .await
        .unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated);
}

/// The client secret goes to the card's `tokenUrl` only over https, or over http to this
/// machine: a card naming a plain-http token endpoint elsewhere is refused before anything is
/// sent (RFC 6749 §3.2), and the call with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_never_go_to_a_plain_http_token_endpoint_elsewhere() {
    let (token_url, hits, _) = token_endpoint(3600).await;
    let connect = |token_url: String| {
        let tokens = BearerTokens::new().with_token("tok-1", Principal::named("svc-1", vec!["a2a.call".into()]));
        async move {
            let schemes = json!({"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {}}}}}});
            let base = agent(schemes, "oauth", Arc::new(tokens)).await;
            let creds = Arc::new(CardCredentials::new().with_client_credentials("id", "secret"));
            Client::builder().card_cache(Arc::new(CardCache::new())).credentials(creds).connect(&base).await.unwrap()
        }
    };
    for refused in ["http://tokens.example/token", "http://10.1.2.3:8080/token", "ftp://127.0.0.1/token"] {
        let e = connect(refused.to_owned()).await.send_message(hi()).await.unwrap_err();
        assert_eq!(e.kind, a2a_native::ErrorKind::InvalidAgentResponse, "{refused}: {e:?}");
        assert!(e.message.contains("not https"), "{refused}: {}", e.message);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    // http to this machine, by name or address, is development: allowed.
    let by_name = token_url.replace("127.0.0.1", "localhost");
    assert_eq!(reply_text(&connect(by_name).await.send_message(hi()).await.unwrap()), "svc-1");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // A card that also accepts a bearer token the client has: that one is used instead.
    let schemes = json!({
        "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "http://tokens.example/token", "scopes": {}}}}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
    });
    let tokens = BearerTokens::new().with_token("tok-1", Principal::named("svc-1", vec!["a2a.call".into()]));
    let base = agent(schemes, "oauth", Arc::new(tokens)).await;
    let creds = Arc::new(CardCredentials::new().with_client_credentials("id", "secret").with_bearer_token("tok-1"));
    let client =
        Client::builder().card_cache(Arc::new(CardCache::new())).credentials(creds).connect(&base).await.unwrap();
    assert_eq!(reply_text(&client.send_message(hi()).await.unwrap()), "svc-1");
}
