//! ProtoJSON details shared by every model: timestamps, base64 bytes, proto enums (by name or
//! number), int32 given as number or string, and the `is_default` tests used to omit default
//! values the way a ProtoJSON encoder does.

use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serializer, de};

/// A protobuf `Timestamp`: UTC, written in RFC 3339 with `Z`.
pub type Timestamp = DateTime<Utc>;

/// Now, truncated to milliseconds (the precision the spec asks for).
pub fn now() -> Timestamp {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// A fresh UUID as id text (lowercase, hyphenated), written without `fmt`'s machinery, which
/// costs several times more and runs for several ids on every new task.
pub fn id_text(id: uuid::Uuid) -> String {
    id.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned()
}

/// `true` for the values a ProtoJSON encoder leaves out.
pub fn is_false(b: &bool) -> bool {
    !*b
}

pub mod timestamp {
    //! `Timestamp` fields: written with `Z` and 0, 3, 6 or 9 fraction digits (lossless);
    //! read from any RFC 3339 offset and normalised to UTC.
    use super::*;

    /// Milliseconds always (the precision the spec asks for); micro- or nanoseconds only when
    /// the value has them, so reading and writing back never loses precision.
    pub fn format(ts: &Timestamp) -> String {
        let nanos = ts.timestamp_subsec_nanos();
        let (precision, digits, fraction) = if nanos.is_multiple_of(1_000_000) {
            (SecondsFormat::Millis, 3, nanos / 1_000_000)
        } else if nanos.is_multiple_of(1_000) {
            (SecondsFormat::Micros, 6, nanos / 1_000)
        } else {
            (SecondsFormat::Nanos, 9, nanos)
        };
        // Every status carries one: written digit by digit (chrono's formatter costs several
        // times more). Years beyond four digits and leap seconds are left to chrono.
        let year = ts.year();
        if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
            return ts.to_rfc3339_opts(precision, true);
        }
        let mut out = String::with_capacity(30);
        for (value, width, then) in [
            (year as u32, 4, '-'),
            (ts.month(), 2, '-'),
            (ts.day(), 2, 'T'),
            (ts.hour(), 2, ':'),
            (ts.minute(), 2, ':'),
            (ts.second(), 2, '.'),
        ] {
            push_digits(&mut out, value, width);
            out.push(then);
        }
        push_digits(&mut out, fraction, digits);
        out.push('Z');
        out
    }

    /// `value`'s last `width` decimal digits, zero-padded.
    fn push_digits(out: &mut String, value: u32, width: u32) {
        for place in (0..width).rev() {
            out.push(char::from(b'0' + (value / 10u32.pow(place) % 10) as u8));
        }
    }

    /// Any RFC 3339 offset; at most nanoseconds (9 fraction digits; more would be cut
    /// silently), and within protobuf's range, years 0001 to 9999 in UTC (what every binding
    /// and the gRPC form can carry).
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        let ts = DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| format!("invalid RFC 3339 timestamp {text:?}: {e}"))?;
        let fraction = text.find('.').map_or(0, |dot| text[dot + 1..].bytes().take_while(u8::is_ascii_digit).count());
        if fraction > 9 {
            return Err(format!("invalid timestamp {text:?}: more than 9 fraction digits (nanoseconds)"));
        }
        if !(1..=9999).contains(&ts.year()) {
            return Err(format!("invalid timestamp {text:?}: outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"));
        }
        Ok(ts)
    }

    pub fn serialize<S: Serializer>(ts: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(ts))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(de::Error::custom)
    }

    pub mod option {
        use super::*;
        pub fn serialize<S: Serializer>(ts: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
            match ts {
                Some(ts) => super::serialize(ts, s),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
            match Option::<String>::deserialize(d)? {
                Some(text) => super::parse(&text).map(Some).map_err(de::Error::custom),
                None => Ok(None),
            }
        }
    }
}

/// Standard alphabet, padding optional on input (ProtoJSON readers accept both alphabets).
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encodes `bytes` fields (standard alphabet, padded, as ProtoJSON writes them).
pub fn b64_encode(bytes: &[u8]) -> String {
    general_purpose::STANDARD.encode(bytes)
}

/// Decodes `bytes` fields written with either alphabet, padded or not.
pub fn b64_decode(text: &str) -> Result<Vec<u8>, String> {
    STANDARD_LENIENT.decode(text).or_else(|_| URL_SAFE_LENIENT.decode(text)).map_err(|e| format!("invalid base64: {e}"))
}

/// Reads an int32 written as a JSON number or a decimal string (both are valid ProtoJSON).
pub fn int32_from_value(value: &serde_json::Value) -> Result<i32, String> {
    let as_i64 = match value {
        serde_json::Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e15).map(|f| f as i64))
        }
        serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    as_i64.and_then(|n| i32::try_from(n).ok()).ok_or_else(|| format!("expected a 32-bit integer, got {value}"))
}

pub mod int32_opt {
    //! `optional int32` fields: number or string on input, number on output.
    use super::*;
    pub fn serialize<S: Serializer>(v: &Option<i32>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_i32(*n),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
        match Option::<serde_json::Value>::deserialize(d)? {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => int32_from_value(&v).map(Some).map_err(de::Error::custom),
        }
    }
}

pub mod int32 {
    //! Plain `int32` fields (default 0).
    use super::*;
    pub fn serialize<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(*v)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
        match Option::<serde_json::Value>::deserialize(d)? {
            None | Some(serde_json::Value::Null) => Ok(0),
            Some(v) => int32_from_value(&v).map_err(de::Error::custom),
        }
    }
}

/// A proto enum: serialised by name, read by name or by number (both valid ProtoJSON).
/// Unknown names are an error naming the accepted values.
macro_rules! proto_enum {
    ($(#[$meta:meta])* $name:ident { $( $variant:ident = $num:literal => $wire:literal ),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub enum $name {
            #[default]
            $( $variant ),*
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$( $name::$variant ),*];
            /// The name on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $wire ),* }
            }
            pub fn number(self) -> i32 {
                match self { $( $name::$variant => $num ),* }
            }
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $( $wire => Some($name::$variant), )* _ => None }
            }
            pub fn from_number(n: i64) -> Option<Self> {
                match n { $( $num => Some($name::$variant), )* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl V {
                    fn unknown<E: serde::de::Error>(what: std::fmt::Arguments<'_>) -> E {
                        let names: Vec<&str> = $name::ALL.iter().map(|x| x.as_str()).collect();
                        E::custom(format!("unknown {} value {}; expected one of {}",
                            stringify!($name), what, names.join(", ")))
                    }
                }
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "a {} name or number", stringify!($name))
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::from_name(s).ok_or_else(|| V::unknown(format_args!("{s:?}")))
                    }
                    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<$name, E> {
                        $name::from_number(n).ok_or_else(|| V::unknown(format_args!("{n}")))
                    }
                    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<$name, E> {
                        i64::try_from(n).ok().and_then($name::from_number)
                            .ok_or_else(|| V::unknown(format_args!("{n}")))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
pub(crate) use proto_enum;

/// A proto `oneof` carried as a wrapper object with exactly one member, e.g.
/// `{"task": {...}}`. Serialises as that one member; reading accepts unknown extra members
/// (ignored, as the spec says) but rejects zero or several known members.
macro_rules! proto_oneof {
    ($(#[$meta:meta])* $name:ident { $( $variant:ident($ty:ty) => $wire:literal ),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $variant($ty) ),*
        }

        impl $name {
            /// The wire name of the member that is set.
            pub fn member(&self) -> &'static str {
                match self { $( $name::$variant(_) => $wire ),* }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                match self { $( $name::$variant(v) => map.serialize_entry($wire, v)?, )* }
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "an object with exactly one of: {}", [$($wire),*].join(", "))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        let mut found: Option<$name> = None;
                        while let Some(key) = map.next_key::<String>()? {
                            let value = match key.as_str() {
                                $( $wire => {
                                    // A null member counts as unset (ProtoJSON).
                                    match map.next_value::<Option<$ty>>()? {
                                        Some(v) => $name::$variant(v),
                                        None => continue,
                                    }
                                } )*
                                _ => { map.next_value::<serde::de::IgnoredAny>()?; continue; }
                            };
                            if let Some(prev) = &found {
                                return Err(serde::de::Error::custom(format!(
                                    "only one of {} may be set, found {} and {}",
                                    [$($wire),*].join(", "), prev.member(), value.member())));
                            }
                            found = Some(value);
                        }
                        found.ok_or_else(|| serde::de::Error::custom(format!(
                            "exactly one of {} must be set", [$($wire),*].join(", "))))
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}
pub(crate) use proto_oneof;

/// Reads a proto message, which on the wire is always a JSON object. serde's derive also reads
/// a struct from a JSON array, field by field in order, so `"configuration": []` or a part
/// written `["hi"]` would pass for valid. Each message struct derives with
/// `#[serde(remote = "Self")]` (the derive then makes inherent functions) and is listed in
/// [`json_objects!`], whose `Deserialize` accepts a map only and hands it to the derived reader.
pub(crate) struct ObjectOnly<T>(pub std::marker::PhantomData<T>);

/// The derived reader of a [`json_objects!`] struct.
pub(crate) trait DerivedFields<'de>: Sized {
    fn derived<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

impl<'de, T: DerivedFields<'de>> de::Visitor<'de> for ObjectOnly<T> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::derived(de::value::MapAccessDeserializer::new(map))
    }
}

/// `Deserialize` (a JSON object only, see [`ObjectOnly`]) for structs derived with
/// `#[serde(remote = "Self")]`; `serialize: ...` also forwards `Serialize` to the derived writer.
macro_rules! json_objects {
    (serialize: $($t:ident),* $(,)?) => {
        $(impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $t::serialize(self, s)
            }
        })*
    };
    ($($t:ident),* $(,)?) => {
        $(impl<'de> $crate::model::wire::DerivedFields<'de> for $t {
            fn derived<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $t::deserialize(d)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map($crate::model::wire::ObjectOnly(std::marker::PhantomData))
            }
        })*
    };
}
pub(crate) use json_objects;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_outside_protobuf_are_refused() {
        for bad in ["0000-06-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "2025-07-30T10:00:00.1234567891Z"] {
            assert!(timestamp::parse(bad).is_err(), "{bad}");
        }
        for good in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2025-07-30T10:00:00.123456789+02:00"] {
            assert!(timestamp::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn timestamps_are_utc_z_and_lossless() {
        let t = timestamp::parse("2025-07-30T12:00:00.123+02:00").unwrap();
        assert_eq!(timestamp::format(&t), "2025-07-30T10:00:00.123Z");
        let micro = timestamp::parse("2025-07-30T10:00:00.123456Z").unwrap();
        assert_eq!(timestamp::format(&micro), "2025-07-30T10:00:00.123456Z");
        assert!(timestamp::parse("2025-07-30 10:00").is_err());
        let whole = timestamp::parse("2025-07-30T10:00:00Z").unwrap();
        assert_eq!(timestamp::format(&whole), "2025-07-30T10:00:00.000Z");
        assert_eq!(now().timestamp_subsec_nanos() % 1_000_000, 0);
    }

    #[test]
    fn timestamps_are_written_as_chrono_writes_them() {
        // The digit-by-digit writer against chrono's RFC 3339, over every precision and the
        // edges of the four-digit years (outside them chrono writes).
        let texts = [
            "0000-01-01T00:00:00Z",
            "0001-02-03T04:05:06.007Z",
            "1969-12-31T23:59:59.999999999Z",
            "1970-01-01T00:00:00.000001Z",
            "2024-02-29T12:34:56.100Z",
            "2026-11-28T02:44:12.5Z",
            "9999-12-31T23:59:59.999999Z",
            "2025-06-30T23:59:60.250Z",
        ];
        for text in texts {
            // Read by chrono: `parse` refuses year 0000, which a value built in code may hold.
            let t = DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc);
            let nanos = t.timestamp_subsec_nanos();
            let precision = match nanos {
                n if n % 1_000_000 == 0 => SecondsFormat::Millis,
                n if n % 1_000 == 0 => SecondsFormat::Micros,
                _ => SecondsFormat::Nanos,
            };
            assert_eq!(timestamp::format(&t), t.to_rfc3339_opts(precision, true), "{text}");
        }
        let mut t = timestamp::parse("2001-01-01T00:00:00Z").unwrap();
        for step in 0..2000 {
            t += chrono::Duration::milliseconds(86_400_000 * 3 + 3_599_999 + step * 7919);
            assert_eq!(timestamp::format(&t), t.to_rfc3339_opts(SecondsFormat::Millis, true));
        }
        let far = DateTime::from_timestamp(253_402_300_800, 0).unwrap(); // year 10000
        assert_eq!(timestamp::format(&far), far.to_rfc3339_opts(SecondsFormat::Millis, true));
    }

    #[test]
    fn ids_are_lowercase_hyphenated_uuids() {
        let id = uuid::Uuid::now_v7();
        assert_eq!(id_text(id), id.to_string());
    }

    #[test]
    fn base64_accepts_both_alphabets() {
        assert_eq!(b64_decode("+/8=").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(b64_decode("-_8").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(b64_encode(&[0xfb, 0xff]), "+/8=");
        assert!(b64_decode("not base64!").is_err());
    }

    #[test]
    fn int32_reads_numbers_and_strings() {
        assert_eq!(int32_from_value(&serde_json::json!(5)), Ok(5));
        assert_eq!(int32_from_value(&serde_json::json!("7")), Ok(7));
        assert_eq!(int32_from_value(&serde_json::json!(3.0)), Ok(3));
        assert!(int32_from_value(&serde_json::json!(3.5)).is_err());
        assert!(int32_from_value(&serde_json::json!(4_294_967_296i64)).is_err());
        assert!(int32_from_value(&serde_json::json!(true)).is_err());
    }
}
