//! `core/error-table.json` is core's error table as the bindings' generators read it (nothing
//! parses `error.rs`): it must be current. `A2A_UPDATE_ERROR_TABLE=1 cargo test -p a2a-native
//! --test suite error_table` rewrites it.

#[test]
fn the_committed_error_table_json_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("error-table.json");
    let current = serde_json::to_string_pretty(&a2a_native::error::table_json()).unwrap() + "\n";
    if std::env::var_os("A2A_UPDATE_ERROR_TABLE").is_some() {
        std::fs::write(&path, &current).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == current,
        "{} is stale: run A2A_UPDATE_ERROR_TABLE=1 cargo test -p a2a-native --test suite error_table",
        path.display()
    );
}
