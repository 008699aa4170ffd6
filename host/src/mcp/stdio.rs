//! The stdio transport, with stdout guarded at the file-descriptor level.

use crate::config::Config;

use super::Server;

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
        // Our line discipline sits between stdio and the SDK: it answers what is not a
        // message, and passes the rest on.
        let (filtered, sdk_in) = tokio::io::duplex(1 << 16);
        let (sdk_out, merged) = tokio::io::duplex(1 << 16);
        let (replies, replies_rx) = tokio::sync::mpsc::unbounded_channel();
        let in_flight = super::lines::InFlight::default();
        tokio::spawn(read_until_answered(
            reader,
            filtered,
            replies,
            in_flight.clone(),
        ));
        let output = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { super::lines::merge(merged, replies_rx, writer, &in_flight).await }
        });
        let service = rmcp::ServiceExt::serve(server, (sdk_in, sdk_out))
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        // Clients stop servers by closing stdin, and some then send SIGTERM: either way
        // the session ends here and the clean-up below runs.
        let stop = service.cancellation_token();
        tokio::spawn(async move {
            terminated().await;
            tracing::info!("stopping on a signal");
            stop.cancel();
        });
        let reason = service.waiting().await?;
        tracing::info!(?reason, "MCP session ended");
        // The last answers out before the process goes.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), output).await;
        anyhow::Ok(())
    });
    // A question being spoken must not outlive the server.
    crate::speak::stop_all();
    // A blocking stdin read cannot be cancelled; do not wait for it at exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

/// Passes the client's lines on until its input ends, then holds the SDK's input open
/// until every request read has been answered: the SDK stops waiting for its handlers
/// a few seconds after the end of input, which would drop the answer to a request
/// piped in just before it (a transcription takes longer). A question to the user is
/// stopped instead: the end of input is how a client stops its server, and nobody would
/// take the answer.
async fn read_until_answered(
    reader: rmcp::transport::StdioReader,
    mut to_sdk: tokio::io::DuplexStream,
    replies: tokio::sync::mpsc::UnboundedSender<serde_json::Value>,
    in_flight: super::lines::InFlight,
) {
    use tokio::io::AsyncWriteExt;
    super::lines::filter(reader, &mut to_sdk, replies, &in_flight).await;
    for cancel in in_flight.cancel_questions("the client closed its input") {
        tracing::info!("the client's input ended; stopping the question to the user");
        let _ = to_sdk.write_all(format!("{cancel}\n").as_bytes()).await;
    }
    if !in_flight.is_empty() {
        tracing::info!(
            requests = in_flight.len(),
            "the client's input ended; answering what it asked before stopping"
        );
        in_flight.settled().await;
    }
    let _ = to_sdk.shutdown().await;
}

/// SIGTERM, SIGINT or SIGHUP (what the platform has of them).
async fn terminated() {
    crate::platform::stop_requested().await
}

type Writer = crate::platform::GuardedStdout;

fn guarded_stdio() -> anyhow::Result<(rmcp::transport::StdioReader, Writer)> {
    // The reader first: on Linux it reopens stdin's pipe for non-blocking reads.
    let (reader, unused_writer) = rmcp::transport::stdio_pipes();
    drop(unused_writer);
    Ok((reader, crate::platform::guard_stdout()?))
}
