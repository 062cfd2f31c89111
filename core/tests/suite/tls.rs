//! TLS terminated by our server: HTTPS with HTTP/2 by ALPN and HSTS; plain HTTP refused; mutual
//! TLS, where a client certificate issued by the configured CA names the caller. Certificates:
//! tests/fixtures (test-only).

use crate::support;

use a2a_native::model::{self, TaskState};
use a2a_native::server::tls::{ClientCertificate, server_config};
use a2a_native::server::{
    AnyOf, ApiKeys, KeyLocation, MutualTls, Principal, RequestHandler, Server, ServerConfig, Stores,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use support::agent::{Step, TestAgent};
use tokio::net::TcpListener;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

async fn start(client_ca: bool) -> (String, tokio::sync::oneshot::Sender<()>) {
    start_with(client_ca, false).await
}

/// With `api_key`, the key `k-1` (the caller `keyholder`) also admits a caller.
async fn start_with(client_ca: bool, api_key: bool) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://localhost:{}", listener.local_addr().unwrap().port());
    let card = model::parse_value(json!({
        "name": "tls agent", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
        "securitySchemes": if api_key {
            json!({"mtls": {"mtlsSecurityScheme": {}}, "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}})
        } else {
            json!({})
        },
        "securityRequirements": if api_key {
            json!([{"schemes": {"mtls": {"list": []}}}, {"schemes": {"apiKey": {"list": []}}}])
        } else {
            json!([])
        }
    }))
    .unwrap();
    // The agent completes with the caller's name ("anonymous" without one).
    let agent = TestAgent::new().otherwise([Step::status(TaskState::Completed, "{principal}")]);
    let mut handler = RequestHandler::new(Arc::new(agent), card, Stores::memory(), ServerConfig::default());
    let ca = client_ca.then(|| fixture("tls-ca.pem"));
    if client_ca {
        let fingerprint = "3d357e08807a6221e147b3057b1dd9a956e0f785b7d5b159880cbf79506df2e0";
        let mtls = MutualTls::new().with_certificate(fingerprint, Principal::named("client-one", vec![]));
        handler = if api_key {
            let keys = ApiKeys::new(KeyLocation::Header("X-API-Key".into()))
                .with_key("k-1", Principal::named("keyholder", vec![]));
            handler.with_authenticator(Arc::new(AnyOf::new(vec![Arc::new(mtls), Arc::new(keys)])))
        } else {
            handler.with_authenticator(Arc::new(mtls))
        };
    }
    // With another scheme, a certificate is optional at the handshake; the card's requirement
    // (either scheme) refuses a caller neither admits.
    let client = if api_key { ClientCertificate::Optional } else { ClientCertificate::Required };
    let tls = server_config(&fixture("tls-server.pem"), &fixture("tls-server.key"), ca.as_deref(), client).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(Server::new(Arc::new(handler)).tls(tls).serve(listener, async {
        let _ = stopped.await;
    }));
    (base, stop)
}

/// A client of the server at `base` (`https://localhost:PORT`). It resolves `localhost` itself
/// and gives up after 20 s: a blocking name lookup or a connection nobody answers would
/// otherwise hang the test (and the test runtime's shutdown) instead of failing it.
fn plain_client(base: &str) -> reqwest::ClientBuilder {
    let port = base.rsplit(':').next().unwrap().trim_end_matches('/').parse::<u16>().unwrap();
    reqwest::Client::builder()
        .resolve("localhost", std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .timeout(std::time::Duration::from_secs(20))
}

/// [`plain_client`] trusting the test CA, with the client certificate when `identity`.
fn client(base: &str, identity: bool) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("tls-ca.pem")).unwrap()).unwrap();
    let mut b = plain_client(base).add_root_certificate(ca);
    if identity {
        let mut pem = std::fs::read(fixture("tls-client.pem")).unwrap();
        pem.extend(std::fs::read(fixture("tls-client.key")).unwrap());
        b = b.identity(reqwest::Identity::from_pem(&pem).unwrap());
    }
    b.build().unwrap()
}

/// SendMessage over JSON-RPC: the response headers and body.
async fn send(http: &reqwest::Client, base: &str) -> reqwest::Result<(http::HeaderMap, Value)> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let resp = http
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await?;
    let headers = resp.headers().clone();
    Ok((headers, serde_json::from_slice(&resp.bytes().await?).unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_h2_and_hsts_and_no_plain_http() {
    let (base, stop) = start(false).await;
    let http = client(&base, false);
    let card = http.get(format!("{base}/.well-known/agent-card.json")).send().await.unwrap();
    assert_eq!(card.status(), 200);
    assert_eq!(card.version(), http::Version::HTTP_2, "ALPN picks h2");
    assert_eq!(card.headers()["strict-transport-security"], "max-age=31536000");
    let (headers, body) = send(&http, &base).await.unwrap();
    assert_eq!(body["result"]["task"]["status"]["message"]["parts"][0]["text"], "anonymous", "{body}");
    assert!(headers.contains_key("strict-transport-security"));
    // Plain HTTP to the TLS port gets no HTTP answer.
    let plain = plain_client(&base)
        .build()
        .unwrap()
        .get(base.replace("https://", "http://") + "/.well-known/agent-card.json")
        .send()
        .await;
    assert!(plain.is_err() || !plain.unwrap().status().is_success());
    // A client that does not trust the CA refuses the server.
    assert!(
        plain_client(&base).build().unwrap().get(format!("{base}/.well-known/agent-card.json")).send().await.is_err()
    );
    // Ours says why in words.
    let err = a2a_native::client::Client::connect(&base).await.unwrap_err();
    assert!(err.message.contains("not signed by a CA this client trusts"), "{}", err.message);
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_names_the_caller_by_its_certificate() {
    let (base, stop) = start(true).await;
    let (_, body) = send(&client(&base, true), &base).await.unwrap();
    assert_eq!(body["result"]["task"]["status"]["message"]["parts"][0]["text"], "client-one", "{body}");
    // The only scheme: without a client certificate the handshake (or the first request) fails.
    assert!(send(&client(&base, false), &base).await.is_err());
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_mutual_tls_and_an_api_key_either_admits_a_caller() {
    // The card offers the two as alternatives: a caller with a key and no certificate must get
    // through the handshake (it was refused there, as was everyone reading the public card).
    let (base, stop) = start_with(true, true).await;
    let (_, body) = send(&client(&base, true), &base).await.unwrap();
    assert_eq!(body["result"]["task"]["status"]["message"]["parts"][0]["text"], "client-one", "{body}");
    let anonymous = client(&base, false);
    let card = anonymous.get(format!("{base}/.well-known/agent-card.json")).send().await.unwrap();
    assert_eq!(card.status(), 200);
    let (_, body) = send(&anonymous, &base).await.unwrap();
    assert_eq!(body["error"]["code"], -31401, "{body}");
    let with_key = plain_client(&base)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(fixture("tls-ca.pem")).unwrap()).unwrap())
        .default_headers(
            [(http::HeaderName::from_static("x-api-key"), http::HeaderValue::from_static("k-1"))].into_iter().collect(),
        )
        .build()
        .unwrap();
    let (_, body) = send(&with_key, &base).await.unwrap();
    assert_eq!(body["result"]["task"]["status"]["message"]["parts"][0]["text"], "keyholder", "{body}");
    let _ = stop.send(());
}
