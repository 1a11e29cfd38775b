//! Compile-time backend seam for PI0.5. Model code is generic over `Backend`;
//! the runner instantiates it with `RuntimeBackend`. Porting to another
//! accelerator changes this file, not the layer topology.

pub use apxinf_cuda::backend::Backend;

pub type RuntimeBackend = apxinf_cuda::CudaBackend;
