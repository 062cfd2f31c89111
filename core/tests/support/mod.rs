//! What the integration tests share: `tests/suite/main.rs` and `tests/trace_context.rs` include
//! it with `mod support;` (a folder, so that it is no test target of its own).
//! - [`agent`]: the one test agent, [`agent::TestAgent`], scripted per message.
//! - [`client`]: for the client tests, our server in-process with that agent, and a raw HTTP/1.1
//!   server that misbehaves on purpose.
//! - [`store`]: a task store that fails or stalls some commits on request.
//! - [`webhook`]: a loopback webhook receiver.
#![allow(dead_code)]

pub mod agent;
pub mod client;
pub mod store;

use serde_json::Value;
use std::sync::Arc;

/// A loopback webhook receiver: every POST's headers and JSON body, in arrival order.
pub async fn webhook() -> (String, Arc<std::sync::Mutex<Vec<(http::HeaderMap, Value)>>>) {
    use http_body_util::BodyExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = got.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let sink = sink.clone();
            let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let sink = sink.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = body.collect().await.unwrap().to_bytes();
                    sink.lock().unwrap().push((parts.headers, serde_json::from_slice(&bytes).unwrap()));
                    Ok::<_, std::convert::Infallible>(http::Response::new(http_body_util::Full::new(
                        bytes::Bytes::new(),
                    )))
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(tcp), service),
            );
        }
    });
    (url, got)
}
