//! Whisper models on disk: the known official files, where models live, and how a name
//! on the command line becomes a file.
//!
//! - [`catalog`](CATALOG): the official ggml files with their sizes and SHA-256.
//! - [`fetch`]: download one over HTTPS, resumable, verified, renamed into place.
//! - [`packed`]: the Smart Turn model and the ONNX Runtime library, each taken out of the
//!   Python wheel it is published in.
//! - [`import`]: convert a faster-whisper (CTranslate2) directory into a ggml file, reading
//!   it with [`ct2`] and writing with [`ggml`].
//!
//! Models live in `models_dir()`: `$YAZSES_MODEL_DIR` if set, else the platform data
//! directory (`~/.local/share/yazses/models` on Linux), as `ggml-<name>.bin`.

pub mod ct2;
pub mod fetch;
pub mod ggml;
pub mod import;
pub mod packed;

use std::path::{Path, PathBuf};

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "tiny.en";

/// Where the official files are published.
pub const OFFICIAL_BASE_URL: &str = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";

/// An official ggml whisper file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownModel {
    /// The name users type: `tiny.en`, `base.en-q5_1`, ...
    pub name: &'static str,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: &'static str,
    /// Whether it speaks more than English.
    pub multilingual: bool,
}

impl KnownModel {
    /// The file name in the models directory and on the server.
    pub fn file_name(&self) -> String {
        file_name(self.name)
    }

    /// The download address.
    pub fn url(&self, base: &str) -> String {
        format!("{}/{}", base.trim_end_matches('/'), self.file_name())
    }
}

/// The official files `yazses model fetch` knows, with the SHA-256 of each as published by
/// the whisper.cpp project (Git LFS object ids of ggerganov/whisper.cpp on Hugging Face).
pub const CATALOG: &[KnownModel] = &[
    KnownModel {
        name: "tiny.en",
        bytes: 77_704_715,
        sha256: "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f",
        multilingual: false,
    },
    KnownModel {
        name: "tiny.en-q5_1",
        bytes: 32_166_155,
        sha256: "c77c5766f1cef09b6b7d47f21b546cbddd4157886b3b5d6d4f709e91e66c7c2b",
        multilingual: false,
    },
    KnownModel {
        name: "tiny",
        bytes: 77_691_713,
        sha256: "be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21",
        multilingual: true,
    },
    KnownModel {
        name: "base.en",
        bytes: 147_964_211,
        sha256: "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002",
        multilingual: false,
    },
    KnownModel {
        name: "base.en-q5_1",
        bytes: 59_721_011,
        sha256: "4baf70dd0d7c4247ba2b81fafd9c01005ac77c2f9ef064e00dcf195d0e2fdd2f",
        multilingual: false,
    },
    KnownModel {
        name: "base",
        bytes: 147_951_465,
        sha256: "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe",
        multilingual: true,
    },
    KnownModel {
        name: "small.en",
        bytes: 487_614_201,
        sha256: "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d",
        multilingual: false,
    },
    KnownModel {
        name: "small",
        bytes: 487_601_967,
        sha256: "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b",
        multilingual: true,
    },
];

/// Looks a name up in [`CATALOG`].
pub fn known(name: &str) -> Option<&'static KnownModel> {
    CATALOG.iter().find(|m| m.name == name)
}

/// `ggml-<name>.bin`.
pub fn file_name(name: &str) -> String {
    format!("ggml-{name}.bin")
}

/// The directory models are fetched and imported into.
pub fn models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("YAZSES_MODEL_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("", "", "yazses")
        .map(|d| d.data_dir().join("models"))
        .unwrap_or_else(|| PathBuf::from(".yazses-models"))
}

/// Whether a model name is safe as part of a file name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// Why a `--model` value names no usable file.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// A name with no file in the models directory.
    #[error("model {name} is not installed (looked for {path}); {hint}")]
    NotInstalled {
        /// The name.
        name: String,
        /// Where it would be.
        path: PathBuf,
        /// What to run.
        hint: String,
    },
    /// A path that is not a file.
    #[error("model file {0} does not exist")]
    NoFile(PathBuf),
}

/// Turns `--model NAME|PATH` into a file: a value with a `/` or ending in `.bin` is a path;
/// anything else is a name in [`models_dir`].
pub fn resolve(model: &str) -> Result<PathBuf, ResolveError> {
    let as_path = Path::new(model);
    if model.contains(std::path::MAIN_SEPARATOR) || model.contains('/') || model.ends_with(".bin") {
        return if as_path.is_file() {
            Ok(as_path.to_owned())
        } else {
            Err(ResolveError::NoFile(as_path.to_owned()))
        };
    }
    let path = models_dir().join(file_name(model));
    if path.is_file() {
        return Ok(path);
    }
    let hint = if known(model).is_some() {
        format!(
            "run `yazses model fetch {model}`, or `yazses model import DIR --name {model}` to convert a faster-whisper model you have"
        )
    } else {
        format!(
            "it is not an official model either (`yazses model list` names them); `yazses model import DIR --name {model}` converts a faster-whisper model"
        )
    };
    Err(ResolveError::NotInstalled {
        name: model.to_owned(),
        path,
        hint,
    })
}

/// A model file found in the models directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// Its name (the file name without `ggml-` and `.bin`).
    pub name: String,
    /// Its path.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
}

/// The models in [`models_dir`], by name.
pub fn installed() -> Vec<Installed> {
    let mut out: Vec<Installed> = std::fs::read_dir(models_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            let name = file.strip_prefix("ggml-")?.strip_suffix(".bin")?.to_owned();
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some(Installed {
                name,
                path: e.path(),
                bytes: meta.len(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_names_are_unique_valid_and_hashes_are_sha256_hex() {
        for (i, m) in CATALOG.iter().enumerate() {
            assert!(valid_name(m.name), "{}", m.name);
            assert_eq!(m.sha256.len(), 64);
            assert!(
                m.sha256
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert!(CATALOG[..i].iter().all(|o| o.name != m.name));
            assert_eq!(m.multilingual, !m.name.contains(".en"));
        }
        assert!(known(DEFAULT_MODEL).is_some());
    }

    #[test]
    fn names_that_escape_the_directory_are_not_valid() {
        for bad in ["", "../x", "a/b", ".hidden", "a b", "x\0"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        assert!(valid_name("tiny.en-q5_1"));
    }
}
