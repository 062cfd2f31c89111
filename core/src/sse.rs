//! Server-Sent Events: incremental encoder and decoder (being written).
