//! Model families, the `AutoModel` loader and the family-neutral `ModelRunner`.

pub mod auto;
pub mod host;
pub mod pi05;
pub mod registry;
pub mod runner;
pub mod text;
pub mod weights;

pub use apxinf_cuda::{Error, Result};
pub use auto::{AutoModel, LoadedModel};
pub use runner::ModelRunner;
