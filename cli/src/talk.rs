//! The commands that talk to an agent through the a2a-native client: `card`, `send`, `get`,
//! `cancel`, `list`, `subscribe`, `push ...`. Each resolves the agent from its base URL (the
//! client picks the transport and falls back to 0.3 by itself), makes one call, and prints the
//! result for a person, or as ProtoJSON with `--json` (streams: one JSON object per line).
//! Errors print the spec error's name, code and message and exit non-zero.

use crate::print;
use a2a_native::client::options::Headers;
use a2a_native::client::{Client, ClientOptions, ProtocolVersion};
use a2a_native::model::{
    self, CancelTaskRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message, Part, Role, SendMessageConfiguration,
    SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig, TaskState,
};
use a2a_native::{A2AError, ErrorKind};
use clap::{Args, Subcommand};
use futures_util::StreamExt;

/// How to reach the agent: flags shared by every client command (and `a2a bench`'s headers).
#[derive(Args, Clone)]
// Listed apart: they are global (so they may follow any command), and `serve` refuses them.
#[command(
    next_help_heading = "Client options (serve takes none; bench takes -H, --bearer, --api-key, --api-key-header, --json)"
)]
pub struct Connection {
    /// Extra header on every call, as `NAME: VALUE` (repeatable).
    #[arg(long = "header", short = 'H', global = true, value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Send `Authorization: Bearer TOKEN` (also read from A2A_BEARER).
    #[arg(long, global = true, env = "A2A_BEARER", value_name = "TOKEN", hide_env_values = true)]
    pub bearer: Option<String>,
    /// Send an API key (also read from A2A_API_KEY), in the header named by --api-key-header.
    #[arg(long, global = true, env = "A2A_API_KEY", value_name = "KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    #[arg(long, global = true, default_value = "X-API-Key", value_name = "NAME")]
    pub api_key_header: String,
    /// Protocol version to speak: 1.0, or 0.3 (an agent that does not declare it is refused);
    /// by default 1.0 when the agent declares it, else 0.3.
    #[arg(long = "a2a-version", global = true, value_parser = ["1.0", "0.3"])]
    pub a2a_version: Option<String>,
    /// Preferred binding when the agent declares several (gRPC: only when asked for, or when it
    /// is all the agent declares).
    #[arg(long, global = true, value_parser = ["jsonrpc", "http-json", "grpc"], default_value = "jsonrpc")]
    pub transport: String,
    /// Request timeout in seconds (for a stream: until its response head).
    #[arg(long, global = true, default_value_t = 60.0)]
    pub timeout: f64,
    /// Seconds connecting may take (default 10).
    #[arg(long, global = true, value_name = "SECONDS")]
    pub connect_timeout: Option<f64>,
    /// Seconds a stream may stay silent (no event, no keep-alive) before it is resubscribed
    /// (default 300).
    #[arg(long, global = true, value_name = "SECONDS")]
    pub stream_idle_timeout: Option<f64>,
    /// Extension URIs to activate (A2A-Extensions), repeatable.
    #[arg(long = "extension", global = true, value_name = "URI")]
    pub extensions: Vec<String>,
    /// Print ProtoJSON instead of text (streams: one JSON object per line).
    #[arg(long, global = true)]
    pub json: bool,
    /// Also trust this CA certificate (PEM) for HTTPS agents.
    #[arg(long, global = true, value_name = "PEM")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Present this client certificate (PEM, with --client-key) to agents that require mutual TLS.
    #[arg(long, global = true, value_name = "PEM", requires = "client_key")]
    pub client_cert: Option<std::path::PathBuf>,
    #[arg(long, global = true, value_name = "PEM", requires = "client_cert")]
    pub client_key: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
pub enum PushCommand {
    /// Register a webhook for a task's updates.
    Set {
        url: String,
        task_id: String,
        webhook: String,
        /// Token the agent sends back with each notification.
        #[arg(long)]
        token: Option<String>,
        /// Config id (the agent assigns one if left out).
        #[arg(long)]
        id: Option<String>,
    },
    /// Show one webhook config.
    Get { url: String, task_id: String, config_id: String },
    /// List a task's webhook configs.
    List {
        url: String,
        task_id: String,
        /// Configs per page (the server's default when not given).
        #[arg(long)]
        page_size: Option<i32>,
        /// The page after the one that gave this token (its `next page` hint).
        #[arg(long)]
        page_token: Option<String>,
    },
    /// Delete a webhook config (idempotent).
    Delete { url: String, task_id: String, config_id: String },
}

/// `a2a send`'s arguments.
#[derive(Args)]
pub struct SendArgs {
    /// The agent's base URL (where /.well-known/agent-card.json is).
    pub url: String,
    /// The message text.
    pub text: String,
    /// Stream the task's events as they happen (SendStreamingMessage).
    #[arg(long)]
    pub stream: bool,
    /// Continue this task (multi-turn: answer an INPUT_REQUIRED task).
    #[arg(long = "task")]
    pub task_id: Option<String>,
    /// Send within this context.
    #[arg(long = "context")]
    pub context_id: Option<String>,
    /// Return as soon as the task exists instead of waiting for it to finish or pause.
    #[arg(long)]
    pub return_immediately: bool,
    /// Add a data part with this JSON value.
    #[arg(long, value_name = "JSON")]
    pub data: Option<String>,
    /// Add a file part with this file's bytes, its name and media type (from its extension;
    /// repeatable).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<std::path::PathBuf>,
    /// Add a file part that refers to this URL (repeatable).
    #[arg(long = "file-url", value_name = "URL")]
    pub file_urls: Vec<String>,
    /// The message's metadata: a JSON object.
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
    /// Most history messages in the reply.
    #[arg(long)]
    pub history: Option<i32>,
}

/// `a2a list`'s arguments.
#[derive(Args)]
pub struct ListArgs {
    pub url: String,
    #[arg(long = "context")]
    pub context_id: Option<String>,
    /// Only tasks in this state (e.g. working, completed, input-required).
    #[arg(long)]
    pub status: Option<String>,
    /// Tasks per page (1..100).
    #[arg(long)]
    pub page_size: Option<i32>,
    #[arg(long)]
    pub page_token: Option<String>,
    /// Follow nextPageToken to the end.
    #[arg(long)]
    pub all: bool,
    #[arg(long)]
    pub history: Option<i32>,
    /// Include the tasks' artifacts.
    #[arg(long)]
    pub artifacts: bool,
}

type Outcome = Result<(), A2AError>;

/// The `--header` flags as (name, value) pairs.
pub fn extra_headers(conn: &Connection) -> Result<Vec<(String, String)>, A2AError> {
    let mut headers = Vec::new();
    for h in &conn.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| invalid(format!("--header {h:?} is not `NAME: VALUE`")))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(headers)
}

/// Every header the flags ask for: `--header`s, `--bearer` and `--api-key` (in
/// `--api-key-header`); an empty credential (an unset variable) is none.
pub fn request_headers(conn: &Connection) -> Result<Vec<(String, String)>, A2AError> {
    let mut headers = extra_headers(conn)?;
    if let Some(token) = conn.bearer.as_ref().filter(|t| !t.is_empty()) {
        headers.push(("Authorization".into(), format!("Bearer {token}")));
    }
    if let Some(key) = conn.api_key.as_ref().filter(|k| !k.is_empty()) {
        headers.push((conn.api_key_header.clone(), key.clone()));
    }
    Ok(headers)
}

/// The client for `url` with the connection flags applied.
pub async fn connect(url: &str, conn: &Connection) -> Result<Client, A2AError> {
    let headers = extra_headers(conn)?;
    // Core's one description of a client's options, as every binding uses it.
    let options = ClientOptions {
        // Both go when both are given (the agent accepts whichever it declares); an empty one
        // (an unset variable) is none.
        bearer_token: conn.bearer.clone().filter(|t| !t.is_empty()),
        api_key: conn.api_key.clone().filter(|k| !k.is_empty()).map(|k| (conn.api_key_header.clone(), k)),
        headers: Some(Headers::Pairs(headers)),
        // Core refuses what is not a positive, finite number of seconds.
        timeout: Some(conn.timeout),
        connect_timeout: conn.connect_timeout,
        stream_idle_timeout: conn.stream_idle_timeout,
        binding: Some(
            match conn.transport.as_str() {
                "http-json" => "HTTP+JSON",
                "grpc" => "GRPC",
                _ => "JSONRPC",
            }
            .to_owned(),
        ),
        ca_cert_file: conn.ca_cert.clone(),
        client_cert_files: conn.client_cert.clone().zip(conn.client_key.clone()),
        allow_v03: (conn.a2a_version.as_deref() == Some("1.0")).then_some(false),
        extensions: Some(conn.extensions.clone()),
        ..Default::default()
    };
    let mut builder = options.builder()?;
    let want_v03 = conn.a2a_version.as_deref() == Some("0.3");
    if want_v03 {
        builder = builder.prefer_v03(true);
    }
    let client = builder.connect(url).await?;
    // Asked for by name, 0.3 is not a preference to fall back from quietly.
    if want_v03 && client.protocol_version() != ProtocolVersion::V03 {
        return Err(A2AError::new(
            ErrorKind::VersionNotSupported,
            format!("the agent at {url} declares no A2A 0.3 interface (--a2a-version 0.3)"),
        ));
    }
    Ok(client)
}

pub async fn card(url: &str, extended: bool, verify: Option<&str>, conn: &Connection) -> Outcome {
    let client = connect(url, conn).await?;
    let extended_card = if extended { Some(client.get_extended_agent_card().await?) } else { None };
    let card = extended_card.as_ref().unwrap_or(client.card());
    if let Some(jwks) = verify {
        let keys = if jwks.starts_with("http://") || jwks.starts_with("https://") {
            a2a_native::client::fetch_jwks(jwks).await?
        } else {
            let text = std::fs::read(jwks).map_err(|e| invalid(format!("{jwks}: {e}")))?;
            serde_json::from_slice(&text).map_err(|e| invalid(format!("{jwks} is not a JWKS: {e}")))?
        };
        use jsonwebtoken::Algorithm::{ES256, EdDSA, RS256};
        let verified = a2a_native::signing::verify_card(card, &keys, &[ES256, RS256, EdDSA])?;
        eprintln!("signature verified: kid {:?}, {:?}", verified.kid, verified.alg);
    }
    if conn.json {
        print::json(&model::to_value(card));
    } else {
        print::card(card, client.url(), client.binding().as_str(), client.protocol_version().as_str());
    }
    Ok(())
}

pub async fn send(args: SendArgs, conn: &Connection) -> Outcome {
    let client = connect(&args.url, conn).await?;
    let mut message = Message::text(Role::User, args.text);
    if let Some(data) = &args.data {
        let value = serde_json::from_str(data).map_err(|e| invalid(format!("--data is not JSON: {e}")))?;
        message.parts.push(Part::data(value));
    }
    for path in &args.files {
        let bytes = std::fs::read(path).map_err(|e| invalid(format!("--file {}: {e}", path.display())))?;
        let mut part = Part::new(model::PartContent::Raw(bytes));
        part.filename = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        part.media_type = media_type(path).to_owned();
        message.parts.push(part);
    }
    for url in &args.file_urls {
        message.parts.push(Part::new(model::PartContent::Url(url.clone())));
    }
    if let Some(metadata) = &args.metadata {
        let value: serde_json::Value =
            serde_json::from_str(metadata).map_err(|e| invalid(format!("--metadata is not JSON: {e}")))?;
        let serde_json::Value::Object(map) = value else {
            return Err(invalid("--metadata must be a JSON object".to_owned()));
        };
        message.metadata = Some(map);
    }
    message.task_id = args.task_id.unwrap_or_default();
    message.context_id = args.context_id.unwrap_or_default();
    let mut req = SendMessageRequest::new(message);
    if args.return_immediately || args.history.is_some() {
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: args.return_immediately,
            history_length: args.history,
            ..Default::default()
        });
    }
    if args.stream {
        let events = client.send_streaming_message(req).await?;
        return print_stream(events, conn.json).await;
    }
    let reply = client.send_message(req).await?;
    if conn.json {
        print::json(&model::to_value(&reply));
    } else {
        print::send_reply(&reply);
    }
    Ok(())
}

/// A file's media type by its extension: the common ones, else bytes of no stated kind.
fn media_type(path: &std::path::Path) -> &'static str {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

pub async fn get(url: &str, task_id: String, history: Option<i32>, conn: &Connection) -> Outcome {
    let client = connect(url, conn).await?;
    let task = client.get_task(GetTaskRequest { id: task_id, history_length: history, ..Default::default() }).await?;
    if conn.json {
        print::json(&model::to_value(&task))
    } else {
        print::task(&task)
    }
    Ok(())
}

pub async fn cancel(url: &str, task_id: String, conn: &Connection) -> Outcome {
    let client = connect(url, conn).await?;
    let task = client.cancel_task(CancelTaskRequest { id: task_id, ..Default::default() }).await?;
    if conn.json {
        print::json(&model::to_value(&task))
    } else {
        print::task(&task)
    }
    Ok(())
}

pub async fn list(args: ListArgs, conn: &Connection) -> Outcome {
    let client = connect(&args.url, conn).await?;
    let status = args.status.as_deref().map(parse_state).transpose()?;
    let req = ListTasksRequest {
        context_id: args.context_id.unwrap_or_default(),
        status,
        page_size: args.page_size,
        page_token: args.page_token.unwrap_or_default(),
        history_length: args.history,
        include_artifacts: args.artifacts.then_some(true),
        ..Default::default()
    };
    if args.all {
        let mut tasks = std::pin::pin!(client.list_all_tasks(req));
        let mut n = 0usize;
        while let Some(task) = tasks.next().await {
            let task = task?;
            n += 1;
            if conn.json { print::json_line(&model::to_value(&task)) } else { print::task_line(&task) }
        }
        if !conn.json {
            outln!("{n} tasks");
        }
        return Ok(());
    }
    let page = client.list_tasks(req).await?;
    if conn.json {
        print::json(&model::to_value(&page));
    } else {
        for task in &page.tasks {
            print::task_line(task);
        }
        outln!(
            "{} of {} tasks{}",
            page.tasks.len(),
            page.total_size,
            print::safe(&next_page_hint(&page.next_page_token))
        );
    }
    Ok(())
}

fn next_page_hint(token: &str) -> String {
    if token.is_empty() { String::new() } else { format!("; next page: --page-token {token}") }
}

pub async fn subscribe(url: &str, task_id: String, conn: &Connection) -> Outcome {
    let client = connect(url, conn).await?;
    let events = client.subscribe_to_task(SubscribeToTaskRequest { id: task_id, ..Default::default() }).await?;
    print_stream(events, conn.json).await
}

pub async fn push(command: PushCommand, conn: &Connection) -> Outcome {
    match command {
        PushCommand::Set { url, task_id, webhook, token, id } => {
            let client = connect(&url, conn).await?;
            let config = TaskPushNotificationConfig {
                task_id,
                url: webhook,
                token: token.unwrap_or_default(),
                id: id.unwrap_or_default(),
                ..Default::default()
            };
            let created = client.create_push_config(config).await?;
            if conn.json { print::json(&model::to_value(&created)) } else { print::push_config(&created) }
        }
        PushCommand::Get { url, task_id, config_id } => {
            let client = connect(&url, conn).await?;
            let req = GetTaskPushNotificationConfigRequest { task_id, id: config_id, ..Default::default() };
            let config = client.get_push_config(req).await?;
            if conn.json { print::json(&model::to_value(&config)) } else { print::push_config(&config) }
        }
        PushCommand::List { url, task_id, page_size, page_token } => {
            let client = connect(&url, conn).await?;
            let req = ListTaskPushNotificationConfigsRequest {
                task_id,
                page_size: page_size.unwrap_or_default(),
                page_token: page_token.unwrap_or_default(),
                ..Default::default()
            };
            let page = client.list_push_configs(req).await?;
            if conn.json {
                print::json(&model::to_value(&page));
            } else {
                for config in &page.configs {
                    print::push_config(config);
                }
                outln!("{} configs{}", page.configs.len(), print::safe(&next_page_hint(&page.next_page_token)));
            }
        }
        PushCommand::Delete { url, task_id, config_id } => {
            let client = connect(&url, conn).await?;
            let req = GetTaskPushNotificationConfigRequest { task_id, id: config_id, ..Default::default() };
            client.delete_push_config(req).await?;
            if conn.json { print::json(&serde_json::json!({})) } else { outln!("deleted") }
        }
    }
    Ok(())
}

/// Prints a stream's events as they come; an error inside the stream ends the command with it.
async fn print_stream(mut events: a2a_native::client::EventStream, json: bool) -> Outcome {
    let mut progress = print::Progress::new(!json);
    while let Some(event) = events.next().await {
        let event = event?;
        progress.clear();
        if json {
            print::json_line(&model::to_value(&event))
        } else {
            print::event(&event)
        }
        progress.update(&event);
    }
    progress.finish();
    Ok(())
}

/// `working`, `input-required`, `TASK_STATE_WORKING`, ... as a TaskState.
fn parse_state(name: &str) -> Result<TaskState, A2AError> {
    let upper = name.trim().to_ascii_uppercase().replace('-', "_");
    let full = if upper.starts_with("TASK_STATE_") { upper } else { format!("TASK_STATE_{upper}") };
    TaskState::from_name(&full).filter(|s| *s != TaskState::Unspecified).ok_or_else(|| {
        invalid(format!("--status {name:?} is not a task state (working, completed, input-required, ...)"))
    })
}

fn invalid(message: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, message)
}
