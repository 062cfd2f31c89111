//! Protobuf messages ↔ core's model, through ProtoJSON: a message decoded by prost is written
//! as ProtoJSON by its pbjson impl and read by the model exactly as a JSON-RPC `params` or
//! HTTP+JSON body would be (same validation, same field paths in errors); a result goes the
//! other way. The A2A JSON bindings are ProtoJSON by definition (spec ADR-001), so this is the
//! proto's own mapping, not a second one to keep in step.

use super::nulls::FillNulls;
use super::pb;
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{self, StreamResponse, Validate};
use crate::request::{A2ARequest, Method};
use bytes::Bytes;
use prost::Message;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Runs `$body` with `$req` / `$resp` as the request and response message types of `$method`
/// (streaming methods answer with `StreamResponse` messages; Delete's answer is Empty).
macro_rules! with_types {
    ($method:expr, |$req:ident, $resp:ident| $body:expr) => {
        match $method {
            Method::SendMessage => {
                type $req = pb::SendMessageRequest;
                type $resp = pb::SendMessageResponse;
                $body
            }
            Method::SendStreamingMessage => {
                type $req = pb::SendMessageRequest;
                type $resp = pb::StreamResponse;
                $body
            }
            Method::GetTask => {
                type $req = pb::GetTaskRequest;
                type $resp = pb::Task;
                $body
            }
            Method::ListTasks => {
                type $req = pb::ListTasksRequest;
                type $resp = pb::ListTasksResponse;
                $body
            }
            Method::CancelTask => {
                type $req = pb::CancelTaskRequest;
                type $resp = pb::Task;
                $body
            }
            Method::SubscribeToTask => {
                type $req = pb::SubscribeToTaskRequest;
                type $resp = pb::StreamResponse;
                $body
            }
            Method::CreateTaskPushNotificationConfig => {
                type $req = pb::TaskPushNotificationConfig;
                type $resp = pb::TaskPushNotificationConfig;
                $body
            }
            Method::GetTaskPushNotificationConfig => {
                type $req = pb::GetTaskPushNotificationConfigRequest;
                type $resp = pb::TaskPushNotificationConfig;
                $body
            }
            Method::ListTaskPushNotificationConfigs => {
                type $req = pb::ListTaskPushNotificationConfigsRequest;
                type $resp = pb::ListTaskPushNotificationConfigsResponse;
                $body
            }
            Method::DeleteTaskPushNotificationConfig => {
                type $req = pb::DeleteTaskPushNotificationConfigRequest;
                type $resp = ::pbjson_types::Empty;
                $body
            }
            Method::GetExtendedAgentCard => {
                type $req = pb::GetExtendedAgentCardRequest;
                type $resp = pb::AgentCard;
                $body
            }
        }
    };
}

/// A request message of `method` (protobuf bytes) as a validated [`A2ARequest`]. A plain
/// SendMessage request is read field for field ([`super::direct`]), the rest through ProtoJSON.
pub fn decode_request(method: Method, bytes: &[u8]) -> Result<A2ARequest> {
    if matches!(method, Method::SendMessage | Method::SendStreamingMessage)
        && let Some(request) = super::direct::send_message_request(decode(bytes)?)
    {
        request.validate_at("")?;
        return Ok(match method {
            Method::SendMessage => A2ARequest::SendMessage(request),
            _ => A2ARequest::SendStreamingMessage(request),
        });
    }
    decode_via_json(method, bytes)
}

/// How many parts a SendMessageRequest's message holds (field 2, then its field 5), read from
/// the wire without decoding anything: an empty part is 2 bytes there and a few hundred once
/// decoded, so a request of millions of them is refused before it is built. Malformed bytes
/// count as far as they go; decoding reports them.
pub fn count_message_parts(bytes: &[u8]) -> usize {
    let mut parts = 0;
    for (field, value) in Fields(bytes) {
        if let (2, Some(message)) = (field, value) {
            parts += Fields(message).filter(|(field, _)| *field == 5).count();
        }
    }
    parts
}

/// The fields of a protobuf message: each field number, with its bytes when length-delimited.
/// Ends at the first malformed field.
struct Fields<'a>(&'a [u8]);

impl<'a> Iterator for Fields<'a> {
    type Item = (u64, Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = self.0;
        let key = prost::encoding::decode_varint(&mut buf).ok()?;
        let value = match key & 7 {
            0 => prost::encoding::decode_varint(&mut buf).ok().map(|_| None),
            1 => buf.get(8..).map(|rest| {
                buf = rest;
                None
            }),
            5 => buf.get(4..).map(|rest| {
                buf = rest;
                None
            }),
            2 => {
                let len = usize::try_from(prost::encoding::decode_varint(&mut buf).ok()?).ok()?;
                let (value, rest) = (buf.get(..len)?, &buf[len..]);
                buf = rest;
                Some(Some(value))
            }
            _ => None,
        };
        let value = value?;
        self.0 = buf;
        Some((key >> 3, value))
    }
}

/// [`decode_request`] through ProtoJSON, for every request.
fn decode_via_json(method: Method, bytes: &[u8]) -> Result<A2ARequest> {
    let params = with_types!(method, |Req, _Resp| to_json(&decode::<Req>(bytes)?, ErrorKind::InvalidParams)?);
    A2ARequest::from_params(method, params, "")
}

/// The request message of a call (protobuf bytes, unframed).
pub fn encode_request(request: &A2ARequest) -> Result<Bytes> {
    encode_params(request.method(), request.params())
}

/// `method`'s request message from ProtoJSON params as given, without the model's validation
/// (what a peer may send: tests and fuzzing use it to send requests the model would refuse).
pub fn encode_params(method: Method, mut params: Value) -> Result<Bytes> {
    as_doubles(&mut params);
    with_types!(method, |Req, _Resp| encode::<Req>(&params))
}

/// A unary result (typed, or its ProtoJSON value) as the method's response message. Integers
/// in its `Struct`s (task metadata, data parts) beyond ±2^53 go as doubles, as on a stream and
/// in GetTask: pbjson refuses them, which failed a whole ListTasks page.
pub fn encode_result(method: Method, result: &impl Serialize) -> Result<Bytes> {
    let mut value =
        serde_json::to_value(result).map_err(|e| A2AError::internal(format!("cannot write the message: {e}")))?;
    as_doubles(&mut value);
    with_types!(method, |_Req, Resp| encode::<Resp>(&value))
}

/// A unary response message as ProtoJSON (what the JSON bindings' results are).
pub fn decode_result(method: Method, bytes: &[u8]) -> Result<Value> {
    with_types!(method, |_Req, Resp| to_json(&decode::<Resp>(bytes)?, ErrorKind::InvalidAgentResponse))
}

/// One event of a stream as a `StreamResponse` message (field for field: see [`super::direct`]).
pub fn encode_event(event: &StreamResponse) -> Result<Bytes> {
    Ok(super::direct::encode(&pb::StreamResponse::from(event)))
}

/// A `StreamResponse` message as the model's event.
pub fn decode_event(bytes: &[u8]) -> Result<StreamResponse> {
    model::parse_value_at(decode_event_value(bytes)?, "")
}

/// A `StreamResponse` message as ProtoJSON, not read by the model yet.
pub fn decode_event_value(bytes: &[u8]) -> Result<Value> {
    to_json(&decode::<pb::StreamResponse>(bytes)?, ErrorKind::InvalidAgentResponse)
}

fn decode<M: Message + Default>(bytes: &[u8]) -> Result<M> {
    M::decode(bytes).map_err(|e| {
        let text = e.to_string();
        // prost stops at 100 nested messages, and its error then lists every one of them.
        // Within a `Struct` each JSON object is three (Struct, map entry, Value) and each array
        // two: a request that gets here nests deeper than the model allows anyway.
        if text.ends_with("recursion limit reached") {
            return A2AError::parse_error(
                "invalid protobuf message: a google.protobuf.Struct or Value nests deeper than protobuf \
                 decodes (100 messages: about 32 JSON objects or 48 arrays)",
            );
        }
        A2AError::parse_error(format!("invalid protobuf message: {text}"))
    })
}

/// An extension method's params or result (any JSON) as a `google.protobuf.Value` message.
/// Its numbers are doubles: an integer beyond ±2^53 goes as the nearest double (pbjson refuses
/// it as it is), as any protobuf `Value` carries it.
pub fn encode_value(value: &Value) -> Result<Bytes> {
    let mut value = value.clone();
    as_doubles(&mut value);
    encode::<::pbjson_types::Value>(&value)
}

/// Integers of ±2^53 and beyond as the nearest double, as a `google.protobuf.Value` carries
/// them (pbjson refuses them as they are: it takes integers of at most 2^53 − 1). The proto's
/// own number fields are int32, which the model bounds before a request is encoded.
fn as_doubles(value: &mut Value) {
    const EXACT: u64 = 1 << 53;
    match value {
        Value::Number(n)
            if n.as_u64().is_some_and(|u| u >= EXACT) || n.as_i64().is_some_and(|i| i.unsigned_abs() >= EXACT) =>
        {
            if let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = f;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_doubles),
        Value::Object(map) => map.values_mut().for_each(as_doubles),
        _ => {}
    }
}

/// A `google.protobuf.Value` message as JSON (an extension method's params or result).
pub fn decode_value(bytes: &[u8]) -> Result<Value> {
    to_json(&decode::<::pbjson_types::Value>(bytes)?, ErrorKind::InvalidParams)
}

/// A decoded message as ProtoJSON. What fails here is a value protobuf carries but A2A does not
/// define (an enum number beyond the proto's): the sender's fault, of the given kind.
fn to_json<M: Serialize>(message: &M, kind: ErrorKind) -> Result<Value> {
    let mut value = serde_path_to_error::serialize(message, serde_json::value::Serializer).map_err(|e| {
        // Named by the message that holds it (`message`: pbjson fails before it names the
        // field itself), with what is wrong: an enum number the proto does not define, a
        // Timestamp out of range.
        let why = match e.inner().to_string() {
            inner if inner.starts_with("Invalid variant") => {
                let number = inner.trim_start_matches("Invalid variant").trim();
                format!("an enum field holds {number}, a number the proto does not define")
            }
            inner if inner.contains("datetime") || inner.contains("integral type conversion") => {
                "is not a Timestamp A2A can hold (seconds from 0001 to 9999, nanos 0 to 999,999,999)".to_owned()
            }
            inner => format!("holds a value A2A does not define: {inner}"),
        };
        let mut error = A2AError::invalid_field(e.path().to_string(), why);
        error.kind = kind;
        error
    })?;
    whole_numbers_as_integers(&mut value);
    Ok(value)
}

/// `google.protobuf.Value` numbers are doubles, so `1` sent as JSON data comes back `1.0`.
/// Whole doubles within ±2^53 (exact as integers) are written as integers, as a JSON client
/// that sent them expects; the numeric value is unchanged either way.
fn whole_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(number) = n.as_f64().and_then(json_number) {
                *value = number;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers_as_integers),
        _ => {}
    }
}

/// A `google.protobuf.Value` number as JSON: whole within ±2^53 as an integer (see
/// [`whole_numbers_as_integers`]), else the double; `None` for NaN and infinities, which JSON
/// cannot hold.
pub(super) fn json_number(f: f64) -> Option<Value> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if f.fract() == 0.0 && f.abs() <= EXACT && !(f == 0.0 && f.is_sign_negative()) {
        return Some(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Anything with a ProtoJSON form as the protobuf message `M`, through its JSON text (no JSON
/// tree between). A value the proto cannot hold is a bug on this side.
fn encode<M: Message + DeserializeOwned + FillNulls>(value: &impl Serialize) -> Result<Bytes> {
    let text = serde_json::to_vec(value).map_err(|e| A2AError::internal(format!("cannot write the message: {e}")))?;
    let mut message: M = serde_json::from_slice(&text)
        .map_err(|e| A2AError::internal(format!("cannot encode the message as protobuf: {e}")))?;
    message.fill_nulls();
    Ok(Bytes::from(message.encode_to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON `null` in a data part or metadata is `null_value` on the wire, at any depth (a
    /// kindless `Value`, as pbjson left it, is dropped by some readers: the key was lost).
    #[test]
    fn nulls_are_written_as_null_values() {
        use pbjson_types::value::Kind;
        fn assert_nulls(v: &pbjson_types::Value, at: &str) {
            match &v.kind {
                None => panic!("a kindless Value at {at}"),
                Some(Kind::ListValue(l)) => l.values.iter().for_each(|v| assert_nulls(v, at)),
                Some(Kind::StructValue(s)) => s.fields.iter().for_each(|(k, v)| assert_nulls(v, &format!("{at}.{k}"))),
                Some(_) => {}
            }
        }
        let data = serde_json::json!({"a": null, "b": [null, 1, {"c": null}]});
        let params = serde_json::json!({"message": {"messageId": "m", "role": "ROLE_USER",
            "parts": [{"data": data.clone(), "metadata": {"p": null}}], "metadata": {"m": null}},
            "metadata": {"r": null}});
        let sent = pb::SendMessageRequest::decode(encode_params(Method::SendMessage, params).unwrap()).unwrap();
        let message = sent.message.unwrap();
        let Some(pb::part::Content::Data(d)) = &message.parts[0].content else { panic!("no data part") };
        assert_nulls(d, "data");
        for (s, at) in
            [(&message.parts[0].metadata, "part"), (&message.metadata, "message"), (&sent.metadata, "request")]
        {
            let s = s.clone().unwrap();
            assert!(!s.fields.is_empty());
            s.fields.iter().for_each(|(k, v)| assert_nulls(v, &format!("{at}.{k}")));
        }
        // And back: the same JSON.
        let back = decode_result(
            Method::GetTask,
            &encode_result(
                Method::GetTask,
                &serde_json::json!({
            "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"data": data.clone()}]}]}),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(back["artifacts"][0]["parts"][0]["data"], data);
        let top = ::pbjson_types::Value::decode(encode_value(&Value::Null).unwrap()).unwrap();
        assert_eq!(top.kind, Some(Kind::NullValue(0)));
    }

    #[test]
    fn parts_are_counted_on_the_wire() {
        let params = |n: usize| {
            let parts: Vec<_> = (0..n).map(|i| serde_json::json!({"text": i.to_string()})).collect();
            serde_json::json!({"tenant": "t", "message": {"messageId": "m", "role": "ROLE_USER", "parts": parts},
                "metadata": {"k": "v"}})
        };
        for n in [0, 1, 3, 300] {
            let bytes = encode_params(Method::SendMessage, params(n)).unwrap();
            assert_eq!(count_message_parts(&bytes), n);
        }
        // The message in two pieces (protobuf merges them): both counted.
        let mut twice = encode_params(Method::SendMessage, params(2)).unwrap().to_vec();
        twice.extend_from_slice(&encode_params(Method::SendMessage, params(3)).unwrap());
        assert_eq!(count_message_parts(&twice), 5);
        // Malformed bytes count as far as they go and never panic.
        assert_eq!(count_message_parts(&[0x12, 0xff, 0xff]), 0);
        assert_eq!(count_message_parts(&[0x12, 0x02, 0x2a, 0x00, 0x0f]), 1);
    }

    /// A SendMessage request read field for field is what the ProtoJSON route reads, and a
    /// refusal is the same refusal (code, message, field), for plain and irregular requests.
    #[test]
    fn send_message_requests_read_alike_on_both_routes() {
        let msg = |extra: Value| {
            let mut m = serde_json::json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
            m.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            m
        };
        let cases = [
            serde_json::json!({"message": msg(serde_json::json!({}))}),
            serde_json::json!({"tenant": "acme", "message": msg(serde_json::json!({"contextId": "c", "taskId": "t",
                "extensions": ["https://e/x"], "referenceTaskIds": ["t0"], "metadata": {"n": 1, "f": 1.5, "z": -0.0,
                "l": [true, "s", {"d": []}], "big": 1e300}})),
                "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 3, "returnImmediately": true},
                "metadata": {"k": "v"}}),
            serde_json::json!({"message": msg(serde_json::json!({"parts": [
                {"raw": "aGk=", "filename": "f", "mediaType": "application/octet-stream", "metadata": {}},
                {"url": "https://x/y"}, {"data": {"a": [1, 2]}}, {"data": null}]}))}),
            serde_json::json!({"message": msg(serde_json::json!({"parts": [{"text": "hi"}],
                "role": "ROLE_UNSPECIFIED"}))}),
            serde_json::json!({"message": msg(serde_json::json!({"messageId": ""}))}),
            serde_json::json!({"message": msg(serde_json::json!({"parts": []}))}),
            serde_json::json!({"message": msg(serde_json::json!({})),
                "configuration": {"historyLength": -1}}),
            serde_json::json!({"message": msg(serde_json::json!({})),
                "configuration": {"taskPushNotificationConfig": {"url": "https://h/cb", "token": "t"}}}),
            serde_json::json!({"configuration": {"returnImmediately": true}}),
            serde_json::json!({"message": msg(serde_json::json!({"parts": [{}]}))}),
        ];
        for (i, case) in cases.into_iter().enumerate() {
            let bytes = encode_params(Method::SendMessage, case.clone()).unwrap();
            let plain = super::super::direct::send_message_request(decode(&bytes).unwrap()).is_some();
            // The plain ones (and one that validation refuses) do take the direct way.
            if [0, 1, 6].contains(&i) {
                assert!(plain, "{case}");
            }
            for method in [Method::SendMessage, Method::SendStreamingMessage] {
                let direct = decode_request(method, &bytes);
                let route = decode_via_json(method, &bytes);
                match (&direct, &route) {
                    (Ok(d), Ok(r)) => assert_eq!(d, r, "{case}"),
                    (Err(d), Err(r)) => {
                        assert_eq!(
                            (d.code(), &d.message, &d.violations),
                            (r.code(), &r.message, &r.violations),
                            "{case}"
                        )
                    }
                    _ => panic!("{case}: {direct:?} vs {route:?}"),
                }
            }
        }
        // An enum number A2A does not define is judged by the route.
        let message = pb::SendMessageRequest {
            message: Some(pb::Message { message_id: "m".into(), role: 7, ..Default::default() }),
            ..Default::default()
        };
        let bytes = message.encode_to_vec();
        assert_eq!(decode_request(Method::SendMessage, &bytes).unwrap_err().code(), -32602);
    }

    #[test]
    fn nesting_beyond_protobufs_limit_is_refused_in_a_few_words() {
        let nested = |depth: usize, array: bool| {
            let mut v = json!(1);
            for _ in 0..depth {
                v = if array { json!([v]) } else { json!({"a": v}) };
            }
            let params = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}],
                "metadata": {"k": v}}});
            decode_request(Method::SendMessage, &encode_params(Method::SendMessage, params).unwrap())
        };
        // The metadata object is a level of its own.
        let most = crate::model::MAX_VALUE_DEPTH - 1;
        assert!(nested(most, false).is_ok() && nested(most, true).is_ok());
        // Just beyond, the model refuses it, naming the field; far beyond, protobuf does.
        assert_eq!(nested(most + 1, false).unwrap_err().violations[0].field, "message.metadata");
        for refused in [nested(33, false), nested(49, true), nested(100, false)] {
            let e = refused.unwrap_err();
            assert_eq!(e.code(), -32700);
            assert!(e.message.contains("nests deeper") && e.message.len() < 200, "{}", e.message);
        }
    }

    #[test]
    fn integers_beyond_2_53_in_a_request_go_as_doubles() {
        let params = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": [9007199254740993u64]}],
            "metadata": {"big": 9223372036854775807u64, "low": -1152921504606846976i64}}});
        let A2ARequest::SendMessage(request) =
            decode_request(Method::SendMessage, &encode_params(Method::SendMessage, params).unwrap()).unwrap()
        else {
            panic!("not a SendMessage")
        };
        let metadata = request.message.metadata.unwrap();
        assert_eq!(metadata["big"].as_f64(), Some(9223372036854775807.0));
        assert_eq!(metadata["low"].as_f64(), Some(-1152921504606846976.0));
    }

    #[test]
    fn integers_from_2_53_in_a_result_go_as_doubles() {
        // A ListTasks page whose tasks hold such integers failed whole (INTERNAL) over gRPC.
        for n in [json!(9007199254740992u64), json!(-9007199254740992i64), json!(u64::MAX), json!(i64::MIN)] {
            let page = json!({"tasks": [{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                "metadata": {"n": n}, "artifacts": [{"artifactId": "a", "parts": [{"data": {"n": n}}]}]}],
                "nextPageToken": "", "pageSize": 1, "totalSize": 1});
            let back = decode_result(Method::ListTasks, &encode_result(Method::ListTasks, &page).unwrap()).unwrap();
            assert_eq!(back["tasks"][0]["metadata"]["n"].as_f64(), n.as_f64(), "{n}");
            assert_eq!(back["tasks"][0]["artifacts"][0]["parts"][0]["data"]["n"].as_f64(), n.as_f64(), "{n}");
        }
        let exact = json!({"tasks": [{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "metadata": {"n": 9007199254740991u64}}]});
        let back = decode_result(Method::ListTasks, &encode_result(Method::ListTasks, &exact).unwrap()).unwrap();
        assert_eq!(back["tasks"][0]["metadata"]["n"], 9007199254740991u64, "below 2^53 an integer stays exact");
    }

    #[test]
    fn any_json_goes_as_a_protobuf_value_and_back() {
        let odd = serde_json::json!({"a": [1, 2.5, null, true, "x", {"n": -3}], "big": 9007199254740993u64});
        let back = decode_value(&encode_value(&odd).unwrap()).unwrap();
        assert_eq!(back["a"], odd["a"]);
        // Beyond 2^53 a Value's double is what is left.
        assert_eq!(back["big"].as_f64(), Some(9007199254740992.0));
    }
    use serde_json::json;

    fn send_request() -> A2ARequest {
        A2ARequest::from_params(
            Method::SendMessage,
            json!({
                "tenant": "t1",
                "message": {
                    "messageId": "m1", "role": "ROLE_USER", "contextId": "c1",
                    "parts": [
                        {"text": "hi", "metadata": {"k": [1, "x", null, true]}},
                        {"raw": "AAEC", "mediaType": "application/octet-stream", "filename": "f.bin"},
                        {"url": "https://example.com/a"},
                        {"data": {"n": 1.5, "nested": {"a": []}}},
                        // Found by the fuzz bodies: pbjson read a null member as an absent one.
                        {"data": null},
                    ],
                    "extensions": ["urn:x"],
                    "referenceTaskIds": ["r1"],
                },
                "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0, "returnImmediately": true},
                "metadata": {"m": "v"},
            }),
            "",
        )
        .unwrap()
    }

    #[test]
    fn a_request_survives_protobuf_unchanged() {
        let request = send_request();
        let bytes = encode_request(&request).unwrap();
        assert_eq!(decode_request(Method::SendMessage, &bytes).unwrap(), request);
    }

    #[test]
    fn every_method_round_trips_its_request() {
        let cases = [
            (Method::GetTask, json!({"id": "x", "historyLength": 3, "tenant": "t"})),
            (Method::ListTasks, json!({"contextId": "c", "status": "TASK_STATE_WORKING", "pageSize": 5})),
            (Method::CancelTask, json!({"id": "x", "metadata": {"why": "no"}})),
            (Method::SubscribeToTask, json!({"id": "x"})),
            (Method::CreateTaskPushNotificationConfig, json!({"taskId": "x", "url": "https://h/cb", "token": "t"})),
            (Method::GetTaskPushNotificationConfig, json!({"taskId": "x", "id": "p"})),
            (Method::ListTaskPushNotificationConfigs, json!({"taskId": "x", "pageSize": 2})),
            (Method::DeleteTaskPushNotificationConfig, json!({"taskId": "x", "id": "p"})),
            (Method::GetExtendedAgentCard, json!({})),
        ];
        for (method, params) in cases {
            let request = A2ARequest::from_params(method, params, "").unwrap();
            let bytes = encode_request(&request).unwrap();
            assert_eq!(decode_request(method, &bytes).unwrap(), request, "{method}");
        }
    }

    #[test]
    fn results_and_events_round_trip() {
        let task = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-02T03:04:05.678Z"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
            "history": [{"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": [1, 2]}]}],
        });
        let canonical = model::to_value(&model::parse_value_at::<model::Task>(task.clone(), "").unwrap());
        let bytes = encode_result(Method::GetTask, &canonical).unwrap();
        let back = model::parse_value_at::<model::Task>(decode_result(Method::GetTask, &bytes).unwrap(), "").unwrap();
        assert_eq!(model::to_value(&back), canonical);
        assert_eq!(encode_result(Method::DeleteTaskPushNotificationConfig, &json!({})).unwrap().len(), 0);

        let event: StreamResponse = model::parse_value_at(
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}),
            "",
        )
        .unwrap();
        assert_eq!(decode_event(&encode_event(&event).unwrap()).unwrap(), event);
    }

    #[test]
    fn whole_doubles_read_back_as_integers() {
        let mut v = json!({"a": [1.0, 2.5, -0.0, 1e300, 9007199254740992.0], "b": {"c": 3.0}});
        whole_numbers_as_integers(&mut v);
        assert_eq!(v, json!({"a": [1, 2.5, -0.0, 1e300, 9007199254740992_i64], "b": {"c": 3}}));
    }

    #[test]
    fn bad_bytes_are_a_parse_error_and_bad_fields_name_the_field() {
        let err = decode_request(Method::GetTask, &[0xff, 0xff, 0xff]).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::JsonParse);
        // A message with no parts: valid protobuf, invalid A2A.
        let empty = pb::SendMessageRequest { message: Some(pb::Message::default()), ..Default::default() };
        let err = decode_request(Method::SendMessage, &empty.encode_to_vec()).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidParams);
        // An enum number the proto does not define: valid protobuf, the sender's mistake
        // (INVALID_ARGUMENT on the wire), not a server fault.
        let message = pb::Message { role: 99, ..Default::default() };
        let unknown = pb::SendMessageRequest { message: Some(message), ..Default::default() };
        let err = decode_request(Method::SendMessage, &unknown.encode_to_vec()).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidParams, "{}", err.message);
        // Named by where it is (it was "Invalid variant 99").
        assert_eq!(err.violations[0].field, "message", "{}", err.message);
        assert_eq!(err.violations[0].description, "an enum field holds 99, a number the proto does not define");
        let listed = pb::ListTasksRequest { status: 99, ..Default::default() };
        let err = decode_request(Method::ListTasks, &listed.encode_to_vec()).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidParams, "{}", err.message);
        assert!(err.message.contains("holds 99"), "{}", err.message);
        // A Timestamp past what A2A holds.
        let late = pb::ListTasksRequest {
            status_timestamp_after: Some(pbjson_types::Timestamp { seconds: 1 << 62, nanos: 0 }),
            ..Default::default()
        };
        let err = decode_request(Method::ListTasks, &late.encode_to_vec()).unwrap_err();
        assert_eq!(err.violations[0].field, "statusTimestampAfter", "{}", err.message);
    }
}
