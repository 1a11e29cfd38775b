//! CUDA runtime, safe operators and the C ABI boundary of apxinf.
//!
//! Layering: `backend` (the `Backend` trait models are generic over) → `kernels`
//! (safe operator contracts: validation and dtype dispatch) → private `ffi`
//! (`extern "C"` declarations) → `adapters/*.cu` (launch policy) →
//! `kernels/*.cuh` (`__global__` kernels) or cuBLASLt / CUTLASS / FlashAttention-2.

pub mod backend;
pub mod cpu;
pub mod error;
mod ffi;
pub mod graph;
pub mod kernels;
pub mod stream;
pub mod tensor;

pub use backend::{Backend, CudaBackend};
pub use cpu::CpuBackend;
pub use error::{Error, Result};
pub use graph::CudaGraph;
pub use stream::Stream;
pub use tensor::{DType, Tensor};
