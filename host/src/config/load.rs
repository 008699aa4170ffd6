//! Reading `config.toml`: a bounded read of a regular file, TOML with unknown keys
//! reported, a value of the wrong type named by key and line, then the rules.

use std::path::{Path, PathBuf};

use super::Config;

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the config file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A config file named on purpose (`--config`, `YAZSES_CONFIG`) is not there.
    #[error(
        "the config file {path} does not exist; check the path given with --config or YAZSES_CONFIG, or start one with `yazses config show > {path}`"
    )]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// Not TOML, or a value of the wrong type.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, which names the key.
        message: String,
    },
    /// A value out of range.
    #[error("{path}: {key} = {value} is out of range: {rule}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key, `table.key`.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        rule: &'static str,
    },
}

/// The default config file's path.
pub fn default_path() -> PathBuf {
    directories::ProjectDirs::from("", "", "yazses")
        .map(|d| d.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from("yazses.toml"))
}

/// Loads the config from `path` (or the default path), warning about unknown keys on
/// stderr through `tracing` and refusing bad values.
pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
    load_with(path, |_| {})
}

/// Like [`load`], with `flags` applied over the file's values before they are checked, so
/// a command-line flag can supply what the file lacks.
pub fn load_with(
    path: Option<&Path>,
    flags: impl FnOnce(&mut Config),
) -> Result<Config, ConfigError> {
    let named = path.is_some();
    let path = path.map(Path::to_owned).unwrap_or_else(default_path);
    let text = match read_bounded(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if named {
                // Named on purpose (--config, YAZSES_CONFIG): a typo there would otherwise
                // turn every setting, ask_human included, back to its default unseen.
                return Err(ConfigError::Missing { path });
            }
            tracing::debug!(path = %path.display(), "no config file; using the defaults");
            let mut config = Config::default();
            flags(&mut config);
            config.validate(&path)?;
            return Ok(config);
        }
        Err(source) => return Err(ConfigError::Io { path, source }),
    };
    let (config, unknown) = parse(&text).map_err(|e| ConfigError::Parse {
        path: path.clone(),
        message: e.0,
    })?;
    for key in unknown {
        let hint = closest_key(&key)
            .map(|k| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        crate::logging::warn_user(&format!(
            "{}: unknown key {key} ignored{hint}",
            path.display()
        ));
    }
    let mut config = config;
    flags(&mut config);
    config.validate(&path)?;
    Ok(config)
}

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file that is a regular file of at most [`MAX_CONFIG_BYTES`]: a symlink to
/// `/dev/zero` must not fill the memory, nor a FIFO hold the start forever.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let not_regular = || {
        std::io::Error::other(
            "it is not a regular file (a device, a FIFO or a directory); give the path of a TOML file",
        )
    };
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    // Non-blocking, in case the path was swapped for a FIFO after the check; checked again
    // on the open file.
    let file = crate::platform::open_nonblocking(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {} KiB, which no config file needs",
            MAX_CONFIG_BYTES >> 10
        )));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("it is not UTF-8 text"))
}

/// The known key (`table.key`, or a table's name) nearest to `unknown`, when one is near
/// enough to be a slip: a letter or two off, or keys in the wrong table.
pub(crate) fn closest_key(unknown: &str) -> Option<String> {
    let known = toml::Table::try_from(Config::default()).expect("defaults serialise");
    let mut names: Vec<String> = Vec::new();
    for (table, keys) in &known {
        names.push(table.clone());
        for key in keys.as_table().into_iter().flat_map(|t| t.keys()) {
            names.push(format!("{table}.{key}"));
        }
    }
    let unknown_key = unknown.rsplit('.').next().unwrap_or(unknown);
    names
        .into_iter()
        .map(|name| {
            let whole = strsim::levenshtein(unknown, &name);
            // The right key in the wrong table counts as one slip.
            let key_only = name
                .rsplit_once('.')
                .filter(|(_, k)| *k == unknown_key && unknown.contains('.'))
                .map_or(usize::MAX, |_| 1);
            (whole.min(key_only), name)
        })
        .filter(|(d, name)| *d <= 2.max(name.len() / 5) && name != unknown)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Why TOML text is not a config: the parser's message, which names the line and the key.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Parses TOML text: the config, and the dotted names of keys it does not know.
pub fn parse(text: &str) -> Result<(Config, Vec<String>), ParseError> {
    let value: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!("line {}: ", line_at(text, s.start)))
            .unwrap_or_default();
        ParseError(format!("{line}{}", e.message()))
    })?;
    let known = toml::Table::try_from(Config::default()).expect("defaults serialise");
    let mut unknown = Vec::new();
    let mut cleaned = toml::Table::new();
    for (table, entries) in value {
        let Some(known_table) = known.get(&table).and_then(|t| t.as_table()) else {
            unknown.push(table);
            continue;
        };
        let Some(entries) = entries.as_table() else {
            return Err(ParseError(format!("[{table}] must be a table")));
        };
        let mut kept = toml::Table::new();
        for (key, v) in entries {
            if known_table.contains_key(key) {
                kept.insert(key.clone(), v.clone());
            } else {
                unknown.push(format!("{table}.{key}"));
            }
        }
        cleaned.insert(table, toml::Value::Table(kept));
    }
    let config: Config = toml::Value::Table(cleaned.clone())
        .try_into()
        .map_err(|e: toml::de::Error| ParseError(wrong_type(text, &cleaned, e.message())))?;
    Ok((config, unknown))
}

/// A value of the wrong type, named by its key and line: the whole-config error from serde
/// says only what was expected, so each key is tried alone over the defaults to find it.
fn wrong_type(text: &str, entries: &toml::Table, message: &str) -> String {
    let defaults = toml::Table::try_from(Config::default()).expect("defaults serialise");
    for (table, keys) in entries {
        let Some(keys) = keys.as_table() else {
            continue;
        };
        for (key, value) in keys {
            let mut one = defaults.clone();
            if let Some(t) = one.get_mut(table).and_then(|t| t.as_table_mut()) {
                t.insert(key.clone(), value.clone());
            }
            if let Err(e) = toml::Value::Table(one).try_into::<Config>() {
                let line = line_of(text, table, key)
                    .map(|n| format!("line {n}: "))
                    .unwrap_or_default();
                return format!("{line}{table}.{key}: {}", e.message());
            }
        }
    }
    message.to_owned()
}

/// The line (from 1) where `table.key` is set, from the parser's own spans.
fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    type Spanned<T> = toml::Spanned<T>;
    let doc: std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<Spanned<String>, toml::Value>,
    > = toml::from_str(text).ok()?;
    let span = doc.get(table)?.keys().find(|k| k.get_ref() == key)?.span();
    Some(line_at(text, span.start))
}

/// The line (from 1) that byte `offset` of `text` is on.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}
