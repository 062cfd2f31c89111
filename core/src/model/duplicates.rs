//! Finds a member given twice in one JSON object. RFC 8259 leaves what that means to the
//! reader, and readers differ (most keep the last, some the first): a proxy that checks
//! `"method": "GetTask"` and a server that runs the second `"method": "CancelTask"` disagree
//! about the same bytes. So every request body is refused when one of its objects repeats a
//! member. Typed reads refuse repeats themselves (serde's `duplicate field`); this is asked
//! only where a body is read as a `Value`, which keeps the last in silence.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// The dotted path (`message.role`, `parts.0.text`) of the first member an object of `text`
/// gives twice; `None` when there is none, or when `text` is not JSON (its reader says why).
pub fn first_duplicate(text: &[u8]) -> Option<String> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(text);
    let _ = Walk { path: String::new(), found: &mut found }.deserialize(&mut de);
    found
}

/// One value at `path`; records the first repeat in `found` and then stops the walk.
struct Walk<'a> {
    path: String,
    found: &'a mut Option<String>,
}

impl Walk<'_> {
    fn below(&mut self, step: &str) -> Walk<'_> {
        let path = if self.path.is_empty() { step.to_owned() } else { format!("{}.{step}", self.path) };
        Walk { path, found: self.found }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                *self.found = Some(self.below(&key).path);
                return Err(de::Error::custom("a member given twice"));
            }
            map.next_value_seed(self.below(&key))?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq.next_element_seed(self.below(&i.to_string()))?.is_some() {
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
    use super::first_duplicate;

    #[test]
    fn finds_the_first_repeated_member_and_where() {
        assert_eq!(first_duplicate(br#"{"a":1,"b":2}"#), None);
        assert_eq!(first_duplicate(br#"{"method":"GetTask","method":"CancelTask"}"#).as_deref(), Some("method"));
        let nested = br#"{"message":{"parts":[{"text":"a"},{"text":"b","text":"c"}]}}"#;
        assert_eq!(first_duplicate(nested).as_deref(), Some("message.parts.1.text"));
        // The same name in two objects is no repeat; escapes name the same member.
        assert_eq!(first_duplicate(br#"{"a":{"x":1},"b":{"x":2}}"#), None);
        assert_eq!(first_duplicate(br#"{"role":1,"r\u006fle":2}"#).as_deref(), Some("role"));
        assert_eq!(first_duplicate(b"not json"), None);
    }
}
