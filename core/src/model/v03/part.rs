//! Parts (`text` / `file` / `data`), file contents, and how they are read from the wire.

use super::util::{B64, ser_b64};
use crate::error::Result;
use crate::model::validate::{join, required};
use crate::model::{Struct, Validate};
use serde::de;
use serde::{Deserialize, Deserializer, Serialize};

// ---------------------------------------------------------------------------------------------
// Tasks, messages, parts, artifacts, events
// ---------------------------------------------------------------------------------------------

/// A part, discriminated by `kind`: `text`, `file` or `data` (always written; when absent on
/// input, implied by the single content member present).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum Part {
    #[serde(rename = "text")]
    Text(TextPart),
    #[serde(rename = "file")]
    File(FilePart),
    #[serde(rename = "data")]
    Data(DataPart),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextPart {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilePart {
    pub file: FileContent,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// `data` must be a JSON object in 0.3.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataPart {
    pub data: Struct,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// A file's content: inline bytes or a URI (exactly one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FileContent {
    Bytes(FileWithBytes),
    Uri(FileWithUri),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithBytes {
    /// Decoded on input (base64, either alphabet); written as padded standard base64.
    #[serde(serialize_with = "ser_b64")]
    pub bytes: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithUri {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Every member optional: which ones a part needs depends on `kind`, checked after reading.
/// Derived, so errors inside (e.g. `file.bytes`) keep their path.
#[derive(Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
struct PartWire {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    file: Option<FileContent>,
    #[serde(default)]
    data: Option<Struct>,
    #[serde(default)]
    metadata: Option<Struct>,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = <PartWire as Deserialize>::deserialize(d)?;
        let missing = |name: &str| D::Error::custom(format!("missing field `{name}`"));
        // No kind: implied by the one content member present (as the 0.3 Python SDK reads it).
        let implied = match (&w.text, &w.file, &w.data) {
            (Some(_), None, None) => Some("text"),
            (None, Some(_), None) => Some("file"),
            (None, None, Some(_)) => Some("data"),
            _ => None,
        };
        match w.kind.as_deref().or(implied) {
            Some("text") => {
                Ok(Part::Text(TextPart { text: w.text.ok_or_else(|| missing("text"))?, metadata: w.metadata }))
            }
            Some("file") => {
                Ok(Part::File(FilePart { file: w.file.ok_or_else(|| missing("file"))?, metadata: w.metadata }))
            }
            Some("data") => {
                Ok(Part::Data(DataPart { data: w.data.ok_or_else(|| missing("data"))?, metadata: w.metadata }))
            }
            Some(other) => Err(D::Error::custom(format!("unknown part kind {other:?}; expected text, file or data"))),
            None => Err(missing("kind")),
        }
    }
}

#[derive(Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
struct FileWire {
    #[serde(default)]
    bytes: Option<B64>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = <FileWire as Deserialize>::deserialize(d)?;
        match (w.bytes, w.uri) {
            (Some(B64(bytes)), None) => {
                Ok(FileContent::Bytes(FileWithBytes { bytes, mime_type: w.mime_type, name: w.name }))
            }
            (None, Some(uri)) => Ok(FileContent::Uri(FileWithUri { uri, mime_type: w.mime_type, name: w.name })),
            (Some(_), Some(_)) => Err(D::Error::custom("a file must have exactly one of bytes, uri (found both)")),
            (None, None) => Err(D::Error::custom("a file must have exactly one of bytes, uri (found neither)")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation (what serde cannot check)
// ---------------------------------------------------------------------------------------------

impl Validate for Part {
    fn validate_at(&self, at: &str) -> Result<()> {
        if let Part::File(FilePart { file: FileContent::Uri(f), .. }) = self {
            required(&join(at, "file"), "uri", &f.uri)?;
        }
        Ok(())
    }
}

crate::model::wire::json_objects!(PartWire, FileWire);
