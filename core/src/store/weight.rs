//! About how many bytes a task or a change holds in memory, for the memory store's byte budget
//! (`MemoryLimits::max_bytes`): the text, bytes and JSON it carries, plus a fixed cost per item
//! for headers, ids and allocations. Counted, not serialised, so it costs one walk; it errs
//! high rather than low, so the budget holds.

use super::log::Change;
use crate::model::{Artifact, Message, Part, PartContent, StreamResponse, Struct, Task};
use serde_json::Value;

/// The fixed cost of one task, message, part, artifact or JSON member beyond its contents.
const ITEM: usize = 64;

pub fn task(t: &Task) -> usize {
    4 * ITEM
        + t.id.len()
        + t.context_id.len()
        + t.status.message.as_ref().map_or(0, message)
        + t.artifacts.iter().map(artifact).sum::<usize>()
        + t.history.iter().map(message).sum::<usize>()
        + t.metadata.as_ref().map_or(0, object)
}

/// What applying `change` adds to a task (or what logging it holds).
pub fn change(c: &Change) -> usize {
    match c {
        Change::UserMessage(m) | Change::Event(StreamResponse::Message(m)) => message(m),
        Change::Event(StreamResponse::Task(t)) => task(t),
        Change::Event(StreamResponse::StatusUpdate(u)) => {
            ITEM + u.status.message.as_ref().map_or(0, message) + u.metadata.as_ref().map_or(0, object)
        }
        Change::Event(StreamResponse::ArtifactUpdate(u)) => {
            ITEM + artifact(&u.artifact) + u.metadata.as_ref().map_or(0, object)
        }
    }
}

pub fn message(m: &Message) -> usize {
    ITEM + m.message_id.len()
        + m.context_id.len()
        + m.task_id.len()
        + m.parts.iter().map(part).sum::<usize>()
        + m.metadata.as_ref().map_or(0, object)
        + strings(&m.extensions)
        + strings(&m.reference_task_ids)
}

fn artifact(a: &Artifact) -> usize {
    ITEM + a.artifact_id.len()
        + a.name.len()
        + a.description.len()
        + a.parts.iter().map(part).sum::<usize>()
        + a.metadata.as_ref().map_or(0, object)
        + strings(&a.extensions)
}

fn part(p: &Part) -> usize {
    let content = match &p.content {
        PartContent::Text(s) | PartContent::Url(s) => s.len(),
        PartContent::Raw(b) => b.len(),
        PartContent::Data(v) => value(v),
    };
    ITEM + content + p.filename.len() + p.media_type.len() + p.metadata.as_ref().map_or(0, object)
}

fn strings(list: &[String]) -> usize {
    list.iter().map(|s| ITEM + s.len()).sum()
}

fn object(members: &Struct) -> usize {
    members.iter().map(|(k, v)| ITEM + k.len() + value(v)).sum()
}

/// As deep as the value: what clients send is bounded by serde_json's parser (128 levels), and
/// a value an executor builds is walked as deep again when it is serialised for the wire.
fn value(v: &Value) -> usize {
    match v {
        Value::String(s) => ITEM + s.len(),
        Value::Array(items) => ITEM + items.iter().map(value).sum::<usize>(),
        Value::Object(members) => ITEM + object(members),
        _ => ITEM,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, TaskState, TaskStatus};

    #[test]
    fn a_task_weighs_at_least_what_it_carries() {
        let big = "x".repeat(100_000);
        let mut t = Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::now(TaskState::Completed),
            artifacts: Vec::new(),
            history: vec![Message::text(Role::User, big.clone())],
            metadata: None,
        };
        let one = task(&t);
        assert!((100_000..101_000).contains(&one), "{one}");
        t.artifacts.push(Artifact {
            artifact_id: "a".into(),
            name: String::new(),
            description: String::new(),
            parts: vec![Part::data(serde_json::json!({"k": [big.clone(), 1, null]}))],
            metadata: None,
            extensions: Vec::new(),
        });
        assert!(task(&t) >= one + 100_000, "{}", task(&t));
        let appended = Change::Event(StreamResponse::Message(Message::text(Role::Agent, big)));
        assert!(change(&appended) >= 100_000);
    }
}
