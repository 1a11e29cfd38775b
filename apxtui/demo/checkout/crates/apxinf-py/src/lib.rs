//! PyO3 binding layer of the ApxInf Python frontend: the `apxinf_py` extension
//! module. Tokenization and observation processing stay in Python (`apxinf`).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

fn runtime_err<E: std::fmt::Display>(error: E) -> PyErr {
    PyRuntimeError::new_err(error.to_string())
}

/// A loaded model: `ModelRunner(path, family)`, then `infer(tokens, num_steps)`.
#[pyclass(name = "ModelRunner", unsendable)]
pub struct PyModelRunner {
    inner: apxinf_model::ModelRunner,
}

#[pymethods]
impl PyModelRunner {
    #[new]
    fn new(path: &str, family: &str) -> PyResult<Self> {
        let model = apxinf_model::AutoModel::load(path, family).map_err(runtime_err)?;
        Ok(Self { inner: apxinf_model::ModelRunner::new(model) })
    }

    /// Logits (float32) after `num_steps` decode steps on `tokens`.
    #[pyo3(name = "infer")]
    fn infer_py(&mut self, tokens: Vec<u32>, num_steps: usize) -> PyResult<Vec<f32>> {
        self.inner.infer(&tokens, num_steps).map_err(runtime_err)
    }

    #[getter]
    fn family(&self) -> &'static str {
        self.inner.family()
    }
}

#[pymodule]
fn apxinf_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModelRunner>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
