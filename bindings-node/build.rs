//! Link flags napi needs for a Node addon (on macOS: undefined symbols resolved by node).
fn main() {
    napi_build::setup();
}
