//! Property tests of the three bindings: every request survives the client's encoding and the
//! server's parsing unchanged (JSON-RPC, HTTP+JSON and gRPC, ids with `/`, `:`, `%`, spaces and
//! unicode), and no input of any shape makes a parser panic (the fuzz targets' contract).

use a2a_native::jsonrpc::{self, Id};
use a2a_native::model::*;
use a2a_native::request::{A2ARequest, Method};
use a2a_native::rest;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9/:%?#&=+.~ é😀-]{1,16}",
        ".{1,12}",
        "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
        Just("a:cancel".to_owned()),
        Just("%2F%3A".to_owned()),
        Just("..".to_owned()),
    ]
}

/// `tasks` is the one tenant the REST paths cannot always tell apart (see `rest` docs).
fn tenant() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), id().prop_filter("ambiguous tenant", |t| t != "tasks")]
}

fn opt_text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), ".{1,10}"]
}

fn message() -> impl Strategy<Value = Message> {
    (id(), ".{0,20}", opt_text()).prop_map(|(message_id, text, context_id)| {
        let mut m = Message::text(Role::User, text);
        m.message_id = message_id;
        m.context_id = context_id;
        m
    })
}

fn metadata() -> impl Strategy<Value = Option<Struct>> {
    prop::option::of(("[a-z]{1,5}", ".{0,8}").prop_map(|(k, v)| {
        let mut m = Map::new();
        m.insert(k, Value::String(v));
        m
    }))
}

fn send_request() -> impl Strategy<Value = SendMessageRequest> {
    (tenant(), message(), metadata(), prop::option::of((0i32..50, any::<bool>()))).prop_map(
        |(tenant, message, metadata, config)| SendMessageRequest {
            tenant,
            message,
            configuration: config.map(|(h, ri)| SendMessageConfiguration {
                history_length: Some(h),
                return_immediately: ri,
                ..Default::default()
            }),
            metadata,
        },
    )
}

fn config_ref() -> impl Strategy<Value = TaskPushNotificationConfigRef> {
    (tenant(), id(), id()).prop_map(|(tenant, task_id, id)| TaskPushNotificationConfigRef { tenant, task_id, id })
}

fn request() -> impl Strategy<Value = A2ARequest> {
    let list = (
        tenant(),
        opt_text(),
        prop::option::of(prop::sample::select(TaskState::ALL[1..].to_vec())),
        prop::option::of(1i32..=100),
        opt_text(),
        prop::option::of(0i32..1000),
        prop::option::of((0i64..4_102_444_800_000).prop_map(|ms| chrono::DateTime::from_timestamp_millis(ms).unwrap())),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(tenant, context_id, status, page_size, page_token, history_length, after, include)| {
            ListTasksRequest {
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length,
                status_timestamp_after: after,
                include_artifacts: include,
            }
        });
    let push = (
        tenant(),
        opt_text(),
        id(),
        "https://[a-z]{1,8}\\.example/[a-z0-9/?=&]{0,10}",
        opt_text(),
        prop::option::of(("Bearer|Basic", opt_text())),
    )
        .prop_map(|(tenant, id, task_id, url, token, auth)| TaskPushNotificationConfig {
            tenant,
            id,
            task_id,
            url,
            token,
            authentication: auth.map(|(scheme, credentials)| AuthenticationInfo { scheme, credentials }),
            v03: false,
        });
    prop_oneof![
        send_request().prop_map(A2ARequest::SendMessage),
        send_request().prop_map(A2ARequest::SendStreamingMessage),
        (tenant(), id(), prop::option::of(0i32..100)).prop_map(|(tenant, id, history_length)| A2ARequest::GetTask(
            GetTaskRequest { tenant, id, history_length }
        )),
        list.prop_map(A2ARequest::ListTasks),
        (tenant(), id(), metadata()).prop_map(|(tenant, id, metadata)| A2ARequest::CancelTask(CancelTaskRequest {
            tenant,
            id,
            metadata
        })),
        (tenant(), id()).prop_map(|(tenant, id)| A2ARequest::SubscribeToTask(SubscribeToTaskRequest { tenant, id })),
        push.prop_map(A2ARequest::CreateTaskPushNotificationConfig),
        config_ref().prop_map(A2ARequest::GetTaskPushNotificationConfig),
        (tenant(), id(), 0i32..100, opt_text()).prop_map(|(tenant, task_id, page_size, page_token)| {
            A2ARequest::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                tenant,
                task_id,
                page_size,
                page_token,
            })
        }),
        config_ref().prop_map(A2ARequest::DeleteTaskPushNotificationConfig),
        tenant().prop_map(|tenant| A2ARequest::GetExtendedAgentCard(GetExtendedAgentCardRequest { tenant })),
    ]
}

fn json_id() -> impl Strategy<Value = Id> {
    prop_oneof![
        Just(Id::Null),
        ".{0,10}".prop_map(Id::String),
        any::<i64>().prop_map(Id::from),
        any::<u64>().prop_map(Id::from),
        (-1e12f64..1e12).prop_map(|f| Id::from_value(&serde_json::json!(f)).unwrap()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(Method::ALL.map(Method::as_str).to_vec()).prop_map(|m| json!(m)),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-zA-Z]{1,6}",
                    prop::sample::select(vec![
                        "jsonrpc",
                        "id",
                        "method",
                        "params",
                        "message",
                        "parts",
                        "text",
                        "taskId",
                        "tenant",
                        "url",
                        "result",
                        "error",
                        "code",
                        "status",
                        "pageSize",
                        "historyLength",
                        "role",
                        "messageId"
                    ])
                    .prop_map(str::to_owned)
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const REQUEST_CODES: &[i32] = &[-32700, -32600, -32601, -32602];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn rest_round_trip(req in request()) {
        let (method, path_and_query, body) = rest::request_for(&req);
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query.as_str(), None),
        };
        let back = rest::route(method, path, query, body.as_deref().unwrap_or_default());
        prop_assert_eq!(back, Ok(req.clone()), "{} {}", method, path_and_query);
        // The path and query never carry characters that need escaping in an HTTP request line.
        prop_assert!(path_and_query.bytes().all(|b| b.is_ascii_graphic()), "{}", path_and_query);
    }

    #[test]
    fn jsonrpc_round_trip(req in request(), id in json_id()) {
        let call = jsonrpc::parse_request(&jsonrpc::request_for(&id, &req)).unwrap();
        prop_assert_eq!(call.id, Some(id.clone()));
        prop_assert_eq!(call.method_name.as_str(), req.method().as_str());
        prop_assert_eq!(&call.request, &req);
        // The id comes back in both kinds of response.
        let ok = jsonrpc::parse_response(&jsonrpc::success(&id, &req)).unwrap();
        prop_assert_eq!(ok.id, id.clone());
        let err = jsonrpc::parse_response(&jsonrpc::error(&id, &a2a_native::A2AError::task_not_found("t"))).unwrap();
        prop_assert_eq!(err.id, id);
    }

    #[test]
    fn grpc_round_trip(req in request()) {
        let bytes = a2a_native::grpc::convert::encode_request(&req).unwrap();
        prop_assert_eq!(a2a_native::grpc::convert::decode_request(req.method(), &bytes), Ok(req));
    }

    /// The gRPC fuzz target's contract: any bytes read as any method's request give a request
    /// that encodes back to itself, or a typed error; never a panic.
    #[test]
    fn grpc_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256),
                                  method in prop::sample::select(Method::ALL.to_vec())) {
        use a2a_native::grpc::convert;
        if let Ok(request) = convert::decode_request(method, &bytes) {
            let again = convert::encode_request(&request).unwrap();
            prop_assert_eq!(convert::decode_request(method, &again), Ok(request));
        }
    }

    #[test]
    fn jsonrpc_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Err(e) = jsonrpc::parse_request(&bytes) {
            prop_assert!(REQUEST_CODES.contains(&e.error.code()));
        }
        let _ = jsonrpc::parse_envelope(&bytes).map(jsonrpc::parse_v10);
        let _ = jsonrpc::parse_response(&bytes);
    }

    #[test]
    fn jsonrpc_never_panics_on_json(value in json_value(), method in prop::sample::select(Method::ALL.to_vec()),
                                    params in json_value(), id in json_value()) {
        // Arbitrary values, and envelopes with a real method and arbitrary params / id.
        let envelope = json!({"jsonrpc": "2.0", "id": id, "method": method.as_str(), "params": params});
        for v in [value, envelope] {
            let bytes = serde_json::to_vec(&v).unwrap();
            match jsonrpc::parse_request(&bytes) {
                Ok(call) => {
                    prop_assert_eq!(call.method_name.as_str(), call.method().as_str());
                    // What was accepted re-encodes to the same request (the fuzz target's check).
                    let again = jsonrpc::request_for(&call.response_id(), &call.request);
                    prop_assert_eq!(jsonrpc::parse_request(&again).map(|c| c.request), Ok(call.request));
                }
                Err(e) => {
                    prop_assert!(REQUEST_CODES.contains(&e.error.code()) && e.error.code() != -32700);
                    let _ = e.to_bytes();
                }
            }
            let _ = jsonrpc::parse_response_value(v);
        }
    }

    #[test]
    fn rest_never_panics(method in prop::sample::select(vec!["GET", "POST", "DELETE", "PUT", "get", ""]),
                         path in "(/([a-zA-Z0-9:%._~ -]|tasks|message:send|pushNotificationConfigs|%[0-9A-Fa-f]{2}){0,3}){0,6}",
                         query in prop::option::of(".{0,40}"),
                         body in prop_oneof![json_value().prop_map(|v| serde_json::to_vec(&v).unwrap()),
                                             prop::collection::vec(any::<u8>(), 0..64)]) {
        if let Err(e) = rest::route(method, &path, query.as_deref(), &body) {
            let status = e.http_status();
            prop_assert!(matches!(status, 400 | 404 | 405), "{} {} -> {}", method, path, e);
            let _ = e.to_http_body();
        }
    }
}
