//! What every vector runner shares: loading one folder of tests/vectors.

use serde_json::Value;

/// Every `*.json` file of `tests/vectors/<folder>`, parsed, as (file name, document), sorted by name.
pub fn vector_files(folder: &str) -> Vec<(String, Value)> {
    let dir = format!("{}/../tests/vectors/{folder}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {dir}: {e}"))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()));
            (path.file_name().unwrap().to_string_lossy().into_owned(), value)
        })
        .collect();
    assert!(!files.is_empty(), "no vector files in {dir}");
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}
