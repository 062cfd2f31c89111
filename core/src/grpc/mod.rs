//! The gRPC binding's wire form (spec §3.2 / the `lf.a2a.v1.A2AService` proto): the protobuf
//! messages, gRPC message framing, `google.rpc.Status` errors, and the conversion between the
//! protobuf messages and core's model.
//!
//! The messages are generated from the vendored proto by `tools/grpc-gen` (prost types with
//! pbjson's ProtoJSON serde impls, in [`pb`]). Core's model speaks ProtoJSON already, so a
//! message converts through ProtoJSON (see [`convert`]): one mapping, the proto's own. The
//! messages of every call (tasks, SendMessage and its replies, stream events) are converted
//! field for field instead ([`direct`]), for speed, and tested to give what that route gives.
//!
//! The service is served by `server::grpc_binding` on the HTTP listener (HTTP/2, `content-type:
//! application/grpc`) and called by the client's gRPC transport; both use [`frame`] and
//! [`status`].

pub mod convert;
pub mod direct;
pub mod frame;
mod nulls;
pub mod status;

/// The generated protobuf messages of package `lf.a2a.v1`.
#[allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]
pub mod pb {
    include!("gen/a2a.rs");
    include!("gen/a2a.serde.rs");
}

use crate::request::Method;

/// The gRPC service name of A2A 1.0.
pub const SERVICE: &str = crate::request::SERVICE;

/// The gRPC service extension methods are served under (ours: A2A defines none): the method
/// `tasks/search` is `/a2anative.v1.ExtensionMethods/tasks/search`, its request and response
/// one `google.protobuf.Value` each (the JSON-RPC params and result).
pub const EXTENSION_SERVICE: &str = "a2anative.v1.ExtensionMethods";

/// `application/grpc`: the media type of every gRPC request and response (`+proto` is the same).
pub const CONTENT_TYPE: &str = "application/grpc";

/// The HTTP/2 path of `method`: `/lf.a2a.v1.A2AService/SendMessage`.
pub fn path(method: Method) -> String {
    format!("/{SERVICE}/{}", method.as_str())
}

/// The method a request path names, when it is one of this service's: the path ends with
/// `/lf.a2a.v1.A2AService/<Method>` (a proxy may mount the service under a prefix).
/// `Err(name)` for a path of this service with an unknown method.
pub fn method_of_path(path: &str) -> Option<Result<Method, String>> {
    let rest = after_service(path, SERVICE, true)?;
    Some(Method::from_name(rest).ok_or_else(|| rest.chars().take(128).collect()))
}

/// What follows the path segment `/{service}/` (its last or first occurrence). Every gRPC
/// request asks this, so it neither allocates the pattern nor sets up a substring searcher.
fn after_service<'a>(path: &'a str, service: &str, last: bool) -> Option<&'a str> {
    let bytes = path.as_bytes();
    let found = |i: &usize| {
        bytes[i + 1..].starts_with(service.as_bytes())
            && bytes.get(i + 1 + service.len()) == Some(&b'/')
            && bytes[*i] == b'/'
    };
    let mut starts = (0..bytes.len()).filter(|i| bytes[*i] == b'/');
    let i = if last { starts.rfind(found) } else { starts.find(found) }?;
    Some(&path[i + service.len() + 2..])
}

/// The HTTP/2 path of the extension method `name`.
pub fn extension_path(name: &str) -> String {
    format!("/{EXTENSION_SERVICE}/{name}")
}

/// The extension method a request path names, when it is under [`EXTENSION_SERVICE`] (after
/// any prefix a proxy mounts it under).
pub fn extension_of_path(path: &str) -> Option<&str> {
    after_service(path, EXTENSION_SERVICE, false)
}

/// Whether a `content-type` is gRPC's with messages in protobuf (`application/grpc`,
/// `application/grpc+proto`, `application/grpc;…`): the only codec this implementation reads.
pub fn is_grpc_content_type(value: &str) -> bool {
    is_grpc_call(value) && {
        // After `application/grpc`: nothing, parameters, or exactly the `+proto` subtype.
        let rest = &value.trim_start().as_bytes()[CONTENT_TYPE.len()..];
        match rest.first() {
            Some(b'+') => {
                rest.len() >= 6
                    && rest[1..6].eq_ignore_ascii_case(b"proto")
                    && matches!(rest.get(6), None | Some(b';' | b' '))
            }
            _ => true,
        }
    }
}

/// Whether a `content-type` names a gRPC call, whatever its codec (`application/grpc+json` too);
/// `application/grpc-web` is a different protocol and is not.
pub fn is_grpc_call(value: &str) -> bool {
    let value = value.trim_start().as_bytes();
    value.get(..CONTENT_TYPE.len()).is_some_and(|head| head.eq_ignore_ascii_case(CONTENT_TYPE.as_bytes()))
        && matches!(value.get(CONTENT_TYPE.len()), None | Some(b'+' | b';' | b' '))
}

/// The `host:port` a gRPC interface is declared with (spec: a gRPC `AgentInterface.url` is
/// the target `host:port`, which is what gRPC clients such as grpcio dial), from a base URL
/// (`http://127.0.0.1:8080/a2a` → `127.0.0.1:8080`). Clients also accept a URL with a scheme.
pub fn target_of(base_url: &str) -> String {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn paths() {
        assert_eq!(path(Method::SendMessage), "/lf.a2a.v1.A2AService/SendMessage");
        assert_eq!(method_of_path("/lf.a2a.v1.A2AService/GetTask"), Some(Ok(Method::GetTask)));
        assert_eq!(method_of_path("/prefix/lf.a2a.v1.A2AService/CancelTask"), Some(Ok(Method::CancelTask)));
        assert_eq!(method_of_path("/lf.a2a.v1.A2AService/Nope"), Some(Err("Nope".to_owned())));
        assert_eq!(method_of_path("/a2a.v1.A2AService/GetTask"), None);
        assert_eq!(method_of_path("/tasks/x"), None);
        assert_eq!(extension_path("tasks/search"), "/a2anative.v1.ExtensionMethods/tasks/search");
        assert_eq!(extension_of_path("/p/a2anative.v1.ExtensionMethods/tasks/search"), Some("tasks/search"));
        assert_eq!(extension_of_path("/lf.a2a.v1.A2AService/GetTask"), None);
        // The last service segment names the method; the first names an extension method.
        assert_eq!(method_of_path("/lf.a2a.v1.A2AService/lf.a2a.v1.A2AService/GetTask"), Some(Ok(Method::GetTask)));
        assert_eq!(method_of_path("/x/lf.a2a.v1.A2AService/a/b"), Some(Err("a/b".to_owned())));
        assert_eq!(method_of_path("/xlf.a2a.v1.A2AService/GetTask"), None);
        assert_eq!(method_of_path("/lf.a2a.v1.A2AService"), None);
        assert_eq!(
            extension_of_path("/a2anative.v1.ExtensionMethods/a2anative.v1.ExtensionMethods/m"),
            Some("a2anative.v1.ExtensionMethods/m")
        );
    }

    #[test]
    fn targets() {
        assert_eq!(target_of("http://127.0.0.1:8080/a2a?x"), "127.0.0.1:8080");
        assert_eq!(target_of("https://agent.example.com"), "agent.example.com");
        assert_eq!(target_of("[::1]:9"), "[::1]:9");
    }

    #[test]
    fn content_types() {
        assert!(is_grpc_content_type("application/grpc"));
        assert!(is_grpc_content_type("application/grpc+proto"));
        assert!(is_grpc_content_type("Application/GRPC; charset=x"));
        assert!(!is_grpc_content_type("application/grpc-web"));
        assert!(!is_grpc_content_type("application/grpc+json"));
        assert!(is_grpc_call("application/grpc+json") && is_grpc_call("application/grpc"));
        assert!(!is_grpc_call("application/grpc-web") && !is_grpc_call("application/json"));
        assert!(!is_grpc_content_type("application/grpc+protobuf") && is_grpc_content_type("application/grpc+PROTO"));
        // Not ASCII where the prefix would end: no panic, not gRPC.
        assert!(!is_grpc_call("application/grp\u{e9}") && !is_grpc_content_type("application/grpc\u{e9}"));
        assert!(!is_grpc_content_type("application/json"));
    }

    /// The generated messages name the SHA-256 of the proto they came from: after a change to
    /// `spec/`, run `cargo run --manifest-path tools/grpc-gen/Cargo.toml`.
    #[test]
    fn generated_code_is_current() {
        let proto = include_bytes!("../../../spec/1.0.1/a2a.proto");
        let digest = format!("{:x}", sha2::Sha256::digest(proto));
        for generated in [include_str!("gen/a2a.rs"), include_str!("gen/a2a.serde.rs")] {
            let header = generated.lines().next().unwrap_or_default();
            assert!(header.contains(&digest), "stale generated gRPC code: {header}; run tools/grpc-gen");
        }
    }
}
