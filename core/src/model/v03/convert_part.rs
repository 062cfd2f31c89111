//! Part conversions between 0.3 and 1.0.

use super::part::{DataPart, FileContent, FilePart, FileWithBytes, FileWithUri, Part, TextPart};
use super::util::opt;
use super::{DATA_PART_COMPAT_KEY, PART_FIELDS_KEY};
use crate::model::{self as m, Struct};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Conversions: parts
// ---------------------------------------------------------------------------------------------

/// Puts a 1.0 text/data part's `filename` / `mediaType` under [`PART_FIELDS_KEY`].
fn carry_part_fields(metadata: &mut Option<Struct>, filename: String, media_type: String) {
    if filename.is_empty() && media_type.is_empty() {
        return;
    }
    let mut fields = Struct::new();
    if !filename.is_empty() {
        fields.insert("filename".to_owned(), Value::String(filename));
    }
    if !media_type.is_empty() {
        fields.insert("mediaType".to_owned(), Value::String(media_type));
    }
    metadata.get_or_insert_with(Struct::new).insert(PART_FIELDS_KEY.to_owned(), Value::Object(fields));
}

/// Removes `key` from metadata, dropping the map when that empties it (we created it).
fn take_meta(metadata: &mut Option<Struct>, key: &str) -> Option<Value> {
    let map = metadata.as_mut()?;
    let value = map.remove(key)?;
    if map.is_empty() {
        *metadata = None;
    }
    Some(value)
}

/// The inverse of [`carry_part_fields`]; a value not of our shape is left alone.
fn restore_part_fields(metadata: &mut Option<Struct>) -> (String, String) {
    let ours = metadata.as_ref().and_then(|m| m.get(PART_FIELDS_KEY)).is_some_and(|v| {
        v.as_object()
            .is_some_and(|f| f.iter().all(|(k, v)| matches!(k.as_str(), "filename" | "mediaType") && v.is_string()))
    });
    if !ours {
        return Default::default();
    }
    let fields = take_meta(metadata, PART_FIELDS_KEY).expect("checked above");
    let get = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    (get("filename"), get("mediaType"))
}

/// A 0.3 data part's value in 1.0: unwraps `{"value": X}` when flagged with
/// [`DATA_PART_COMPAT_KEY`] = true (and only that exact shape).
fn unwrap_data(data: Struct, metadata: &mut Option<Struct>) -> Value {
    let flagged = metadata.as_ref().and_then(|m| m.get(DATA_PART_COMPAT_KEY)) == Some(&Value::Bool(true));
    if flagged && data.len() == 1 && data.contains_key("value") {
        take_meta(metadata, DATA_PART_COMPAT_KEY);
        return data.into_iter().next().expect("one member").1;
    }
    Value::Object(data)
}

impl From<Part> for m::Part {
    fn from(p: Part) -> Self {
        match p {
            Part::Text(TextPart { text, mut metadata }) => {
                let (filename, media_type) = restore_part_fields(&mut metadata);
                m::Part { content: m::PartContent::Text(text), metadata, filename, media_type }
            }
            Part::Data(DataPart { data, mut metadata }) => {
                let (filename, media_type) = restore_part_fields(&mut metadata);
                let content = m::PartContent::Data(unwrap_data(data, &mut metadata));
                m::Part { content, metadata, filename, media_type }
            }
            Part::File(FilePart { file, metadata }) => {
                let (content, mime_type, name) = match file {
                    FileContent::Bytes(f) => (m::PartContent::Raw(f.bytes), f.mime_type, f.name),
                    FileContent::Uri(f) => (m::PartContent::Url(f.uri), f.mime_type, f.name),
                };
                m::Part {
                    content,
                    metadata,
                    filename: name.unwrap_or_default(),
                    media_type: mime_type.unwrap_or_default(),
                }
            }
        }
    }
}

impl From<m::Part> for Part {
    /// Raw ↔ FileWithBytes, url ↔ FileWithUri (filename ↔ name, mediaType ↔ mimeType);
    /// text and data keep filename/mediaType in metadata; a non-object data value is wrapped.
    fn from(p: m::Part) -> Self {
        let m::Part { content, mut metadata, filename, media_type } = p;
        match content {
            m::PartContent::Text(text) => {
                carry_part_fields(&mut metadata, filename, media_type);
                Part::Text(TextPart { text, metadata })
            }
            m::PartContent::Data(value) => {
                carry_part_fields(&mut metadata, filename, media_type);
                let data = match value {
                    Value::Object(map) => map,
                    other => {
                        metadata
                            .get_or_insert_with(Struct::new)
                            .insert(DATA_PART_COMPAT_KEY.to_owned(), Value::Bool(true));
                        Struct::from_iter([("value".to_owned(), other)])
                    }
                };
                Part::Data(DataPart { data, metadata })
            }
            m::PartContent::Raw(bytes) => Part::File(FilePart {
                file: FileContent::Bytes(FileWithBytes { bytes, mime_type: opt(media_type), name: opt(filename) }),
                metadata,
            }),
            m::PartContent::Url(uri) => Part::File(FilePart {
                file: FileContent::Uri(FileWithUri { uri, mime_type: opt(media_type), name: opt(filename) }),
                metadata,
            }),
        }
    }
}
