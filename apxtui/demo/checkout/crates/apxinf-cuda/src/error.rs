//! Error type shared by every apxinf crate.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("CUDA error {0}")]
    Cuda(i32),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("load: {0}")]
    Load(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Map an adapter status (a `cudaError_t` or `cublasStatus_t` as int) to a `Result`.
pub(crate) fn check(status: i32) -> Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(Error::Cuda(status))
    }
}
