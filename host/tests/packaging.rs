//! The registry entry (`server.json`) is valid against the registry's own 2025-12-11 schema
//! (vendored, hash-pinned) and agrees with the crate and the README; the bundle template is
//! well-formed and ships no yazses. (`./ci.sh bundle` validates and packs the
//! bundle with the official `mcpb` tool.)

use std::path::Path;

use serde_json::Value;

fn root_file(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)).unwrap()
}

#[test]
fn server_json_names_this_version_and_the_readme_proves_ownership() {
    let v: Value = serde_json::from_str(&root_file("server.json")).unwrap();
    assert_eq!(
        v["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    let name = v["name"].as_str().unwrap();
    let (ns, server) = name.split_once('/').unwrap();
    assert!(
        ns.starts_with("io.github.") && !server.is_empty() && !server.contains('/'),
        "{name}"
    );
    let description = v["description"].as_str().unwrap();
    assert!(
        !description.is_empty() && description.len() <= 100,
        "{description}"
    );
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    let package = &v["packages"][0];
    // PyPI, where `./ci.sh wheels` builds for (the registry takes no crates.io package).
    assert_eq!(package["registryType"], "pypi");
    assert_eq!(package["registryBaseUrl"], "https://pypi.org");
    assert_eq!(package["identifier"], "yazses");
    assert_eq!(package["runtimeHint"], "uvx");
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(package["transport"]["type"], "stdio");
    assert_eq!(package["packageArguments"][0]["value"], "mcp-server");
    assert!(
        root_file("README.md").contains(&format!("mcp-name: {name}")),
        "the README must carry the registry's ownership line `mcp-name: {name}`"
    );
}

#[test]
fn the_bundle_runs_the_installed_yazses_and_asks_where_it_is() {
    let template = root_file("packaging/mcpb/manifest.template.json")
        .replace("@VERSION@", "0.0.0")
        .replace("@TOOLS@", "[]");
    let m: Value = serde_json::from_str(&template).unwrap();
    assert_eq!(m["manifest_version"], "0.3");
    assert_eq!(m["server"]["type"], "binary");
    assert_eq!(
        m["server"]["mcp_config"]["command"],
        "${user_config.yazses_path}"
    );
    assert_eq!(m["server"]["mcp_config"]["args"][0], "mcp-server");
    let path = &m["user_config"]["yazses_path"];
    assert_eq!(path["type"], "file");
    assert_eq!(path["required"], true);
    assert!(
        path["description"]
            .as_str()
            .unwrap()
            .contains("cargo install")
    );
}

/// The registry's schema for server.json, vendored byte for byte: the published copy at
/// static.modelcontextprotocol.io cannot be fetched from CI, so its SHA-256 is pinned.
/// Moving to a newer schema means replacing the file, the `$schema` URL and this pin together.
const REGISTRY_SCHEMA_SHA256: &str =
    "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0";

fn registry_validator() -> jsonschema::Validator {
    use sha2::{Digest, Sha256};
    let bytes = root_file("packaging/registry/server.schema.json");
    let digest: String = Sha256::digest(bytes.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        digest, REGISTRY_SCHEMA_SHA256,
        "packaging/registry/server.schema.json is not the pinned 2025-12-11 schema"
    );
    let schema: Value = serde_json::from_str(&bytes).unwrap();
    assert_eq!(
        schema["$id"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

#[test]
fn server_json_is_valid_against_the_registry_schema() {
    let validator = registry_validator();
    let doc: Value = serde_json::from_str(&root_file("server.json")).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "server.json: {errors:#?}");
}

#[test]
fn the_registry_schema_refuses_what_the_registry_would() {
    let validator = registry_validator();
    let good: Value = serde_json::from_str(&root_file("server.json")).unwrap();
    let broken = [
        ("/name", Value::from("yazses")),
        ("/description", Value::from("x".repeat(101))),
        ("/packages/0/version", Value::from("latest")),
        (
            "/packages/0/transport",
            serde_json::json!({ "type": "carrier-pigeon" }),
        ),
        ("/repository/url", Value::from("not a url")),
    ];
    for (pointer, value) in broken {
        let mut doc = good.clone();
        *doc.pointer_mut(pointer).unwrap() = value;
        assert!(
            !validator.is_valid(&doc),
            "a server.json with a bad {pointer} passed the schema"
        );
    }
}
