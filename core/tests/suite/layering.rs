//! Core's layers import one way: model → error → wire (jsonrpc, rest, sse) → store →
//! executor → task → server / client. A lower layer naming a higher one (outside comments)
//! fails here, with the file and line.

use std::path::{Path, PathBuf};

/// Each layer's sources (files or folders under core/src) and the modules it must not name.
const RULES: &[(&[&str], &[&str])] = &[
    (
        &["model"],
        &["jsonrpc", "rest", "sse", "store", "executor", "task", "server", "client", "push", "grpc", "methods"],
    ),
    (&["error.rs"], &["jsonrpc", "rest", "sse", "store", "executor", "task", "server", "client", "push", "grpc"]),
    (
        &["jsonrpc.rs", "jsonrpc", "rest.rs", "rest", "sse.rs", "sse"],
        &["store", "executor", "task", "server", "client", "push"],
    ),
    (&["store"], &["executor", "task", "server", "client"]),
    (&["executor.rs"], &["task", "server", "client"]),
    (&["task"], &["server", "client"]),
];

fn sources(at: &Path, out: &mut Vec<PathBuf>) {
    if at.is_dir() {
        for entry in std::fs::read_dir(at).unwrap() {
            sources(&entry.unwrap().path(), out);
        }
    } else if at.extension().is_some_and(|e| e == "rs") {
        out.push(at.to_owned());
    }
}

#[test]
fn lower_layers_never_name_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut files = 0;
    for (layer, forbidden) in RULES {
        let mut paths = Vec::new();
        for part in *layer {
            sources(&src.join(part), &mut paths);
        }
        assert!(!paths.is_empty(), "no sources for {layer:?}");
        for path in paths {
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            // Inside a grouped `use crate::{…}` (which may span lines), names are bare.
            let mut grouped = false;
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                let code = code.split("//").next().unwrap_or_default();
                grouped |= code.contains("crate::{");
                let group = if grouped { code.rsplit("crate::{").next().unwrap_or_default() } else { "" };
                for module in *forbidden {
                    let named = code.contains(&format!("crate::{module}::"))
                        || code.contains(&format!("crate::{module};"))
                        || group.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == *module);
                    if named {
                        let file = path.strip_prefix(&src).unwrap().display();
                        violations.push(format!("{file}:{}: {}", n + 1, line.trim()));
                    }
                }
                if grouped && code.contains("};") {
                    grouped = false;
                }
            }
        }
    }
    assert!(files > 20, "only {files} files read");
    assert!(violations.is_empty(), "layering broken:\n{}", violations.join("\n"));
}
