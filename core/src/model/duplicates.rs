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
    let _ = Walk { at: None, found: &mut found }.deserialize(&mut de);
    found
}

/// The first of [`duplicate_keys`].
pub fn first_duplicate(bytes: &[u8]) -> Option<String> {
    duplicate_keys(bytes).into_iter().next()
}

/// One step down from the parent: a member's name or an item's index. Paths are written out
/// only for a member given twice: a body without one allocates nothing for them.
enum Step<'a> {
    Member(&'a str, Option<&'a Step<'a>>),
    Item(usize, Option<&'a Step<'a>>),
}

impl Step<'_> {
    fn path(&self) -> String {
        let (mut out, parent) = match self {
            Step::Member(name, parent) => (name.to_string(), *parent),
            Step::Item(i, parent) => (format!("[{i}]"), *parent),
        };
        let mut at = parent;
        while let Some(step) = at {
            out = match step {
                Step::Member(name, _) if out.starts_with('[') => format!("{name}{out}"),
                Step::Member(name, _) => format!("{name}.{out}"),
                Step::Item(i, _) if out.starts_with('[') => format!("[{i}]{out}"),
                Step::Item(i, _) => format!("[{i}].{out}"),
            };
            at = match step {
                Step::Member(_, p) | Step::Item(_, p) => *p,
            };
        }
        out
    }
}

struct Walk<'a, 'f> {
    at: Option<&'a Step<'a>>,
    found: &'f mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let step = Step::Member(&key, self.at);
            if seen.contains(&key) {
                self.found.push(step.path());
            }
            map.next_value_seed(Walk { at: Some(&step), found: self.found })?;
            seen.insert(key);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let step = Step::Item(i, self.at);
            if seq.next_element_seed(Walk { at: Some(&step), found: self.found })?.is_none() {
                return Ok(());
            }
            i += 1;
        }
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
