//! The agents `a2a serve` can run without any user code: `echo` (the default, and the
//! benchmark's agent) and `conformance` (the agent the official TCK scripts).

pub mod conformance;
pub mod echo;
