//! Records <-> core models, field by field: no JSON between them. `models_gen.rs` holds the
//! generated impls for every record and enum; this file the ones for scalars and containers,
//! and the two entry points. A record going into core is converted, then checked with core's
//! `Validate`, the rules core applies to a request read from the wire, so a record and the same
//! value sent as JSON are accepted and refused alike (InvalidParams naming the JSON path).

use crate::errors::{A2aException, Result};
use a2a_native::A2AError;
use a2a_native::model::{self, Struct, Timestamp, Validate, wire};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Where a value sits in its record, as a JSON path (`message.parts[0].metadata`). Built on the
/// stack as the conversion descends and written out only for an error.
#[derive(Clone, Copy)]
pub enum Path<'a> {
    Root(&'a str),
    Field(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
    Key(&'a Path<'a>, &'a str),
}

impl<'a> Path<'a> {
    pub const TOP: Path<'static> = Path::Root("");

    pub fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field(self, name)
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (parent, sep, name): (&Path, &str, &dyn fmt::Display) = match self {
            Path::Root(name) => return f.write_str(name),
            Path::Field(parent, name) => (parent, ".", name),
            Path::Key(parent, name) => (parent, ".", name),
            Path::Index(parent, i) => return write!(f, "{parent}[{i}]"),
        };
        let head = parent.to_string();
        if head.is_empty() { write!(f, "{name}") } else { write!(f, "{head}{sep}{name}") }
    }
}

pub fn invalid(path: &Path, what: &str) -> A2aException {
    A2AError::invalid_field(path.to_string(), what).into()
}

/// A record (or a member of one) as the core type `C`.
pub trait ToCore<C> {
    fn to_core(self, path: &Path) -> Result<C>;
}

/// A core value as its record.
pub trait ToRecord<R> {
    fn to_record(self) -> R;
}

/// A record into core, checked as core checks a request.
pub fn to_core<C: Validate, R: ToCore<C>>(record: R) -> Result<C> {
    let value = record.to_core(&Path::TOP)?;
    value.validate()?;
    Ok(value)
}

macro_rules! same {
    ($($t:ty),*) => {$(
        impl ToCore<$t> for $t {
            fn to_core(self, _: &Path) -> Result<$t> { Ok(self) }
        }
        impl ToRecord<$t> for $t {
            fn to_record(self) -> $t { self }
        }
    )*};
}
same!(String, bool, i32);

impl<R: ToCore<C>, C> ToCore<Option<C>> for Option<R> {
    fn to_core(self, path: &Path) -> Result<Option<C>> {
        self.map(|x| x.to_core(path)).transpose()
    }
}
impl<C: ToRecord<R>, R> ToRecord<Option<R>> for Option<C> {
    fn to_record(self) -> Option<R> {
        self.map(ToRecord::to_record)
    }
}

impl<R: ToCore<C>, C> ToCore<Vec<C>> for Vec<R> {
    fn to_core(self, path: &Path) -> Result<Vec<C>> {
        self.into_iter().enumerate().map(|(i, x)| x.to_core(&Path::Index(path, i))).collect()
    }
}
impl<C: ToRecord<R>, R> ToRecord<Vec<R>> for Vec<C> {
    fn to_record(self) -> Vec<R> {
        self.into_iter().map(ToRecord::to_record).collect()
    }
}

impl<R: ToCore<C>, C> ToCore<BTreeMap<String, C>> for HashMap<String, R> {
    fn to_core(self, path: &Path) -> Result<BTreeMap<String, C>> {
        self.into_iter()
            .map(|(k, v)| {
                let v = v.to_core(&Path::Key(path, &k))?;
                Ok((k, v))
            })
            .collect()
    }
}
impl<C: ToRecord<R>, R> ToRecord<HashMap<String, R>> for BTreeMap<String, C> {
    fn to_record(self) -> HashMap<String, R> {
        self.into_iter().map(|(k, v)| (k, v.to_record())).collect()
    }
}

/// `google.protobuf.Value`: JSON text in the record.
impl ToCore<Value> for String {
    fn to_core(self, path: &Path) -> Result<Value> {
        serde_json::from_str(&self).map_err(|e| invalid(path, &format!("is not JSON text: {e}")))
    }
}
impl ToRecord<String> for Value {
    fn to_record(self) -> String {
        self.to_string()
    }
}

/// `google.protobuf.Struct`: the text of a JSON object in the record.
impl ToCore<Struct> for String {
    fn to_core(self, path: &Path) -> Result<Struct> {
        match ToCore::<Value>::to_core(self, path)? {
            Value::Object(map) => Ok(map),
            _ => Err(invalid(path, "must be an object")),
        }
    }
}
impl ToRecord<String> for Struct {
    fn to_record(self) -> String {
        Value::Object(self).to_string()
    }
}

/// `google.protobuf.Timestamp`: RFC 3339 text in the record.
impl ToCore<Timestamp> for String {
    fn to_core(self, path: &Path) -> Result<Timestamp> {
        wire::timestamp::parse(&self).map_err(|e| invalid(path, &e))
    }
}
impl ToRecord<String> for Timestamp {
    fn to_record(self) -> String {
        wire::timestamp::format(&self)
    }
}

/// `value` read as the core type `C` and taken through its record `R` and back: what the
/// vectors check every record with (nothing may be lost either way).
pub fn through<C, R>(value: Value) -> Result<Value>
where
    C: DeserializeOwned + Serialize + ToRecord<R>,
    R: ToCore<C>,
{
    let core: C = serde_json::from_value(value).map_err(|e| invalid(&Path::TOP, &e.to_string()))?;
    let back: C = core.to_record().to_core(&Path::TOP)?;
    Ok(model::to_value(&back))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models_gen::{ListTasksRequest, Part, PartContent, TaskState};

    fn field_of(e: A2aException) -> String {
        let A2aException::Failure { violations, .. } = e;
        violations.first().map(|v| v.field.clone()).unwrap_or_default()
    }

    #[test]
    fn paths_are_written_as_json_paths() {
        let top = Path::Root("");
        let message = top.field("message");
        let parts = message.field("parts");
        let second = Path::Index(&parts, 1);
        assert_eq!(second.field("data").to_string(), "message.parts[1].data");
        assert_eq!(Path::Key(&top.field("scopes"), "read").to_string(), "scopes.read");
        assert_eq!(Path::Root("artifact").field("parts").to_string(), "artifact.parts");
    }

    #[test]
    fn json_members_are_checked_where_they_sit() {
        let part = Part {
            content: Some(PartContent::Data { data: "[1,".into() }),
            metadata: None,
            filename: "".into(),
            media_type: "".into(),
        };
        let e = ToCore::<model::Part>::to_core(part, &Path::Root("p")).unwrap_err();
        assert_eq!(field_of(e), "p.data");
        let e = ToCore::<Struct>::to_core("[1]".to_owned(), &Path::Root("metadata")).unwrap_err();
        assert_eq!(field_of(e), "metadata");
        let none = Part { content: None, metadata: None, filename: "".into(), media_type: "".into() };
        assert_eq!(field_of(ToCore::<model::Part>::to_core(none, &Path::TOP).unwrap_err()), "");
    }

    #[test]
    fn an_unspecified_state_filter_is_no_filter() {
        let request = ListTasksRequest {
            tenant: String::new(),
            context_id: String::new(),
            status: Some(TaskState::Unspecified),
            page_size: None,
            page_token: String::new(),
            history_length: None,
            status_timestamp_after: Some("2026-01-02T03:04:05+01:00".into()),
            include_artifacts: None,
        };
        let core: model::ListTasksRequest = to_core(request).unwrap();
        assert_eq!(core.status, None);
        assert_eq!(core.status_timestamp_after.map(|t| t.to_rfc3339()), Some("2026-01-02T02:04:05+00:00".into()));
    }

    #[test]
    fn every_member_survives_the_trip_through_its_record() {
        let task = serde_json::json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-02T03:04:05.123456Z"},
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [
                {"raw": "AAH/", "filename": "f", "mediaType": "application/octet-stream"},
                {"data": null}, {"url": "https://x"}, {"text": "hi", "metadata": {"a": 1}}]}],
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"k": [1, 2.5]}}], "extensions": ["e"]}],
            "metadata": {"n": null}
        });
        assert_eq!(through::<model::Task, crate::models_gen::A2ATask>(task.clone()).unwrap(), task);
    }
}
