//! PI0.5 vision-language-action model: config, weight loading, the model
//! (generic over a `Backend`) and the runner that drives prefill and
//! graph-captured decode steps.

pub mod backend;
pub mod config;
pub mod load;
pub mod model;
pub mod model_runner;

pub use config::Pi05Config;
pub use model_runner::Pi05ModelRunner;
