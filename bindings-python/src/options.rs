//! Option dicts from the Python layer's keyword arguments: each key read once, typed, and any
//! key nobody read is an error (a misspelt option fails loudly instead of being ignored).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeSet;

pub struct Options<'py> {
    dict: Option<Bound<'py, PyDict>>,
    read: BTreeSet<&'static str>,
}

impl<'py> Options<'py> {
    pub fn new(dict: Option<Bound<'py, PyDict>>) -> Self {
        Self { dict, read: BTreeSet::new() }
    }

    /// The value of `key`, `None` when absent or `None`.
    pub fn get<T: pyo3::conversion::FromPyObjectOwned<'py>>(&mut self, key: &'static str) -> PyResult<Option<T>> {
        self.read.insert(key);
        let Some(dict) = &self.dict else { return Ok(None) };
        match dict.get_item(key)? {
            Some(v) if !v.is_none() => v
                .extract::<T>()
                .map(Some)
                .map_err(|e| PyTypeError::new_err(format!("option {key}: {}", Into::<PyErr>::into(e)))),
            _ => Ok(None),
        }
    }

    /// Fails on a key that no `get` asked for.
    pub fn finish(self) -> PyResult<()> {
        let Some(dict) = &self.dict else { return Ok(()) };
        for key in dict.keys() {
            let key: String = key.extract()?;
            if !self.read.contains(key.as_str()) {
                return Err(PyValueError::new_err(format!("unknown option {key:?}")));
            }
        }
        Ok(())
    }
}
