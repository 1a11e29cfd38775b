//! Element-wise activations and residual adds (BF16 storage, f32 math).

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

/// `out = silu(gate) * up`.
pub fn silu_mul(gate: &Tensor, up: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
    if gate.dtype() != DType::BF16 || gate.shape() != up.shape() {
        return Err(Error::Unsupported(format!("silu_mul {:?} {:?}", gate.dtype(), gate.shape())));
    }
    let n = gate.numel() as i32;
    check(unsafe { ffi::apxinf_silu_mul_bf16(gate.ptr(), up.ptr(), out.ptr_mut(), n, stream.handle()) })
}

/// `acc += x` (residual connection).
pub fn add(acc: &mut Tensor, x: &Tensor, stream: &Stream) -> Result<()> {
    if acc.shape() != x.shape() {
        return Err(Error::Shape(format!("add {:?} + {:?}", acc.shape(), x.shape())));
    }
    let n = x.numel() as i32;
    check(unsafe { ffi::apxinf_add_bf16(acc.ptr_mut(), x.ptr(), n, stream.handle()) })
}
