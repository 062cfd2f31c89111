//! `uniffi-bindgen`: generates the Kotlin and Swift sources from the built library, with the same
//! uniffi version as the crate (a separately installed bindgen could disagree on the ABI).
fn main() {
    uniffi::uniffi_bindgen_main()
}
