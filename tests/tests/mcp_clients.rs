//! `yazses mcp-server` driven by a real MCP client in a separate process: the official
//! Python SDK (`tests/mcp/client_check.py`), in each of its protocol modes (`legacy`: the
//! initialize handshake; `auto`: `server/discover` first; `2026-07-28`: that revision
//! pinned, per-request `_meta`), against three configs:
//!
//! - `off`: the defaults; `ask_human` is absent from `tools/list` and refused if called.
//! - `on`: `ask_human` on with a budget of 2, the microphone a file (`answer.wav`: an
//!   answer with a 0.8 s pause in it); checks the schemas and annotations, `transcribe`
//!   on jfk.wav, refusals, two heard answers not cut at the pause, the caller's name in
//!   what was spoken, and the third answer refused by the budget.
//! - `silence`: budget 1, the microphone silent; `heard: false` after 8 s, twice, and
//!   neither charged.
//!
//! - `cpal`: the microphone a real cpal input stream from an ALSA `file` PCM.
//! - `serial`: the microphone a yazses dongle (the simulator over a `socat` pty pair).
//!
//! Needs `YAZSES_TEST_PYTHON` (a Python with `mcp` 2.x, which `./ci.sh assets` makes) and
//! the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::path::PathBuf;

use yazses_tests::client_check;
use yazses_tests::{env_path, imported_model, repo_root, scratch, write_wav, yazses_bin};

fn config(name: &str, body: &str) -> PathBuf {
    let path = scratch().join(format!("mcp-{name}-{}.toml", std::process::id()));
    let model = imported_model().display().to_string();
    std::fs::write(&path, format!("{body}\n[transcribe]\nmodel = {model:?}\n")).unwrap();
    path
}

fn said_file(mode: &str) -> PathBuf {
    let p = scratch().join(format!("said-{mode}-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn run(mode: &str, scenario: &str, config: &std::path::Path, said: &std::path::Path) {
    run_with(mode, scenario, config, said, &[]);
}

fn run_with(
    mode: &str,
    scenario: &str,
    config: &std::path::Path,
    said: &std::path::Path,
    extra: &[(&str, &str)],
) {
    let mut cmd = client_check::command(&yazses_bin(), config, mode, scenario);
    for (k, v) in extra {
        if k.starts_with("--") {
            cmd.args([k, v]);
        } else {
            cmd.env(k, v);
        }
    }
    cmd.args(["--jfk", env_path("YAZSES_TEST_JFK").to_str().unwrap()])
        .args(["--said", said.to_str().unwrap()])
        .args([
            "--sentences",
            repo_root()
                .join("fixtures/speech/sentences.flac")
                .to_str()
                .unwrap(),
        ]);
    let stdout = client_check::passes(&mut cmd, &format!("{mode} {scenario}"));
    eprintln!(
        "{mode} {scenario}: {} checks passed",
        stdout.matches("\nok ").count() + 1
    );
}

fn all_modes(scenario: &str, body: &str) {
    for mode in ["legacy", "auto", "2026-07-28"] {
        let said = said_file(mode);
        let cfg = config(
            &format!("{scenario}-{mode}"),
            &format!("{body}\n{}", client_check::speak_into_file(&said)),
        );
        run(mode, scenario, &cfg, &said);
    }
}

#[test]
fn off_by_default_ask_human_is_not_offered() {
    all_modes("off", "");
}

#[test]
fn on_both_tools_work_and_every_restraint_holds() {
    let answer = repo_root().join("fixtures/speech/answer.wav");
    all_modes(
        "on",
        &format!(
            "[mcp]\nask_human = true\nask_human_per_hour = 2\n[audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n",
            answer.display().to_string()
        ),
    );
}

#[test]
fn silence_is_heard_as_nothing_and_not_charged() {
    let quiet = scratch().join("quiet.wav");
    write_wav(&quiet, &[0; 16_000]);
    all_modes(
        "silence",
        &format!(
            "[mcp]\nask_human = true\nask_human_per_hour = 1\n[audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n",
            quiet.display().to_string()
        ),
    );
}

/// Real capture through cpal: an ALSA `file` PCM over `null` (no daemon, no sound card)
/// plays `answer.wav` as the microphone `vmic`; the answer comes back through cpal, and
/// afterwards the server no longer holds the PCM's input file open.
#[test]
fn cpal_capture_from_an_alsa_file_pcm_answers_and_releases_the_microphone() {
    let reader = hound::WavReader::open(repo_root().join("fixtures/speech/answer.wav")).unwrap();
    let raw: Vec<u8> = reader
        .into_samples::<i16>()
        .flat_map(|s| s.unwrap().to_le_bytes())
        .collect();
    let infile = scratch().join(format!("vmic-{}.raw", std::process::id()));
    std::fs::write(&infile, raw).unwrap();
    let alsa = scratch().join(format!("asound-{}.conf", std::process::id()));
    std::fs::write(
        &alsa,
        format!(
            "pcm.vmic {{\n  type file\n  slave {{ pcm {{ type null }} }}\n  file \"/dev/null\"\n  infile \"{}\"\n  format \"raw\"\n  hint {{ show on description \"yazses virtual microphone\" }}\n}}\n",
            infile.display()
        ),
    )
    .unwrap();
    let said = said_file("cpal");
    let cfg = config(
        "cpal",
        &format!(
            "[mcp]\nask_human = true\n[audio]\nsource = \"cpal\"\ndevice = \"vmic\"\n{}",
            client_check::speak_into_file(&said)
        ),
    );
    run_with(
        "legacy",
        "cpal",
        &cfg,
        &said,
        &[
            ("ALSA_CONFIG_PATH", alsa.to_str().unwrap()),
            ("--infile", infile.to_str().unwrap()),
        ],
    );
}

/// The dongle as the microphone: the simulator plays `answer.wav` into a pty pair, the
/// server's capture reads the other end, stops where the dongle says speech ended, and
/// closes the port after the call.
#[test]
fn a_serial_dongle_answers_ask_human_and_its_port_is_released() {
    let pty = yazses_tests::pty::PtyPair::new("mcp");
    let mut sim = pty.simulate(
        std::path::Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim")),
        &repo_root().join("fixtures/speech/answer.wav"),
        &[],
    );
    let said = said_file("serial");
    let cfg = config(
        "serial",
        &format!(
            "[mcp]\nask_human = true\n[audio]\nsource = \"serial\"\nserial_port = {:?}\n{}",
            pty.host.display().to_string(),
            client_check::speak_into_file(&said)
        ),
    );
    run_with(
        "legacy",
        "serial",
        &cfg,
        &said,
        &[("--infile", pty.host.to_str().unwrap())],
    );
    assert!(sim.wait().unwrap().success());
}
