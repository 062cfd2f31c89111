//! How the client commands show A2A objects to a person (and as JSON for scripts). Text output
//! is one fact per line, so it reads well and still greps; `--json` prints ProtoJSON.

use a2a_native::model::{
    AgentCard, Artifact, Message, Part, PartContent, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use serde_json::Value;
use std::borrow::Cow;
use std::io::{IsTerminal, Write};

/// `outln!` for text that holds what an agent sent (names, messages, parts): see [`safe`].
macro_rules! say {
    ($($arg:tt)*) => { outln!("{}", safe(&format!($($arg)*))) };
}

/// Writes `args` and a line break to standard output (see `outln!`).
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `text` made safe for a terminal: control characters (an escape sequence that retitles the
/// window or clears the screen, a carriage return that overwrites the line) are shown escaped,
/// as `\u{1b}`; line breaks and tabs stay. An agent's text is not trusted to drive a terminal.
pub fn safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars().map(|c| if unsafe_char(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect(),
    )
}

pub fn json(value: &Value) {
    outln!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

pub fn json_line(value: &Value) {
    outln!("{value}");
}

pub fn card(card: &AgentCard, url: &str, binding: &str, version: &str) {
    say!("{} (version {})", card.name, card.version);
    say!("  {}", card.description);
    say!("  talking to {url} over {binding} {version}");
    for i in &card.supported_interfaces {
        let tenant = if i.tenant.is_empty() { String::new() } else { format!(" tenant {}", i.tenant) };
        say!("  interface: {} {} at {}{tenant}", i.protocol_binding, i.protocol_version, i.url);
    }
    let c = &card.capabilities;
    let on = |v: Option<bool>| if v == Some(true) { "yes" } else { "no" };
    say!(
        "  capabilities: streaming {}, push notifications {}, extended card {}",
        on(c.streaming),
        on(c.push_notifications),
        on(c.extended_agent_card)
    );
    for e in &c.extensions {
        say!("  extension: {}{}", e.uri, if e.required { " (required)" } else { "" });
    }
    for name in card.security_schemes.keys() {
        say!("  security scheme: {name}");
    }
    say!("  input: {}; output: {}", card.default_input_modes.join(", "), card.default_output_modes.join(", "));
    for s in &card.skills {
        say!("  skill {}: {} ({})", s.id, s.name, s.tags.join(", "));
        if !s.description.is_empty() {
            say!("    {}", s.description);
        }
    }
}

pub fn send_reply(reply: &SendMessageResponse) {
    match reply {
        SendMessageResponse::Task(t) => task(t),
        SendMessageResponse::Message(m) => message("reply", m),
    }
}

/// A task with its status, its artifacts and, when asked for, its history.
pub fn task(task: &Task) {
    say!("task {} (context {}): {}", task.id, task.context_id, state(task.status.state));
    if let Some(m) = &task.status.message {
        message("  status", m);
    }
    for a in &task.artifacts {
        artifact("  ", a);
    }
    for m in &task.history {
        message("  history", m);
    }
}

/// One line per task, for lists.
pub fn task_line(task: &Task) {
    let when = task.status.timestamp.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)).unwrap_or_default();
    say!("{}  {:<15}  {}  context {}", task.id, state(task.status.state), when, task.context_id);
}

pub fn event(event: &StreamResponse) {
    match event {
        StreamResponse::Task(t) => say!("[task] {} (context {}): {}", t.id, t.context_id, state(t.status.state)),
        StreamResponse::Message(m) => message("[message]", m),
        StreamResponse::StatusUpdate(e) => {
            let text = e.status.message.as_ref().map(|m| format!(": {}", parts_text(&m.parts))).unwrap_or_default();
            say!("[status] {}{text}", state(e.status.state));
        }
        StreamResponse::ArtifactUpdate(e) => {
            let how = if e.append { " (appended)" } else { "" };
            artifact(&format!("[artifact{how}] "), &e.artifact);
        }
    }
}

pub fn push_config(config: &TaskPushNotificationConfig) {
    let token = if config.token.is_empty() { "" } else { " (with token)" };
    let auth = config.authentication.as_ref().map(|a| format!(" auth {}", a.scheme)).unwrap_or_default();
    say!("push config {} for task {}: {}{token}{auth}", config.id, config.task_id, config.url);
}

fn message(label: &str, m: &Message) {
    let role = match m.role.as_str() {
        "ROLE_AGENT" => "agent",
        "ROLE_USER" => "user",
        other => other,
    };
    say!("{label} ({role}): {}", parts_text(&m.parts));
}

fn artifact(prefix: &str, a: &Artifact) {
    let name = if a.name.is_empty() { a.artifact_id.as_str() } else { a.name.as_str() };
    say!("{prefix}artifact {name}: {}", parts_text(&a.parts));
}

fn parts_text(parts: &[Part]) -> String {
    parts.iter().map(part).collect::<Vec<_>>().join(" | ")
}

fn part(p: &Part) -> String {
    match &p.content {
        PartContent::Text(t) => t.clone(),
        PartContent::Raw(bytes) => format!("<{} bytes{}>", bytes.len(), media(p)),
        PartContent::Url(url) => format!("<{url}{}>", media(p)),
        PartContent::Data(v) => v.to_string(),
    }
}

fn media(p: &Part) -> String {
    let mut s = String::new();
    if !p.filename.is_empty() {
        s.push_str(&format!(" {}", p.filename));
    }
    if !p.media_type.is_empty() {
        s.push_str(&format!(" {}", p.media_type));
    }
    s
}

/// `TASK_STATE_INPUT_REQUIRED` -> `input-required`.
fn state(s: TaskState) -> String {
    s.as_str().trim_start_matches("TASK_STATE_").to_ascii_lowercase().replace('_', "-")
}

/// A one-line progress indicator on stderr while a stream runs (only on a terminal).
pub struct Progress {
    on: bool,
    events: usize,
    last: String,
}

impl Progress {
    pub fn new(wanted: bool) -> Self {
        Self { on: wanted && std::io::stderr().is_terminal(), events: 0, last: String::new() }
    }

    pub fn update(&mut self, event: &StreamResponse) {
        self.events += 1;
        match event {
            StreamResponse::Task(t) => self.last = state(t.status.state),
            StreamResponse::StatusUpdate(e) => self.last = state(e.status.state),
            _ => {}
        }
        if self.on {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r… {} events, {}", self.events, self.last);
            let _ = err.flush();
        }
    }

    pub fn clear(&self) {
        if self.on && self.events > 0 {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    pub fn finish(&self) {
        self.clear();
        if self.on {
            eprintln!(
                "stream ended after {} events ({})",
                self.events,
                if self.last.is_empty() { "no task" } else { &self.last }
            );
        }
    }
}
