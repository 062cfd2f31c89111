//! Server settings: the limits every request is held to, and the push sender's settings.
//! Every limit is explicit, configurable, and answered with the spec's error when exceeded.

use std::time::Duration;

/// Limits on what one client can make the server hold.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body accepted (413 / -32600 beyond it).
    pub max_body_bytes: usize,
    /// Most bytes of request bodies larger than 64 KiB held at once, server-wide, from their
    /// arrival until their request is answered (a body grows up to ~20x when parsed): beyond
    /// it such a request gets 503 with `Retry-After`. Bodies of 64 KiB or less share a second
    /// budget of the same size, so large ones cannot starve them. Buffered answers not yet sent
    /// have budgets of the same size, apart (one larger than a budget takes all of it; past
    /// them a read is refused with 503, an answer to a write goes out uncovered). Never less
    /// than `max_body_bytes`.
    pub max_body_bytes_in_flight: usize,
    /// Most parts in one message (InvalidParams beyond it).
    pub max_parts_per_message: usize,
    /// Most history messages returned by any read; a larger or absent `historyLength` is capped.
    pub max_history_length: usize,
    /// About how many bytes of the client's messages one task may hold (counted as the memory
    /// store counts bytes, which errs high for structured data): a message that would take a
    /// task past it is refused (InvalidRequest), so no client can grow one task, and every
    /// read of it, without end. What the agent produced does not count, so a client can always
    /// answer an agent that asks for input.
    pub max_task_bytes: usize,
    /// Most concurrent streams (SendStreamingMessage + SubscribeToTask) on one task.
    pub max_streams_per_task: usize,
    /// How long a blocking SendMessage waits for a terminal or interrupted state before it
    /// returns the task as it stands.
    pub blocking_timeout: Duration,
    /// Largest request head (request line and headers; HTTP/2: the header list) accepted:
    /// 431 beyond it, so idle connections holding half-sent headers stay cheap.
    pub max_header_bytes: usize,
    /// How long a client may take to send its first byte or finish its TLS handshake (else
    /// the connection closes), and on HTTP/1 to send a whole request head once it has begun
    /// (else 408 and the connection closes), so headers trickled forever hold nothing.
    pub header_read_timeout: Duration,
    /// How long a request body may take to arrive once its headers have: 408 (and the
    /// connection closed) beyond it, so a body trickled forever holds nothing.
    pub body_read_timeout: Duration,
    /// How long a connection may stay open with no request in flight (an open stream is one)
    /// before the server closes it (HTTP/2: GOAWAY), so idle clients hold no descriptor for
    /// ever; and how long a write may wait for a client that stopped reading (or an HTTP/2
    /// stream for a client that keeps its window shut) before the connection is dropped.
    /// Longer than the usual client pool's idle timeout (90 s), so pooled clients see the
    /// close only after they would have dropped the connection themselves. Checked once per
    /// period: a connection goes within one to two of them.
    pub idle_timeout: Duration,
    /// How long an executor's `execute` may run before it is stopped and its task ends FAILED
    /// ("the executor did not return within ..."); `None`: as long as it takes (agents may
    /// legitimately work for hours). Bounds executors that never return.
    pub executor_timeout: Option<Duration>,
    /// Most connections served at once. At the cap the server stops accepting until one
    /// closes: new clients wait in the listen backlog instead of each costing buffers and a
    /// descriptor, so a client opening thousands cannot exhaust the process.
    pub max_connections: usize,
    /// Most requests one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS;
    /// more are refused with REFUSED_STREAM, which clients retry). Each open request costs some
    /// kilobytes before its body has arrived, so this times `max_connections` bounds what
    /// unfinished requests may hold.
    pub max_streams_per_connection: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 8 * 1024 * 1024,
            max_body_bytes_in_flight: 64 * 1024 * 1024,
            max_parts_per_message: 256,
            max_history_length: 1000,
            max_task_bytes: 64 * 1024 * 1024,
            max_streams_per_task: 64,
            // gRPC servers' usual default (grpc-go's); hyper's was 200.
            max_streams_per_connection: 100,
            blocking_timeout: Duration::from_secs(600),
            max_header_bytes: 64 * 1024,
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(120),
            executor_timeout: None,
            max_connections: 4096,
        }
    }
}

/// Everything a server needs besides its agent, card and stores.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub limits: Limits,
    pub push: crate::push::PushSenderConfig,
    pub task_visibility: TaskVisibility,
    /// On graceful shutdown, how long running executions may take to finish before they are
    /// stopped and their tasks end FAILED.
    pub shutdown_grace: Duration,
    /// Stores shared by several instances (PostgreSQL): how long an instance's hold on a task
    /// it runs lasts without renewal (it renews every third of it). When it expires, any
    /// instance's reaper ends the task FAILED: its instance is presumed lost.
    pub lease: Duration,
    /// How often each instance looks for tasks whose owner's lease expired.
    pub reap_interval: Duration,
    /// Where the server, its task manager and its push sender record (see `server::Server::metrics`).
    pub metrics: std::sync::Arc<crate::metrics::Metrics>,
    /// Extension methods the agent serves beside the core ones (checked against the card by
    /// `crate::methods::check` when the server is made).
    pub methods: Vec<crate::methods::MethodSpec>,
    /// Profile extensions whose rules the executor checks on every incoming message of a
    /// request that activates them (`AgentExecutor::check_message`).
    pub profile_checks: Vec<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            push: Default::default(),
            task_visibility: TaskVisibility::default(),
            shutdown_grace: Duration::from_secs(1),
            // A dead owner is found within lease + reap_interval = 8 s.
            lease: Duration::from_secs(6),
            reap_interval: Duration::from_secs(2),
            metrics: Default::default(),
            methods: Vec::new(),
            profile_checks: Vec::new(),
        }
    }
}

/// Who may see a task created by an authenticated caller.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskVisibility {
    /// Only the principal that created it (within its tenant): others get TaskNotFound, and
    /// ListTasks shows each caller its own tasks.
    #[default]
    PerPrincipal,
    /// Every caller of the tenant (an agent whose callers are one team).
    Shared,
}
