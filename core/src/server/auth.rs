//! Who is calling: the seam where authentication schemes plug into the server.
//!
//! An [`Authenticator`] reads a request's headers and names the caller (a [`Principal`]), says
//! there are no credentials, or refuses the ones given. The service then applies the card's
//! policy (spec §7): when the card declares `securityRequirements`, every A2A request needs an
//! authenticated caller, and GetExtendedAgentCard always does when the card declares any
//! security scheme. Refusals are HTTP 401 with a `WWW-Authenticate` challenge, in both
//! bindings, as standard web auth expects. The agent card itself is always public.
//!
//! Built-in schemes: [`BearerTokens`] (static bearer tokens), [`ApiKeys`] (header, query or
//! cookie, as the card's `apiKeySecurityScheme` says) and [`super::jwt::JwtBearer`] (JWT
//! validated against a JWKS); [`AnyOf`] accepts whichever of several a caller uses.
//! [`RequiredScopes`] then says which scopes each operation needs (403 when missing), and
//! [`SkillScopes`] which of the card's skills a caller may use (each skill's own
//! `securityRequirements`).

use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{AgentCard, SecurityRequirement};
use async_trait::async_trait;
use http::request::Parts;
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::auth::Principal;

/// Authenticates requests from their headers.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// `Ok(Some(_))`: authenticated; `Ok(None)`: the request carries no credentials for this
    /// scheme; `Err(_)` (Unauthenticated): credentials are present but invalid. The request's
    /// head (method, URI with its query, headers) is all a scheme may look at.
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>>;

    /// The `WWW-Authenticate` value sent with a 401.
    fn challenge(&self) -> &str;
}

/// Static bearer tokens (`Authorization: Bearer <token>`), each naming a principal.
pub struct BearerTokens {
    tokens: HashMap<String, Principal>,
}

impl BearerTokens {
    pub fn new() -> Self {
        Self { tokens: HashMap::new() }
    }

    /// Accepts `token` as `principal`.
    pub fn with_token(mut self, token: impl Into<String>, principal: Principal) -> Self {
        self.tokens.insert(token.into(), principal);
        self
    }
}

impl Default for BearerTokens {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Authenticator for BearerTokens {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let Some(token) = bearer_token(request)? else { return Ok(None) };
        // Compare against every token in constant time per token, so timing tells nothing
        // about how much of a guess was right.
        lookup(&self.tokens, token).map(Some).ok_or_else(|| unauthenticated("the bearer token is not valid"))
    }

    fn challenge(&self) -> &str {
        "Bearer realm=\"a2a\""
    }
}

/// The token of an `Authorization: Bearer <token>` header; `None` without one or for another
/// scheme (not ours to judge).
pub(crate) fn bearer_token(request: &Parts) -> Result<Option<&str>> {
    let Some(value) = only(request.headers.get_all(http::header::AUTHORIZATION).iter(), "Authorization header")? else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| unauthenticated("the Authorization header is not ASCII"))?;
    let Some((scheme, token)) = value.split_once(' ') else {
        return Err(unauthenticated("the Authorization header is not `Bearer <token>`"));
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme's credentials: not ours to judge.
        return Ok(None);
    }
    Ok(Some(token.trim()))
}

/// The one credential of `values`: two are ambiguous (which would a proxy have checked, which
/// would the server?), so they are refused rather than one picked.
fn only<T>(mut values: impl Iterator<Item = T>, what: &str) -> Result<Option<T>> {
    let first = values.next();
    if first.is_some() && values.next().is_some() {
        return Err(unauthenticated(&format!("more than one {what}: send one credential")));
    }
    Ok(first)
}

/// The principal of a secret, comparing with every known secret in constant time.
fn lookup(known: &HashMap<String, Principal>, secret: &str) -> Option<Principal> {
    known
        .iter()
        .fold(
            None,
            |found, (k, p)| {
                if crate::auth::secrets_equal(k.as_bytes(), secret.as_bytes()) { Some(p) } else { found }
            },
        )
        .cloned()
}

/// Where an API key travels (the card's `apiKeySecurityScheme.location`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocation {
    Header(String),
    Query(String),
    Cookie(String),
}

/// API keys, each naming a principal, read from one header, query parameter or cookie.
pub struct ApiKeys {
    location: KeyLocation,
    keys: HashMap<String, Principal>,
    challenge: String,
}

impl ApiKeys {
    pub fn new(location: KeyLocation) -> Self {
        let name = match &location {
            KeyLocation::Header(n) | KeyLocation::Query(n) | KeyLocation::Cookie(n) => n.clone(),
        };
        // RFC 9110 asks for a challenge with every 401; API keys have no registered scheme.
        let challenge = format!("ApiKey realm=\"a2a\", name=\"{name}\"");
        Self { location, keys: HashMap::new(), challenge }
    }

    /// Accepts `key` as `principal`.
    pub fn with_key(mut self, key: impl Into<String>, principal: Principal) -> Self {
        self.keys.insert(key.into(), principal);
        self
    }

    fn presented(&self, request: &Parts) -> Result<Option<String>> {
        Ok(match &self.location {
            KeyLocation::Header(name) => match only(request.headers.get_all(name.as_str()).iter(), "API key header")? {
                Some(v) => Some(v.to_str().map_err(|_| unauthenticated("the API key header is not ASCII"))?.to_owned()),
                None => None,
            },
            KeyLocation::Query(name) => {
                let query = request.uri.query().unwrap_or_default();
                let keys = form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == name.as_str());
                only(keys, "API key parameter")?.map(|(_, v)| v.into_owned())
            }
            KeyLocation::Cookie(name) => {
                let pairs = request
                    .headers
                    .get_all(http::header::COOKIE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .flat_map(|v| v.split(';'))
                    .filter_map(|pair| pair.trim().split_once('='))
                    .filter(|(k, _)| k == name);
                only(pairs, "API key cookie")?.map(|(_, v)| v.to_owned())
            }
        })
    }
}

#[async_trait]
impl Authenticator for ApiKeys {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let Some(key) = self.presented(request)? else { return Ok(None) };
        lookup(&self.keys, &key).map(Some).ok_or_else(|| unauthenticated("the API key is not valid"))
    }

    fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// Several schemes at once: the first that recognises credentials names the caller, and
/// invalid credentials of any scheme refuse the request (a bad API key beside a good token is
/// a caller to turn away, not one to guess about: a proxy in front may have judged the other).
pub struct AnyOf {
    schemes: Vec<Arc<dyn Authenticator>>,
    challenge: String,
}

impl AnyOf {
    pub fn new(schemes: Vec<Arc<dyn Authenticator>>) -> Self {
        let challenge = schemes.iter().map(|s| s.challenge()).collect::<Vec<_>>().join(", ");
        Self { schemes, challenge }
    }
}

#[async_trait]
impl Authenticator for AnyOf {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let mut caller = None;
        for scheme in &self.schemes {
            if let Some(p) = scheme.authenticate(request).await? {
                caller.get_or_insert(p);
            }
        }
        Ok(caller)
    }

    fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// Scopes each A2A operation needs (OAuth2 / OIDC scopes, or any granted roles): a caller
/// without all of them gets 403 PermissionDenied. Operations not listed need none beyond
/// authentication.
#[derive(Debug, Clone, Default)]
pub struct RequiredScopes {
    by_method: HashMap<String, Vec<String>>,
}

impl RequiredScopes {
    pub fn new() -> Self {
        Self::default()
    }

    /// `method` is the A2A 1.0 operation name (`SendMessage`, `GetTask`, ...; `*` for all).
    pub fn require(mut self, method: &str, scopes: &[&str]) -> Self {
        self.by_method.entry(method.to_owned()).or_default().extend(scopes.iter().map(|s| (*s).to_owned()));
        self
    }

    /// Unauthenticated when a scope is needed and nobody is calling; PermissionDenied naming
    /// the missing scopes otherwise.
    pub fn check(&self, method: &str, principal: Option<&Principal>) -> Result<()> {
        let needed: Vec<&String> =
            self.by_method.get(method).into_iter().chain(self.by_method.get("*")).flatten().collect();
        if needed.is_empty() {
            return Ok(());
        }
        let Some(principal) = principal else {
            return Err(unauthenticated(&format!("{method} needs an authenticated caller")));
        };
        let missing: Vec<&str> =
            needed.into_iter().filter(|s| !principal.scopes.contains(s)).map(String::as_str).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(A2AError::new(ErrorKind::PermissionDenied, format!("{method} needs the scopes: {}", missing.join(" "))))
        }
    }
}

/// Scopes per skill: a skill that declares `securityRequirements` (an OR of ANDs, as on the
/// card) may be used by a caller who meets one of them; a skill without any is open to every
/// caller the card admits. Messages do not name a skill, so the server cannot check a message
/// against one: it refuses SendMessage when the agent has skills and the caller may use none,
/// tells the executor which skills the caller may use (`RequestContext::skills`), and lists
/// only those on the extended card.
///
/// A requirement is met when the caller holds every scope it lists, under whichever of its
/// schemes (the authenticator has already checked the scheme the caller used; the scopes are
/// what tell callers apart). An empty requirement (`{"schemes": {}}`) is met by anyone; any
/// other needs an authenticated caller.
#[derive(Debug, Clone, Default)]
pub struct SkillScopes {
    /// In card order.
    skills: Vec<SkillRequirements>,
}

#[derive(Debug, Clone)]
struct SkillRequirements {
    id: String,
    requirements: Vec<SecurityRequirement>,
    /// On the public card: a refusal may name it (a skill only the extended card lists is not
    /// revealed to a caller who may not see that card).
    public: bool,
}

impl SkillScopes {
    /// The skills of `cards` (the public card, then the extended one), each id once: the first
    /// card declaring an id decides its requirements.
    pub fn from_cards<'a>(cards: impl IntoIterator<Item = &'a AgentCard>) -> Self {
        let mut skills: Vec<SkillRequirements> = Vec::new();
        for (n, card) in cards.into_iter().enumerate() {
            for skill in &card.skills {
                if !skills.iter().any(|s| s.id == skill.id) {
                    skills.push(SkillRequirements {
                        id: skill.id.clone(),
                        requirements: skill.security_requirements.clone(),
                        public: n == 0,
                    });
                }
            }
        }
        Self { skills }
    }

    /// Whether the agent has skills and an anonymous caller may use none of them.
    pub fn all_need_authentication(&self) -> bool {
        !self.skills.is_empty() && self.permitted(None).is_empty()
    }

    /// The ids of the skills `principal` may use, in card order.
    pub fn permitted(&self, principal: Option<&Principal>) -> Vec<String> {
        self.skills
            .iter()
            .filter(|s| {
                s.requirements.is_empty()
                    || s.requirements.iter().any(|r| missing(r, principal).is_some_and(|m| m.is_empty()))
            })
            .map(|s| s.id.clone())
            .collect()
    }

    /// [`SkillScopes::permitted`] for `method` (SendMessage, SendStreamingMessage): an error
    /// when the agent has skills and the caller may use none of them: Unauthenticated for an
    /// anonymous caller (as [`RequiredScopes`] does), PermissionDenied naming each public
    /// skill's missing scopes otherwise.
    pub fn check(&self, method: &str, principal: Option<&Principal>) -> Result<Vec<String>> {
        let permitted = self.permitted(principal);
        if !permitted.is_empty() || self.skills.is_empty() {
            return Ok(permitted);
        }
        if principal.is_none() {
            return Err(unauthenticated(&format!(
                "{method} needs an authenticated caller: every skill of this agent has security requirements"
            )));
        }
        let needs: Vec<String> = self
            .skills
            .iter()
            .filter(|s| s.public)
            .map(|s| {
                let alternatives: Vec<String> =
                    s.requirements.iter().filter_map(|r| missing(r, principal)).map(|m| m.join(" ")).collect();
                format!("{}: {}", s.id, alternatives.join(" or "))
            })
            .collect();
        Err(A2AError::new(
            ErrorKind::PermissionDenied,
            format!("{method} needs the scopes of one of the agent's skills ({})", needs.join("; ")),
        ))
    }
}

/// Whether the caller meets one of the card's own `securityRequirements` (every call but the
/// card needs it): none declared, or an alternative whose scopes the caller holds all of.
/// Unauthenticated for an anonymous caller, PermissionDenied naming what each alternative lacks
/// otherwise. (Which scheme a requirement names is not matched against the one the caller
/// used: any configured scheme admits a caller, and its scopes are the caller's.)
pub fn check_card_requirements(requirements: &[SecurityRequirement], principal: Option<&Principal>) -> Result<()> {
    if requirements.is_empty() {
        return Ok(());
    }
    let lacking: Vec<Vec<&str>> = match requirements.iter().map(|r| missing(r, principal)).collect::<Option<Vec<_>>>() {
        Some(lacking) => lacking,
        // An alternative with no schemes admits anyone; else an anonymous caller is refused.
        None if requirements.iter().any(|r| r.schemes.is_empty()) => return Ok(()),
        None => {
            return Err(unauthenticated("this agent requires authentication (see the agent card's securitySchemes)"));
        }
    };
    if lacking.iter().any(Vec::is_empty) {
        return Ok(());
    }
    let alternatives: Vec<String> = lacking.iter().map(|m| m.join(" ")).collect();
    Err(A2AError::new(
        ErrorKind::PermissionDenied,
        format!("this agent's card requires the scopes {} (the caller lacks them)", alternatives.join(" or ")),
    ))
}

/// The scopes of `requirement` the caller lacks; `None` when it needs an authenticated caller
/// and there is none.
fn missing<'a>(requirement: &'a SecurityRequirement, principal: Option<&Principal>) -> Option<Vec<&'a str>> {
    if requirement.schemes.is_empty() {
        return Some(Vec::new());
    }
    let principal = principal?;
    let scopes = requirement.schemes.values().flat_map(|l| &l.list);
    Some(scopes.filter(|s| !principal.scopes.contains(s)).map(String::as_str).collect())
}

pub(crate) fn unauthenticated(why: &str) -> A2AError {
    A2AError::new(ErrorKind::Unauthenticated, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(auth: Option<&str>) -> Parts {
        request("/", &[("authorization", auth)])
    }

    fn request(uri: &str, headers: &[(&str, Option<&str>)]) -> Parts {
        let mut b = http::Request::builder().uri(uri);
        for (name, value) in headers {
            if let Some(v) = value {
                b = b.header(*name, *v);
            }
        }
        b.body(()).unwrap().into_parts().0
    }

    fn who(name: &str, scopes: &[&str]) -> Principal {
        Principal::named(name, scopes.iter().map(|s| (*s).to_owned()).collect())
    }

    #[tokio::test]
    async fn api_keys_in_header_query_and_cookie() {
        let header = ApiKeys::new(KeyLocation::Header("X-API-Key".into())).with_key("k1", who("svc", &[]));
        assert_eq!(
            header.authenticate(&request("/", &[("x-api-key", Some("k1"))])).await.unwrap(),
            Some(who("svc", &[]))
        );
        assert_eq!(header.authenticate(&request("/", &[])).await.unwrap(), None);
        assert!(header.authenticate(&request("/", &[("x-api-key", Some("k2"))])).await.is_err());

        let query = ApiKeys::new(KeyLocation::Query("api_key".into())).with_key("k 1", who("q", &[]));
        assert_eq!(query.authenticate(&request("/tasks?x=1&api_key=k+1", &[])).await.unwrap(), Some(who("q", &[])));
        assert_eq!(query.authenticate(&request("/tasks?x=1", &[])).await.unwrap(), None);
        assert!(query.authenticate(&request("/?api_key=nope", &[])).await.is_err());

        let cookie = ApiKeys::new(KeyLocation::Cookie("session".into())).with_key("c1", who("c", &[]));
        let r = request("/", &[("cookie", Some("a=b; session=c1"))]);
        assert_eq!(cookie.authenticate(&r).await.unwrap(), Some(who("c", &[])));
        assert_eq!(cookie.authenticate(&request("/", &[("cookie", Some("a=b"))])).await.unwrap(), None);
        assert!(cookie.challenge().starts_with("ApiKey"));
    }

    /// Two credentials of one kind are ambiguous: refused, whichever of them is valid.
    #[tokio::test]
    async fn a_credential_sent_twice_is_refused() {
        let keys = ApiKeys::new(KeyLocation::Header("X-API-Key".into()))
            .with_key("ka", who("alice", &[]))
            .with_key("kb", who("bob", &[]));
        let twice = request("/", &[("x-api-key", Some("kb")), ("x-api-key", Some("ka"))]);
        let err = keys.authenticate(&twice).await.unwrap_err();
        assert!(err.message.contains("more than one"), "{}", err.message);
        let bearer = BearerTokens::new().with_token("t", who("bearer", &[]));
        let twice = request("/", &[("authorization", Some("Bearer t")), ("authorization", Some("Bearer t"))]);
        assert!(bearer.authenticate(&twice).await.is_err());
        let query = ApiKeys::new(KeyLocation::Query("k".into())).with_key("ka", who("alice", &[]));
        assert!(query.authenticate(&request("/?k=ka&k=kb", &[])).await.is_err());
        let cookie = ApiKeys::new(KeyLocation::Cookie("s".into())).with_key("ka", who("alice", &[]));
        assert!(cookie.authenticate(&request("/", &[("cookie", Some("s=ka; s=kb"))])).await.is_err());
    }

    #[tokio::test]
    async fn any_of_lets_the_scheme_in_use_decide() {
        let both = AnyOf::new(vec![
            Arc::new(BearerTokens::new().with_token("t", who("bearer", &[]))),
            Arc::new(ApiKeys::new(KeyLocation::Header("x-api-key".into())).with_key("k", who("key", &[]))),
        ]);
        assert_eq!(both.authenticate(&request("/", &[("x-api-key", Some("k"))])).await.unwrap().unwrap().name, "key");
        assert_eq!(both.authenticate(&headers(Some("Bearer t"))).await.unwrap().unwrap().name, "bearer");
        assert!(both.authenticate(&headers(Some("Bearer wrong"))).await.is_err());
        assert_eq!(both.authenticate(&request("/", &[])).await.unwrap(), None);
        assert_eq!(both.challenge(), "Bearer realm=\"a2a\", ApiKey realm=\"a2a\", name=\"x-api-key\"");
        // A bad credential of one scheme refuses the request, whatever the other says.
        let mixed = |auth: &str, key: &str| request("/", &[("authorization", Some(auth)), ("x-api-key", Some(key))]);
        assert!(both.authenticate(&mixed("Bearer t", "bad")).await.is_err());
        assert!(both.authenticate(&mixed("Bearer wrong", "k")).await.is_err());
        assert_eq!(both.authenticate(&mixed("Bearer t", "k")).await.unwrap().unwrap().name, "bearer");
    }

    #[test]
    fn required_scopes() {
        let policy = RequiredScopes::new().require("*", &["a2a"]).require("CancelTask", &["a2a.write"]);
        assert!(policy.check("GetTask", Some(&who("r", &["a2a"]))).is_ok());
        let e = policy.check("CancelTask", Some(&who("r", &["a2a"]))).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::PermissionDenied, "CancelTask needs the scopes: a2a.write")
        );
        assert!(policy.check("CancelTask", Some(&who("w", &["a2a", "a2a.write"]))).is_ok());
        assert_eq!(policy.check("GetTask", None).unwrap_err().kind, ErrorKind::Unauthenticated);
        assert!(RequiredScopes::new().check("GetTask", None).is_ok());
    }

    #[test]
    fn skill_scopes() {
        let card: AgentCard = crate::model::parse_value(serde_json::json!({
            "name": "a", "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [
                {"id": "translate", "name": "t", "description": "d", "tags": ["t"],
                 "securityRequirements": [{"schemes": {"oidc": {"list": ["translate"]}}},
                                          {"schemes": {"oidc": {"list": ["admin"]}, "key": {"list": ["ops"]}}}]},
                {"id": "signed-in", "name": "s", "description": "d", "tags": ["t"],
                 "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}
            ]
        }))
        .unwrap();
        let skills = SkillScopes::from_cards([&card]);
        assert_eq!(skills.permitted(None), Vec::<String>::new());
        assert_eq!(skills.permitted(Some(&who("a", &[]))), ["signed-in"]);
        assert_eq!(skills.permitted(Some(&who("t", &["translate"]))), ["translate", "signed-in"]);
        // Both scopes of the AND, under different schemes; one alone is not enough.
        assert_eq!(skills.permitted(Some(&who("o", &["admin", "ops"]))), ["translate", "signed-in"]);
        assert_eq!(skills.permitted(Some(&who("o", &["admin"]))), ["signed-in"]);
        assert_eq!(skills.check("SendMessage", None).unwrap_err().kind, ErrorKind::Unauthenticated);
        // What the server warns about when nothing authenticates.
        assert!(skills.all_need_authentication());

        let translate_only = SkillScopes { skills: skills.skills[..1].to_vec() };
        let e = translate_only.check("SendMessage", Some(&who("o", &["admin"]))).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                ErrorKind::PermissionDenied,
                "SendMessage needs the scopes of one of the agent's skills (translate: translate or ops)"
            )
        );
        // No skills, or skills without requirements: nothing to refuse.
        assert!(SkillScopes::default().check("SendMessage", None).unwrap().is_empty());
        let mut open = card.clone();
        open.skills.iter_mut().for_each(|s| s.security_requirements.clear());
        assert_eq!(SkillScopes::from_cards([&open]).check("SendMessage", None).unwrap(), ["translate", "signed-in"]);
        assert!(!SkillScopes::from_cards([&open]).all_need_authentication());
        assert!(!SkillScopes::default().all_need_authentication());
        // An empty requirement is met by anyone; a skill id repeated on a later card keeps the first.
        let mut anyone = card.clone();
        anyone.skills[0].security_requirements = vec![SecurityRequirement::default()];
        assert_eq!(SkillScopes::from_cards([&anyone, &card]).permitted(None), ["translate"]);
    }

    #[tokio::test]
    async fn bearer_tokens() {
        let alice = Principal::named("alice", vec![]);
        let auth = BearerTokens::new().with_token("s3cret", alice.clone());
        assert_eq!(auth.authenticate(&headers(Some("Bearer s3cret"))).await.unwrap(), Some(alice.clone()));
        assert_eq!(auth.authenticate(&headers(Some("bearer  s3cret"))).await.unwrap(), Some(alice));
        assert_eq!(auth.authenticate(&headers(None)).await.unwrap(), None);
        assert_eq!(auth.authenticate(&headers(Some("Basic YTpi"))).await.unwrap(), None);
        for bad in ["Bearer s3cre", "Bearer s3cret2", "Bearer", "garbage"] {
            let e = auth.authenticate(&headers(Some(bad))).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::Unauthenticated, "{bad}");
        }
    }
}
