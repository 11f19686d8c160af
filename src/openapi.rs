//! The hand-written OpenAPI document, embedded in the binary and served as YAML and JSON.

use std::sync::LazyLock;

pub const YAML: &str = include_str!("../openapi.yaml");

/// The document as JSON, converted once. A document that does not parse cannot ship: the
/// test suite parses it too.
pub static JSON: LazyLock<serde_json::Value> =
    LazyLock::new(|| serde_norway::from_str(YAML).expect("openapi.yaml is valid YAML"));
