//! The stdio transport's line discipline, in front of the MCP SDK: every line a client
//! sends is either a JSON-RPC message, which goes on to the SDK, or gets an error reply
//! that says what was wrong with it, so a client never waits for an answer to a line that
//! was silently dropped. Per JSON-RPC 2.0: a line that is not JSON (or not UTF-8, or over
//! [`MAX_LINE_BYTES`]) is a parse error (-32700); JSON that is not a message the server
//! reads is an invalid request (-32600). Both carry the request's `id` when it can be
//! read, else `null`. Blank lines are ignored.
//!
//! It also keeps count of the requests the SDK has not answered yet ([`InFlight`]), so
//! that a client that sends its last request and closes its side at once (a script piping
//! requests in) still gets every answer: the SDK sees the end of input only once they
//! are out. A question to a person is the exception: the end of input is also how a
//! client stops its server, and a question nobody will take the answer of is not asked.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

/// The requests passed to the SDK and not yet answered (nor cancelled), by id.
#[derive(Clone, Debug)]
pub struct InFlight(Arc<watch::Sender<HashMap<String, Pending>>>);

/// A request waiting for its answer.
#[derive(Clone, Debug)]
struct Pending {
    /// Its id, as the client wrote it.
    id: Value,
    /// Whether it asks a person something (`ask_human`).
    asks_person: bool,
}

impl Default for InFlight {
    fn default() -> InFlight {
        InFlight(Arc::new(watch::Sender::new(HashMap::new())))
    }
}

impl InFlight {
    /// How many requests wait for their answer.
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    /// Whether every request has been answered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns once every request has been answered or cancelled.
    pub async fn settled(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(HashMap::is_empty).await;
    }

    /// Takes the questions to a person out of the wait and returns the cancellations
    /// that stop them, one message each for the SDK.
    pub fn cancel_questions(&self, reason: &str) -> Vec<Value> {
        let mut cancelled = Vec::new();
        self.0.send_if_modified(|pending| {
            pending.retain(|_, p| {
                if p.asks_person {
                    cancelled.push(json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": p.id, "reason": reason},
                    }));
                }
                !p.asks_person
            });
            !cancelled.is_empty()
        });
        cancelled
    }

    /// Notes a message the client sent: a request starts waiting; a cancellation ends
    /// the wait of the request it names (a cancelled request gets no answer).
    fn sent(&self, message: &Value) {
        let method = message.get("method").and_then(Value::as_str);
        if method == Some("notifications/cancelled") {
            if let Some(id) = message.pointer("/params/requestId") {
                self.0.send_modify(|s| {
                    s.remove(&id.to_string());
                });
            }
        } else if method.is_some()
            && let Some(id) = message.get("id")
        {
            let asks_person = method == Some("tools/call")
                && message.pointer("/params/name").and_then(Value::as_str) == Some("ask_human");
            self.0.send_modify(|s| {
                s.insert(
                    id.to_string(),
                    Pending {
                        id: id.clone(),
                        asks_person,
                    },
                );
            });
        }
    }

    /// Notes a message the server wrote: an answer (a result or an error with an id).
    fn answered(&self, message: &Value) {
        if let Some(error) = message.get("error") {
            let id = message
                .get("id")
                .map(ToString::to_string)
                .unwrap_or_default();
            let code = error.get("code").and_then(serde_json::Value::as_i64);
            let reason = error.get("message").and_then(serde_json::Value::as_str);
            tracing::warn!(
                id,
                code,
                "refused a request: {}",
                reason.unwrap_or("no reason given")
            );
        }
        if message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some())
            && let Some(id) = message.get("id")
        {
            self.0
                .send_if_modified(|s| s.remove(&id.to_string()).is_some());
        }
    }
}

/// The longest line read, newline excluded: 4 MiB. A longer one is skipped to its end and
/// answered with a parse error.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// What one line of input is.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// Nothing but whitespace.
    Blank,
    /// A JSON-RPC message for the SDK.
    Message,
    /// Not a message: the error reply to send instead.
    Reply(Value),
}

/// Classifies one line (without its newline). `too_long` says it was cut at the limit.
pub fn classify(line: &[u8], too_long: bool) -> Line {
    if too_long {
        return Line::Reply(error(
            Value::Null,
            -32700,
            &format!(
                "Parse error: the line is longer than {} MiB",
                MAX_LINE_BYTES >> 20
            ),
        ));
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Line::Reply(error(
            Value::Null,
            -32700,
            "Parse error: the line is not valid UTF-8",
        ));
    };
    if text.trim().is_empty() {
        return Line::Blank;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Line::Reply(error(
                Value::Null,
                -32700,
                &format!("Parse error: the line is not JSON ({e})"),
            ));
        }
    };
    // What the SDK itself decodes each line into: anything else it would drop unanswered.
    match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()) {
        Ok(_) => Line::Message,
        Err(e) => {
            let id = match value.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            Line::Reply(error(
                id,
                -32600,
                &format!("Invalid Request: not a JSON-RPC 2.0 message this server reads ({e})"),
            ))
        }
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Reads lines from `input`, passes messages to `to_sdk` (noting the requests in
/// `in_flight`) and error replies to `replies`. Returns at the end of input or when the
/// SDK stops reading; closing `to_sdk`, which ends the session, is the caller's.
pub async fn filter(
    input: impl AsyncRead + Unpin,
    mut to_sdk: impl AsyncWrite + Unpin,
    replies: mpsc::UnboundedSender<Value>,
    in_flight: &InFlight,
) {
    let mut input = BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let (ended, too_long) = match read_line(&mut input, &mut line).await {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!(error = %e, "reading stdin failed; ending the session");
                break;
            }
        };
        if ended && line.is_empty() && !too_long {
            break;
        }
        match classify(&line, too_long) {
            Line::Blank => {}
            Line::Message => {
                if let Ok(message) = serde_json::from_slice::<Value>(&line) {
                    in_flight.sent(&message);
                }
                line.push(b'\n');
                if to_sdk.write_all(&line).await.is_err() {
                    break;
                }
            }
            Line::Reply(reply) => {
                tracing::warn!(
                    code = reply["error"]["code"].as_i64(),
                    "answered a line that is not a JSON-RPC message"
                );
                if replies.send(reply).is_err() {
                    break;
                }
            }
        }
        if ended {
            break;
        }
    }
    let _ = to_sdk.flush().await;
}

/// Reads up to the next newline into `line`, keeping at most [`MAX_LINE_BYTES`]; returns
/// (end of input reached, the line was longer than the limit).
async fn read_line(
    input: &mut (impl AsyncBufReadExt + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<(bool, bool)> {
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok((true, too_long));
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(found);
        input.consume(used);
        if found {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok((false, too_long));
        }
    }
}

/// Copies the SDK's output to `out` whole line by whole line, with the error replies put
/// between lines, and strikes each answer off `in_flight`. Ends when the SDK closes its
/// output.
///
/// Replies go first whenever one is waiting: `filter` queues a line's reply before it
/// passes the next line to the SDK, so a client reads the answers to its bad lines before
/// the SDK's answer to any line it sent after them.
pub async fn merge(
    from_sdk: impl AsyncRead + Unpin,
    mut replies: mpsc::UnboundedReceiver<Value>,
    mut out: impl AsyncWrite + Unpin,
    in_flight: &InFlight,
) -> std::io::Result<()> {
    let mut from_sdk = BufReader::new(from_sdk);
    let mut line = Vec::new();
    let mut replies_open = true;
    loop {
        tokio::select! {
            biased;
            reply = replies.recv(), if replies_open => match reply {
                Some(reply) => {
                    out.write_all(format!("{reply}\n").as_bytes()).await?;
                    out.flush().await?;
                }
                None => replies_open = false,
            },
            read = from_sdk.read_until(b'\n', &mut line) => {
                if read? == 0 {
                    break;
                }
                out.write_all(&line).await?;
                out.flush().await?;
                if let Ok(message) = serde_json::from_slice::<Value>(&line) {
                    in_flight.answered(&message);
                }
                line.clear();
            }
        }
    }
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &[u8]) -> Option<i64> {
        match classify(line, false) {
            Line::Reply(r) => r["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn messages_pass_and_everything_else_gets_its_error() {
        let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        assert_eq!(classify(ping, false), Line::Message);
        assert_eq!(classify(b"   ", false), Line::Blank);
        assert_eq!(code(b"hello"), Some(-32700));
        assert_eq!(code(b"{\"jsonrpc\":\"2.0\",\"id\":1"), Some(-32700));
        assert_eq!(code(b"\xff\xfe{}"), Some(-32700));
        assert_eq!(code(b"[1, 2]"), Some(-32600));
        assert_eq!(code(b"{\"foo\": 1}"), Some(-32600));
        let Line::Reply(r) = classify(br#"{"jsonrpc":"1.0","id":"a7","method":4}"#, false) else {
            panic!()
        };
        assert_eq!(r["id"], "a7");
        let Line::Reply(r) = classify(b"", true) else {
            panic!()
        };
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_skipped_to_its_end_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend(b"\nsecond\r\nlast");
        let mut reader = BufReader::with_capacity(1024, &input[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            (false, true)
        );
        assert!(line.is_empty());
        line.clear();
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            (false, false)
        );
        assert_eq!(line, b"second");
        line.clear();
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            (true, false)
        );
        assert_eq!(line, b"last");
    }

    #[tokio::test]
    async fn a_waiting_error_reply_is_written_before_the_sdks_next_line() {
        for _ in 0..200 {
            let (tx, rx) = mpsc::unbounded_channel();
            tx.send(json!({"id": 44})).unwrap();
            drop(tx);
            let sdk = b"{\"id\":6}\n".as_slice();
            let mut out = Vec::new();
            merge(sdk, rx, &mut out, &InFlight::default())
                .await
                .unwrap();
            assert_eq!(out, b"{\"id\":44}\n{\"id\":6}\n");
        }
    }

    #[tokio::test]
    async fn a_request_waits_for_its_answer_and_a_cancelled_one_does_not() {
        let in_flight = InFlight::default();
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"two","method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
            "\n",
        );
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut to_sdk = Vec::new();
        filter(input.as_bytes(), &mut to_sdk, tx, &in_flight).await;
        assert_eq!(in_flight.len(), 2, "initialize and tools/list wait");
        let answers = concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            "\n",
        );
        let (_tx, rx) = mpsc::unbounded_channel();
        merge(answers.as_bytes(), rx, Vec::new(), &in_flight)
            .await
            .unwrap();
        assert_eq!(in_flight.len(), 1, "tools/list still waits");
        let settled = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.settled().await }
        });
        tokio::task::yield_now().await;
        assert!(!settled.is_finished());
        let (_tx, rx) = mpsc::unbounded_channel();
        let error = r#"{"jsonrpc":"2.0","id":"two","error":{"code":-1,"message":"x"}}"#;
        merge(format!("{error}\n").as_bytes(), rx, Vec::new(), &in_flight)
            .await
            .unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), settled)
            .await
            .expect("settled once the last request was answered")
            .unwrap();
    }

    #[tokio::test]
    async fn only_questions_to_a_person_are_cancelled_at_the_end_of_input() {
        let in_flight = InFlight::default();
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"ask_human"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"transcribe"}}"#,
            "\n",
        );
        let (tx, _rx) = mpsc::unbounded_channel();
        filter(input.as_bytes(), &mut Vec::new(), tx, &in_flight).await;
        let cancels = in_flight.cancel_questions("gone");
        assert_eq!(
            cancels,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": "q", "reason": "gone"}})
            ]
        );
        assert_eq!(in_flight.len(), 1, "the transcription still waits");
        assert!(in_flight.cancel_questions("gone").is_empty());
    }
}
