//! Property tests: every generated model survives write → read unchanged (through both the
//! byte and the `Value` entry points), and no input of any shape makes a parser panic.

use a2a_native::model::{self, *};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn text() -> impl Strategy<Value = String> {
    // Unicode, quotes, escapes and control characters included.
    prop_oneof![".{0,24}", "[a-z0-9-]{1,12}", Just("\"\\\n\t\u{0}é😀".to_owned())]
}

fn id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.:/%-]{1,20}"
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map("[a-zA-Z]{1,8}", json_value(), 0..3).prop_map(|m| m.into_iter().collect()),
    )
}

fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(PartContent::Raw),
        "https://[a-z]{1,10}\\.example/[a-z0-9/]{0,10}".prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (content, object(), prop::option::of("[a-z]{1,8}\\.[a-z]{2,3}"), prop::option::of("[a-z]{2,6}/[a-z+.-]{2,10}"))
        .prop_map(|(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename: filename.unwrap_or_default(),
            media_type: media_type.unwrap_or_default(),
        })
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::User), Just(Role::Agent)]
}

fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL[1..].to_vec())
}

fn timestamp() -> impl Strategy<Value = Option<Timestamp>> {
    // Whole milliseconds up to microseconds: all must round-trip exactly.
    prop::option::of((0i64..4_102_444_800_000, 0u32..1000).prop_map(|(ms, us)| {
        chrono::DateTime::from_timestamp_millis(ms).unwrap() + chrono::Duration::microseconds(i64::from(us))
    }))
}

fn message() -> impl Strategy<Value = Message> {
    (
        id(),
        prop::option::of(id()),
        prop::option::of(id()),
        role(),
        prop::collection::vec(part(), 1..4),
        object(),
        prop::collection::vec(id(), 0..2),
        prop::collection::vec(id(), 0..2),
    )
        .prop_map(|(message_id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids)| {
            Message {
                message_id,
                context_id: context_id.unwrap_or_default(),
                task_id: task_id.unwrap_or_default(),
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids,
            }
        })
}

fn status() -> impl Strategy<Value = TaskStatus> {
    (state(), prop::option::of(message()), timestamp()).prop_map(|(state, message, timestamp)| TaskStatus {
        state,
        message,
        timestamp,
    })
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (id(), text(), text(), prop::collection::vec(part(), 1..3), object()).prop_map(
        |(artifact_id, name, description, parts, metadata)| Artifact {
            artifact_id,
            name,
            description,
            parts,
            metadata,
            extensions: vec![],
        },
    )
}

fn task() -> impl Strategy<Value = Task> {
    (id(), id(), status(), prop::collection::vec(artifact(), 0..3), prop::collection::vec(message(), 0..3), object())
        .prop_map(|(id, context_id, status, artifacts, history, metadata)| Task {
            id,
            context_id,
            status,
            artifacts,
            history,
            metadata,
        })
}

fn stream_response() -> impl Strategy<Value = StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        (id(), id(), status(), object()).prop_map(|(task_id, context_id, status, metadata)| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id, context_id, status, metadata })
        }),
        (id(), id(), artifact(), any::<bool>(), any::<bool>()).prop_map(
            |(task_id, context_id, artifact, append, last_chunk)| {
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata: None,
                })
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn tasks_round_trip(t in task()) {
        let bytes = serde_json::to_vec(&t).unwrap();
        prop_assert_eq!(&model::parse::<Task>(&bytes).unwrap(), &t);
        prop_assert_eq!(model::parse_value::<Task>(model::to_value(&t)).unwrap(), t);
    }

    #[test]
    fn stream_responses_round_trip(ev in stream_response()) {
        let bytes = serde_json::to_vec(&ev).unwrap();
        let back: StreamResponse = model::parse(&bytes).unwrap();
        prop_assert_eq!(back, ev);
    }

    #[test]
    fn send_requests_round_trip(m in message(), hl in prop::option::of(0i32..1000), ri in any::<bool>()) {
        let req = SendMessageRequest {
            tenant: "t".into(),
            // A client's message is the user's (ROLE_AGENT is refused in a request).
            message: Message { role: Role::User, ..m },
            configuration: Some(SendMessageConfiguration { history_length: hl, return_immediately: ri, ..Default::default() }),
            metadata: None,
        };
        let back: SendMessageRequest = model::parse(&serde_json::to_vec(&req).unwrap()).unwrap();
        prop_assert_eq!(back, req);
    }

    #[test]
    fn no_json_value_makes_any_parser_panic(v in json_value()) {
        for ty in model::dynamic::TYPE_NAMES {
            let _ = model::dynamic::normalize(ty, v.clone());
        }
    }

    #[test]
    fn no_byte_string_makes_the_byte_parser_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = model::parse::<Task>(&bytes);
        let _ = model::parse::<SendMessageRequest>(&bytes);
        let _ = model::parse::<AgentCard>(&bytes);
    }
}
