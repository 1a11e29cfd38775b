//! Unified model loading: a checkpoint directory and a family name in, a
//! `LoadedModel` out.

use std::path::Path;

use apxinf_cuda::{Error, Result};

use crate::pi05::Pi05ModelRunner;
use crate::registry::{self, Family};
use crate::text::TextModel;

/// A loaded text model or VLA model. Text generation and observation-to-action
/// inference are separate code paths.
pub enum LoadedModel {
    Text(TextModel),
    Vla(Pi05ModelRunner),
}

pub struct AutoModel;

impl AutoModel {
    pub fn load(path: &str, family: &str) -> Result<LoadedModel> {
        let dir = Path::new(path);
        match registry::lookup(family) {
            Some(Family::Pi05) => Ok(LoadedModel::Vla(Pi05ModelRunner::load(dir)?)),
            Some(Family::Text) => Ok(LoadedModel::Text(TextModel::load(dir)?)),
            None => Err(Error::Unsupported(format!("model family `{family}` (known: {:?})", registry::names()))),
        }
    }
}
