//! `yazses mcp-server`: the MCP server over stdio. Tool definitions and handlers only;
//! every handler calls the same library function the CLI calls
//! ([`transcribe::transcribe_file`], [`AskHuman::ask`]), so a served call and a CLI call
//! succeed and refuse for the same reasons.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, ServerHandler, tool, tool_handler, tool_router};

pub mod lines;
mod schema;
mod stdio;
mod types;

pub use stdio::serve_stdio;
pub use types::{AskParams, Language, SegmentOut, TranscribeOutput, TranscribeParams};

use crate::ask::{AskHuman, MAX_QUESTION_CHARS};
use crate::config::Config;
use crate::transcribe::gate::Waiting;
use crate::transcribe::{self, Engine, ModelError, Options, Progress, Transcriber};

/// The model, loaded on first use and kept.
#[derive(Default)]
struct Models {
    engine: Mutex<Option<Arc<Engine>>>,
}

impl Models {
    fn get(&self, config: &Config) -> Result<Arc<Engine>, ModelError> {
        // A load that panicked stored nothing: the slot is still either empty or a model.
        let mut slot = self.engine.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let engine = Engine::load_named(&config.transcribe.model)?;
        let engine = Arc::new(engine.with_places(config.parallel()));
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
pub const TRANSCRIBE_DESCRIPTION: &str = "Transcribe an audio file that is already on this machine into text, with timed segments. Use it for recordings the user or another tool has saved (WAV, FLAC, MP3, Ogg/Vorbis; any sample rate). Do not use it to hear the user live: that is ask_human. It only reads the file, on this machine; nothing is uploaded. A file without speech returns heard = false and empty text (nothing is invented). Refusals come back as error results that say why: missing or unreadable files, directories and devices, damaged files, files over the size or duration cap, languages the model does not speak. A file whose tail is damaged or missing is refused, saying where it stops, unless partial is true (then cut_short_ms says where the transcript ends). Long files take a while (about 20 times faster than real time with the default model). A few files are transcribed at once (as many as the cores allow); more calls wait their turn, in order. Progress, including the wait, is reported when the request carries a progress token, and cancelling the request stops the work, waiting or not. The same file gives the same text every time. Parameters: path (required), language (optional: a language code or auto, the default), partial (optional, default false).";

/// `ask_human`'s description.
pub const ASK_HUMAN_DESCRIPTION: &str = "Ask the user a question out loud and return the spoken answer as text. Use it only for a decision or a fact that only the user has, when they are likely at the computer; prefer asking in text when you can. The question is spoken as \"<your client's title, else its name> asks: <question>\" through the speakers (asked_as in the result says which) (and printed on the server's stderr); then the microphone listens until the user stops talking (1.2 s of silence after a finished sentence; 0.45 s after a whole answer to a yes-or-no question or one that names the choices, such as \"It is.\" or \"Tomorrow.\" but not a bare \"Yes.\", so ask such closed questions when you can; up to 3 s through a pause mid-sentence), nobody starts within 8 s (heard = false, answer empty), or timeout_s passes, and is released at once. The answer is returned to you only: it is never typed, pasted or sent anywhere else. It interrupts a person, so it is rationed: a few heard answers per hour (3 by default; unheard ones are free), never while the user is dictating, one question at a time across all of the user's agents (a question waits up to 20 s for another to finish; progress names each step: who holds the microphone while it waits, saying the question, listening, transcribing). Refusals come back as error results that say when to try again; do not retry sooner. Parameters: question (required, 1 to 500 characters, one short question), timeout_s (optional, 1 to 120 s, default 30; many clients stop waiting after about 60 s, so above 50 the call is refused unless the request carries a progress token, which the server then keeps alive with progress notifications).";

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
        for route in tool_router.map.values_mut() {
            let tool = &mut route.attr;
            schema::portable(Arc::make_mut(&mut tool.input_schema));
            if let Some(output) = tool.output_schema.as_mut() {
                schema::portable(Arc::make_mut(output));
            }
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
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(progress) = rx.recv().await {
                    // Progress counts seconds of the recording transcribed (or skipped
                    // as silence), out of its length when the file's header gives one.
                    let p = match progress {
                        Progress::Done {
                            done_ms, total_ms, ..
                        } => {
                            let mut p = ProgressNotificationParam::new(
                                token.clone(),
                                done_ms as f64 / 1000.0,
                            );
                            p.total = total_ms.map(|t| t as f64 / 1000.0);
                            p
                        }
                        Progress::Waiting(w) => {
                            let mut p = ProgressNotificationParam::new(token.clone(), 0.0);
                            p.message = Some(waiting_words(w));
                            p
                        }
                    };
                    let _ = peer.notify_progress(p).await;
                }
            });
            tx
        });
        let config = self.config.clone();
        let models = self.models.clone();
        let result = tokio::task::spawn_blocking(move || {
            let engine = models.get(&config).map_err(|e| e.to_string())?;
            let options = Options {
                language: params.language.map(Language::code),
                threads: config.transcribe.threads,
                beam_size: usize::from(config.transcribe.beam_size),
                limits: crate::audio::Limits {
                    accept_partial: params.partial,
                    ..config.limits()
                },
                cancel: Some(cancel),
                fit_context: false,
                prompt: None,
            };
            let path = PathBuf::from(&params.path);
            transcribe::transcribe_file(&engine, &path, &options, move |p| {
                if let Some(tx) = &progress {
                    let _ = tx.send(p);
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
            cut_short_ms: result.cut_short_ms,
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
        // Progress goes to a client that asked for it: a word at each step (waiting for
        // the microphone, saying the question, listening, transcribing), and the same word
        // again every 5 s while a step lasts, which keeps clients with a call limit waiting.
        let (steps, mut steps_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let heartbeat = token.map(|token| {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                let period = std::time::Duration::from_secs(5);
                let started = tokio::time::Instant::now();
                let mut message = "starting".to_owned();
                let mut sent = 0.0f64;
                let mut next = started + period;
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep_until(next) => {}
                        m = steps_rx.recv() => match m {
                            Some(m) if m != message => message = m,
                            Some(_) => continue,
                            None => break,
                        },
                    }
                    next = tokio::time::Instant::now() + period;
                    // Progress must increase from one notification to the next.
                    let progress = started.elapsed().as_secs_f64().max(sent + 0.001);
                    sent = progress;
                    let mut p = ProgressNotificationParam::new(token.clone(), progress);
                    p.message = Some(message.clone());
                    if peer.notify_progress(p).await.is_err() {
                        break;
                    }
                }
            })
        });
        // The client's display name when it gives one ("Claude Code"), else its short name.
        let caller = context
            .client_info()
            .map(|i| i.title.filter(|t| !t.trim().is_empty()).unwrap_or(i.name))
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
                move || Ok(models.get(&config)? as Arc<dyn Transcriber>),
                &cancel,
                |step| {
                    let message = step.describe();
                    if let crate::ask::Step::Waiting(w) = step {
                        tracing::info!(ahead = w.ahead, "{message}");
                    }
                    let _ = steps.send(message);
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

/// A progress message for a file waiting its turn.
fn waiting_words(w: Waiting) -> String {
    let ahead = match w.ahead {
        0 => String::new(),
        1 => " and 1 more waiting ahead".into(),
        n => format!(" and {n} more waiting ahead"),
    };
    format!(
        "waiting: {} transcription{} running{ahead}",
        w.running,
        if w.running == 1 { "" } else { "s" }
    )
}

/// A flag set when the client cancels the request (`notifications/cancelled`).
fn cancel_flag(context: &RequestContext<RoleServer>) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    let ct = context.ct.clone();
    tokio::spawn(async move {
        ct.cancelled().await;
        // Also fires when the request is answered; only a flag the work checks.
        tracing::debug!("request finished or cancelled");
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;
    use crate::coord::{Coordinator, Purpose, RuntimeDir};
    use crate::source::FileSource;

    /// A server over an in-process duplex pipe, its `ask_human` listening to a silent
    /// recording and coordinated through a scratch runtime dir.
    fn server(dir: &std::path::Path) -> Server {
        let mut config = Config::default();
        config.mcp.ask_human = true;
        config.speak.command = vec!["true".into()];
        let ask = AskHuman::with_parts(
            config.clone(),
            Ok(Coordinator::new(RuntimeDir::at(dir).unwrap())),
            Box::new(|_| Ok(Box::new(FileSource::from_samples(vec![0; 1600], false)))),
        );
        Server::with_ask(config, ask)
    }

    #[test]
    fn both_tools_schemas_use_only_formats_json_schema_defines() {
        let dir = std::env::temp_dir().join(format!("yazses-formats-{}", std::process::id()));
        let tools = server(&dir).tools();
        assert_eq!(tools.len(), 2);
        for tool in tools {
            let input = Value::Object((*tool.input_schema).clone());
            let output = Value::Object((*tool.output_schema.clone().unwrap()).clone());
            let left = [schema::formats(&input), schema::formats(&output)].concat();
            assert!(left.is_empty(), "{}: {left:?}", tool.name);
        }
    }

    async fn call_ask_human(server: Server) -> Value {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(server_end);
        tokio::spawn(async move {
            if let Ok(service) = rmcp::ServiceExt::serve(server, (r, w)).await {
                let _ = service.waiting().await;
            }
        });
        let (cr, mut cw) = tokio::io::split(client);
        let mut lines = BufReader::new(cr).lines();
        let mut send = async |v: Value| {
            cw.write_all(format!("{v}\n").as_bytes()).await.unwrap();
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "duplex-test", "version": "1"}}}),
        )
        .await;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask_human", "arguments": {"question": "Ready?"}}}),
        )
        .await;
        let read = async {
            loop {
                let line = lines.next_line().await.unwrap().unwrap();
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["id"] == 2 {
                    return v;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("an answer within 30 s")
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("yazses-mcp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        p
    }

    // The speech command here is `true`.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread")]
    async fn ask_human_reports_how_long_it_queued_and_listened() {
        let r = call_ask_human(server(&scratch("heard"))).await;
        let sc = &r["result"]["structuredContent"];
        assert_eq!(sc["heard"], false, "{r}");
        assert_eq!(sc["stopped_because"], "no_speech", "{r}");
        assert!(sc["queued_ms"].as_u64().unwrap() < 1000, "{r}");
        assert_eq!(sc["listen_ms"], 8000, "{r}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn ask_human_is_refused_as_an_error_result_while_the_user_dictates() {
        let dir = scratch("dictating");
        let server = server(&dir);
        let _hold = crate::coord::take_now(&dir, Purpose::Dictate, "yazses dictate");
        let r = call_ask_human(server).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("The user is dictating right now (yazses dictate, dictate"),
            "{text}"
        );
    }
}
