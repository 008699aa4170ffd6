//! `yazses mcp-server`: the MCP server over stdio. Tool definitions and handlers only;
//! every handler calls the same library function the CLI calls
//! ([`transcribe::transcribe_file`], [`AskHuman::ask`]), so a served call and a CLI call
//! succeed and refuse for the same reasons.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ask::{AskHuman, MAX_QUESTION_CHARS};
use crate::config::Config;
use crate::transcribe::{self, Engine, Options, Segment, Transcriber};

/// Spoken languages the `transcribe` tool accepts (whisper's most used), or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Language {
    Auto,
    En,
    De,
    Fr,
    Es,
    It,
    Pt,
    Nl,
    Pl,
    Ru,
    Uk,
    Tr,
    Ar,
    Fa,
    He,
    Hi,
    Zh,
    Ja,
    Ko,
    Sv,
    Da,
    No,
    Fi,
    Cs,
    El,
    Ro,
    Hu,
    Id,
    Vi,
    Th,
}

impl Language {
    fn code(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "auto".into())
    }
}

/// Arguments of `transcribe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscribeParams {
    /// Path of an audio file on this machine (WAV, FLAC, MP3 or Ogg/Vorbis; any rate and
    /// channel count). Relative paths are relative to the server's working directory.
    #[schemars(length(min = 1, max = 4096))]
    pub path: String,
    /// The spoken language, or `auto` (the default) to detect it. English-only models
    /// accept only `en` and `auto`.
    #[serde(default)]
    #[schemars(with = "Language", extend("default" = "auto"))]
    pub language: Option<Language>,
}

/// Result of `transcribe`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TranscribeOutput {
    /// The whole transcript.
    pub text: String,
    /// The transcript in timed pieces.
    pub segments: Vec<SegmentOut>,
    /// The length of the audio, in milliseconds.
    pub audio_ms: u64,
    /// Whether any speech was heard; `false` means the file holds none and `text` is empty.
    pub heard: bool,
    /// The detected or given language, with a multilingual model.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub language: Option<String>,
}

/// One timed piece of a transcript.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SegmentOut {
    /// Start, in milliseconds from the start of the audio.
    pub start_ms: u64,
    /// End, in milliseconds.
    pub end_ms: u64,
    /// The words.
    pub text: String,
}

impl From<Segment> for SegmentOut {
    fn from(s: Segment) -> Self {
        SegmentOut {
            start_ms: s.start_ms,
            end_ms: s.end_ms,
            text: s.text,
        }
    }
}

/// Arguments of `ask_human`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskParams {
    /// The question, as it should be spoken: short, one question, answerable out loud.
    #[schemars(length(min = 1, max = 500))]
    pub question: String,
    /// The longest to listen for the answer, in seconds (1 to 120, default 30). Listening
    /// ends sooner, 1.2 s after the user stops talking, or after 8 s if nobody starts.
    /// Above 50 the call needs a progress token (clients often stop waiting at 60 s).
    // Declared as a plain integer: absent means the default, and a single-type schema is
    // the portable one (the inspector's --strict check flags ["integer", "null"]).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 120), extend("default" = 30))]
    pub timeout_s: Option<u32>,
}

/// The model, loaded on first use and kept.
#[derive(Default)]
struct Models {
    engine: Mutex<Option<Arc<Engine>>>,
}

impl Models {
    fn get(&self, config: &Config) -> Result<Arc<Engine>, String> {
        let mut slot = self.engine.lock().map_err(|e| e.to_string())?;
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let path = crate::model::resolve(&config.transcribe.model).map_err(|e| e.to_string())?;
        let engine = Arc::new(Engine::load(&path).map_err(|e| e.to_string())?);
        *slot = Some(engine.clone());
        Ok(engine)
    }
}

/// The server: both tools, the config, the model and the `ask_human` service.
#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
    config: Arc<Config>,
    models: Arc<Models>,
    ask: Arc<AskHuman>,
}

/// `transcribe`'s description: purpose, when to use it and when not, behaviour beyond the
/// annotations, parameters.
pub const TRANSCRIBE_DESCRIPTION: &str = "Transcribe an audio file that is already on this machine into text, with timed segments. Use it for recordings the user or another tool has saved (WAV, FLAC, MP3, Ogg/Vorbis; any sample rate). Do not use it to hear the user live: that is ask_human. It only reads the file, on this machine; nothing is uploaded. A file without speech returns heard = false and empty text (nothing is invented). Refusals come back as error results that say why: missing or unreadable files, directories and devices, damaged files, files over the size or duration cap, languages the model does not speak. Long files take a while (about 20 times faster than real time with the default model); progress is reported when the request carries a progress token, and cancelling the request stops the work. Parameters: path (required), language (optional: a language code or auto, the default).";

/// `ask_human`'s description.
pub const ASK_HUMAN_DESCRIPTION: &str = "Ask the user a question out loud and return the spoken answer as text. Use it only for a decision or a fact that only the user has, when they are likely at the computer; prefer asking in text when you can. The question is spoken as \"<your client's name> asks: <question>\" through the speakers (and printed on the server's stderr); then the microphone listens until the user stops talking (1.2 s of silence), nobody starts within 8 s (heard = false, answer empty), or timeout_s passes, and is released at once. The answer is returned to you only: it is never typed, pasted or sent anywhere else. It interrupts a person, so it is rationed: a few heard answers per hour (3 by default; unheard ones are free), never while the user is dictating, one question at a time across all of the user's agents (a question waits up to 20 s for another to finish, with progress saying who holds the microphone). Refusals come back as error results that say when to try again; do not retry sooner. Parameters: question (required, 1 to 500 characters, one short question), timeout_s (optional, 1 to 120 s, default 30; many clients stop waiting after about 60 s, so above 50 the call is refused unless the request carries a progress token, which the server then keeps alive with progress notifications).";

/// The longest `timeout_s` accepted without a progress token: listening plus speaking and
/// transcribing stays under the 60 s many clients allow a tool call.
pub const SAFE_TIMEOUT_S: u32 = 50;

/// What `mcp-server --help` and `docs/tools.md` say about the tools; pinned against the
/// live tool list by a test.
pub const TOOLS_HELP: &str = "Tools: transcribe (an audio file on this machine -> its text) and ask_human (ask the user a question out loud and return the spoken answer). ask_human appears only when [mcp] ask_human = true in the config file.";

#[tool_router(router = tool_router)]
impl Server {
    /// A server with `config`, coordinated with the user's other yazses processes through
    /// the runtime dir the environment names.
    pub fn new(config: Config) -> Server {
        let ask = AskHuman::new(config.clone());
        Server::with_ask(config, ask)
    }

    /// A server with its `ask_human` service given (in-process tests pass one with a
    /// scratch runtime dir and a fake microphone).
    pub fn with_ask(config: Config, ask: AskHuman) -> Server {
        let mut tool_router = Self::tool_router();
        if !config.mcp.ask_human {
            tool_router.remove_route("ask_human");
        }
        Server {
            tool_router,
            ask: Arc::new(ask),
            config: Arc::new(config),
            models: Arc::default(),
        }
    }

    /// The `transcribe` tool.
    #[tool(
        name = "transcribe",
        description = TRANSCRIBE_DESCRIPTION,
        annotations(
            title = "Transcribe an audio file",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn transcribe(
        &self,
        Parameters(params): Parameters<TranscribeParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<TranscribeOutput>, String> {
        let cancel = cancel_flag(&context);
        let progress = context.meta.get_progress_token().map(|token| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<i32>();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(pct) = rx.recv().await {
                    let mut p = ProgressNotificationParam::new(token.clone(), f64::from(pct));
                    p.total = Some(100.0);
                    let _ = peer.notify_progress(p).await;
                }
            });
            tx
        });
        let config = self.config.clone();
        let models = self.models.clone();
        let result = tokio::task::spawn_blocking(move || {
            let engine = models.get(&config)?;
            let options = Options {
                language: params.language.map(Language::code),
                threads: config.transcribe.threads,
                beam_size: usize::from(config.transcribe.beam_size),
                limits: config.limits(),
                cancel: Some(cancel),
                fit_context: false,
            };
            let path = PathBuf::from(&params.path);
            transcribe::transcribe_file(&engine, &path, &options, move |pct| {
                if let Some(tx) = &progress {
                    let _ = tx.send(pct);
                }
            })
            .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("the transcription stopped unexpectedly: {e}"))??;
        Ok(Json(TranscribeOutput {
            text: result.text,
            segments: result.segments.into_iter().map(Into::into).collect(),
            audio_ms: result.audio_ms,
            heard: result.heard,
            language: result.language,
        }))
    }

    /// The `ask_human` tool.
    #[tool(
        name = "ask_human",
        description = ASK_HUMAN_DESCRIPTION,
        annotations(
            title = "Ask the user out loud",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask_human(
        &self,
        Parameters(params): Parameters<AskParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<crate::ask::Answer>, String> {
        let timeout_s = params
            .timeout_s
            .unwrap_or(self.config.mcp.ask_human_timeout_s);
        if !(1..=120).contains(&timeout_s) {
            return Err(format!(
                "timeout_s must be 1 to 120 seconds, not {timeout_s}; many clients stop waiting after about 60 s, so use 50 or less."
            ));
        }
        if params.question.chars().count() > MAX_QUESTION_CHARS {
            return Err(format!(
                "The question is longer than {MAX_QUESTION_CHARS} characters; ask something short enough to answer out loud."
            ));
        }
        // Speaking and transcribing add a few seconds to the listening time; past about 55 s
        // in all, clients that cut tool calls at 60 s would drop the answer. A client that
        // sends a progress token gets a heartbeat instead, which keeps such clients waiting.
        let token = context.meta.get_progress_token();
        if timeout_s > SAFE_TIMEOUT_S && token.is_none() {
            return Err(format!(
                "timeout_s = {timeout_s} would likely outlast the usual 60 s limit on a tool call, and the answer would be lost; use {SAFE_TIMEOUT_S} or less, or send a progress token (the server then reports progress every few seconds while it listens)."
            ));
        }
        // Progress goes to a client that asked for it: a heartbeat every 5 s while the
        // call runs, and a word whenever the holder of the microphone changes while the
        // question waits for it.
        let (waits, mut waits_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let heartbeat = token.map(|token| {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
                let started = tokio::time::Instant::now();
                let mut message = "listening for the answer".to_owned();
                loop {
                    tokio::select! {
                        _ = tick.tick() => {}
                        Some(m) = waits_rx.recv() => message = m,
                    }
                    let mut p = ProgressNotificationParam::new(
                        token.clone(),
                        started.elapsed().as_secs_f64().floor(),
                    );
                    p.message = Some(message.clone());
                    if peer.notify_progress(p).await.is_err() {
                        break;
                    }
                }
            })
        });
        let caller = context
            .client_info()
            .map(|i| i.name)
            .unwrap_or_else(|| "An agent".into());
        let cancel = cancel_flag(&context);
        let ask = self.ask.clone();
        let config = self.config.clone();
        let models = self.models.clone();
        let result = tokio::task::spawn_blocking(move || {
            ask.ask(
                &caller,
                &params.question,
                timeout_s,
                || models.get(&config).map(|e| e as Arc<dyn Transcriber>),
                &cancel,
                |waiting| {
                    let message = match &waiting.holder {
                        Some(h) => format!(
                            "waiting for the microphone (held by {}, {})",
                            h.caller,
                            h.purpose.as_str()
                        ),
                        None => "waiting for the microphone".to_owned(),
                    };
                    tracing::info!(ahead = waiting.ahead, "{message}");
                    let _ = waits.send(message);
                },
            )
            .map(Json)
            .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("the question stopped unexpectedly: {e}"));
        if let Some(h) = heartbeat {
            h.abort();
        }
        result?
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "yazses",
    instructions = "yazses turns speech into text on this machine. transcribe: an audio file -> text. ask_human (only when enabled): ask the user a short question out loud and get the spoken answer; it is rationed, use it sparingly."
)]
impl ServerHandler for Server {}

/// A flag set when the client cancels the request (`notifications/cancelled`).
fn cancel_flag(context: &RequestContext<RoleServer>) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    let ct = context.ct.clone();
    tokio::spawn(async move {
        ct.cancelled().await;
        tracing::info!("request cancelled by the client");
        set.store(true, Ordering::SeqCst);
    });
    flag
}

impl Server {
    /// The tools this server lists, as `tools/list` returns them.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
///
/// stdout is guarded at the file-descriptor level before anything else runs: the
/// transport writes to a duplicate of fd 1, and fd 1 itself is pointed at stderr, so a
/// stray print, whisper.cpp, or a child process (the speech command) cannot put a byte
/// into the JSON-RPC stream.
pub fn serve_stdio(config: Config) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        let (reader, writer) = guarded_stdio()?;
        let server = Server::new(config);
        tracing::info!(
            tools = ?server.tools().iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
            "serving MCP on stdio"
        );
        let service = rmcp::ServiceExt::serve(server, (reader, writer))
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        let reason = service.waiting().await?;
        tracing::info!(?reason, "MCP session ended");
        anyhow::Ok(())
    });
    // A blocking stdin read cannot be cancelled; do not wait for it at exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

fn guarded_stdio() -> anyhow::Result<(rmcp::transport::StdioReader, Writer)> {
    use std::os::fd::AsFd;
    // The reader first: on Linux it reopens stdin's pipe for non-blocking reads.
    let (reader, unused_writer) = rmcp::transport::stdio_pipes();
    drop(unused_writer);
    let out = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    let is_fifo = rustix::fs::fstat(&out)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo)
        .unwrap_or(false);
    let writer: Writer = if is_fifo {
        Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(out)?)
    } else {
        Box::new(tokio::fs::File::from_std(std::fs::File::from(out)))
    };
    Ok((reader, writer))
}
