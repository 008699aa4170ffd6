//! The configuration reference, `docs/configuration.md`, made from the types themselves.

use super::Config;
use super::rules;

/// The configuration reference (`docs/configuration.md`), made from the types themselves:
/// every table and key with its documentation, its default and what it allows. A test
/// fails when the page on disk differs.
pub fn reference() -> String {
    let schema = schemars::schema_for!(Config);
    let root = schema.as_value();
    let defaults = toml::Value::try_from(Config::default()).expect("the defaults serialise");
    let lookup = |node: &serde_json::Value| -> serde_json::Value {
        match node.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => root
                .pointer(&r.replacen('#', "", 1))
                .cloned()
                .unwrap_or_default(),
            None => node.clone(),
        }
    };
    let text = |node: &serde_json::Value| -> String {
        node.get("description")
            .and_then(|d| d.as_str())
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = String::from(
        "# Configuration\n\n\
         Every key of `config.toml`, made from the code by `yazses::config::reference` \
         (`UPDATE_GOLDEN=1 cargo test -p yazses --lib config` rewrites this page; a test \
         fails when it is stale).\n\n\
         The file is `~/.config/yazses/config.toml` on Linux (`yazses config path`); \
         `--config PATH` or `YAZSES_CONFIG` names another. A missing file at the default \
         path is the defaults; a file named with `--config` or `YAZSES_CONFIG` that does \
         not exist is an error (a typo there would otherwise turn every setting back to \
         its default unseen; `yazses --config PATH config show > PATH` starts one); every \
         key may be left out; unknown keys are warned about, with the key a slip most \
         likely meant; a value outside what \
         its key allows stops the program with the key named. `yazses config` prints the \
         effective configuration as TOML.\n",
    );
    let tables = root["properties"].as_object().cloned().unwrap_or_default();
    for (table, node) in &tables {
        out.push_str(&format!("\n## `[{table}]`\n\n{}\n\n", text(node)));
        out.push_str("| key | default | what | allowed |\n|---|---|---|---|\n");
        let keys = lookup(node)["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, node) in &keys {
            let default = defaults
                .get(table)
                .and_then(|t| t.get(key))
                .map(toml_words)
                .unwrap_or_default();
            let checked = rules::allows(&format!("{table}.{key}")).map(str::to_owned);
            let allowed = variants(&lookup(&node["items"]), &lookup(node))
                .or(checked)
                .unwrap_or_else(|| of_type(node));
            out.push_str(&format!(
                "| `{key}` | `{default}` | {} | {} |\n",
                text(node).replace('|', "\\|"),
                allowed.replace('|', "\\|")
            ));
        }
    }
    out
}

/// What a key without a stated rule takes, from its schema's type.
fn of_type(node: &serde_json::Value) -> String {
    let kind = |n: &serde_json::Value| match n.get("type").and_then(|t| t.as_str()) {
        Some("boolean") => "`true` or `false`",
        Some("string") => "text",
        Some("integer") => "a whole number",
        Some("number") => "a number",
        _ => "a value of its type",
    };
    match node.get("type").and_then(|t| t.as_str()) {
        Some("array") => format!("a list, each {}", kind(&node["items"])),
        _ => kind(node).to_owned(),
    }
}

/// A default as TOML writes it; an `f32` key's value as the `f32` it is (0.1, not
/// 0.10000000149011612).
fn toml_words(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(x) if f64::from(*x as f32) == *x => format!("{:?}", *x as f32),
        v => v.to_string(),
    }
}

/// The values an enum key takes, with what each means, from its schema (or from its items'
/// schema, for a list of them).
fn variants(items: &serde_json::Value, node: &serde_json::Value) -> Option<String> {
    let one_of = node
        .get("oneOf")
        .or_else(|| items.get("oneOf"))?
        .as_array()?;
    let words: Vec<String> = one_of
        .iter()
        .filter_map(|v| {
            let value = v.get("const")?.as_str()?;
            let means = v.get("description").and_then(|d| d.as_str()).unwrap_or("");
            let means = means.split_whitespace().collect::<Vec<_>>().join(" ");
            Some(format!("`{value}`: {}", means.trim_end_matches('.')))
        })
        .collect();
    (!words.is_empty()).then(|| words.join("; "))
}
