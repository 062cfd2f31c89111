//! Auth shared by both sides, below the server and the client: who a caller is ([`Principal`]),
//! and JOSE: fetching and reading a JSON Web Key Set (validity windows kept) (a card signer's
//! keys, an agent's push keys, an identity provider's JWT keys), private keys and algorithms, and
//! the reading of a JWT (`jose`) that server JWTs and push notification checks share. A
//! server-only or a client-only build has all of it.

pub(crate) mod jose;
mod jwks;
mod keys;

pub use jose::{algorithm_named, private_key};
pub use jwks::{fetch_jwks, fetch_jwks_with};
pub use keys::{KeyRefusal, KeySet};

/// Compares secrets (tokens, keys) in time that does not depend on where they differ.
pub(crate) fn secrets_equal(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

/// An authenticated caller, as the executor and the stores see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Principal {
    /// A stable name for the caller (user, client id, key name).
    pub name: String,
    /// Scopes or roles granted to the caller.
    pub scopes: Vec<String>,
    /// Who named the caller, when not this agent's operator: a JWT's issuer (`jwt <iss>`).
    /// Empty for the names the operator gives (bearer tokens, API keys) and for client
    /// certificates (named `cert:<sha256>`). Tasks are kept per realm and name, so a user
    /// `alice` of an identity provider never reaches the tasks of the API key named `alice`.
    pub realm: String,
}

impl Principal {
    /// A caller named by this agent's operator.
    pub fn named(name: impl Into<String>, scopes: Vec<String>) -> Self {
        Self { name: name.into(), scopes, realm: String::new() }
    }
}
