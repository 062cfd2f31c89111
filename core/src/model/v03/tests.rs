//! Unit tests of the 0.3 wire types and conversions.

use super::*;
use crate::ErrorKind;
use serde_json::json;

fn field_of(err: &A2AError) -> &str {
    err.violations.first().map(|v| v.field.as_str()).unwrap_or("<none>")
}

fn v03_err<T: DeserializeOwned + Validate + std::fmt::Debug>(value: Value) -> String {
    let err = parse_value::<T>(value).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidParams, "{err}");
    field_of(&err).to_owned()
}

#[test]
fn spec_style_message_send_params_convert() {
    // Verbatim from the 0.3 spec (which leaves out the message's `kind`).
    let params = json!({
        "message": {"role": "user", "parts": [{"kind": "text", "text": "tell me a joke"}],
                    "messageId": "9229e770-767c-417b-a0b0-f0741243c589"},
        "metadata": {}
    });
    let v10 = to_v10(SEND_PARAMS, params).unwrap();
    assert_eq!(
        v10,
        json!({"message": {"messageId": "9229e770-767c-417b-a0b0-f0741243c589", "role": "ROLE_USER",
                           "parts": [{"text": "tell me a joke"}]}, "metadata": {}})
    );
}

#[test]
fn parts_map_both_ways() {
    let cases = [
        (json!({"kind": "text", "text": "hi"}), json!({"text": "hi"})),
        (
            json!({"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}}),
            json!({"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"}),
        ),
        (
            json!({"kind": "file", "file": {"uri": "https://x.example/a.pdf", "mimeType": "application/pdf"}, "metadata": {"k": 1}}),
            json!({"url": "https://x.example/a.pdf", "mediaType": "application/pdf", "metadata": {"k": 1}}),
        ),
        (json!({"kind": "data", "data": {"a": [1, 2]}}), json!({"data": {"a": [1, 2]}})),
        (
            json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}}),
            json!({"data": [1, 2]}),
        ),
        (
            json!({"kind": "text", "text": "x", "metadata": {"a2a_native_part": {"filename": "n.md", "mediaType": "text/markdown"}, "o": 1}}),
            json!({"text": "x", "filename": "n.md", "mediaType": "text/markdown", "metadata": {"o": 1}}),
        ),
        (
            json!({"kind": "data", "data": {"value": null}, "metadata": {"data_part_compat": true, "a2a_native_part": {"mediaType": "application/json"}}}),
            json!({"data": null, "mediaType": "application/json"}),
        ),
    ];
    for (v03, v10) in cases {
        assert_eq!(to_v10("Part", v03.clone()).unwrap(), v10, "to 1.0: {v03}");
        assert_eq!(to_v03("Part", v10.clone()).unwrap(), v03, "to 0.3: {v10}");
    }
}

#[test]
fn foreign_uses_of_reserved_keys_are_left_alone() {
    // Not our shape: kept as plain metadata.
    let odd = json!({"kind": "text", "text": "x", "metadata": {"a2a_native_part": {"other": 1}}});
    assert_eq!(to_v10("Part", odd).unwrap(), json!({"text": "x", "metadata": {"a2a_native_part": {"other": 1}}}));
    let not_wrapped = json!({"kind": "data", "data": {"value": 1, "more": 2}, "metadata": {"data_part_compat": true}});
    assert_eq!(
        to_v10("Part", not_wrapped).unwrap(),
        json!({"data": {"value": 1, "more": 2}, "metadata": {"data_part_compat": true}})
    );
}

#[test]
fn required_members_and_values_are_named() {
    let msg = |m: Value| json!({"message": m});
    let good = json!({"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]});
    let with = |key: &str, v: Value| {
        let mut m = good.clone();
        m[key] = v;
        msg(m)
    };
    let without = |key: &str| {
        let mut m = good.clone();
        m.as_object_mut().unwrap().remove(key);
        msg(m)
    };
    assert!(parse_value::<MessageSendParams>(msg(good.clone())).is_ok());
    assert_eq!(v03_err::<MessageSendParams>(json!({})), "message");
    assert!(parse_value::<MessageSendParams>(without("kind")).is_ok(), "kind is implied");
    assert_eq!(v03_err::<MessageSendParams>(with("kind", json!("task"))), "message.kind");
    assert_eq!(v03_err::<MessageSendParams>(without("messageId")), "message.messageId");
    assert_eq!(v03_err::<MessageSendParams>(with("messageId", json!(""))), "message.messageId");
    assert_eq!(v03_err::<MessageSendParams>(with("role", json!("ROLE_USER"))), "message.role");
    assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([]))), "message.parts");
    assert!(parse_value::<MessageSendParams>(with("parts", json!([{"text": "x"}]))).is_ok(), "kind is implied");
    assert_eq!(
        v03_err::<MessageSendParams>(with("parts", json!([{"text": "x", "data": {}}]))),
        "message.parts[0].kind"
    );
    assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([{"kind": "image"}]))), "message.parts[0]");
    assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([{"kind": "text"}]))), "message.parts[0].text");
    assert_eq!(
        v03_err::<MessageSendParams>(with("parts", json!([{"kind": "data", "data": [1]}]))),
        "message.parts[0].data"
    );
    assert_eq!(
        v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"bytes": "***"}}]))),
        "message.parts[0].file.bytes"
    );
    assert_eq!(
        v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"bytes": "", "uri": "u"}}]))),
        "message.parts[0].file"
    );
    assert_eq!(
        v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"uri": ""}}]))),
        "message.parts[0].file.uri"
    );
    let task = json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "done"}});
    assert_eq!(v03_err::<Task>(task), "status.state");
    assert_eq!(v03_err::<Task>(json!({"kind": "task", "id": "t", "status": {"state": "working"}})), "contextId");
    let bad_ts =
        json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working", "timestamp": "yesterday"}});
    assert_eq!(v03_err::<Task>(bad_ts), "status.timestamp");
}

#[test]
fn results_dispatch_on_kind() {
    let ev = json!({"kind": "status-update", "taskId": "t", "contextId": "c", "final": true, "status": {"state": "completed"}});
    assert!(matches!(parse_value::<StreamResult>(ev).unwrap(), StreamResult::StatusUpdate(e) if e.r#final));
    assert_eq!(v03_err::<StreamResult>(json!({"taskId": "t"})), "kind");
    assert_eq!(
        v03_err::<StreamResult>(
            json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}})
        ),
        "final"
    );
    assert_eq!(
        v03_err::<StreamResult>(
            json!({"kind": "status-update", "taskId": "t", "contextId": "c", "final": false, "status": {}})
        ),
        "status.state"
    );
    assert_eq!(v03_err::<SendMessageResult>(json!({"kind": "status-update"})), "");
    let msg = json!({"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]});
    assert_eq!(to_v10("SendMessageResult/SendMessageResponse", msg).unwrap()["message"]["role"], "ROLE_AGENT");
}

#[test]
fn final_follows_the_state_unless_given() {
    use m::TaskState as S;
    let finals: Vec<S> = S::ALL.iter().copied().filter(|s| is_final(*s)).collect();
    assert_eq!(finals, [S::Completed, S::Failed, S::Canceled, S::InputRequired, S::Rejected]);
    let ev = m::TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: m::TaskStatus { state: S::Working, message: None, timestamp: None },
        metadata: None,
    };
    assert!(!TaskStatusUpdateEvent::try_from(ev.clone()).unwrap().r#final);
    assert!(TaskStatusUpdateEvent::from_v10(ev.clone(), true).unwrap().r#final);
    let streamed = StreamResult::from_v10(m::StreamResponse::StatusUpdate(ev), true).unwrap();
    assert_eq!(to_value(&streamed)["final"], true);
}

#[test]
fn blocking_maps_to_return_immediately() {
    let params = |config: Value| {
        json!({"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]},
               "configuration": config})
    };
    let ri =
        |config: Value| to_v10(SEND_PARAMS, params(config)).unwrap()["configuration"].get("returnImmediately").cloned();
    assert_eq!(ri(json!({})), None);
    assert_eq!(ri(json!({"blocking": true})), None);
    assert_eq!(ri(json!({"blocking": false})), Some(json!(true)));
    let back = to_v03(
        SEND_PARAMS,
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
                                          "configuration": {"historyLength": 2}}),
    )
    .unwrap();
    assert_eq!(back["configuration"], json!({"historyLength": 2, "blocking": true}));
    let none =
        to_v03(SEND_PARAMS, json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}))
            .unwrap();
    assert!(none.get("configuration").is_none());
}

#[test]
fn push_config_ids_and_schemes() {
    let set = json!({"taskId": "t1", "pushNotificationConfig": {"url": "https://h.example/cb",
                      "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "tok"}}});
    assert_eq!(
        to_v10("TaskPushNotificationConfig", set).unwrap(),
        json!({"id": "t1", "taskId": "t1", "url": "https://h.example/cb",
               "authentication": {"scheme": "Bearer", "credentials": "tok"}})
    );
    let get = to_v10(
        "GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest",
        json!({"id": "t1", "metadata": {"x": 1}}),
    )
    .unwrap();
    assert_eq!(get, json!({"taskId": "t1", "id": "t1"}));
    let bad = json!({"taskId": "t1", "pushNotificationConfig": {"url": "u", "authentication": {"schemes": []}}});
    assert_eq!(v03_err::<TaskPushNotificationConfig>(bad), "pushNotificationConfig.authentication.schemes");
}

fn card_v03() -> Value {
    json!({
        "protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a.example/rpc",
        "additionalInterfaces": [{"url": "https://a.example/rpc", "transport": "JSONRPC"},
                                 {"url": "https://a.example/rest", "transport": "HTTP+JSON"}],
        "version": "1", "capabilities": {"streaming": true, "stateTransitionHistory": true},
        "securitySchemes": {
            "o": {"type": "oauth2", "flows": {
                "password": {"tokenUrl": "https://id.example/t", "scopes": {}},
                "clientCredentials": {"tokenUrl": "https://id.example/t", "scopes": {"r": "read"}}}},
            "k": {"type": "apiKey", "in": "header", "name": "X-Key"}
        },
        "security": [{"o": ["r"]}, {"k": []}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "sd", "tags": ["t"], "security": [{"k": []}]}],
        "supportsAuthenticatedExtendedCard": true
    })
}

#[test]
fn card_converts_interfaces_security_and_flags() {
    let v10 = to_v10("AgentCard", card_v03()).unwrap();
    assert_eq!(
        v10["supportedInterfaces"],
        json!([{"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
               {"url": "https://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}])
    );
    assert_eq!(v10["capabilities"], json!({"streaming": true, "extendedAgentCard": true}));
    // clientCredentials outranks password.
    assert_eq!(
        v10["securitySchemes"]["o"],
        json!({"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://id.example/t", "scopes": {"r": "read"}}}}})
    );
    assert_eq!(v10["securitySchemes"]["k"], json!({"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}));
    assert_eq!(
        v10["securityRequirements"],
        json!([{"schemes": {"o": {"list": ["r"]}}}, {"schemes": {"k": {"list": []}}}])
    );
    assert_eq!(v10["skills"][0]["securityRequirements"], json!([{"schemes": {"k": {"list": []}}}]));
    // And back: preferredTransport written, the dropped password flow and flag stay dropped.
    let back = to_v03("AgentCard", v10).unwrap();
    assert_eq!(back["preferredTransport"], "JSONRPC");
    assert_eq!(back["additionalInterfaces"], card_v03()["additionalInterfaces"]);
    assert_eq!(back["capabilities"], json!({"streaming": true}));
    assert_eq!(back["supportsAuthenticatedExtendedCard"], true);
    assert!(back["securitySchemes"]["o"]["flows"].get("password").is_none());
}

#[test]
fn card_without_a_03_interface_has_no_03_form() {
    let mut v10 = to_v10("AgentCard", card_v03()).unwrap();
    for i in v10["supportedInterfaces"].as_array_mut().unwrap() {
        i["protocolVersion"] = json!("1.0");
    }
    let err = to_v03("AgentCard", v10).unwrap_err();
    assert_eq!(field_of(&err), "supportedInterfaces");
    let mut empty_flows = card_v03();
    empty_flows["securitySchemes"]["o"]["flows"] = json!({});
    assert_eq!(field_of(&to_v10("AgentCard", empty_flows).unwrap_err()), "securitySchemes.o.flows");
    let mut bad_in = card_v03();
    bad_in["securitySchemes"]["k"]["in"] = json!("body");
    assert_eq!(field_of(&to_v10("AgentCard", bad_in).unwrap_err()), "securitySchemes.k.in");
}

#[test]
fn device_code_and_pkce_have_no_03_form() {
    let v10 = json!({"oauth2SecurityScheme": {"flows": {"deviceCode": {
        "deviceAuthorizationUrl": "https://id.example/d", "tokenUrl": "https://id.example/t", "scopes": {}}}}});
    assert_eq!(to_v03("SecurityScheme", v10).unwrap(), json!({"type": "oauth2", "flows": {}}));
    let pkce = json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {
        "authorizationUrl": "https://id.example/a", "tokenUrl": "https://id.example/t", "scopes": {}, "pkceRequired": true}}}});
    let v03 = to_v03("SecurityScheme", pkce).unwrap();
    assert!(v03["flows"]["authorizationCode"].get("pkceRequired").is_none());
}

#[test]
fn timestamps_accept_offsets_and_naive_utc() {
    for (text, want) in [
        ("2025-07-30T12:00:00.123+02:00", "2025-07-30T10:00:00.123Z"),
        ("2025-07-30T10:00:00.123456", "2025-07-30T10:00:00.123456Z"),
        ("2025-07-30T10:00:00Z", "2025-07-30T10:00:00.000Z"),
        ("2025-07-30T10:00:00", "2025-07-30T10:00:00.000Z"),
    ] {
        let v10 = to_v10("TaskStatus", json!({"state": "working", "timestamp": text})).unwrap();
        assert_eq!(v10, json!({"state": "TASK_STATE_WORKING", "timestamp": want}), "{text}");
    }
}

#[test]
fn enums_map_both_ways() {
    assert_eq!(to_v10("TaskState", json!("unknown")).unwrap(), json!("TASK_STATE_UNSPECIFIED"));
    assert_eq!(to_v03("TaskState", json!("TASK_STATE_UNSPECIFIED")).unwrap(), json!("unknown"));
    assert_eq!(to_v03("TaskState", json!("TASK_STATE_INPUT_REQUIRED")).unwrap(), json!("input-required"));
    assert_eq!(to_v10("Role", json!("agent")).unwrap(), json!("ROLE_AGENT"));
    assert_eq!(field_of(&to_v03("Role", json!("ROLE_UNSPECIFIED")).unwrap_err()), "role");
    assert_eq!(to_v10("TaskState", json!("cancelled")).unwrap_err().kind, ErrorKind::InvalidParams);
}

#[test]
fn unspecified_role_deep_in_a_task_is_named() {
    let task = m::Task {
        id: "t".into(),
        context_id: "c".into(),
        status: m::TaskStatus::now(m::TaskState::Working),
        artifacts: vec![],
        history: vec![m::Message::text(m::Role::User, "a"), m::Message::text(m::Role::Unspecified, "b")],
        metadata: None,
    };
    assert_eq!(field_of(&Task::try_from(task).unwrap_err()), "history[1].role");
}

#[test]
fn method_table_is_complete_and_consistent() {
    assert_eq!(Method::ALL.len(), METHODS.len());
    for m in Method::ALL {
        assert_eq!(Method::from_name(m.name()), Some(m));
        assert_eq!(Method::from_v10_name(m.v10_name()), Some(m));
        for t in m.params_type().into_iter().chain(m.result_type()) {
            assert!(TYPE_NAMES.contains(&t), "{t}");
        }
    }
    assert_eq!(Method::from_name("tasks/resubscribe").map(Method::v10_name), Some("SubscribeToTask"));
    assert_eq!(Method::from_name("tasks/list"), None);
    assert!(Method::MessageStream.is_streaming() && !Method::MessageSend.is_streaming());
}

#[test]
fn every_type_name_dispatches() {
    for name in TYPE_NAMES {
        for result in [to_v10(name, json!({})), to_v03(name, json!({}))] {
            // Fails on content, never on the name.
            if let Err(e) = result {
                assert_eq!(e.kind, ErrorKind::InvalidParams, "{name}: {e}");
            }
        }
    }
    assert_eq!(to_v10("Nope", json!({})).unwrap_err().kind, ErrorKind::InvalidRequest);
    assert_eq!(to_v03("Nope", json!({})).unwrap_err().kind, ErrorKind::InvalidRequest);
}

mod roundtrip {
    //! 1.0 → 0.3 (JSON text) → 1.0 is the identity for generated tasks, messages and events.
    use super::*;
    use crate::model::Struct;
    use crate::model::wire::Timestamp;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![".{0,16}", "[a-z0-9-]{1,10}", Just("\"\\\n\u{0}é😀".to_owned())]
    }

    fn id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_.:-]{1,16}"
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| json!(f)),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Keys never contain `_`, so they cannot collide with the reserved metadata keys.
    fn object(min: usize) -> impl Strategy<Value = Option<Struct>> {
        prop::option::of(
            prop::collection::btree_map("[a-zA-Z]{1,8}", json_value(), min..3).prop_map(|m| m.into_iter().collect()),
        )
    }

    fn part() -> impl Strategy<Value = m::Part> {
        let content = prop_oneof![
            text().prop_map(m::PartContent::Text),
            prop::collection::vec(any::<u8>(), 0..24).prop_map(m::PartContent::Raw),
            "https://[a-z]{1,8}\\.example/[a-z0-9/]{0,8}".prop_map(m::PartContent::Url),
            json_value().prop_map(m::PartContent::Data),
        ];
        // Part metadata is absent or non-empty: an empty map next to a reserved key comes back absent.
        (content, object(1), prop::option::of("[a-z]{1,8}\\.[a-z]{2,3}"), prop::option::of("[a-z]{2,6}/[a-z+.-]{2,8}"))
            .prop_map(|(content, metadata, filename, media_type)| m::Part {
                content,
                metadata,
                filename: filename.unwrap_or_default(),
                media_type: media_type.unwrap_or_default(),
            })
    }

    fn timestamp() -> impl Strategy<Value = Option<Timestamp>> {
        prop::option::of((0i64..4_102_444_800_000, 0u32..1000).prop_map(|(ms, us)| {
            chrono::DateTime::from_timestamp_millis(ms).unwrap() + chrono::Duration::microseconds(i64::from(us))
        }))
    }

    fn message() -> impl Strategy<Value = m::Message> {
        let role = prop_oneof![Just(m::Role::User), Just(m::Role::Agent)];
        (
            id(),
            prop::option::of(id()),
            prop::option::of(id()),
            role,
            prop::collection::vec(part(), 1..3),
            object(0),
            prop::collection::vec(id(), 0..2),
            prop::collection::vec(id(), 0..2),
        )
            .prop_map(
                |(message_id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids)| m::Message {
                    message_id,
                    context_id: context_id.unwrap_or_default(),
                    task_id: task_id.unwrap_or_default(),
                    role,
                    parts,
                    metadata,
                    extensions,
                    reference_task_ids,
                },
            )
    }

    fn status() -> impl Strategy<Value = m::TaskStatus> {
        (prop::sample::select(m::TaskState::ALL.to_vec()), prop::option::of(message()), timestamp())
            .prop_map(|(state, message, timestamp)| m::TaskStatus { state, message, timestamp })
    }

    fn artifact() -> impl Strategy<Value = m::Artifact> {
        (
            id(),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::collection::vec(part(), 1..3),
            object(0),
            prop::collection::vec(id(), 0..2),
        )
            .prop_map(|(artifact_id, name, description, parts, metadata, extensions)| m::Artifact {
                artifact_id,
                name: name.unwrap_or_default(),
                description: description.unwrap_or_default(),
                parts,
                metadata,
                extensions,
            })
    }

    fn task() -> impl Strategy<Value = m::Task> {
        (
            id(),
            prop::option::of(id()),
            status(),
            prop::collection::vec(artifact(), 0..2),
            prop::collection::vec(message(), 0..2),
            object(0),
        )
            .prop_map(|(id, context_id, status, artifacts, history, metadata)| m::Task {
                id,
                context_id: context_id.unwrap_or_default(),
                status,
                artifacts,
                history,
                metadata,
            })
    }

    fn stream_response() -> impl Strategy<Value = m::StreamResponse> {
        prop_oneof![
            task().prop_map(m::StreamResponse::Task),
            message().prop_map(m::StreamResponse::Message),
            (id(), id(), status(), object(0)).prop_map(|(task_id, context_id, status, metadata)| {
                m::StreamResponse::StatusUpdate(m::TaskStatusUpdateEvent { task_id, context_id, status, metadata })
            }),
            (id(), id(), artifact(), any::<bool>(), any::<bool>(), object(0)).prop_map(
                |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                    m::StreamResponse::ArtifactUpdate(m::TaskArtifactUpdateEvent {
                        task_id,
                        context_id,
                        artifact,
                        append,
                        last_chunk,
                        metadata,
                    })
                }
            ),
        ]
    }

    /// Writes the 0.3 form as text and reads it back through the validating parser.
    fn through_wire<T: Serialize + DeserializeOwned + Validate>(value: &T) -> T {
        let text = serde_json::to_string(value).unwrap();
        crate::model::parse::<T>(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn messages(msg in message()) {
            let v03 = through_wire(&Message::try_from(msg.clone()).unwrap());
            prop_assert_eq!(m::Message::from(v03), msg);
        }

        #[test]
        fn tasks(task in task()) {
            let v03 = through_wire(&Task::try_from(task.clone()).unwrap());
            prop_assert_eq!(m::Task::from(v03), task);
        }

        #[test]
        fn stream_responses(event in stream_response(), fin in any::<bool>()) {
            let v03 = through_wire(&StreamResult::from_v10(event.clone(), fin).unwrap());
            prop_assert_eq!(m::StreamResponse::from(v03), event);
        }
    }
}
