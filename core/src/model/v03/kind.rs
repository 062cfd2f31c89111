//! The `kind` discriminators of the 0.3 task, message and event objects.

#[cfg(doc)]
use super::StreamResult;
use crate::error::Result;
use serde::de;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

/// A `kind` member with one allowed value: always written; on input a wrong value is an
/// error, an absent one is taken as implied. The 0.3 schema lists `kind` as required, but the
/// 0.3 spec's own `message/send` example omits it and the official SDK accepts that, so a
/// compat server must too. (Results of several kinds still need it: see [`StreamResult`].)
macro_rules! kind_tag {
    ($(#[$meta:meta])* $name:ident = $wire:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            pub const WIRE: &'static str = $wire;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($wire)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let got = String::deserialize(d)?;
                if got == $wire {
                    Ok($name)
                } else {
                    Err(de::Error::custom(format!("expected {:?}, got {got:?}", $wire)))
                }
            }
        }
    };
}

kind_tag!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
kind_tag!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
kind_tag!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
kind_tag!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);
