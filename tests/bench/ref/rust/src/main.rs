//! The echo agent of `a2a serve --echo`, written on the official Rust A2A crates: every
//! message becomes a task with one artifact copying the message's parts, then COMPLETED.
//! JSON-RPC at `POST /`, A2A 1.0; with a second port, the same handler over gRPC there too
//! (a2a-grpc's tonic service). Usage: bench-ref-rust PORT [GRPC_PORT]

use a2a::*;
use a2a_server::{AgentExecutor, DefaultRequestHandler, ExecutorContext, InMemoryTaskStore};
use futures::stream::{self, BoxStream, StreamExt};
use std::sync::Arc;

struct Echo;

fn status(state: TaskState) -> TaskStatus {
    TaskStatus { state, message: None, timestamp: Some(chrono::Utc::now()) }
}

impl AgentExecutor for Echo {
    fn execute(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let parts = ctx.message.as_ref().map(|m| m.parts.clone()).unwrap_or_default();
        let task = Task {
            id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            status: status(TaskState::Submitted),
            artifacts: None,
            history: ctx.message.map(|m| vec![m]),
            metadata: None,
        };
        let artifact = TaskArtifactUpdateEvent {
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            artifact: Artifact {
                artifact_id: format!("{}-echo", ctx.task_id),
                name: Some("echo".into()),
                description: None,
                parts,
                metadata: None,
                extensions: None,
            },
            append: Some(false),
            last_chunk: Some(true),
            metadata: None,
        };
        let done = TaskStatusUpdateEvent {
            task_id: ctx.task_id,
            context_id: ctx.context_id,
            status: status(TaskState::Completed),
            metadata: None,
        };
        stream::iter([
            Ok(StreamResponse::Task(task)),
            Ok(StreamResponse::ArtifactUpdate(artifact)),
            Ok(StreamResponse::StatusUpdate(done)),
        ])
        .boxed()
    }

    fn cancel(&self, _ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        stream::empty().boxed()
    }
}

#[tokio::main]
async fn main() {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(9003);
    let grpc_port: Option<u16> = std::env::args().nth(2).and_then(|p| p.parse().ok());
    let capabilities = AgentCapabilities { streaming: Some(true), ..Default::default() };
    let handler =
        Arc::new(DefaultRequestHandler::new(Echo, InMemoryTaskStore::new()).with_capabilities(capabilities));
    if let Some(grpc_port) = grpc_port {
        let service = a2a_pb::proto::a2a_service_server::A2aServiceServer::new(a2a_grpc::GrpcHandler::new(handler.clone()));
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], grpc_port));
        tokio::spawn(async move {
            tonic::transport::Server::builder().add_service(service).serve(addr).await.expect("serve gRPC")
        });
        eprintln!("bench-ref-rust (a2a-grpc 0.3.11) gRPC at 127.0.0.1:{grpc_port}");
    }
    let app = a2a_server::jsonrpc::jsonrpc_router(handler);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
    eprintln!("bench-ref-rust (a2a-server-lf 0.5.3) at http://127.0.0.1:{port}/");
    axum::serve(listener, app).await.expect("serve");
}
