//! `yazses model`: list, fetch, locate and import whisper models.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::print;
use crate::model;

/// The name `yazses model fetch` installs the end-of-turn prosody model under.
const SMART_TURN: &str = "smart-turn";

/// `yazses model ...`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The official models, their sizes, and which are installed.
    List,
    /// Download an official model, verify its SHA-256, and install it; `smart-turn` is
    /// the end-of-turn prosody model and the ONNX Runtime library it runs on.
    Fetch {
        /// The model's name, such as tiny.en, base.en-q5_1 or smart-turn.
        name: String,
    },
    /// Print where a model's file is (or the models directory, without a name).
    Path {
        /// The model's name.
        name: Option<String>,
    },
    /// Convert a faster-whisper (CTranslate2) model directory into a ggml model.
    Import {
        /// The directory holding model.bin, config.json and vocabulary.txt (or tokenizer.json).
        dir: PathBuf,
        /// The name to install it under (then `--model NAME` uses it).
        #[arg(long)]
        name: String,
        /// Write here instead of the models directory.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// How to store the weight matrices: f16 (whisper.cpp's own layout) or q8_0 (half
        /// the size, and faster: a spoken answer is transcribed in about 0.8x the time).
        #[arg(long, value_enum, default_value_t)]
        weights: model::import::Weights,
    },
}

pub(super) fn run(cmd: ModelCommand) -> anyhow::Result<()> {
    let out = match cmd {
        ModelCommand::List => list(),
        ModelCommand::Fetch { name } if name == SMART_TURN => fetch_smart_turn()?,
        ModelCommand::Fetch { name } => fetch(&name)?,
        ModelCommand::Path { name } => {
            let path = match name {
                Some(n) => model::resolve(&n)?,
                None => model::models_dir(),
            };
            format!("{}\n", path.display())
        }
        ModelCommand::Import {
            dir,
            name,
            output,
            weights,
        } => import(&dir, &name, output, weights)?,
    };
    print(&out)
}

/// `model list`: the official models, the Smart Turn model, then the imported ones, each
/// with whether it is installed and usable.
fn list() -> String {
    let mut out = String::new();
    let installed = model::installed();
    out.push_str(&format!(
        "models directory: {}\n",
        model::models_dir().display()
    ));
    out.push_str(&format!(
        "{:<14} {:>9}  {:<12} {}\n",
        "NAME", "SIZE", "LANGUAGES", "STATUS"
    ));
    for m in model::CATALOG {
        let status = match installed.iter().find(|i| i.name == m.name) {
            Some(i) if i.bytes == m.bytes => "installed".to_owned(),
            Some(i) => format!(
                "installed ({} MB, not the official file)",
                i.bytes / 1_000_000
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "{:<14} {:>6} MB  {:<12} {}\n",
            m.name,
            m.bytes / 1_000_000,
            if m.multilingual {
                "multilingual"
            } else {
                "English"
            },
            status
        ));
    }
    let dir = model::models_dir();
    let mut parts = vec![&model::packed::SMART_TURN];
    parts.extend(model::packed::onnxruntime());
    let status = match parts
        .iter()
        .map(|p| model::packed::verify(p, &dir.join(p.file)))
        .find_map(Result::err)
    {
        None => "installed".to_owned(),
        Some(model::packed::VerifyError::Missing { .. }) => String::new(),
        Some(e) => format!("not usable: {e}"),
    };
    out.push_str(&format!(
        "{:<14} {:>6} MB  {:<12} {}\n",
        SMART_TURN,
        parts.iter().map(|p| p.bytes).sum::<u64>() / 1_000_000,
        "end of turn",
        status
    ));
    for i in installed.iter().filter(|i| model::known(&i.name).is_none()) {
        // The file's own header says what it is; a damaged one says why not.
        let (languages, status) = match model::ggml::check_file(&i.path) {
            Ok(file) => (
                if file.hparams.multilingual() {
                    "multilingual"
                } else {
                    "English"
                },
                format!(
                    "installed (imported, {})",
                    model::ggml::weight_type_name(file.hparams.ftype)
                ),
            ),
            Err(e) => ("?", format!("not usable: {e}")),
        };
        out.push_str(&format!(
            "{:<14} {:>6} MB  {:<12} {status}\n",
            i.name,
            i.bytes / 1_000_000,
            languages
        ));
    }
    out
}

/// `model fetch smart-turn`: the model and, where one is published, ONNX Runtime.
fn fetch_smart_turn() -> anyhow::Result<String> {
    let mut out = String::new();
    let dir = model::models_dir();
    let runtime = model::packed::onnxruntime();
    let path = model::packed::fetch(&model::packed::SMART_TURN, &dir, true)?;
    out.push_str(&format!("{}\n", path.display()));
    match runtime {
        Some(lib) => {
            let path = model::packed::fetch(lib, &dir, true)?;
            out.push_str(&format!("{}\n", path.display()));
        }
        None => eprintln!(
            "yazses: no ONNX Runtime build for this platform is published with yazses; install ONNX Runtime 1.17 or later and set {} to its library",
            crate::turn::prosody::RUNTIME_ENV
        ),
    }
    Ok(out)
}

/// `model fetch NAME` for an official whisper model.
fn fetch(name: &str) -> anyhow::Result<String> {
    let known = model::known(name).ok_or_else(|| {
        let names: Vec<_> = model::CATALOG.iter().map(|m| m.name).collect();
        anyhow::anyhow!(
            "{name:?} is not an official model; choose one of {}, or {SMART_TURN}",
            names.join(", ")
        )
    })?;
    let base = std::env::var("YAZSES_MODEL_BASE_URL")
        .unwrap_or_else(|_| model::OFFICIAL_BASE_URL.to_owned());
    let path = model::fetch::fetch(known, &base, &model::models_dir(), true)?;
    Ok(format!("{}\n", path.display()))
}

/// `model import DIR --name NAME`.
fn import(
    dir: &Path,
    name: &str,
    output: Option<PathBuf>,
    weights: model::import::Weights,
) -> anyhow::Result<String> {
    if !model::valid_name(name) {
        anyhow::bail!("{name:?} is not a usable model name (letters, digits, '.', '-' and '_')");
    }
    let dest = output.unwrap_or_else(|| model::models_dir().join(model::file_name(name)));
    let report = model::import::import_dir(dir, &dest, weights)?;
    let hp = report.hparams;
    tracing::info!(?hp, tensors = report.tensors, "imported");
    eprintln!(
        "imported a {}-layer/{}-wide whisper model ({} from {}, {} tokens, {} tensors, {} MB)",
        hp.n_audio_layer,
        hp.n_audio_state,
        if hp.multilingual() {
            "multilingual"
        } else {
            "English-only"
        },
        report.source_dtype,
        report.tokens,
        report.tensors,
        report.bytes / 1_000_000
    );
    Ok(format!("{}\n", dest.display()))
}
