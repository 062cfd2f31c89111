//! A client's options in one strict JSON form, read the same in every language (an unknown or
//! mistyped option is refused, naming it), and the [`ClientBuilder`] they describe.
//!
//! ```json
//! {"bearerToken": "…", "apiKey": ["X-API-Key", "…"], "headers": [["x-trace", "1"]],
//!  "timeout": 30, "connectTimeout": 10, "streamIdleTimeout": 300,
//!  "binding": "HTTP+JSON", "retries": 2, "streamReconnects": 5,
//!  "cardBearerToken": "…", "cardApiKey": "…", "clientCredentials": ["id", "secret"],
//!  "caCert": "-----BEGIN CERTIFICATE-----…", "clientIdentity": "-----BEGIN …",
//!  "allowV03": true, "extensions": ["https://example.com/ext/v1"], "maxResponseBytes": 67108864}
//! ```
//! `timeout`, `connectTimeout` and `streamIdleTimeout` are in seconds, in every language.
//! `headers` may also be an object. Instead of PEM text, `caCertFile` and `clientCertFiles`
//! (`[certificate file, key file]`) name PEM files.

use super::{ApiKey, Binding, CardCredentials, Client, ClientBuilder, StaticBearer};
use crate::error::{A2AError, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// See the module's doc.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientOptions {
    #[serde(default, alias = "bearer_token")]
    pub bearer_token: Option<String>,
    /// `[header name, value]`.
    #[serde(default, alias = "api_key")]
    pub api_key: Option<(String, String)>,
    #[serde(default)]
    pub headers: Option<Headers>,
    /// Seconds.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Seconds establishing a connection may take (default 10).
    #[serde(default, alias = "connect_timeout")]
    pub connect_timeout: Option<f64>,
    /// Seconds a stream may stay silent (no event, no keep-alive) before it counts as dropped
    /// and is resubscribed (default 300).
    #[serde(default, alias = "stream_idle_timeout")]
    pub stream_idle_timeout: Option<f64>,
    /// `JSONRPC` (default) or `HTTP+JSON`.
    #[serde(default)]
    pub binding: Option<String>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default, alias = "stream_reconnects")]
    pub stream_reconnects: Option<u32>,
    #[serde(default, alias = "card_bearer_token")]
    pub card_bearer_token: Option<String>,
    #[serde(default, alias = "card_api_key")]
    pub card_api_key: Option<String>,
    /// `[client id, client secret]`.
    #[serde(default, alias = "client_credentials")]
    pub client_credentials: Option<(String, String)>,
    /// A CA certificate (PEM) to trust besides the system's.
    #[serde(default, alias = "ca_cert")]
    pub ca_cert: Option<String>,
    /// A client certificate and its key (PEM), for mutual TLS.
    #[serde(default, alias = "client_identity")]
    pub client_identity: Option<String>,
    /// `caCert`, read from this PEM file.
    #[serde(default, alias = "ca_cert_file")]
    pub ca_cert_file: Option<PathBuf>,
    /// `clientIdentity`, read from `[certificate PEM file, key PEM file]`.
    #[serde(default, alias = "client_cert_files")]
    pub client_cert_files: Option<(PathBuf, PathBuf)>,
    #[serde(default, alias = "allow_v03")]
    pub allow_v03: Option<bool>,
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    /// The most bytes one response or one stream event may take (default 64 MiB): what the
    /// agent sends beyond it fails the call (InvalidAgentResponse) instead of filling memory.
    #[serde(default, alias = "max_response_bytes")]
    pub max_response_bytes: Option<u64>,
}

/// A PEM file's bytes; InvalidParams naming `field` and the file when it cannot be read.
fn read_pem(field: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| A2AError::invalid_field(field, format!("{}: {e}", path.display())))
}

/// Extra headers: `[[name, value], …]` or `{name: value}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, expecting = "an object of header name to value, or a list of [name, value] pairs")]
pub enum Headers {
    Pairs(Vec<(String, String)>),
    Map(BTreeMap<String, String>),
}

impl ClientOptions {
    /// Reads the JSON form; InvalidParams naming what is wrong (an unknown key included).
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        A2AError::from_options(value)
    }

    /// The builder these options describe (a binding may add what JSON cannot carry, such as a
    /// credentials callback).
    pub fn builder(&self) -> Result<ClientBuilder> {
        let mut b = Client::builder();
        if let Some(token) = &self.bearer_token {
            b = b.credentials(Arc::new(StaticBearer::new(token.clone())));
        }
        if let Some((name, value)) = &self.api_key {
            b = b.credentials(Arc::new(ApiKey::header(name.clone(), value.clone())));
        }
        let headers: Vec<(String, String)> = match &self.headers {
            None => Vec::new(),
            Some(Headers::Pairs(p)) => p.clone(),
            Some(Headers::Map(m)) => m.clone().into_iter().collect(),
        };
        for (name, value) in headers {
            b = b.header(name, value);
        }
        if let Some(secs) = self.timeout {
            // Zero would fail every call at once (or let a connect through by chance).
            b = b.timeout(crate::error::positive_seconds(secs, "timeout")?);
        }
        if let Some(secs) = self.connect_timeout {
            b = b.connect_timeout(crate::error::positive_seconds(secs, "connectTimeout")?);
        }
        if let Some(secs) = self.stream_idle_timeout {
            b = b.stream_idle_timeout(Some(crate::error::positive_seconds(secs, "streamIdleTimeout")?));
        }
        if let Some(name) = &self.binding {
            let binding = Binding::from_name(name)
                .ok_or_else(|| A2AError::invalid_field("binding", format!("unknown binding {name:?}")))?;
            b = b.preferred_binding(binding);
        }
        if let Some(n) = self.retries {
            b = b.max_retries(n);
        }
        if let Some(n) = self.stream_reconnects {
            b = b.stream_reconnects(n);
        }
        if self.card_bearer_token.is_some() || self.card_api_key.is_some() || self.client_credentials.is_some() {
            let mut c = CardCredentials::new();
            if let Some(t) = &self.card_bearer_token {
                c = c.with_bearer_token(t.clone());
            }
            if let Some(k) = &self.card_api_key {
                c = c.with_api_key(k.clone());
            }
            if let Some((id, secret)) = &self.client_credentials {
                c = c.with_client_credentials(id.clone(), secret.clone());
            }
            b = b.credentials(Arc::new(c));
        }
        let ca_cert = match (&self.ca_cert, &self.ca_cert_file) {
            (Some(pem), _) => Some((pem.clone().into_bytes(), "caCert")),
            (None, Some(path)) => Some((read_pem("caCertFile", path)?, "caCertFile")),
            (None, None) => None,
        };
        if let Some((pem, field)) = ca_cert {
            // Checked here to name the field; `from_pem` takes text with no certificate in it
            // as none at all: refused.
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| A2AError::invalid_field(field, e.to_string()))?;
            if certs.is_empty() {
                return Err(A2AError::invalid_field(field, "no PEM certificate in it"));
            }
            b = b.tls_root_pem(pem);
        }
        let identity = match (&self.client_identity, &self.client_cert_files) {
            (Some(pem), _) => Some((pem.clone().into_bytes(), "clientIdentity")),
            (None, Some((cert, key))) => Some((
                [read_pem("clientCertFiles", cert)?, read_pem("clientCertFiles", key)?].concat(),
                "clientCertFiles",
            )),
            (None, None) => None,
        };
        if let Some((pem, field)) = identity {
            reqwest::Identity::from_pem(&pem).map_err(|e| A2AError::invalid_field(field, e.to_string()))?;
            b = b.tls_identity_pem(pem);
        }
        if let Some(allow) = self.allow_v03 {
            b = b.allow_v03(allow);
        }
        if let Some(uris) = &self.extensions {
            b = b.extensions(uris.clone());
        }
        if let Some(n) = self.max_response_bytes {
            let n = usize::try_from(n).ok().filter(|n| *n > 0);
            let n = n.ok_or_else(|| A2AError::invalid_field("maxResponseBytes", "at least 1 byte"))?;
            b = b.max_response_bytes(n).max_event_bytes(n);
        }
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_mistyped_client_option_is_refused_by_name() {
        for (options, field) in
            [(json!({"timout": 5}), "timout"), (json!({"apiKey": "x"}), "apiKey"), (json!({"retries": -1}), "retries")]
        {
            let e = ClientOptions::from_value(options.clone()).unwrap_err();
            assert!(e.message.contains(field), "{options}: {}", e.message);
        }
        let o = ClientOptions::from_value(
            json!({"timeout": 1.5, "headers": {"x-a": "1"}, "allow_v03": false, "extensions": ["u"]}),
        )
        .unwrap();
        assert_eq!(o.timeout, Some(1.5));
        assert!(o.builder().is_ok());
        assert!(ClientOptions::from_value(json!({"binding": "CARRIER-PIGEON"})).unwrap().builder().is_err());
        for (options, field, says) in [
            (json!({"timeout": -1}), "timeout", "positive"),
            (json!({"timeout": 0}), "timeout", "positive"),
            (json!({"connect_timeout": -2}), "connectTimeout", "positive"),
            (json!({"streamIdleTimeout": 0}), "streamIdleTimeout", "positive"),
            (json!({"headers": "x-a: 1"}), "headers", "list of [name, value] pairs"),
            (json!("JSONRPC"), "", "options must be an object"),
        ] {
            let e = ClientOptions::from_value(options.clone()).and_then(|o| o.builder().map(drop)).unwrap_err();
            assert_eq!(e.violations[0].field, field, "{options}: {e}");
            assert!(e.message.contains(says) && !e.message.contains("untagged"), "{options}: {e}");
        }
    }

    #[test]
    fn pem_files_are_read_and_a_bad_one_is_named() {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let ca = format!("{fixtures}/tls-ca.pem");
        let client = format!("{fixtures}/tls-client.pem");
        assert!(ClientOptions::from_value(json!({"caCertFile": ca})).unwrap().builder().is_ok());
        for (options, field) in [
            (json!({"ca_cert_file": "/no/such.pem"}), "caCertFile"),
            (json!({"clientCertFiles": ["/no/such.pem", client.clone()]}), "clientCertFiles"),
            // A certificate without its key is no identity.
            (json!({"clientCertFiles": [client.clone(), client]}), "clientCertFiles"),
            (json!({"caCertFile": format!("{fixtures}/../../Cargo.toml")}), "caCertFile"),
        ] {
            let e = ClientOptions::from_value(options.clone()).unwrap().builder().err();
            let e = e.unwrap_or_else(|| panic!("{options} was accepted"));
            assert_eq!(e.kind, crate::error::ErrorKind::InvalidParams);
            assert!(e.message.starts_with(field), "{options}: {}", e.message);
        }
    }
}
