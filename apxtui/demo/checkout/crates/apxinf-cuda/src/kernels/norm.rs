//! RMS normalization.

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

/// `out[r, :] = x[r, :] / rms(x[r, :]) * w`, accumulated in f32 for every storage dtype.
pub fn rms_norm(x: &Tensor, w: &Tensor, out: &mut Tensor, eps: f32, stream: &Stream) -> Result<()> {
    if w.numel() != x.cols() || out.shape() != x.shape() {
        return Err(Error::Shape(format!("rms_norm x{:?} w{:?} out{:?}", x.shape(), w.shape(), out.shape())));
    }
    let (rows, cols) = (x.rows() as i32, x.cols() as i32);
    let status = match x.dtype() {
        DType::BF16 => unsafe { ffi::apxinf_rms_norm_bf16(x.ptr(), w.ptr(), out.ptr_mut(), rows, cols, eps, stream.handle()) },
        DType::F16 => unsafe { ffi::apxinf_rms_norm_f16(x.ptr(), w.ptr(), out.ptr_mut(), rows, cols, eps, stream.handle()) },
        DType::F32 => unsafe { ffi::apxinf_rms_norm_f32(x.ptr(), w.ptr(), out.ptr_mut(), rows, cols, eps, stream.handle()) },
        other => return Err(Error::Unsupported(format!("rms_norm on {other:?}"))),
    };
    check(status)
}
