//! Holds real responses against the OpenAPI document: the status must be documented for
//! the operation, every documented header must be present, and the body must match the
//! documented schema (OpenAPI 3.0 schemas, translated to JSON Schema 2020-12).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

pub static DOC: LazyLock<&'static Value> = LazyLock::new(|| &*petstore::openapi::JSON);

/// The document with its schemas translated, used as the root that `$ref`s resolve in.
static TRANSLATED: LazyLock<Value> = LazyLock::new(|| translate(DOC.clone()));

/// The path template of the document that `path` falls under, preferring literal
/// segments over parameters (`/openapi.json` over a hypothetical `/{x}`).
pub fn template_for(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    DOC["paths"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|template| {
            let parts: Vec<&str> = template.trim_start_matches('/').split('/').collect();
            parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(t, s)| t.starts_with('{') || t == s)
        })
        .min_by_key(|template| template.matches('{').count())
        .map(String::as_str)
}

/// The operation object for `method` on `template`.
pub fn operation(method: &Method, template: &str) -> Option<&'static Value> {
    DOC["paths"][template].get(method.as_str().to_ascii_lowercase())
}

/// Follows a local `$ref` (one level is all the document uses).
pub fn resolve(value: &'static Value) -> &'static Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => DOC.pointer(reference.trim_start_matches('#')).expect("a $ref that resolves"),
        None => value,
    }
}

pub fn check_response(method: &Method, path: &str, status: u16, headers: &HeaderMap, body: &Value) {
    let context = format!("{method} {path} -> {status}");
    let Some(op) = template_for(path).and_then(|t| operation(method, t)) else {
        // Not an operation of the document: only "no such route" and "wrong method" may
        // come back, as Error objects.
        assert!(status == 404 || status == 405, "{context}: an undocumented route answered");
        validate(&json!({ "$ref": "#/components/schemas/Error" }), body, &context);
        return;
    };
    let documented = op["responses"]
        .get(status.to_string())
        .or_else(|| op["responses"].get("default"))
        .unwrap_or_else(|| panic!("{context}: status {status} is not documented for {}", op["operationId"]));
    let response = resolve(documented);
    for name in response["headers"].as_object().into_iter().flat_map(|h| h.keys()) {
        assert!(headers.contains_key(name.as_str()), "{context}: documented header {name} is missing");
    }
    match response["content"].as_object() {
        Some(content) => match content.get("application/json") {
            Some(media) => validate(&media["schema"], body, &context),
            None => assert!(body.is_string(), "{context}: a non-JSON media type answered JSON"),
        },
        None => assert!(body.is_null(), "{context}: documented without a body, got {body}"),
    }
}

/// Checks `value` against the document's schema `name` (`components/schemas`).
pub fn check_schema(name: &str, value: &Value, context: &str) {
    validate(&json!({ "$ref": format!("#/components/schemas/{name}") }), value, context);
}

fn validate(schema: &Value, body: &Value, context: &str) {
    static CACHE: LazyLock<Mutex<HashMap<String, jsonschema::Validator>>> = LazyLock::new(Default::default);
    let schema = translate(schema.clone());
    let key = schema.to_string();
    let mut cache = CACHE.lock().unwrap();
    let validator = cache.entry(key).or_insert_with(|| {
        let mut root = TRANSLATED.clone();
        root.as_object_mut().unwrap().insert("allOf".into(), json!([schema]));
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .expect("a schema that compiles")
    });
    let errors: Vec<String> =
        validator.iter_errors(body).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{context}: body does not match the documented schema: {errors:?}\n{body}");
}

/// OpenAPI 3.0's `nullable: true` becomes JSON Schema's null type; everything else the
/// document uses means the same in both.
fn translate(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let nullable = map.get("nullable") == Some(&Value::Bool(true));
            let mut out: Map<String, Value> =
                map.into_iter().filter(|(k, _)| k != "nullable").map(|(k, v)| (k, translate(v))).collect();
            if !nullable {
                return Value::Object(out);
            }
            if let Some(Value::String(t)) = out.get("type").cloned() {
                out.insert("type".into(), json!([t, "null"]));
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
                Value::Object(out)
            } else {
                json!({ "anyOf": [Value::Object(out), { "type": "null" }] })
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(translate).collect()),
        other => other,
    }
}

/// Every documented operation as (method, concrete path, needs a key).
pub fn operations() -> Vec<(Method, String, bool)> {
    let global = !DOC["security"].as_array().unwrap().is_empty();
    let mut all = Vec::new();
    for (template, item) in DOC["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
            if method == Method::from_bytes(b"PARAMETERS").unwrap() {
                continue;
            }
            let secured = op.get("security").map_or(global, |s| !s.as_array().unwrap().is_empty());
            let mut path = template
                .replace("{petId}", "1")
                .replace("{categoryId}", "1")
                .replace("{orderId}", "1")
                .replace("{staffId}", "1");
            // Required query parameters take the document's own example.
            let required: Vec<String> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .map(|p| format!("{}={}", p["name"].as_str().unwrap(), p["example"].as_str().unwrap()))
                .collect();
            if !required.is_empty() {
                path = format!("{path}?{}", required.join("&"));
            }
            all.push((method, path, secured));
        }
    }
    assert!(all.len() >= 24, "the document lists every operation");
    all
}
