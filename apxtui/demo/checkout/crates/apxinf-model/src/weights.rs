//! Checkpoint access shared by all families: `config.json` and safetensors upload.

use std::path::Path;

use apxinf_cuda::{DType, Error, Result, Stream, Tensor};
use safetensors::{Dtype, SafeTensors};

pub fn read_config(dir: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| Error::Load(format!("config.json: {e}")))?;
    serde_json::from_str(&text).map_err(|e| Error::Load(format!("config.json: {e}")))
}

pub fn read_safetensors(dir: &Path) -> Result<Vec<u8>> {
    std::fs::read(dir.join("model.safetensors")).map_err(|e| Error::Load(format!("model.safetensors: {e}")))
}

pub fn parse(bytes: &[u8]) -> Result<SafeTensors<'_>> {
    SafeTensors::deserialize(bytes).map_err(|e| Error::Load(format!("model.safetensors: {e}")))
}

/// Copy one named tensor to the device, keeping its storage dtype.
pub fn upload(st: &SafeTensors<'_>, name: &str, stream: &Stream) -> Result<Tensor> {
    let view = st.tensor(name).map_err(|e| Error::Load(format!("{name}: {e}")))?;
    let dtype = match view.dtype() {
        Dtype::BF16 => DType::BF16,
        Dtype::F16 => DType::F16,
        Dtype::F32 => DType::F32,
        Dtype::F8_E4M3 => DType::F8E4M3,
        other => return Err(Error::Load(format!("{name}: unsupported dtype {other:?}"))),
    };
    let mut tensor = Tensor::empty(view.shape(), dtype)?;
    tensor.copy_from_host(view.data(), stream)?;
    Ok(tensor)
}
