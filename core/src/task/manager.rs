//! Runs executors and applies their events: one writer per task.
use crate::executor::AgentExecutor;
use crate::server::config::ServerConfig;
use crate::server::handler::Stores;
use std::sync::Arc;

pub struct TaskManager {
    #[allow(dead_code)]
    agent: Arc<dyn AgentExecutor>,
    #[allow(dead_code)]
    stores: Stores,
}

impl TaskManager {
    pub fn new(agent: Arc<dyn AgentExecutor>, stores: Stores, _config: &ServerConfig) -> Self {
        Self { agent, stores }
    }
}
