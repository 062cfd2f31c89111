//! Discovery objects (spec §3.5–3.6): the Agent Card, its interfaces, capabilities, skills,
//! signatures, security schemes and security requirements.

use super::task::Struct;
use super::wire::{is_false, proto_oneof};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Where an agent's card is served (spec §8.2).
pub const WELL_KNOWN_PATH: &str = "/.well-known/agent-card.json";
/// The A2A 0.2 card path, still served and fetched (after a 404 at the first) for old peers.
pub const LEGACY_WELL_KNOWN_PATH: &str = "/.well-known/agent.json";

/// Protocol binding names used in [`AgentInterface::protocol_binding`].
pub mod binding {
    pub const JSONRPC: &str = "JSONRPC";
    pub const HTTP_JSON: &str = "HTTP+JSON";
    pub const GRPC: &str = "GRPC";
}

/// What an agent is, where it listens and what it can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    pub name: String,
    pub description: String,
    /// Ordered by preference: the first is the one a client should pick.
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    pub version: String,
    #[serde(alias = "documentation_url", default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    pub capabilities: AgentCapabilities,
    #[serde(alias = "security_schemes", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Also read from the 0.3-style `security` key that the spec's own sample card uses
    /// ([`SecurityAlias`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    pub skills: Vec<AgentSkill>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    #[serde(alias = "icon_url", default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom URI.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// `Major.Minor`, e.g. `1.0`.
    #[serde(alias = "protocol_version")]
    pub protocol_version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    pub url: String,
    pub organization: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    #[serde(alias = "push_notifications", default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    #[serde(alias = "extended_agent_card", default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uri: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    #[serde(alias = "input_modes", default, skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    #[serde(alias = "output_modes", default, skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Also read from the 0.3-style `security` key ([`SecurityAlias`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JWS (JSON serialisation, detached payload) over the canonical card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// base64url of the protected header.
    pub protected: String,
    /// base64url of the signature.
    pub signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Struct>,
}

/// `{"list": [...]}`: the scopes one scheme needs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct StringList {
    #[serde(default)]
    pub list: Vec<String>,
}

/// One alternative of a card's security: every named scheme (with its scopes) must be met.
/// A list of requirements is an OR of these ANDs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SecurityRequirement {
    pub schemes: BTreeMap<String, StringList>,
}

impl<'de> Deserialize<'de> for SecurityRequirement {
    /// Reads the proto form `{"schemes": {"name": {"list": [...]}}}` and the 0.3 form
    /// `{"name": [...]}` (still in the spec's sample card).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Proto {
            #[serde(default)]
            schemes: BTreeMap<String, StringList>,
        }
        let value = serde_json::Value::deserialize(d)?;
        let proto_shape = match value.get("schemes") {
            Some(serde_json::Value::Object(_)) => true,
            Some(_) => false,
            None => value.as_object().is_some_and(|o| o.is_empty()),
        };
        if proto_shape {
            let p: Proto = serde_json::from_value(value).map_err(D::Error::custom)?;
            return Ok(Self { schemes: p.schemes });
        }
        let legacy: BTreeMap<String, Vec<String>> = serde_json::from_value(value)
            .map_err(|e| D::Error::custom(format!("expected {{\"schemes\": {{name: {{\"list\": [...]}}}}}}: {e}")))?;
        Ok(Self { schemes: legacy.into_iter().map(|(k, list)| (k, StringList { list })).collect() })
    }
}

proto_oneof! {
    /// How a client authenticates; the wrapper key names the kind.
    SecurityScheme {
        ApiKey(ApiKeySecurityScheme) => "apiKeySecurityScheme",
        HttpAuth(HttpAuthSecurityScheme) => "httpAuthSecurityScheme",
        OAuth2(OAuth2SecurityScheme) => "oauth2SecurityScheme",
        OpenIdConnect(OpenIdConnectSecurityScheme) => "openIdConnectSecurityScheme",
        MutualTls(MutualTlsSecurityScheme) => "mtlsSecurityScheme",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `query`, `header` or `cookie`.
    pub location: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// An IANA HTTP auth scheme, e.g. `Bearer`.
    pub scheme: String,
    #[serde(alias = "bearer_format", default, skip_serializing_if = "String::is_empty")]
    pub bearer_format: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub flows: OAuthFlows,
    #[serde(alias = "oauth2_metadata_url", default, skip_serializing_if = "String::is_empty")]
    pub oauth2_metadata_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

proto_oneof! {
    /// Exactly one OAuth 2.0 flow (1.0 changed this from OpenAPI's several-at-once).
    OAuthFlows {
        AuthorizationCode(AuthorizationCodeOAuthFlow) => "authorizationCode",
        ClientCredentials(ClientCredentialsOAuthFlow) => "clientCredentials",
        Implicit(ImplicitOAuthFlow) => "implicit",
        Password(PasswordOAuthFlow) => "password",
        DeviceCode(DeviceCodeOAuthFlow) => "deviceCode",
    }
}

impl Eq for OAuthFlows {}
impl Eq for SecurityScheme {}

/// Scope name → description.
pub type Scopes = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(alias = "refresh_url", default, skip_serializing_if = "String::is_empty")]
    pub refresh_url: String,
    pub scopes: Scopes,
    #[serde(alias = "pkce_required", default, skip_serializing_if = "is_false")]
    pub pkce_required: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(alias = "refresh_url", default, skip_serializing_if = "String::is_empty")]
    pub refresh_url: String,
    pub scopes: Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    #[serde(alias = "authorization_url", default, skip_serializing_if = "String::is_empty")]
    pub authorization_url: String,
    #[serde(alias = "refresh_url", default, skip_serializing_if = "String::is_empty")]
    pub refresh_url: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    #[serde(alias = "token_url", default, skip_serializing_if = "String::is_empty")]
    pub token_url: String,
    #[serde(alias = "refresh_url", default, skip_serializing_if = "String::is_empty")]
    pub refresh_url: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    #[serde(alias = "device_authorization_url")]
    pub device_authorization_url: String,
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(alias = "refresh_url", default, skip_serializing_if = "String::is_empty")]
    pub refresh_url: String,
    pub scopes: Scopes,
}

/// Reads a card's or skill's 0.3-style `security` list as `securityRequirements` when that is
/// absent, and ignores it when both are present: a card served to 0.3 and 1.0 clients alike
/// carries both (the official Python SDK's and ours), while the spec's own sample card has only
/// `security`. (A serde alias would refuse the pair as a duplicate field.) The object's members
/// pass through as they come; only `security`'s value is held until the end of the object.
struct SecurityAlias<A> {
    inner: A,
    held: Option<serde_json::Value>,
    seen_v1: bool,
    /// The held value, once handed out as `securityRequirements`.
    pending: Option<serde_json::Value>,
}

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for SecurityAlias<A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        use serde::de::value::StrDeserializer;
        loop {
            let Some(key) = self.inner.next_key::<std::borrow::Cow<'de, str>>()? else {
                return match self.held.take().filter(|_| !self.seen_v1) {
                    Some(v) => {
                        self.pending = Some(v);
                        seed.deserialize(StrDeserializer::<A::Error>::new("securityRequirements")).map(Some)
                    }
                    None => Ok(None),
                };
            };
            if key == "security" {
                self.held = Some(self.inner.next_value()?);
                continue;
            }
            self.seen_v1 |= key == "securityRequirements" || key == "security_requirements";
            return seed.deserialize(StrDeserializer::<A::Error>::new(&key)).map(Some);
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.pending.take() {
            Some(v) => seed.deserialize(v).map_err(|e| serde::de::Error::custom(format!("security: {e}"))),
            None => self.inner.next_value_seed(seed),
        }
    }
}

macro_rules! with_security_alias {
    ($($t:ident),*) => {
        $(impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visit;
                impl<'de> serde::de::Visitor<'de> for Visit {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<$t, A::Error> {
                        let map = SecurityAlias { inner: map, held: None, seen_v1: false, pending: None };
                        $t::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                d.deserialize_map(Visit)
            }
        })*
    };
}
with_security_alias!(AgentCard, AgentSkill);

crate::model::wire::json_objects!(
    AgentInterface,
    AgentProvider,
    AgentCapabilities,
    AgentExtension,
    AgentCardSignature,
    StringList,
    ApiKeySecurityScheme,
    HttpAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
    DeviceCodeOAuthFlow
);
crate::model::wire::json_objects!(serialize: AgentCard, AgentInterface, AgentProvider, AgentCapabilities, AgentExtension, AgentSkill, AgentCardSignature, StringList, ApiKeySecurityScheme, HttpAuthSecurityScheme, OAuth2SecurityScheme, OpenIdConnectSecurityScheme, MutualTlsSecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, ImplicitOAuthFlow, PasswordOAuthFlow, DeviceCodeOAuthFlow);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card_with(extra: serde_json::Value) -> Result<AgentCard, serde_json::Error> {
        let mut card = json!({
            "name": "n", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [],
            "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"], "security": [{"k": ["x"]}]}]
        });
        card.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(card)
    }

    fn names(reqs: &[SecurityRequirement]) -> Vec<&str> {
        reqs.iter().flat_map(|r| r.schemes.keys()).map(String::as_str).collect()
    }

    #[test]
    fn the_03_security_list_is_read_alone_and_yields_to_security_requirements() {
        // Alone (the spec's sample card): read as the requirements, on the card and its skills.
        let card = card_with(json!({"security": [{"b": []}]})).unwrap();
        assert_eq!(names(&card.security_requirements), ["b"]);
        assert_eq!(names(&card.skills[0].security_requirements), ["k"]);
        // Both, in either order (a card served to 0.3 and 1.0 clients): the 1.0 member wins.
        for extra in [
            json!({"security": [{"old": []}], "securityRequirements": [{"schemes": {"new": {"list": []}}}]}),
            json!({"securityRequirements": [{"schemes": {"new": {"list": []}}}], "security": [{"old": []}]}),
        ] {
            assert_eq!(names(&card_with(extra).unwrap().security_requirements), ["new"]);
        }
        // A bad 0.3 list is still an error, named.
        let err = card_with(json!({"security": "b"})).unwrap_err().to_string();
        assert!(err.contains("security"), "{err}");
        // Not an object at all.
        assert!(serde_json::from_value::<AgentCard>(json!(["n"])).is_err());
    }
}
