//! JOSE shared by both sides: fetching a JSON Web Key Set (a card signer's keys, an agent's push
//! keys, an identity provider's JWT keys). Needs neither the server nor the client module, so
//! a server-only or a client-only build has it.

mod jwks;

pub use jwks::{fetch_jwks, fetch_jwks_with};
