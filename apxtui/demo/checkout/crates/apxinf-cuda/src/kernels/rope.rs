//! Rotary position embedding, applied in place.

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

/// Rotate `x` (`[rows, heads * head_dim]`) for positions `pos..pos + rows`.
/// `pos` is a host scalar passed to the kernel by value.
pub fn rope(x: &mut Tensor, pos: usize, theta: f32, head_dim: usize, stream: &Stream) -> Result<()> {
    if x.dtype() != DType::BF16 {
        return Err(Error::Unsupported(format!("rope on {:?}", x.dtype())));
    }
    let (rows, heads) = (x.rows() as i32, (x.cols() / head_dim) as i32);
    check(unsafe { ffi::apxinf_rope_bf16(x.ptr_mut(), rows, heads, head_dim as i32, pos as i32, theta, stream.handle()) })
}
