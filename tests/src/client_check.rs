//! The MCP Python SDK's client (`tests/mcp/client_check.py`) against a yazses build's
//! `mcp-server`, as `mcp_clients.rs` and `any_build.rs` run it.

use std::path::Path;
use std::process::Command;

use crate::{env_path, repo_root, runtime_dir};

/// A `[speak]` section whose command, run by a Unix shell, appends each spoken text to
/// `said`.
pub fn speak_into_file(said: &Path) -> String {
    format!(
        "[speak]\ncommand = [\"sh\", \"-c\", \"printf '%s\\\\n' \\\"$1\\\" >> {}\", \"speak\"]\n",
        said.display()
    )
}

/// The client check of `scenario` in the protocol `mode`, against `yazses` with `config`,
/// in a runtime dir of its own (its own microphone lease and a full budget); the caller
/// adds the scenario's files (`--jfk`, `--said`, ...) and runs it with [`passes`].
pub fn command(yazses: &Path, config: &Path, mode: &str, scenario: &str) -> Command {
    let mut command = Command::new(env_path("YAZSES_TEST_PYTHON"));
    command
        .arg(repo_root().join("tests/mcp/client_check.py"))
        .env(
            "YAZSES_RUNTIME_DIR",
            runtime_dir(&format!("{scenario}-{mode}")),
        )
        .args(["--yazses", yazses.to_str().unwrap()])
        .args(["--config", config.to_str().unwrap()])
        .args(["--mode", mode, "--scenario", scenario])
        .current_dir(repo_root());
    command
}

/// Runs `command`, which must exit well with no failed check; its stdout, one line per
/// check. `what` names the run in a failure.
pub fn passes(command: &mut Command, what: &str) -> String {
    let out = command.output().expect("the MCP client check runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed:\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(!stdout.contains("FAIL"), "{what}: {stdout}");
    stdout
}
