//! Members given twice in one JSON object. RFC 8259 leaves what that means to the reader, and
//! readers differ (serde_json, Python and JavaScript keep the last; others the first): a proxy
//! that checks `"method": "GetTask"` and a server that runs the second `"method":
//! "CancelTask"` disagree about the same bytes. So the server refuses a request body with a
//! repeated member, and `a2a validate` reports them in a file. Typed reads refuse repeats
//! themselves (serde's `duplicate field`); the server asks this only where a body is read as a
//! `Value`, which keeps the last in silence.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// The paths (`parts[0].text`) of every member given twice in `bytes`, in document order.
/// Nothing for text that is not JSON (its reader says why); serde_json's depth limit (128)
/// holds here too: deeper text is refused, not walked.
pub fn duplicate_keys(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = Walk { path: String::new(), found: &mut found }.deserialize(&mut de);
    found
}

/// The first of [`duplicate_keys`].
pub fn first_duplicate(bytes: &[u8]) -> Option<String> {
    duplicate_keys(bytes).into_iter().next()
}

struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk { path, found: self.found })?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq.next_element_seed(Walk { path: format!("{}[{i}]", self.path), found: self.found })?.is_some() {
            i += 1;
        }
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_member_given_twice_by_its_path() {
        let text = br#"{"a":1,"b":{"c":[{"d":1,"d":2}],"c":0},"a":{"x":1,"x":2}}"#;
        assert_eq!(duplicate_keys(text), ["b.c[0].d", "b.c", "a", "a.x"]);
        assert_eq!(first_duplicate(text).as_deref(), Some("b.c[0].d"));
        assert!(duplicate_keys(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_empty());
        // Escapes name the same member.
        assert_eq!(first_duplicate(br#"{"role":1,"r\u006fle":2}"#).as_deref(), Some("role"));
        assert!(duplicate_keys(b"not json").is_empty());
    }
}
