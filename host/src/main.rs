//! The `yazses` binary: parses the command line and reports errors in one sentence.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    yazses::logging::init();
    // Before anything loads whisper.cpp's OpenMP runtime: it reads its settings once.
    let wait = yazses::pool::openmp_env();
    yazses::cpu::hand_over_to_a_faster_build(&wait);
    yazses::pool::restart_with(&wait);
    tracing::debug!(
        cpu = yazses::cpu::BUILT_FOR,
        "this yazses' whisper.cpp is built for"
    );
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
            // Errors that name their cause in their own words are not followed by it again.
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                let cause = cause.to_string();
                if !msg.contains(&cause) {
                    msg.push_str(": ");
                    msg.push_str(&cause);
                }
            }
            eprintln!("yazses: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
