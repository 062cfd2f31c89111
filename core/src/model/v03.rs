//! The A2A 0.3 JSON-RPC wire form and conversion to and from 1.0 (being written).
