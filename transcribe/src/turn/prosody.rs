//! The prosody signal: Smart Turn v3.2, a Whisper-tiny encoder with a classifier that
//! hears from the voice (pitch, pace, a trailing-off tone) whether a turn sounds complete.
//!
//! Its input is [`mel::LogMel`]'s features of the last 8 s; its output the probability
//! that the turn is complete (Pipecat calls above 0.5 complete). The model runs on ONNX
//! Runtime, loaded at run time from a library file (`ort` with `load-dynamic`): nothing
//! native is linked or downloaded when yazses is built, and without the files `smart`
//! runs on the words alone.
//!
//! Why ONNX Runtime and not `tract` (pure Rust): the published int8 model's output moves
//! with float rounding, so only ONNX Runtime gives Pipecat's numbers, and tract on a
//! float-activation graph is stable but over the time a check may take
//! (docs/decisions/2026-12-04-end-of-turn.md, "Why the runtimes disagree on Smart Turn").
//!
//! Both files live in the models directory, put there by `yazses model fetch
//! smart-turn`, and are checked against their published size and SHA-256 at every load.
//! `YAZSES_ONNXRUNTIME` names another ONNX Runtime library (1.17 or later), for a
//! platform yazses knows no published build for; that one is not hash-checked.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::model::packed::{self, VerifyError};

use super::mel::{self, LogMel};

/// The environment variable naming an ONNX Runtime library to use instead of the
/// fetched one.
pub const RUNTIME_ENV: &str = "YAZSES_ONNXRUNTIME";

/// Why the prosody model cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ProsodyError {
    /// The model or the fetched runtime is missing, truncated or not the published file.
    #[error(transparent)]
    File(#[from] VerifyError),
    /// No ONNX Runtime build is known for this platform and none was named.
    #[error(
        "no ONNX Runtime build for this platform is published with yazses; install ONNX Runtime 1.17 or later and set {RUNTIME_ENV} to its library"
    )]
    NoRuntime,
    /// The runtime library would not load.
    #[error("cannot load the ONNX Runtime library {path}: {reason}")]
    Runtime {
        /// The library.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The runtime would not take the model.
    #[error("ONNX Runtime cannot load the model {path}: {reason}")]
    Model {
        /// The model file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A run failed or gave no probability.
    #[error("the Smart Turn model failed: {0}")]
    Run(String),
}

/// Where the model and the runtime library are looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    /// The model.
    pub model: PathBuf,
    /// The runtime library, or none known for this platform.
    pub runtime: Option<PathBuf>,
    /// Whether the runtime is the fetched one (then its hash is checked).
    pub fetched_runtime: bool,
}

impl Files {
    /// The installed files: both in the models directory, unless [`RUNTIME_ENV`] names a
    /// runtime.
    pub fn installed() -> Files {
        let dir = crate::model::models_dir();
        let named = std::env::var_os(RUNTIME_ENV).filter(|v| !v.is_empty());
        Files {
            model: dir.join(packed::SMART_TURN.file),
            fetched_runtime: named.is_none(),
            runtime: named
                .map(PathBuf::from)
                .or_else(|| packed::onnxruntime().map(|p| dir.join(p.file))),
        }
    }
}

/// One process has one ONNX Runtime environment, made at the first load and kept.
static ENVIRONMENT: OnceLock<Result<ort::environment::Environment, RuntimeFailure>> =
    OnceLock::new();

/// Why the ONNX Runtime library would not load or start.
type RuntimeFailure = Box<dyn std::error::Error + Send + Sync>;

/// The Smart Turn model, loaded and ready to run on one thread.
pub struct SmartTurn {
    session: ort::session::Session,
    mel: LogMel,
}

impl SmartTurn {
    /// Checks and loads the model and the runtime named by `files`.
    pub fn load(files: &Files) -> Result<SmartTurn, ProsodyError> {
        packed::verify(&packed::SMART_TURN, &files.model)?;
        let runtime = files.runtime.as_ref().ok_or(ProsodyError::NoRuntime)?;
        if files.fetched_runtime {
            let lib = packed::onnxruntime().ok_or(ProsodyError::NoRuntime)?;
            packed::verify(lib, runtime)?;
        }
        let environment = ENVIRONMENT
            .get_or_init(|| Ok(ort::init_from(runtime)?.with_name("yazses").build()?))
            .as_ref()
            .map_err(|e| ProsodyError::Runtime {
                path: runtime.clone(),
                reason: e.to_string(),
            })?;
        // As Pipecat runs it: sequential, one thread, every graph optimisation.
        let session = || -> Result<ort::session::Session, ort::Error> {
            ort::session::Session::builder(environment)?
                .with_optimization_level(ort::session::builder::GraphOptimizationLevel::All)?
                .with_intra_threads(1)?
                .with_inter_threads(1)?
                .with_intra_op_spinning(false)?
                .commit_from_file(&files.model)
        };
        let session = session().map_err(|e| ProsodyError::Model {
            path: files.model.clone(),
            reason: e.to_string(),
        })?;
        Ok(SmartTurn {
            session,
            mel: LogMel::new(),
        })
    }

    /// The probability that the turn in `audio` (16 kHz, the whole capture so far) is
    /// complete.
    pub fn probability(&mut self, audio: &[i16]) -> Result<f32, ProsodyError> {
        let features = self.mel.features(audio);
        self.probability_of_features(features)
    }

    /// The model's probability over `features` made elsewhere (`mel::BANDS` rows of
    /// `mel::FRAMES` values): the model alone, so it can be held against another program's
    /// run of the same model on the same input.
    pub fn probability_of_features(&mut self, features: Vec<f32>) -> Result<f32, ProsodyError> {
        if features.len() != mel::BANDS * mel::FRAMES {
            return Err(ProsodyError::Run(format!(
                "{} feature values, expected {} ({} bands of {} frames)",
                features.len(),
                mel::BANDS * mel::FRAMES,
                mel::BANDS,
                mel::FRAMES
            )));
        }
        let input = ort::value::Tensor::from_array(([1usize, mel::BANDS, mel::FRAMES], features))
            .map_err(|e| ProsodyError::Run(e.to_string()))?;
        let outputs = self
            .session
            .run(ort::inputs!["input_features" => input])
            .map_err(|e| ProsodyError::Run(e.to_string()))?;
        let (_, value) = outputs
            .iter()
            .next()
            .ok_or_else(|| ProsodyError::Run("no output".into()))?;
        let (_, values) = value
            .try_extract_tensor::<f32>()
            .map_err(|e| ProsodyError::Run(e.to_string()))?;
        match values.first() {
            Some(&p) if (0.0..=1.0).contains(&p) => Ok(p),
            Some(p) => Err(ProsodyError::Run(format!("{p} is not a probability"))),
            None => Err(ProsodyError::Run("an empty output".into())),
        }
    }
}

/// A loaded model, shared by the checks of one capture.
pub type Shared = Arc<Mutex<SmartTurn>>;

/// The installed model, loaded at the first call and kept for the process's later
/// captures (an MCP server's next question). A missing or bad file is looked at again
/// next time, so files fetched while a server runs are picked up; a runtime library that
/// was found but would not load is not tried again before the process restarts.
pub fn load_installed() -> Result<Shared, ProsodyError> {
    static LOADED: Mutex<Option<Shared>> = Mutex::new(None);
    // A load that panicked stored nothing: the slot is still either empty or a model.
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(model) = loaded.as_ref() {
        return Ok(model.clone());
    }
    let model = Arc::new(Mutex::new(SmartTurn::load(&Files::installed())?));
    Ok(loaded.insert(model).clone())
}

/// The probability of `model` over `audio`, for a check's thread.
pub fn probability_of(model: &Shared, audio: &[i16]) -> Result<f32, ProsodyError> {
    let mut model = model
        .lock()
        .map_err(|_| ProsodyError::Run("an earlier run stopped unexpectedly".into()))?;
    model.probability(audio)
}
