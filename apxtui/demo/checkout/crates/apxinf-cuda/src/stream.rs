//! Owned CUDA stream handle.

use std::ffi::c_void;

use crate::error::{check, Result};
use crate::ffi;

pub struct Stream {
    handle: *mut c_void,
}

impl Stream {
    pub fn new() -> Result<Self> {
        let mut handle = std::ptr::null_mut();
        check(unsafe { ffi::apxinf_stream_create(&mut handle) })?;
        Ok(Self { handle })
    }

    pub fn handle(&self) -> *mut c_void {
        self.handle
    }

    /// Block the host until all work queued on this stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { ffi::apxinf_stream_sync(self.handle) })
    }
}
