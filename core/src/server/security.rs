//! One description of an agent's security, shared by `a2a serve` and every binding: which
//! schemes it accepts (static bearer tokens, API keys, JWTs against a JWKS, client
//! certificates), the scopes operations need, TLS, and the keys that sign its card and its push
//! notifications. From it come the card's `securitySchemes` / `securityRequirements` (any one
//! scheme admits a caller), the authenticator that enforces them, and the TLS config.

use super::RequestHandler;
use super::auth::{AnyOf, ApiKeys, Authenticator, BearerTokens, KeyLocation, Principal, RequiredScopes};
use super::jwt::{JwtBearer, JwtConfig, KeySource};
use super::tls::MutualTls;
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::AgentCard;
use crate::push::{PrivateTargets, PushSigner};
use crate::signing::CardSigner;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// TLS termination: PEM files, and a CA for client certificates (mutual TLS).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: Option<PathBuf>,
}

/// An agent's security (all optional; nothing set = an open agent).
#[derive(Default)]
pub struct SecurityConfig {
    /// `(token, principal name)`: `Authorization: Bearer <token>`.
    pub bearer_tokens: Vec<(String, String)>,
    /// `(key, principal name)`, read from `api_key_location`.
    pub api_keys: Vec<(String, String)>,
    /// Where API keys travel (default: the `X-API-Key` header).
    pub api_key_location: Option<KeyLocation>,
    /// Bearer JWTs validated against a JWKS (not together with `bearer_tokens`: both read
    /// `Authorization: Bearer`).
    pub jwt: Option<(JwtConfig, KeySource)>,
    pub tls: Option<TlsFiles>,
    /// Scopes per operation (403 without them).
    pub required_scopes: RequiredScopes,
    /// Signs the served cards (public and extended).
    pub card_signer: Option<Arc<CardSigner>>,
    /// Signs push notifications; the public key is served at `push::JWKS_PATH`.
    pub push_signer: Option<Arc<PushSigner>>,
    /// Who sees a task an authenticated caller created.
    pub task_visibility: super::TaskVisibility,
    /// Non-public push targets allowed anyway (loopback, private ranges: intranets, tests):
    /// none (the default), all, or an allow-list of names, addresses and CIDR ranges.
    pub allow_private_webhooks: PrivateTargets,
}

impl SecurityConfig {
    fn invalid(why: &str) -> A2AError {
        A2AError::new(ErrorKind::InvalidParams, why)
    }

    fn location(&self) -> KeyLocation {
        self.api_key_location.clone().unwrap_or_else(|| KeyLocation::Header("X-API-Key".into()))
    }

    /// Refuses combinations that cannot work.
    pub fn check(&self) -> Result<()> {
        if !self.bearer_tokens.is_empty() && self.jwt.is_some() {
            return Err(Self::invalid(
                "static bearer tokens and JWT validation both read `Authorization: Bearer`; choose one",
            ));
        }
        Ok(())
    }

    /// Sets what this security decides in a server's config: task visibility, private
    /// webhook targets (when any are allowed here), the push signer.
    pub fn configure(&self, config: &mut super::ServerConfig) {
        config.task_visibility = self.task_visibility;
        if self.allow_private_webhooks != PrivateTargets::Blocked {
            config.push.allow_private_targets = self.allow_private_webhooks.clone();
        }
        config.push.signer = self.push_signer.clone();
    }

    /// Declares the schemes on `card` (each alone admits a caller) and signs it if asked. A
    /// card that declares schemes of its own is left as its author declared them.
    pub fn apply_to_card(&self, card: &mut AgentCard) -> Result<()> {
        let mut schemes = Vec::new();
        if !self.bearer_tokens.is_empty() || self.jwt.is_some() {
            let format = if self.jwt.is_some() { "JWT" } else { "" };
            schemes.push(("bearer", json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": format}})));
        }
        if !self.api_keys.is_empty() {
            let (location, name) = match self.location() {
                KeyLocation::Header(n) => ("header", n),
                KeyLocation::Query(n) => ("query", n),
                KeyLocation::Cookie(n) => ("cookie", n),
            };
            schemes.push(("apiKey", json!({"apiKeySecurityScheme": {"location": location, "name": name}})));
        }
        if self.tls.as_ref().is_some_and(|t| t.client_ca.is_some()) {
            schemes.push(("mtls", json!({"mtlsSecurityScheme": {}})));
        }
        if !card.security_schemes.is_empty() {
            let kinds: Vec<&str> = schemes.iter().map(|(kind, _)| *kind).collect();
            for warning in mismatch(card, &kinds) {
                tracing::warn!("{warning}");
            }
            schemes.clear();
        }
        for (name, scheme) in schemes {
            let scheme =
                serde_json::from_value(scheme).map_err(|e| A2AError::internal(format!("scheme {name}: {e}")))?;
            card.security_schemes.insert(name.to_owned(), scheme);
            let requirement = serde_json::from_value(json!({"schemes": {name: {"list": []}}}))
                .map_err(|e| A2AError::internal(e.to_string()))?;
            card.security_requirements.push(requirement);
        }
        if let Some(signer) = &self.card_signer {
            signer.sign(card)?;
        }
        Ok(())
    }

    /// The authenticator for the configured schemes (`None` without any).
    pub fn authenticator(&self) -> Option<Arc<dyn Authenticator>> {
        let who = |name: &str| Principal::named(name, Vec::new());
        let mut schemes: Vec<Arc<dyn Authenticator>> = Vec::new();
        if !self.bearer_tokens.is_empty() {
            let tokens =
                self.bearer_tokens.iter().fold(BearerTokens::new(), |b, (t, n)| b.with_token(t.clone(), who(n)));
            schemes.push(Arc::new(tokens));
        }
        if let Some((config, source)) = &self.jwt {
            schemes.push(Arc::new(JwtBearer::new(config.clone(), source.clone())));
        }
        if !self.api_keys.is_empty() {
            let keys =
                self.api_keys.iter().fold(ApiKeys::new(self.location()), |k, (key, n)| k.with_key(key.clone(), who(n)));
            schemes.push(Arc::new(keys));
        }
        if self.tls.as_ref().is_some_and(|t| t.client_ca.is_some()) {
            schemes.push(Arc::new(MutualTls::new().any_verified()));
        }
        match schemes.len() {
            0 => None,
            1 => schemes.pop(),
            _ => Some(Arc::new(AnyOf::new(schemes))),
        }
    }

    /// The TLS config, when TLS is on.
    pub fn tls_config(&self) -> Result<Option<Arc<rustls::ServerConfig>>> {
        use super::tls::ClientCertificate;
        // With another scheme besides mutual TLS, the card offers them as alternatives: a
        // caller with a key or a token needs no certificate, and the card stays readable. Its
        // requirements refuse a caller no scheme admits.
        let others = !self.bearer_tokens.is_empty() || self.jwt.is_some() || !self.api_keys.is_empty();
        let client = if others { ClientCertificate::Optional } else { ClientCertificate::Required };
        self.tls
            .as_ref()
            .map(|t| super::tls::server_config(&t.cert, &t.key, t.client_ca.as_deref(), client))
            .transpose()
    }

    /// `handler` with this authenticator, these required scopes and the card signer.
    pub fn secure(&self, mut handler: RequestHandler) -> RequestHandler {
        if let Some(auth) = self.authenticator() {
            handler = handler.with_authenticator(auth);
        }
        if let Some(signer) = &self.card_signer {
            handler = handler.with_card_signer(signer.clone());
        }
        handler.with_required_scopes(self.required_scopes.clone())
    }
}

/// The same description as JSON, for the bindings (one reader for every language): keys in
/// camelCase (snake_case accepted), unknown keys refused.
///
/// ```json
/// {"bearerTokens": {"TOKEN": "principal"}, "apiKeys": {"KEY": "principal"},
///  "apiKeyLocation": {"in": "header", "name": "X-API-Key"},
///  "jwt": {"jwksUrl": "https://idp/jwks.json", "issuers": ["https://idp"], "audiences": ["a2a"]},
///  "tls": {"cert": "server.pem", "key": "server.key", "clientCa": "ca.pem"},
///  "requiredScopes": {"*": ["a2a.read"], "SendMessage": ["a2a.write"]},
///  "cardSigningKey": {"pem": "-----BEGIN PRIVATE KEY-----...", "alg": "ES256", "kid": "card-1"},
///  "pushSigningKey": {"pem": "...", "alg": "ES256", "kid": "push-1"},
///  "taskVisibility": "principal", "allowPrivateWebhooks": ["127.0.0.1", "10.0.0.0/8", "hooks.internal"]}
/// ```
///
/// `allowPrivateWebhooks`: `false` (the default: push notifications go to public addresses
/// only), `true` (any target), or a list of host names (matched by name), IP addresses and CIDR
/// ranges (matched against the address a name resolves to) that may be private.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecuritySpec {
    #[serde(default, alias = "bearer_tokens", deserialize_with = "some_credentials")]
    pub bearer_tokens: BTreeMap<String, String>,
    #[serde(default, alias = "api_keys", deserialize_with = "some_credentials")]
    pub api_keys: BTreeMap<String, String>,
    #[serde(default, alias = "api_key_location")]
    pub api_key_location: Option<KeyLocationSpec>,
    #[serde(default)]
    pub jwt: Option<JwtSpec>,
    #[serde(default)]
    pub tls: Option<TlsSpec>,
    #[serde(default, alias = "required_scopes")]
    pub required_scopes: BTreeMap<String, Vec<String>>,
    #[serde(default, alias = "card_signing_key")]
    pub card_signing_key: Option<KeySpec>,
    #[serde(default, alias = "push_signing_key")]
    pub push_signing_key: Option<KeySpec>,
    #[serde(default, alias = "task_visibility")]
    pub task_visibility: Option<String>,
    #[serde(default, alias = "allow_private_webhooks")]
    pub allow_private_webhooks: PrivateTargets,
}

/// What is wrong with a list of tokens or keys that was given, if anything. An empty list,
/// read from an unset setting, would serve every caller while its author believes the server
/// closed; an empty token or key no caller can send, and any mistake could produce.
pub(super) fn credentials_problem<'a>(given: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let mut any = false;
    for credential in given {
        if credential.is_empty() {
            return Some("holds an empty token or key");
        }
        any = true;
    }
    (!any).then_some("names no credential: give at least one, or leave the option out to serve without it")
}

/// A map of credentials that is absent (no such scheme) or names at least one, none empty.
fn some_credentials<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<BTreeMap<String, String>, D::Error> {
    let map = BTreeMap::<String, String>::deserialize(d)?;
    match credentials_problem(map.keys().map(String::as_str)) {
        Some(why) => Err(serde::de::Error::custom(why)),
        None => Ok(map),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyLocationSpec {
    /// `header`, `query` or `cookie`.
    #[serde(rename = "in")]
    pub location: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JwtSpec {
    #[serde(default, alias = "jwks_url")]
    pub jwks_url: Option<String>,
    #[serde(default)]
    pub jwks: Option<crate::auth::KeySet>,
    #[serde(default)]
    pub issuers: Vec<String>,
    #[serde(default)]
    pub audiences: Vec<String>,
    /// Seconds of clock skew on exp/nbf (default 60).
    #[serde(default)]
    pub leeway: Option<f64>,
    /// Default RS256, ES256, EdDSA.
    #[serde(default)]
    pub algorithms: Option<Vec<jsonwebtoken::Algorithm>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TlsSpec {
    pub cert: PathBuf,
    pub key: PathBuf,
    #[serde(default, alias = "client_ca")]
    pub client_ca: Option<PathBuf>,
}

/// A private key (PEM text) for signing, its algorithm and key id.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySpec {
    pub pem: String,
    pub alg: jsonwebtoken::Algorithm,
    pub kid: String,
}

/// A card that declares its own schemes is served as written, so it may disagree with what the
/// server checks: a configured scheme it does not declare (clients are never told of it, and
/// it admits them all the same), or schemes without requirements (authentication is optional
/// then, and anonymous callers share one set of tasks). What to tell the operator, at start.
fn mismatch(card: &AgentCard, configured: &[&str]) -> Vec<String> {
    use crate::model::SecurityScheme as S;
    let declares = |kind: &str| {
        card.security_schemes.values().any(|s| match (kind, s) {
            // A JWT or static token arrives as `Authorization: Bearer`: OAuth 2.0 and OpenID
            // Connect schemes send their tokens so too.
            ("bearer", S::HttpAuth(h)) => h.scheme.eq_ignore_ascii_case("bearer"),
            ("bearer", S::OAuth2(_) | S::OpenIdConnect(_)) => true,
            ("apiKey", S::ApiKey(_)) | ("mtls", S::MutualTls(_)) => true,
            _ => false,
        })
    };
    let mut warnings = Vec::new();
    let undeclared: Vec<&str> = configured.iter().copied().filter(|k| !declares(k)).collect();
    if !undeclared.is_empty() {
        warnings.push(format!(
            "the agent card declares security schemes of its own, leaving out {} that this server accepts; \
             clients read the card to learn how to authenticate",
            undeclared.join(", ")
        ));
    }
    if !configured.is_empty() && card.security_requirements.is_empty() {
        warnings.push(
            "the agent card declares security schemes but no securityRequirements: authentication is optional, \
             and anonymous callers are served (sharing one set of tasks)"
                .to_owned(),
        );
    }
    warnings
}

impl SecuritySpec {
    /// Reads the JSON form; InvalidParams naming what is wrong.
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        A2AError::from_options(value)
    }

    fn task_visibility(&self) -> Result<super::TaskVisibility> {
        match self.task_visibility.as_deref() {
            None | Some("principal") => Ok(super::TaskVisibility::PerPrincipal),
            Some("shared") => Ok(super::TaskVisibility::Shared),
            Some(other) => {
                Err(A2AError::invalid_field("taskVisibility", format!("{other:?}: \"principal\" or \"shared\"")))
            }
        }
    }

    pub fn tls_on(&self) -> bool {
        self.tls.is_some()
    }

    /// The core config; `issuer` (the server's base URL) is what push tokens name.
    pub fn build(&self, issuer: &str) -> Result<SecurityConfig> {
        let location = match &self.api_key_location {
            None => None,
            Some(l) => Some(match l.location.as_str() {
                "header" => KeyLocation::Header(l.name.clone()),
                "query" => KeyLocation::Query(l.name.clone()),
                "cookie" => KeyLocation::Cookie(l.name.clone()),
                other => {
                    return Err(A2AError::invalid_field(
                        "apiKeyLocation.in",
                        format!("{other:?}: header, query or cookie"),
                    ));
                }
            }),
        };
        let jwt = match &self.jwt {
            None => None,
            Some(j) => {
                // Both required (RFC 7519 §4.1.3: a token naming an audience that is not this
                // server's must be refused): without them any issuer's token for any service,
                // signed by a key the JWKS holds, was accepted.
                if j.issuers.is_empty() {
                    let why = "name the issuers whose tokens are accepted (their `iss`); without, any issuer's is";
                    return Err(A2AError::invalid_field("jwt.issuers", why));
                }
                if j.audiences.is_empty() {
                    let why = "name this server's audiences (a token's `aud`); without, a token minted for another \
                               service is accepted";
                    return Err(A2AError::invalid_field("jwt.audiences", why));
                }
                let mut config =
                    JwtConfig { issuers: j.issuers.clone(), audiences: j.audiences.clone(), ..JwtConfig::default() };
                if let Some(secs) = j.leeway {
                    config.leeway = crate::error::seconds(secs, "jwt.leeway")?;
                }
                if let Some(algs) = &j.algorithms {
                    config.algorithms = algs.clone();
                }
                let source = match (&j.jwks_url, &j.jwks) {
                    (Some(url), None) => {
                        // Checked now: a path or a typo started a server that refused every
                        // token ("its signing key is not known").
                        let absolute = url.parse::<http::Uri>().ok().filter(|u| {
                            matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some_and(|h| !h.is_empty())
                        });
                        if absolute.is_none() {
                            let why = format!("{url:?} is not an http(s) URL (a fixed key set goes in `jwks`)");
                            return Err(A2AError::invalid_field("jwt.jwksUrl", why));
                        }
                        KeySource::Url(url.clone())
                    }
                    (None, Some(set)) => KeySource::Static(set.clone()),
                    _ => return Err(A2AError::invalid_field("jwt", "give exactly one of jwksUrl and jwks")),
                };
                Some((config, source))
            }
        };
        let scopes = self.required_scopes.iter().fold(RequiredScopes::new(), |r, (method, scopes)| {
            r.require(method, &scopes.iter().map(String::as_str).collect::<Vec<_>>())
        });
        let config = SecurityConfig {
            bearer_tokens: self.bearer_tokens.iter().map(|(t, p)| (t.clone(), p.clone())).collect(),
            api_keys: self.api_keys.iter().map(|(k, p)| (k.clone(), p.clone())).collect(),
            api_key_location: location,
            jwt,
            tls: self.tls.as_ref().map(|t| TlsFiles {
                cert: t.cert.clone(),
                key: t.key.clone(),
                client_ca: t.client_ca.clone(),
            }),
            required_scopes: scopes,
            card_signer: self
                .card_signing_key
                .as_ref()
                .map(|k| CardSigner::from_pem(k.pem.as_bytes(), k.alg, k.kid.clone()).map(Arc::new))
                .transpose()?,
            push_signer: self
                .push_signing_key
                .as_ref()
                .map(|k| PushSigner::from_pem(k.pem.as_bytes(), k.alg, k.kid.clone(), issuer).map(Arc::new))
                .transpose()?,
            task_visibility: self.task_visibility()?,
            allow_private_webhooks: self.allow_private_webhooks.clone(),
        };
        config.check()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_that_disagrees_with_the_configured_schemes_is_said_so() {
        let card = |schemes: serde_json::Value, requirements: serde_json::Value| -> AgentCard {
            crate::model::parse_value(json!({
                "name": "a", "description": "d", "version": "1", "capabilities": {},
                "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
                "securitySchemes": schemes, "securityRequirements": requirements
            }))
            .unwrap()
        };
        let oidc = json!({"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example/.well-known/openid-configuration"}}});
        let required = json!([{"schemes": {"oidc": {"list": []}}}]);
        // JWTs are what an OpenID Connect scheme sends: in agreement.
        assert!(mismatch(&card(oidc.clone(), required.clone()), &["bearer"]).is_empty());
        let warned = mismatch(&card(oidc.clone(), required), &["apiKey"]);
        assert!(warned.len() == 1 && warned[0].contains("leaving out apiKey"), "{warned:?}");
        let warned = mismatch(&card(oidc, json!([])), &["bearer"]);
        assert!(warned.len() == 1 && warned[0].contains("authentication is optional"), "{warned:?}");
    }

    #[test]
    fn the_json_form_is_read_strictly() {
        let spec = SecuritySpec::from_value(json!({
            "bearerTokens": {"t": "ada"}, "api_keys": {"k": "svc"}, "apiKeyLocation": {"in": "query", "name": "key"},
            "requiredScopes": {"*": ["a2a"]}, "taskVisibility": "shared"
        }))
        .unwrap();
        let config = spec.build("http://x").unwrap();
        assert_eq!(config.bearer_tokens, [("t".to_owned(), "ada".to_owned())]);
        assert_eq!(config.api_key_location, Some(KeyLocation::Query("key".into())));
        assert_eq!(config.task_visibility, crate::server::TaskVisibility::Shared);
        let e = SecuritySpec::from_value(json!({"apiKeyz": {}})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidParams);
        // An empty list of credentials (an unset setting, say) would serve everyone: refused.
        for (empty, field) in [(json!({"apiKeys": {}}), "apiKeys"), (json!({"bearer_tokens": {}}), "bearerTokens")] {
            let e = SecuritySpec::from_value(empty).unwrap_err();
            assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidParams, field), "{e}");
        }
        let Err(e) =
            SecuritySpec::from_value(json!({"jwt": {"issuers": ["x"], "audiences": ["a"]}})).unwrap().build("http://x")
        else {
            panic!("a jwt without keys was accepted")
        };
        assert_eq!(e.violations[0].field, "jwt");
        // Tokens of any issuer, or for any audience, are not accepted by default.
        let jwks = json!({"keys": []});
        for (jwt, field) in [
            (json!({"jwks": jwks, "audiences": ["a"]}), "jwt.issuers"),
            (json!({"jwks": jwks, "issuers": ["x"]}), "jwt.audiences"),
            (json!({"jwks": jwks, "issuers": [], "audiences": ["a"]}), "jwt.issuers"),
            (json!({"jwksUrl": "/etc/jwks.json", "issuers": ["x"], "audiences": ["a"]}), "jwt.jwksUrl"),
            (json!({"jwksUrl": "notaurl", "issuers": ["x"], "audiences": ["a"]}), "jwt.jwksUrl"),
            (json!({"jwksUrl": "file:///etc/jwks.json", "issuers": ["x"], "audiences": ["a"]}), "jwt.jwksUrl"),
        ] {
            let Err(e) = SecuritySpec::from_value(json!({"jwt": jwt})).unwrap().build("http://x") else {
                panic!("{jwt} was accepted")
            };
            assert_eq!(e.violations[0].field, field, "{e}");
        }
        let both = json!({"bearerTokens": {"t": "a"}, "jwt": {"jwksUrl": "http://idp/jwks"}});
        assert!(SecuritySpec::from_value(both).unwrap().build("http://x").is_err());
        let bad_alg = json!({"cardSigningKey": {"pem": "x", "alg": "HS999", "kid": "k"}});
        assert!(SecuritySpec::from_value(bad_alg).is_err());
    }

    #[test]
    fn private_webhooks_are_all_or_a_list() {
        let targets =
            |v| SecuritySpec::from_value(json!({"allowPrivateWebhooks": v})).map(|s| s.allow_private_webhooks);
        assert_eq!(targets(json!(true)).unwrap(), PrivateTargets::All);
        assert_eq!(targets(json!(false)).unwrap(), PrivateTargets::Blocked);
        assert!(
            matches!(targets(json!(["127.0.0.1", "10.0.0.0/8", "hooks.internal"])).unwrap(), PrivateTargets::Only(l) if l.len() == 3)
        );
        let e = targets(json!(["10.0.0.0/40"])).unwrap_err();
        assert_eq!(e.violations[0].field, "allowPrivateWebhooks", "{e}");
        assert!(e.message.contains("10.0.0.0/40"), "{e}");
        // What the spec allows reaches the push sender's config.
        let mut config = crate::server::ServerConfig::default();
        let spec = SecuritySpec::from_value(json!({"allow_private_webhooks": ["::1"]})).unwrap();
        spec.build("http://x").unwrap().configure(&mut config);
        assert!(matches!(config.push.allow_private_targets, PrivateTargets::Only(_)));
    }
}
