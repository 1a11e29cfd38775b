//! CUDA Graph capture and replay.
//!
//! Everything launched on the stream between `begin_capture` and `end_capture`
//! is recorded, not run; kernel arguments passed by value are frozen into the
//! graph. Host syncs and allocations are illegal inside a capture.

use std::ffi::c_void;

use crate::error::{check, Result};
use crate::ffi;
use crate::stream::Stream;

/// A captured, not yet instantiated graph.
pub struct RawGraph {
    handle: *mut c_void,
}

/// An instantiated graph, ready to be replayed on a stream.
pub struct CudaGraph {
    exec: *mut c_void,
}

pub fn begin_capture(stream: &Stream) -> Result<()> {
    check(unsafe { ffi::apxinf_graph_begin(stream.handle()) })
}

pub fn end_capture(stream: &Stream) -> Result<RawGraph> {
    let mut handle = std::ptr::null_mut();
    check(unsafe { ffi::apxinf_graph_end(stream.handle(), &mut handle) })?;
    Ok(RawGraph { handle })
}

impl CudaGraph {
    pub fn instantiate(graph: RawGraph) -> Result<Self> {
        let mut exec = std::ptr::null_mut();
        check(unsafe { ffi::apxinf_graph_instantiate(&mut exec, graph.handle) })?;
        Ok(Self { exec })
    }

    pub fn replay(&self, stream: &Stream) -> Result<()> {
        check(unsafe { ffi::apxinf_graph_launch(self.exec, stream.handle()) })
    }
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        unsafe {
            ffi::apxinf_graph_destroy(self.exec);
        }
    }
}
