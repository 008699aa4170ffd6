//! A minimal MCP client over a real `yazses mcp-server` process's stdio, for tests that
//! drive several servers at once (newline-delimited JSON-RPC, the initialize handshake).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// The longest a test waits for the server's next message: a server that hangs fails the
/// test instead of holding CI until its own time limit.
const NEXT_MESSAGE_WITHIN: Duration = Duration::from_secs(180);

/// One server process and its pipes.
pub struct StdioClient {
    /// The server process.
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl StdioClient {
    /// Starts `yazses --config CONFIG mcp-server` with `runtime_dir` as its
    /// `YAZSES_RUNTIME_DIR`, and completes the handshake as client `name`.
    pub fn start(config: &Path, runtime_dir: &Path, name: &str) -> StdioClient {
        StdioClient::start_with(config, runtime_dir, name, &[])
    }

    /// Like [`StdioClient::start`], with `env` set for the server too.
    pub fn start_with(
        config: &Path,
        runtime_dir: &Path,
        name: &str,
        env: &[(&str, &Path)],
    ) -> StdioClient {
        let mut child = Command::new(crate::yazses_bin())
            .envs(env.iter().copied())
            .args([
                "--config",
                config.to_str().expect("a UTF-8 path"),
                "mcp-server",
            ])
            .env("YAZSES_RUNTIME_DIR", runtime_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("yazses starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        // Lines arrive through a thread, so a wait for one can have a limit.
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = StdioClient {
            child,
            stdin,
            lines,
        };
        client.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}}),
        );
        let init = client.response(0);
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    /// Sends one message.
    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("the server reads stdin");
        stdin.flush().expect("flush");
    }

    /// Closes the server's stdin, as a client does to stop it.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends `tools/call` for `tool` with `arguments` as request `id`, with a progress
    /// token named after the id.
    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": format!("p{id}")}}}),
        );
    }

    /// Reads the next message, whatever it is.
    pub fn next_message(&mut self) -> Value {
        let line = match self.lines.recv_timeout(NEXT_MESSAGE_WITHIN) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "the server sent nothing for {} s",
                NEXT_MESSAGE_WITHIN.as_secs()
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        };
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"))
    }

    /// Reads messages until the response to `id`; the other messages on the way are
    /// returned too.
    pub fn response_with_notes(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let v = self.next_message();
            if v["id"] == id {
                return (v, notes);
            }
            notes.push(v);
        }
    }

    /// Reads messages until the response to `id`.
    pub fn response(&mut self, id: u64) -> Value {
        self.response_with_notes(id).0
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
