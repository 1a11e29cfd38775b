//! Device tensors: a raw allocation plus shape and storage dtype.

use std::ffi::c_void;

use crate::error::{check, Error, Result};
use crate::ffi;
use crate::stream::Stream;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    BF16,
    F16,
    F32,
    F8E4M3,
    U32,
}

impl DType {
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::BF16 | DType::F16 => 2,
            DType::F32 | DType::U32 => 4,
            DType::F8E4M3 => 1,
        }
    }
}

pub struct Tensor {
    ptr: *mut c_void,
    shape: Vec<usize>,
    dtype: DType,
}

impl Tensor {
    /// Allocate uninitialised device memory (`cudaMalloc`; never call under capture).
    pub fn empty(shape: &[usize], dtype: DType) -> Result<Self> {
        let bytes = shape.iter().product::<usize>() * dtype.size_in_bytes();
        let mut ptr = std::ptr::null_mut();
        check(unsafe { ffi::apxinf_malloc(&mut ptr, bytes) })?;
        Ok(Self { ptr, shape: shape.to_vec(), dtype })
    }

    pub fn from_u32(values: &[u32], stream: &Stream) -> Result<Self> {
        let mut tensor = Self::empty(&[values.len()], DType::U32)?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        tensor.copy_from_host(&bytes, stream)?;
        Ok(tensor)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn size_in_bytes(&self) -> usize {
        self.numel() * self.dtype.size_in_bytes()
    }

    /// Leading dimensions folded together: the row count of a row-major matrix view.
    pub fn rows(&self) -> usize {
        self.numel() / self.cols().max(1)
    }

    pub fn cols(&self) -> usize {
        *self.shape.last().unwrap_or(&1)
    }

    pub fn ptr(&self) -> *const c_void {
        self.ptr
    }

    pub fn ptr_mut(&mut self) -> *mut c_void {
        self.ptr
    }

    /// Host → device copy (stream-ordered).
    pub fn copy_from_host(&mut self, bytes: &[u8], stream: &Stream) -> Result<()> {
        if bytes.len() != self.size_in_bytes() {
            return Err(Error::Shape(format!("{} host bytes for a {}-byte tensor", bytes.len(), self.size_in_bytes())));
        }
        check(unsafe { ffi::apxinf_memcpy_h2d(self.ptr, bytes.as_ptr().cast(), bytes.len(), stream.handle()) })
    }

    /// Device → host copy of the raw storage bytes; synchronizes the stream.
    pub fn to_host(&self, stream: &Stream) -> Result<Vec<u8>> {
        let mut host = vec![0u8; self.size_in_bytes()];
        check(unsafe { ffi::apxinf_memcpy_d2h(host.as_mut_ptr().cast(), self.ptr, host.len(), stream.handle()) })?;
        Ok(host)
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        unsafe {
            ffi::apxinf_free(self.ptr);
        }
    }
}
