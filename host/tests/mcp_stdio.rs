//! `yazses mcp-server` as a process speaking newline-delimited JSON-RPC on stdio, with no
//! model: the handshake, the tool list and its docs, what `--help` says, and bad clients
//! (garbage, unknown methods, oversized lines, stdin closed mid-session).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yazses-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn config(ask_human: bool) -> PathBuf {
    let path = scratch(&format!("config-{ask_human}.toml"));
    std::fs::write(
        &path,
        format!("[mcp]\nask_human = {ask_human}\n[speak]\ncommand = [\"true\"]\n"),
    )
    .unwrap();
    path
}

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start(config: &Path) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_yazses"))
            .args(["--config", config.to_str().unwrap(), "mcp-server"])
            .env("YAZSES_RUNTIME_DIR", scratch("runtime"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Session {
            child,
            stdin,
            stdout,
        }
    }

    fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, msg: Value) {
        self.send_raw(msg.to_string().as_bytes());
    }

    /// The next message on stdout; every line must be a JSON-RPC message.
    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        v
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.recv();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        let r = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    fn tools(&mut self) -> Vec<Value> {
        let r = self.request(2, "tools/list", json!({}));
        r["result"]["tools"].as_array().unwrap().clone()
    }

    /// Closes stdin and waits for the process to exit on its own.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn the_server_names_itself_and_lists_ask_human_only_when_on() {
    let mut s = Session::start(&config(false));
    let init = s.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "yazses");
    assert_eq!(
        init["result"]["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION")
    );
    let names: Vec<_> = s.tools().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, [json!("transcribe")]);
    assert!(s.close().success());

    let mut s = Session::start(&config(true));
    s.initialize();
    let mut names: Vec<_> = s
        .tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["ask_human", "transcribe"]);
    assert!(s.close().success());
}

#[test]
fn help_names_exactly_the_tools_the_server_can_list_and_when_ask_human_appears() {
    let out = Command::new(env!("CARGO_BIN_EXE_yazses"))
        .args(["mcp-server", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let mut s = Session::start(&config(true));
    s.initialize();
    let tools = s.tools();
    s.close();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        assert!(
            help.contains(&format!("{name} (")),
            "--help does not name {name}:\n{help}"
        );
    }
    let named = help.matches(" (").count();
    assert!(named >= tools.len(), "{help}");
    assert!(
        help.contains("ask_human appears only when [mcp] ask_human = true"),
        "{help}"
    );
}

#[test]
fn docs_tools_md_is_generated_from_the_live_tool_list() {
    let mut s = Session::start(&config(true));
    s.initialize();
    let mut tools = s.tools();
    s.close();
    tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut md = String::from(
        "# The MCP tools\n\nGenerated from the live server (`yazses mcp-server` with `[mcp] ask_human = true`) by\n`UPDATE_GOLDEN=1 cargo test -p yazses --test mcp_stdio`; a test fails when this page is stale.\n\n",
    );
    md.push_str(&format!("{}\n", yazses::mcp::TOOLS_HELP));
    for t in &tools {
        let a = &t["annotations"];
        md.push_str(&format!(
            "\n## `{}`: {}\n\n{}\n\nAnnotations: read-only {}, destructive {}, idempotent {}, open world {}.\n\n### Input schema\n\n```json\n{}\n```\n",
            t["name"].as_str().unwrap(),
            a["title"].as_str().unwrap_or(""),
            t["description"].as_str().unwrap(),
            a["readOnlyHint"],
            a["destructiveHint"],
            a["idempotentHint"],
            a["openWorldHint"],
            serde_json::to_string_pretty(&t["inputSchema"]).unwrap()
        ));
        if let Some(out) = t.get("outputSchema") {
            md.push_str(&format!(
                "\n### Output schema\n\n```json\n{}\n```\n",
                serde_json::to_string_pretty(out).unwrap()
            ));
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tools.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, &md).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == md,
        "docs/tools.md is stale; regenerate it with UPDATE_GOLDEN=1 cargo test -p yazses --test mcp_stdio"
    );
}

#[test]
fn garbage_unknown_methods_and_bad_arguments_do_not_end_the_session() {
    let mut s = Session::start(&config(true));
    s.initialize();
    s.send_raw(b"this is not json {{{");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":");
    s.send_raw(&[0xff, 0xfe, 0x00, 0x41]);
    let r = s.request(10, "no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = s.request(
        11,
        "tools/call",
        json!({"name": "transcribe", "arguments": {"path": 7}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    let r = s.request(
        12,
        "tools/call",
        json!({"name": "ask_human", "arguments": {"question": "hi", "volume": 11}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    // Still alive and answering.
    assert_eq!(s.tools().len(), 2);
    assert!(s.close().success());
}

/// Issue 16, item 9: lines that were not JSON-RPC got no reply at all.
#[test]
fn every_line_that_is_not_a_message_gets_an_error_reply_and_the_session_goes_on() {
    let mut s = Session::start(&config(false));
    s.initialize();
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(16 << 20)
    );
    let bad: [(&[u8], i64, Value); 6] = [
        (b"hello, server", -32700, Value::Null),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"meth",
            -32700,
            Value::Null,
        ),
        (b"\xff\xfe\x00garbage", -32700, Value::Null),
        (huge.as_bytes(), -32700, Value::Null),
        (b"[1, 2, 3]", -32600, Value::Null),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 44, \"params\": {}}",
            -32600,
            json!(44),
        ),
    ];
    for (line, _, _) in &bad {
        s.send_raw(line);
    }
    s.send_raw(b"");
    s.send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}}));
    let mut errors = Vec::new();
    let listed = loop {
        let v = s.recv();
        if v["id"] == 6 {
            break v;
        }
        errors.push(v);
    };
    assert_eq!(errors.len(), bad.len(), "{errors:#?}");
    for ((_, code, id), reply) in bad.iter().zip(&errors) {
        assert_eq!(reply["error"]["code"], *code, "{reply}");
        assert_eq!(reply["id"], *id, "{reply}");
    }
    assert!(
        errors[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 4 MiB")
    );
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 1);
    assert!(s.close().success());
}

#[test]
fn closing_stdin_mid_call_exits_promptly() {
    let mut s = Session::start(&config(true));
    s.initialize();
    // A transcription of a missing model's file would fail fast; ask a question instead,
    // whose microphone (cpal, not built) fails, and close stdin right after sending it.
    s.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                  "params": {"name": "ask_human", "arguments": {"question": "Still there?"}}}));
    let started = Instant::now();
    let status = s.close();
    assert!(status.code().is_some(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn arguments_are_held_to_their_schema_bounds() {
    let mut s = Session::start(&config(true));
    s.initialize();
    let tools = s.tools();
    let ask = tools.iter().find(|t| t["name"] == "ask_human").unwrap();
    let props = &ask["inputSchema"]["properties"];
    let (lo, hi) = (
        props["timeout_s"]["minimum"].as_u64().unwrap(),
        props["timeout_s"]["maximum"].as_u64().unwrap(),
    );
    let max_len = props["question"]["maxLength"].as_u64().unwrap() as usize;
    let call = |s: &mut Session, id: u64, args: Value| {
        let r = s.request(
            id,
            "tools/call",
            json!({"name": "ask_human", "arguments": args}),
        );
        let refused = r.get("error").is_some() || r["result"]["isError"] == true;
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        (refused, text + r["error"]["message"].as_str().unwrap_or(""))
    };
    // Out of bounds: refused for the bound itself, before the microphone is touched.
    for (id, args) in [
        (20, json!({"question": "ok?", "timeout_s": lo - 1})),
        (21, json!({"question": "ok?", "timeout_s": hi + 1})),
        (22, json!({"question": "x".repeat(max_len + 1)})),
        (23, json!({"question": ""})),
        (24, json!({})),
        (25, json!({"question": "ok?", "timeout_s": "soon"})),
    ] {
        let (refused, text) = call(&mut s, id, args.clone());
        assert!(refused, "{args} was accepted");
        assert!(
            !text.contains("microphone"),
            "{args} got as far as the microphone: {text}"
        );
    }
    // At the bounds: accepted, so the call goes on to the microphone (cpal here, which this
    // machine may not have; either way the refusal is about the device, not the arguments).
    for (id, args) in [
        (
            30,
            json!({"question": "x".repeat(max_len), "timeout_s": hi}),
        ),
        (31, json!({"question": "ok?", "timeout_s": lo})),
    ] {
        let (_, text) = call(&mut s, id, args.clone());
        assert!(
            !text.contains("timeout_s must") && !text.contains("longer than"),
            "{args}: {text}"
        );
    }
    let transcribe = tools.iter().find(|t| t["name"] == "transcribe").unwrap();
    let langs = transcribe["inputSchema"]["$defs"]["Language"]["enum"]
        .as_array()
        .unwrap();
    assert!(langs.contains(&json!("auto")) && langs.contains(&json!("en")));
    let r = s.request(
        40,
        "tools/call",
        json!({"name": "transcribe", "arguments": {"path": "/x.wav", "language": "klingon"}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    s.close();
}

#[test]
fn a_child_writing_to_stdout_cannot_reach_the_mcp_stream() {
    // The speech command inherits the server's fd 1 and prints to it; the fd-level guard
    // has pointed fd 1 at stderr, so stdout still carries JSON-RPC only (recv() fails on
    // any other line).
    let path = scratch("noisy.toml");
    std::fs::write(
        &path,
        "[mcp]\nask_human = true\n[audio]\nsource = \"file\"\nfile = \"/nonexistent/mic.wav\"\n\
         [speak]\ncommand = [\"sh\", \"-c\", \"echo STRAY-LINE-ON-STDOUT; echo '{not json'\", \"speak\"]\n",
    )
    .unwrap();
    let mut s = Session::start(&path);
    s.initialize();
    let r = s.request(
        50,
        "tools/call",
        json!({"name": "ask_human", "arguments": {"question": "Anyone?"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("microphone"),
        "{r}"
    );
    assert_eq!(s.tools().len(), 2);
    assert!(s.close().success());
}

#[test]
fn a_wait_longer_than_clients_allow_needs_a_progress_token() {
    let mut s = Session::start(&config(true));
    s.initialize();
    let r = s.request(
        60,
        "tools/call",
        json!({"name": "ask_human", "arguments": {"question": "Ready?", "timeout_s": 90}}),
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text.contains("60 s limit") && text.contains("progress token"),
        "{text}"
    );
    // With a token the same wait is allowed (and fails later, at this machine's microphone).
    let r = s.request(
        61,
        "tools/call",
        json!({"name": "ask_human", "arguments": {"question": "Ready?", "timeout_s": 90},
               "_meta": {"progressToken": "t"}}),
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(!text.contains("60 s limit"), "{text}");
    assert!(s.close().success());
}
