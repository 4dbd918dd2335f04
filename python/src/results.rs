//! The named tuples of `tfreq.results` (python/tfreq/results.py) made from the decoded
//! model: `ModelSpec`, `Task` and `Feature`, still tuples for Python code that unpacks
//! them. Each class is looked up once.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyType};

/// The module the classes live in.
const MODULE: &str = "tfreq.results";

static MODEL_SPEC: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TASK: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FEATURE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `ModelSpec(name, version, version_label, signature_name)`.
pub(crate) fn model_spec<'py>(
    py: Python<'py>,
    m: &tfreq::ModelSpec,
) -> PyResult<Bound<'py, PyAny>> {
    MODEL_SPEC.import(py, MODULE, "ModelSpec")?.call1((
        m.name.as_str(),
        m.version,
        m.version_label.as_deref(),
        m.signature_name.as_str(),
    ))
}

/// `Task(method_name, signature_name)` of a multi-inference task.
pub(crate) fn task<'py>(py: Python<'py>, t: &tfreq::InferenceTask) -> PyResult<Bound<'py, PyAny>> {
    TASK.import(py, MODULE, "Task")?.call1((
        t.method_name.as_str(),
        t.model_spec.as_ref().map(|s| s.signature_name.as_str()),
    ))
}

/// `Feature(kind, values)` of a tf.Example feature.
pub(crate) fn feature<'py>(
    py: Python<'py>,
    kind: &'static str,
    values: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyAny>> {
    FEATURE.import(py, MODULE, "Feature")?.call1((kind, values))
}
