//! The agent card: interfaces, capabilities, extensions, skills and security schemes.

use super::util::nullable;
use crate::error::{A2AError, Result};
use crate::model::validate::{each, join, required};
use crate::model::{self as m, Struct, Validate};
use serde::de;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------------------------

/// The 0.3 agent card. `provider` and `signatures` have the same shape as in 1.0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The schema's default (`0.3.0`) when absent, as a2a-sdk 0.3 reads it (0.2-era cards
    /// leave it out).
    #[serde(default = "default_protocol_version")]
    pub protocol_version: String,
    pub name: String,
    pub description: String,
    /// The preferred endpoint; serves `preferredTransport`.
    pub url: String,
    /// Absent means `JSONRPC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub additional_interfaces: Vec<AgentInterface>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<m::AgentProvider>,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    pub capabilities: AgentCapabilities,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
    pub default_input_modes: Vec<String>,
    pub default_output_modes: Vec<String>,
    pub skills: Vec<AgentSkill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<m::AgentCardSignature>,
}

/// OpenAPI security requirement: scheme name → scopes.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom name.
    pub transport: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Removed in 1.0: dropped by the conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    pub id: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
}

/// OpenAPI 3.0 security scheme, discriminated by `type`.
// Unboxed like the 1.0 oneof: a card holds a handful of schemes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type")]
pub enum SecurityScheme {
    #[serde(rename = "apiKey")]
    ApiKey(ApiKeySecurityScheme),
    #[serde(rename = "http")]
    Http(HttpAuthSecurityScheme),
    #[serde(rename = "oauth2")]
    OAuth2(OAuth2SecurityScheme),
    #[serde(rename = "openIdConnect")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    #[serde(rename = "mutualTLS")]
    MutualTls(MutualTlsSecurityScheme),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `query`, `header` or `cookie` (1.0 `location`).
    #[serde(rename = "in")]
    pub location: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub scheme: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub flows: OAuthFlows,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth2_metadata_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub open_id_connect_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MutualTlsSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Any number of flows at once (OpenAPI); 1.0 allows exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    pub authorization_url: String,
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    pub authorization_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

/// Every member optional; which ones are required depends on `type`, checked after reading.
#[derive(Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
struct SecuritySchemeWire {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "in")]
    location: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    scheme: Option<String>,
    #[serde(default)]
    bearer_format: Option<String>,
    #[serde(default)]
    flows: Option<OAuthFlows>,
    #[serde(default)]
    oauth2_metadata_url: Option<String>,
    #[serde(default)]
    open_id_connect_url: Option<String>,
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = <SecuritySchemeWire as Deserialize>::deserialize(d)?;
        let missing = |name: &str| D::Error::custom(format!("missing field `{name}`"));
        let description = w.description;
        Ok(match w.kind.as_deref() {
            Some("apiKey") => SecurityScheme::ApiKey(ApiKeySecurityScheme {
                description,
                location: w.location.ok_or_else(|| missing("in"))?,
                name: w.name.ok_or_else(|| missing("name"))?,
            }),
            Some("http") => SecurityScheme::Http(HttpAuthSecurityScheme {
                description,
                scheme: w.scheme.ok_or_else(|| missing("scheme"))?,
                bearer_format: w.bearer_format,
            }),
            Some("oauth2") => SecurityScheme::OAuth2(OAuth2SecurityScheme {
                description,
                flows: w.flows.ok_or_else(|| missing("flows"))?,
                oauth2_metadata_url: w.oauth2_metadata_url,
            }),
            Some("openIdConnect") => SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url: w.open_id_connect_url.ok_or_else(|| missing("openIdConnectUrl"))?,
            }),
            Some("mutualTLS") => SecurityScheme::MutualTls(MutualTlsSecurityScheme { description }),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unknown security scheme type {other:?}; expected apiKey, http, oauth2, openIdConnect or mutualTLS"
                )));
            }
            None => return Err(missing("type")),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Validation (what serde cannot check)
// ---------------------------------------------------------------------------------------------

fn default_protocol_version() -> String {
    super::PROTOCOL_VERSION.to_owned()
}

impl Validate for AgentCard {
    /// What the 0.3 schema requires, no more: its strings may be empty (`description: ""`),
    /// its lists too (a2a-sdk 0.3 reads such cards).
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "protocolVersion", &self.protocol_version)?;
        required(at, "name", &self.name)?;
        required(at, "url", &self.url)?;
        for (i, iface) in self.additional_interfaces.iter().enumerate() {
            let at = format!("{}[{i}]", join(at, "additionalInterfaces"));
            required(&at, "url", &iface.url)?;
            required(&at, "transport", &iface.transport)?;
        }
        if let Some(p) = &self.provider {
            p.validate_at(&join(at, "provider"))?;
        }
        required(at, "version", &self.version)?;
        for (i, ext) in self.capabilities.extensions.iter().enumerate() {
            required(&format!("{}[{i}]", join(at, "capabilities.extensions")), "uri", &ext.uri)?;
        }
        for (name, scheme) in &self.security_schemes {
            scheme.validate_at(&format!("{}.{name}", join(at, "securitySchemes")))?;
        }
        each(at, "skills", &self.skills)?;
        each(at, "signatures", &self.signatures)
    }
}

impl Validate for AgentSkill {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        required(at, "name", &self.name)?;
        required(at, "description", &self.description)
    }
}

impl Validate for SecurityScheme {
    fn validate_at(&self, at: &str) -> Result<()> {
        match self {
            SecurityScheme::ApiKey(s) => {
                if !matches!(s.location.as_str(), "query" | "header" | "cookie") {
                    return Err(A2AError::invalid_field(join(at, "in"), "must be query, header or cookie"));
                }
                required(at, "name", &s.name)
            }
            SecurityScheme::Http(s) => required(at, "scheme", &s.scheme),
            SecurityScheme::OAuth2(s) => {
                let at = join(at, "flows");
                if let Some(f) = &s.flows.authorization_code {
                    required(&join(&at, "authorizationCode"), "authorizationUrl", &f.authorization_url)?;
                    required(&join(&at, "authorizationCode"), "tokenUrl", &f.token_url)?;
                }
                if let Some(f) = &s.flows.client_credentials {
                    required(&join(&at, "clientCredentials"), "tokenUrl", &f.token_url)?;
                }
                if let Some(f) = &s.flows.implicit {
                    required(&join(&at, "implicit"), "authorizationUrl", &f.authorization_url)?;
                }
                if let Some(f) = &s.flows.password {
                    required(&join(&at, "password"), "tokenUrl", &f.token_url)?;
                }
                Ok(())
            }
            SecurityScheme::OpenIdConnect(s) => required(at, "openIdConnectUrl", &s.open_id_connect_url),
            SecurityScheme::MutualTls(_) => Ok(()),
        }
    }
}

crate::model::wire::json_objects!(
    AgentCard,
    AgentInterface,
    AgentCapabilities,
    AgentExtension,
    AgentSkill,
    OAuthFlows,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
    SecuritySchemeWire
);
crate::model::wire::json_objects!(serialize: AgentCard, AgentInterface, AgentCapabilities, AgentExtension, AgentSkill, OAuthFlows, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, ImplicitOAuthFlow, PasswordOAuthFlow);
