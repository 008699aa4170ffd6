//! Tool schemas every client can compile. schemars marks Rust's integer and float types
//! with formats of its own (`"format": "uint64"`, `"double"`), which JSON Schema does not
//! define: Ajv, the validator of the TypeScript MCP SDK (and so of most clients), warns
//! about each one, and a strict Ajv refuses the schema. The range is already in
//! `minimum`, so those formats are left out and the standard ones kept.

use serde_json::{Map, Value};

/// The formats JSON Schema 2020-12 defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Takes every `format` JSON Schema does not define out of `schema`, at every depth.
pub fn portable(schema: &mut Map<String, Value>) {
    if schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        schema.remove("format");
    }
    for value in schema.values_mut() {
        portable_value(value);
    }
}

fn portable_value(value: &mut Value) {
    match value {
        Value::Object(object) => portable(object),
        Value::Array(items) => items.iter_mut().for_each(portable_value),
        _ => {}
    }
}

/// The `format` values left anywhere in `schema`.
#[cfg(test)]
pub fn formats(schema: &Value) -> Vec<String> {
    match schema {
        Value::Object(object) => object
            .iter()
            .flat_map(|(key, value)| match (key.as_str(), value) {
                ("format", Value::String(f)) => vec![f.clone()],
                _ => formats(value),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(formats).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_number_formats_go_and_standard_ones_and_a_property_named_format_stay() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "audio_ms": {"type": "integer", "format": "uint64", "minimum": 0},
                "probability": {"type": ["number", "null"], "format": "double"},
                "at": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "enum": ["json", "srt"]},
                "segments": {"type": "array", "items": [{"type": "integer", "format": "int32"}]}
            }
        });
        portable(schema.as_object_mut().unwrap());
        assert_eq!(formats(&schema), ["date-time"]);
        assert_eq!(schema["properties"]["audio_ms"]["minimum"], 0);
        assert!(schema["properties"]["format"]["enum"].is_array());
    }
}
