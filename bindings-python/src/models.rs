//! Models cross the boundary as ProtoJSON dicts: Python values become `serde_json::Value`s that
//! the core reads and validates (`model::parse_value`), and core models go back through
//! `model::to_value`. The Python types of these dicts are generated from the spec's proto.

use a2a_native::model::{self, Validate};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

/// How deeply a Python value may nest on its way to JSON: serde_json reads no deeper, and a
/// value that contains itself would otherwise recurse until the stack overflows (a crash).
/// Deeper is InvalidParamsError, as core's own readers say of too deep JSON.
const MAX_DEPTH: usize = 128;

/// A Python value (dict, list, str, int, float, bool, None) as JSON. A value JSON cannot hold
/// (NaN, an integer past 64 bits, a str with a lone surrogate) is InvalidParamsError naming
/// where it is (`metadata.score`); a type that is not JSON at all is TypeError.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value_at(obj, 0).map_err(|e| match e {
        Unjson::Type(e) => e,
        Unjson::Value { path, why } => {
            let field = path.iter().rev().map(String::as_str).collect::<Vec<_>>().join(".");
            crate::errors::to_py(a2a_native::A2AError::invalid_field(field, why))
        }
    })
}

/// Why a Python value is not JSON; `path` is filled in, innermost first, on the way out.
enum Unjson {
    Type(PyErr),
    Value { path: Vec<String>, why: String },
}

impl Unjson {
    fn value(why: impl Into<String>) -> Self {
        Unjson::Value { path: Vec::new(), why: why.into() }
    }

    fn under(mut self, step: impl FnOnce() -> String) -> Self {
        if let Unjson::Value { path, .. } = &mut self {
            path.push(step());
        }
        self
    }
}

fn text(s: &Bound<'_, PyString>) -> Result<String, Unjson> {
    s.to_str().map(str::to_owned).map_err(|_| Unjson::value("a str with a lone surrogate is not UTF-8 text"))
}

fn to_value_at(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Unjson> {
    if depth > MAX_DEPTH {
        return Err(Unjson::value(format!("the value nests more than {MAX_DEPTH} levels deep (or contains itself)")));
    }
    let to_value = |v: &Bound<'_, PyAny>| to_value_at(v, depth + 1);
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(Unjson::value("integer out of the JSON range"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| Unjson::value("NaN and infinities are not JSON"));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return text(s).map(Value::String);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key =
                k.cast::<PyString>().map_err(|_| Unjson::Type(PyTypeError::new_err("JSON object keys must be str")))?;
            let key = text(key)?;
            let value = to_value(&v).map_err(|e| e.under(|| key.clone()))?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    let items = |iter: &mut dyn Iterator<Item = Bound<'_, PyAny>>| {
        iter.enumerate()
            .map(|(i, v)| to_value(&v).map_err(|e| e.under(|| i.to_string())))
            .collect::<Result<_, _>>()
            .map(Value::Array)
    };
    if let Ok(l) = obj.cast::<PyList>() {
        return items(&mut l.iter());
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return items(&mut t.iter());
    }
    let name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    Err(Unjson::Type(PyTypeError::new_err(format!("{name} is not a JSON value"))))
}

/// JSON as Python values.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (_, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A core model read (and validated) from a Python dict.
pub fn from_py<T: DeserializeOwned + Validate>(obj: &Bound<'_, PyAny>) -> PyResult<T> {
    model::parse_value(to_value(obj)?).map_err(crate::errors::to_py)
}

/// A core model as a Python dict.
pub fn into_py<T: Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    Ok(to_py(py, &model::to_value(value))?.unbind())
}

/// A core model on its way to Python as an awaitable's result: serialized on the runtime
/// thread, without the GIL, and made a dict only when the awaitable completes (one attach).
pub struct Json(Value);

impl Json {
    pub fn of<T: Serialize>(value: &T) -> Self {
        Json(model::to_value(value))
    }
}

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        to_py(py, &self.0)
    }
}

/// Reads `value` as the model `type_name` (any of core's `model::dynamic::TYPE_NAMES`) and
/// returns it in canonical ProtoJSON (defaults dropped, enums by name); raises
/// `InvalidParamsError` naming the offending field.
#[pyfunction]
pub fn validate(py: Python<'_>, type_name: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let out = model::dynamic::normalize(type_name, to_value(value)?).map_err(crate::errors::to_py)?;
    Ok(to_py(py, &out)?.unbind())
}

/// Converts between the A2A 0.3 wire form and 1.0 ProtoJSON (`to` is `"1.0"` or `"0.3"`),
/// for code that talks to 0.3 peers itself; `type_name` is one of `model::v03::TYPE_NAMES`.
#[pyfunction]
pub fn convert(py: Python<'_>, type_name: &str, value: &Bound<'_, PyAny>, to: &str) -> PyResult<Py<PyAny>> {
    let value = to_value(value)?;
    let out = match to {
        "1.0" => model::v03::to_v10(type_name, value),
        "0.3" => model::v03::to_v03(type_name, value),
        other => return Err(PyValueError::new_err(format!("to must be \"1.0\" or \"0.3\", not {other:?}"))),
    }
    .map_err(crate::errors::to_py)?;
    Ok(to_py(py, &out)?.unbind())
}

/// Core's SSE codec in the shared vectors' form (`tests/vectors/sse`), for the vector tests:
/// decodes `chunks` in order and ends the stream (`{"outcomes", "last_event_id"}`).
#[pyfunction]
#[pyo3(name = "_sse_decode", signature = (chunks, max_event_bytes=None))]
pub fn sse_decode(py: Python<'_>, chunks: Vec<Vec<u8>>, max_event_bytes: Option<u64>) -> PyResult<Py<PyAny>> {
    let out = a2a_native::sse::vectors::decode(max_event_bytes, chunks.iter().map(Vec::as_slice));
    Ok(to_py(py, &out)?.unbind())
}

/// The bytes core's SSE encoder writes for an `encode` vector case (its `event` or `comment`).
#[pyfunction]
#[pyo3(name = "_sse_encode")]
pub fn sse_encode(case: &Bound<'_, PyAny>) -> PyResult<String> {
    a2a_native::sse::vectors::encode(&to_value(case)?).map_err(crate::errors::to_py)
}

/// One wire vector case (`tests/vectors/jsonrpc` of a file's `kind`, or `rest`; JSON text)
/// checked by core's codec: `None` when it holds, else what differed.
#[pyfunction]
#[pyo3(name = "_vector_check")]
pub fn vector_check(folder: &str, kind: &str, case_json: &str) -> PyResult<Option<String>> {
    let case = serde_json::from_str(case_json).map_err(|e| PyValueError::new_err(format!("case: {e}")))?;
    Ok(a2a_native::vectors::check(folder, kind, &case).err())
}
