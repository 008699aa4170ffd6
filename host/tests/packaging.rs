//! The registry entry (`server.json`) agrees with the crate and the README; the bundle
//! template is well-formed and ships no yazses. (`./ci.sh bundle` validates and packs the
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
    assert_eq!(package["registryType"], "cargo");
    assert_eq!(package["identifier"], "yazses");
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
