//! Safe, model-neutral operator contracts: validate shapes, dispatch on dtype
//! and architecture, make one raw FFI call.

pub mod activation;
pub mod attention;
pub mod embedding;
pub mod linear;
pub mod norm;
pub mod quant;
pub mod rope;

pub use attention::AttnParams;
