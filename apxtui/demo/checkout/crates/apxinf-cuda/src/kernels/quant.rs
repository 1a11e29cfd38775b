//! FP8 (E4M3) activation quantization with a dynamic per-tensor scale.

#[cfg(feature = "fp8")]
use crate::error::{check, Error, Result};
#[cfg(feature = "fp8")]
use crate::ffi;
#[cfg(feature = "fp8")]
use crate::stream::Stream;
#[cfg(feature = "fp8")]
use crate::tensor::{DType, Tensor};

/// `scale = amax(|x|) / 448`, `out = fp8(x / scale)`; `scale` is a 1-element f32 device tensor.
/// Two kernel launches (amax reduction, then the cast), not one fused kernel.
#[cfg(feature = "fp8")]
pub fn quantize_fp8(x: &Tensor, out: &mut Tensor, scale: &mut Tensor, stream: &Stream) -> Result<()> {
    if x.dtype() != DType::BF16 || out.dtype() != DType::F8E4M3 || scale.dtype() != DType::F32 {
        return Err(Error::Unsupported(format!("quantize_fp8 {:?} -> {:?}", x.dtype(), out.dtype())));
    }
    let n = x.numel() as i32;
    check(unsafe { ffi::apxinf_quantize_fp8_e4m3(x.ptr(), out.ptr_mut(), scale.ptr_mut(), n, stream.handle()) })
}
