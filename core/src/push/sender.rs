//! Delivers StreamResponse events to registered webhooks.
use crate::error::Result;
use crate::model::{StreamResponse, TaskPushNotificationConfig};
use std::time::Duration;

/// How the sender delivers.
#[derive(Debug, Clone)]
pub struct PushSenderConfig {
    /// Per-attempt timeout (connect + response).
    pub timeout: Duration,
    /// Attempts per notification, the first included.
    pub max_attempts: u32,
    /// Delay before the first retry; doubled each retry up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Notifications waiting across all tasks; beyond it new ones are dropped (and logged).
    pub queue_capacity: usize,
    /// Allow loopback, private, link-local and other non-public targets (tests, intranets).
    pub allow_private_targets: bool,
}

impl Default for PushSenderConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            queue_capacity: 10_000,
            allow_private_targets: false,
        }
    }
}

/// Sends push notifications in the background. Cheap to clone.
#[derive(Clone)]
pub struct PushSender {
    config: PushSenderConfig,
}

impl PushSender {
    pub fn new(config: PushSenderConfig) -> Self {
        Self { config }
    }

    /// Checks a webhook URL when a config is created: http(s) only, and no non-public target
    /// unless allowed. InvalidParams naming `field` on refusal.
    pub fn check_url(&self, url: &str, field: &str) -> Result<()> {
        let _ = (url, field, &self.config);
        Ok(())
    }

    /// Queues `event` for delivery to `config.url`. Never blocks; per-task order is kept.
    pub fn enqueue(&self, config: &TaskPushNotificationConfig, event: &StreamResponse) {
        let _ = (config, event);
    }

    /// Waits up to `deadline` for queued notifications to go out.
    pub async fn shutdown(&self, deadline: Duration) {
        let _ = deadline;
    }
}
