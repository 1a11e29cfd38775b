//! Token embedding gather.

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

/// `out[r, :] = table[ids[r], :]`.
pub fn embedding(table: &Tensor, ids: &Tensor, out: &mut Tensor, stream: &Stream) -> Result<()> {
    if ids.dtype() != DType::U32 || table.dtype() != DType::BF16 {
        return Err(Error::Unsupported(format!("embedding {:?}[{:?}]", table.dtype(), ids.dtype())));
    }
    let (rows, cols) = (ids.numel() as i32, table.cols() as i32);
    check(unsafe { ffi::apxinf_embedding_bf16(table.ptr(), ids.ptr(), out.ptr_mut(), rows, cols, stream.handle()) })
}
