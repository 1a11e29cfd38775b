//! Model families `AutoModel` can load, by the name callers pass as `family`.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Text,
    Pi05,
}

const REGISTRY: &[(&str, Family)] = &[("llama", Family::Text), ("qwen2", Family::Text), ("pi05", Family::Pi05)];

pub fn lookup(name: &str) -> Option<Family> {
    REGISTRY.iter().find(|(key, _)| *key == name).map(|(_, family)| *family)
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(key, _)| *key).collect()
}
