//! Dense projections `out = x · wᵀ` through cuBLASLt.

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

/// BF16 inputs and output, f32 accumulation (`CUBLAS_COMPUTE_32F`).
/// `x` is `[m, k]`, `w` is `[n, k]` (checkpoint layout), `out` is `[m, n]`.
pub fn linear(x: &Tensor, w: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
    let (m, k, n) = (x.rows(), x.cols(), w.rows());
    if w.cols() != k || out.rows() != m || out.cols() != n {
        return Err(Error::Shape(format!("linear x{:?} w{:?} out{:?}", x.shape(), w.shape(), out.shape())));
    }
    match (x.dtype(), w.dtype()) {
        (DType::BF16, DType::BF16) => check(unsafe {
            ffi::apxinf_gemm_bf16(x.ptr(), w.ptr(), out.ptr_mut(), m as i32, n as i32, k as i32, stream.handle())
        }),
        (a, b) => Err(Error::Unsupported(format!("linear {a:?} x {b:?}"))),
    }
}

/// FP8 E4M3 inputs with per-tensor f32 scales, BF16 output, f32 accumulation.
#[cfg(feature = "fp8")]
pub fn linear_fp8(
    x: &Tensor,
    w: &Tensor,
    x_scale: &Tensor,
    w_scale: &Tensor,
    out: &mut Tensor,
    stream: &Stream,
) -> Result<()> {
    if x.dtype() != DType::F8E4M3 || w.dtype() != DType::F8E4M3 {
        return Err(Error::Unsupported(format!("linear_fp8 {:?} x {:?}", x.dtype(), w.dtype())));
    }
    let (m, k, n) = (x.rows(), x.cols(), w.rows());
    check(unsafe {
        ffi::apxinf_cublaslt_gemm_fp8(
            x.ptr(),
            w.ptr(),
            x_scale.ptr(),
            w_scale.ptr(),
            out.ptr_mut(),
            m as i32,
            n as i32,
            k as i32,
            stream.handle(),
        )
    })
}
