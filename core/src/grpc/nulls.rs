//! JSON `null`s in `google.protobuf.Value`s, as protobuf writes them: `null_value`. pbjson reads
//! a JSON `null` there as a `Value` with no kind at all (its `kind` is an `Option`, which takes
//! the `null`), and a reader may drop such a value: @a2a-js/sdk's server dropped the key of a
//! `null` in a data part, so `{"a": null}` arrived as `{}`. So every message the ProtoJSON route
//! builds ([`super::convert`]) gets its empty `Value`s filled in before it is encoded.
//! ([`super::direct`] writes `null_value` itself.)

use super::pb;
use pbjson_types::value::Kind;

/// Fills in the kindless `Value`s a message holds, at any depth.
pub(super) trait FillNulls {
    fn fill_nulls(&mut self);
}

impl FillNulls for pbjson_types::Value {
    fn fill_nulls(&mut self) {
        match &mut self.kind {
            None => self.kind = Some(Kind::NullValue(0)),
            Some(Kind::ListValue(list)) => list.values.fill_nulls(),
            Some(Kind::StructValue(s)) => s.fill_nulls(),
            Some(_) => {}
        }
    }
}

impl FillNulls for pbjson_types::Struct {
    fn fill_nulls(&mut self) {
        self.fields.values_mut().for_each(FillNulls::fill_nulls);
    }
}

impl<T: FillNulls> FillNulls for Option<T> {
    fn fill_nulls(&mut self) {
        if let Some(inner) = self {
            inner.fill_nulls();
        }
    }
}

impl<T: FillNulls> FillNulls for Vec<T> {
    fn fill_nulls(&mut self) {
        self.iter_mut().for_each(FillNulls::fill_nulls);
    }
}

/// `$ty`'s fields that hold `Value`s, or none.
macro_rules! fill {
    ($($ty:ty => [$($field:ident),*]),* $(,)?) => {$(
        impl FillNulls for $ty {
            #[allow(unused_variables)]
            fn fill_nulls(&mut self) {
                $(self.$field.fill_nulls();)*
            }
        }
    )*};
}

fill! {
    pb::Message => [parts, metadata],
    pb::Artifact => [parts, metadata],
    pb::TaskStatus => [message],
    pb::Task => [status, artifacts, history, metadata],
    pb::TaskStatusUpdateEvent => [status, metadata],
    pb::TaskArtifactUpdateEvent => [artifact, metadata],
    pb::SendMessageRequest => [message, metadata],
    pb::CancelTaskRequest => [metadata],
    pb::ListTasksResponse => [tasks],
    pb::AgentCard => [capabilities, signatures],
    pb::AgentCapabilities => [extensions],
    pb::AgentExtension => [params],
    pb::AgentCardSignature => [header],
    // No Value in these.
    pb::GetTaskRequest => [],
    pb::ListTasksRequest => [],
    pb::SubscribeToTaskRequest => [],
    pb::TaskPushNotificationConfig => [],
    pb::GetTaskPushNotificationConfigRequest => [],
    pb::ListTaskPushNotificationConfigsRequest => [],
    pb::ListTaskPushNotificationConfigsResponse => [],
    pb::DeleteTaskPushNotificationConfigRequest => [],
    pb::GetExtendedAgentCardRequest => [],
    pbjson_types::Empty => [],
}

impl FillNulls for pb::Part {
    fn fill_nulls(&mut self) {
        if let Some(pb::part::Content::Data(data)) = &mut self.content {
            data.fill_nulls();
        }
        self.metadata.fill_nulls();
    }
}

impl FillNulls for pb::SendMessageResponse {
    fn fill_nulls(&mut self) {
        use pb::send_message_response::Payload;
        match &mut self.payload {
            Some(Payload::Task(t)) => t.fill_nulls(),
            Some(Payload::Message(m)) => m.fill_nulls(),
            None => {}
        }
    }
}

impl FillNulls for pb::StreamResponse {
    fn fill_nulls(&mut self) {
        use pb::stream_response::Payload;
        match &mut self.payload {
            Some(Payload::Task(t)) => t.fill_nulls(),
            Some(Payload::Message(m)) => m.fill_nulls(),
            Some(Payload::StatusUpdate(e)) => e.fill_nulls(),
            Some(Payload::ArtifactUpdate(e)) => e.fill_nulls(),
            None => {}
        }
    }
}
