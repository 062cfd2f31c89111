//! Agent card conversions between 0.3 and 1.0 (security schemes, extensions, skills, the card).

use super::PROTOCOL_VERSION;
use super::card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, ApiKeySecurityScheme,
    AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme, PasswordOAuthFlow,
    SecurityRequirement, SecurityScheme,
};
use super::util::{opt, within};
use crate::error::{A2AError, Result};
use crate::model as m;

// ---------------------------------------------------------------------------------------------
// Conversions: agent card
// ---------------------------------------------------------------------------------------------

/// `Major.Minor` of a version string (`0.3.0` → `0.3`): what 1.0 interfaces declare.
fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

fn is_v03(protocol_version: &str) -> bool {
    protocol_version == "0.3" || protocol_version.starts_with("0.3.")
}

impl TryFrom<SecurityScheme> for m::SecurityScheme {
    type Error = A2AError;
    /// OAuth2: 1.0 holds exactly one flow. When a 0.3 scheme declares several, the first present
    /// in the order authorizationCode, clientCredentials, implicit, password (the 0.3 schema's
    /// order, which also puts the two flows 1.0 does not deprecate first) is kept, the others
    /// are dropped. A scheme with no flow at all cannot be converted.
    fn try_from(s: SecurityScheme) -> Result<Self> {
        Ok(match s {
            SecurityScheme::ApiKey(s) => m::SecurityScheme::ApiKey(m::ApiKeySecurityScheme {
                description: s.description.unwrap_or_default(),
                location: s.location,
                name: s.name,
            }),
            SecurityScheme::Http(s) => m::SecurityScheme::HttpAuth(m::HttpAuthSecurityScheme {
                description: s.description.unwrap_or_default(),
                scheme: s.scheme,
                bearer_format: s.bearer_format.unwrap_or_default(),
            }),
            SecurityScheme::OAuth2(s) => {
                let f = s.flows;
                let flows = if let Some(f) = f.authorization_code {
                    m::OAuthFlows::AuthorizationCode(m::AuthorizationCodeOAuthFlow {
                        authorization_url: f.authorization_url,
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                        pkce_required: false,
                    })
                } else if let Some(f) = f.client_credentials {
                    m::OAuthFlows::ClientCredentials(m::ClientCredentialsOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else if let Some(f) = f.implicit {
                    m::OAuthFlows::Implicit(m::ImplicitOAuthFlow {
                        authorization_url: f.authorization_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else if let Some(f) = f.password {
                    m::OAuthFlows::Password(m::PasswordOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else {
                    return Err(A2AError::invalid_field("flows", "declares no flow; 1.0 needs exactly one"));
                };
                m::SecurityScheme::OAuth2(m::OAuth2SecurityScheme {
                    description: s.description.unwrap_or_default(),
                    flows,
                    oauth2_metadata_url: s.oauth2_metadata_url.unwrap_or_default(),
                })
            }
            SecurityScheme::OpenIdConnect(s) => m::SecurityScheme::OpenIdConnect(m::OpenIdConnectSecurityScheme {
                description: s.description.unwrap_or_default(),
                open_id_connect_url: s.open_id_connect_url,
            }),
            SecurityScheme::MutualTls(s) => m::SecurityScheme::MutualTls(m::MutualTlsSecurityScheme {
                description: s.description.unwrap_or_default(),
            }),
        })
    }
}

impl From<m::SecurityScheme> for SecurityScheme {
    /// Losses: `pkceRequired` (authorization code) and the `deviceCode` flow have no 0.3 form;
    /// a deviceCode-only scheme becomes an oauth2 scheme with empty `flows`.
    fn from(s: m::SecurityScheme) -> Self {
        match s {
            m::SecurityScheme::ApiKey(s) => SecurityScheme::ApiKey(ApiKeySecurityScheme {
                description: opt(s.description),
                location: s.location,
                name: s.name,
            }),
            m::SecurityScheme::HttpAuth(s) => SecurityScheme::Http(HttpAuthSecurityScheme {
                description: opt(s.description),
                scheme: s.scheme,
                bearer_format: opt(s.bearer_format),
            }),
            m::SecurityScheme::OAuth2(s) => {
                let mut flows = OAuthFlows::default();
                match s.flows {
                    m::OAuthFlows::AuthorizationCode(f) => {
                        flows.authorization_code = Some(AuthorizationCodeOAuthFlow {
                            authorization_url: f.authorization_url,
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::ClientCredentials(f) => {
                        flows.client_credentials = Some(ClientCredentialsOAuthFlow {
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::Implicit(f) => {
                        flows.implicit = Some(ImplicitOAuthFlow {
                            authorization_url: f.authorization_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::Password(f) => {
                        flows.password = Some(PasswordOAuthFlow {
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::DeviceCode(_) => {}
                }
                SecurityScheme::OAuth2(OAuth2SecurityScheme {
                    description: opt(s.description),
                    flows,
                    oauth2_metadata_url: opt(s.oauth2_metadata_url),
                })
            }
            m::SecurityScheme::OpenIdConnect(s) => SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                description: opt(s.description),
                open_id_connect_url: s.open_id_connect_url,
            }),
            m::SecurityScheme::MutualTls(s) => {
                SecurityScheme::MutualTls(MutualTlsSecurityScheme { description: opt(s.description) })
            }
        }
    }
}

fn requirement_to_v10(r: SecurityRequirement) -> m::SecurityRequirement {
    m::SecurityRequirement { schemes: r.into_iter().map(|(k, list)| (k, m::StringList { list })).collect() }
}

fn requirement_to_v03(r: m::SecurityRequirement) -> SecurityRequirement {
    r.schemes.into_iter().map(|(k, v)| (k, v.list)).collect()
}

impl From<AgentExtension> for m::AgentExtension {
    fn from(e: AgentExtension) -> Self {
        m::AgentExtension {
            uri: e.uri,
            description: e.description.unwrap_or_default(),
            required: e.required.unwrap_or(false),
            params: e.params,
        }
    }
}

impl From<m::AgentExtension> for AgentExtension {
    fn from(e: m::AgentExtension) -> Self {
        AgentExtension {
            uri: e.uri,
            description: opt(e.description),
            required: e.required.then_some(true),
            params: e.params,
        }
    }
}

impl From<AgentSkill> for m::AgentSkill {
    fn from(s: AgentSkill) -> Self {
        m::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security_requirements: s.security.into_iter().map(requirement_to_v10).collect(),
        }
    }
}

impl From<m::AgentSkill> for AgentSkill {
    fn from(s: m::AgentSkill) -> Self {
        AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security: s.security_requirements.into_iter().map(requirement_to_v03).collect(),
        }
    }
}

impl TryFrom<AgentCard> for m::AgentCard {
    type Error = A2AError;
    /// `url` + `preferredTransport` (default JSONRPC) become the first interface, then each
    /// `additionalInterfaces` entry not equal to it, all with protocolVersion = Major.Minor of
    /// the card's `protocolVersion` (`0.3`). `supportsAuthenticatedExtendedCard` →
    /// `capabilities.extendedAgentCard`; `stateTransitionHistory` is dropped; `security` →
    /// `securityRequirements`. Note: 1.0 requires ≥1 skill and input/output mode, 0.3 does not;
    /// such a card converts, but fails 1.0 validation.
    fn try_from(c: AgentCard) -> Result<Self> {
        let version = major_minor(&c.protocol_version);
        let mut interfaces = vec![m::AgentInterface {
            url: c.url,
            protocol_binding: c.preferred_transport.unwrap_or_else(|| m::binding::JSONRPC.to_owned()),
            tenant: String::new(),
            protocol_version: version.clone(),
        }];
        for i in c.additional_interfaces {
            if !interfaces.iter().any(|have| have.url == i.url && have.protocol_binding == i.transport) {
                interfaces.push(m::AgentInterface {
                    url: i.url,
                    protocol_binding: i.transport,
                    tenant: String::new(),
                    protocol_version: version.clone(),
                });
            }
        }
        let security_schemes = c
            .security_schemes
            .into_iter()
            .map(|(name, s)| {
                let s = m::SecurityScheme::try_from(s).map_err(|e| within(&format!("securitySchemes.{name}"), e))?;
                Ok((name, s))
            })
            .collect::<Result<_>>()?;
        Ok(m::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces: interfaces,
            provider: c.provider,
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: m::AgentCapabilities {
                streaming: c.capabilities.streaming,
                push_notifications: c.capabilities.push_notifications,
                extensions: c.capabilities.extensions.into_iter().map(Into::into).collect(),
                extended_agent_card: c.supports_authenticated_extended_card,
            },
            security_schemes,
            security_requirements: c.security.into_iter().map(requirement_to_v10).collect(),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: c.skills.into_iter().map(Into::into).collect(),
            signatures: c.signatures,
            icon_url: c.icon_url,
        })
    }
}

impl TryFrom<m::AgentCard> for AgentCard {
    type Error = A2AError;
    /// Only interfaces declaring protocolVersion 0.3 are usable by a 0.3 client: the first
    /// becomes `url` + `preferredTransport` (always written); when there are several, all of
    /// them (the first included, as the 0.3 schema recommends) are `additionalInterfaces`.
    /// Interfaces of other versions and every `tenant` are dropped; a card with no 0.3
    /// interface is an error. `protocolVersion` is written as [`PROTOCOL_VERSION`].
    /// `signatures` are copied: the first signs the 1.0 form; a card signed here also carries
    /// one over this form (`signing::CardSigner::sign`, `served_card::signed_payloads`).
    fn try_from(c: m::AgentCard) -> Result<Self> {
        let v03: Vec<&m::AgentInterface> =
            c.supported_interfaces.iter().filter(|i| is_v03(&i.protocol_version)).collect();
        let Some(first) = v03.first() else {
            return Err(A2AError::invalid_field(
                "supportedInterfaces",
                "no interface declares protocolVersion 0.3, so there is no 0.3 endpoint to describe",
            ));
        };
        let (url, preferred_transport) = (first.url.clone(), Some(first.protocol_binding.clone()));
        let additional_interfaces = if v03.len() > 1 {
            v03.iter().map(|i| AgentInterface { url: i.url.clone(), transport: i.protocol_binding.clone() }).collect()
        } else {
            Vec::new()
        };
        Ok(AgentCard {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: c.name,
            description: c.description,
            url,
            preferred_transport,
            additional_interfaces,
            icon_url: c.icon_url,
            provider: c.provider,
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: AgentCapabilities {
                streaming: c.capabilities.streaming,
                push_notifications: c.capabilities.push_notifications,
                state_transition_history: None,
                extensions: c.capabilities.extensions.into_iter().map(Into::into).collect(),
            },
            security_schemes: c.security_schemes.into_iter().map(|(k, s)| (k, s.into())).collect(),
            security: c.security_requirements.into_iter().map(requirement_to_v03).collect(),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: c.skills.into_iter().map(Into::into).collect(),
            supports_authenticated_extended_card: c.capabilities.extended_agent_card,
            signatures: c.signatures,
        })
    }
}
