//! The `yazses` binary: parses the command line and reports errors in one sentence.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("YAZSES_LOG")
                // symphonia logs every failed probe as an error; our own error says it better.
                .unwrap_or_else(|_| "warn,symphonia=off".into()),
        )
        .init();
    let cli = yazses::cli::Cli::parse();
    match yazses::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`yazses vad x.wav | head -1`) is not an error worth a word.
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                msg.push_str(": ");
                msg.push_str(&cause.to_string());
            }
            eprintln!("yazses: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
