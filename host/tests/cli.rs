//! `yazses vad` as a user runs it: the real binary, real files, stdout and stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn yazses(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yazses"))
        .args(args)
        .output()
        .expect("run yazses")
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/vad")
        .join(name)
        .display()
        .to_string()
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yazses-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn wav(samples: &[i16], rate: u32, channels: u16) -> Vec<u8> {
    let mut cur = std::io::Cursor::new(Vec::new());
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::new(&mut cur, spec).unwrap();
    for &s in samples {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
    cur.into_inner()
}

/// A failed run: non-zero exit, nothing on stdout, one sentence on stderr, no panic.
fn assert_clear_failure(out: &Output, mentions: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout must stay empty: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("yazses: error: "), "{stderr}");
    assert!(
        stderr.contains(mentions),
        "{stderr} should mention {mentions:?}"
    );
}

#[test]
fn json_output_is_exactly_one_object_of_the_documented_shape() {
    let out = yazses(&["vad", "--json", &fixture("utt00_pink_10db.wav")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&v),
        ["autostop", "frame_ms", "sample_rate", "segments"]
    );
    assert_eq!(
        (v["sample_rate"].as_u64(), v["frame_ms"].as_u64()),
        (Some(16000), Some(10))
    );
    assert_eq!(
        keys(&v["autostop"]),
        ["speech_start_ms", "stop_at_ms", "stopped_because"]
    );
    assert_eq!(v["autostop"]["stopped_because"], "end_of_speech");
    assert!(v["autostop"]["speech_start_ms"].is_u64());
    let segs = v["segments"].as_array().unwrap();
    assert!(!segs.is_empty());
    for s in segs {
        assert_eq!(keys(s), ["end_ms", "start_ms"]);
        assert!(s["start_ms"].as_u64() < s["end_ms"].as_u64());
    }
}

#[test]
fn flags_change_the_decision() {
    let f = fixture("noise0_babble_10db.wav");
    let json = |args: &[&str]| -> serde_json::Value {
        let out = yazses(&[&["vad", "--json"], args, &[f.as_str()]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(json(&[])["autostop"]["stopped_because"], "no_speech");
    assert_eq!(
        json(&["--no-speech-ms", "3000"])["autostop"]["stop_at_ms"],
        3000
    );
    let t = json(&["--timeout-ms", "2500"]);
    assert_eq!(
        (
            t["autostop"]["stopped_because"].as_str(),
            t["autostop"]["stop_at_ms"].as_u64()
        ),
        (Some("timeout"), Some(2500))
    );
    assert_eq!(
        json(&["--no-speech-ms", "20000"])["autostop"]["stopped_because"],
        "end_of_input"
    );
    let speech = fixture("utt00_clean.wav");
    let stop = |ms: &str, preset: &str| {
        let out = yazses(&[
            "vad",
            "--json",
            "--end-silence-ms",
            ms,
            "--preset",
            preset,
            &speech,
        ]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["autostop"]["stop_at_ms"].as_u64().unwrap()
    };
    assert_eq!(stop("1500", "default"), stop("1200", "default") + 300);
    assert!(stop("1200", "noisy") > 0 && stop("1200", "quiet_room") > 0);
}

#[test]
fn text_output_lists_segments_and_the_decision() {
    let out = yazses(&["vad", &fixture("utt00_clean.wav")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("speech "), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with("autostop: end_of_speech at "),
        "{text}"
    );
}

#[test]
fn other_rates_and_stereo_are_converted_first() {
    let samples = vec![0i16; 44_100 * 2 * 2];
    let path = temp_file("stereo44k.wav", &wav(&samples, 44_100, 2));
    let out = yazses(&["vad", "--json", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["autostop"]["stop_at_ms"], 2000);
    assert_eq!(v["autostop"]["stopped_because"], "end_of_input");
}

#[test]
fn a_plot_is_a_png() {
    let dir = std::env::temp_dir().join(format!("yazses-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("p.png");
    let out = yazses(&[
        "vad",
        "--plot",
        png.to_str().unwrap(),
        &fixture("utt00_white_5db.wav"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 20_000);
}

#[test]
fn bad_files_fail_with_one_clear_sentence() {
    let full = wav(&[100; 1600], 16_000, 1);
    let mut corrupt = full.clone();
    corrupt[20] = 7; // format tag: neither PCM nor float
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            temp_file("empty.wav", &wav(&[], 16_000, 1)),
            "holds no audio",
        ),
        (temp_file("zero-bytes.wav", b""), "holds no audio"),
        (
            temp_file("text.wav", b"this is plainly not a RIFF file, just text\n"),
            "is not an audio file yazses can read",
        ),
        (
            temp_file("truncated.wav", &full[..full.len() - 1001]),
            "is truncated",
        ),
        (
            temp_file("header-only.wav", &full[..30]),
            "is not a readable WAV file",
        ),
        (temp_file("corrupt.wav", &corrupt), "corrupt.wav"),
        (std::env::temp_dir(), "is not a regular file"),
        (
            PathBuf::from("/nonexistent/answer.wav"),
            "cannot read /nonexistent/answer.wav",
        ),
    ];
    for (path, mentions) in &cases {
        let p = path.to_str().unwrap();
        assert_clear_failure(&yazses(&["vad", p]), mentions);
        assert_clear_failure(&yazses(&["vad", "--json", p]), mentions);
    }
    // Issue 16, item 12: the operating system's reason was printed twice.
    let out = yazses(&["vad", "/nonexistent/answer.wav"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn bad_flags_are_refused_by_name() {
    let out = yazses(&["vad", "--preset", "loud", &fixture("utt00_clean.wav")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown preset \"loud\""));
    let out = yazses(&["vad", "--end-silence-ms", "0", &fixture("utt00_clean.wav")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--end-silence-ms"));
}

/// Issue 16, item 1: an 8-bit, 1 kHz WAV over the three-hour cap (11 MB) was decoded and
/// resampled in full (over 1 GB) before its duration was checked. Under a 500 MB address
/// space limit the old path died of an allocation failure; now the header refuses it.
#[test]
fn a_wav_over_the_duration_cap_is_refused_from_its_header_without_decoding_it() {
    let rate = 1000u32;
    let frames = 3 * 3600 * rate + 60 * rate;
    let mut bytes = Vec::with_capacity(44 + frames as usize);
    bytes.extend(b"RIFF");
    bytes.extend((36 + frames).to_le_bytes());
    bytes.extend(b"WAVEfmt ");
    bytes.extend(16u32.to_le_bytes());
    bytes.extend(1u16.to_le_bytes()); // PCM
    bytes.extend(1u16.to_le_bytes()); // mono
    bytes.extend(rate.to_le_bytes());
    bytes.extend(rate.to_le_bytes()); // bytes per second
    bytes.extend(1u16.to_le_bytes()); // block align
    bytes.extend(8u16.to_le_bytes()); // bits
    bytes.extend(b"data");
    bytes.extend(frames.to_le_bytes());
    bytes.extend((0..frames).map(|i| 128u8.wrapping_add((i % 50) as u8)));
    let path = temp_file("over-the-cap.wav", &bytes);
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 500000; exec '{}' vad '{}'",
            env!("CARGO_BIN_EXE_yazses"),
            path.display()
        ))
        .output()
        .unwrap();
    // 11 MB: not left in the temp dir after every run.
    let _ = std::fs::remove_file(&path);
    assert_clear_failure(
        &out,
        "is 3 h 1 min long by its header, over the limit of 10800 s",
    );
}

/// A config file named on purpose that is not there is an error, not silently replaced by
/// the defaults (a typo in an MCP client's config would turn ask_human off unseen);
/// `config show` still prints the defaults to start one from.
#[test]
fn a_named_config_file_that_does_not_exist_is_an_error() {
    let typo = "/nonexistent/yazses-typo.toml";
    let out = yazses(&["--config", typo, "transcribe", "x.wav"]);
    assert_clear_failure(
        &out,
        "the config file /nonexistent/yazses-typo.toml does not exist; check the path given with --config or YAZSES_CONFIG",
    );
    let show = yazses(&["--config", typo, "config", "show"]);
    assert!(show.status.success());
    let stderr = String::from_utf8_lossy(&show.stderr);
    assert!(
        stderr.contains("yazses-typo.toml does not exist, so these are the defaults"),
        "{stderr}"
    );
}

/// `yazses ARGS` with `stdin` piped in.
fn yazses_piped(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yazses"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run yazses");
    let mut pipe = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    // Written on a thread of its own: a child that stops reading must not block the test.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("yazses ends");
    writer.join().unwrap();
    out
}

/// A WAV written to a pipe, as ffmpeg writes one: both size fields 0xFFFFFFFF (and a LIST
/// chunk of tags before the data).
fn as_piped_wav(whole: &[u8]) -> Vec<u8> {
    let data = whole.windows(4).position(|w| w == b"data").unwrap();
    let mut out = whole[..data].to_vec();
    out[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    out.extend(b"LIST\x1a\0\0\0INFOISFT\x0e\0\0\0Lavf61.7.100\0\0");
    out.extend(b"data");
    out.extend(u32::MAX.to_le_bytes());
    out.extend(&whole[data + 8..]);
    out
}

/// Audio piped in (`-`, `/dev/stdin`) or saved from a pipe (a header without lengths)
/// reads to its real end, the same audio as the file it came from.
#[test]
fn piped_audio_and_a_header_written_for_a_pipe_read_to_their_end() {
    let file = fixture("utt00_clean.wav");
    let expected = yazses(&["vad", "--json", &file]);
    assert!(expected.status.success());
    let piped = as_piped_wav(&std::fs::read(&file).unwrap());
    let saved = temp_file("saved-from-a-pipe.wav", &piped);
    for (how, out) in [
        ("vad -", yazses_piped(&["vad", "--json", "-"], &piped)),
        (
            "vad /dev/stdin",
            yazses_piped(&["vad", "--json", "/dev/stdin"], &piped),
        ),
        (
            "vad saved-from-a-pipe.wav",
            yazses(&["vad", "--json", saved.to_str().unwrap()]),
        ),
    ] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{how}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&expected.stdout),
            "{how}"
        );
    }
    // A file cut short whose header gives a real length is still cut short.
    let whole = std::fs::read(&file).unwrap();
    let cut = temp_file("cut-with-length.wav", &whole[..whole.len() / 2]);
    assert_clear_failure(&yazses(&["vad", cut.to_str().unwrap()]), "is truncated");
    // Standard input that is not audio is refused like a file that is not.
    assert_clear_failure(
        &yazses_piped(&["vad", "-"], b"plain text, no audio"),
        "standard input is not an audio file yazses can read",
    );
}

/// A header claiming 2^31 samples (37 hours) in a short file is over the cap, said with
/// the length and the way to raise the limit, not "truncated".
#[test]
fn a_header_claiming_more_than_the_cap_is_refused_with_its_length() {
    let mut bytes = wav(&[0; 160], 16_000, 1);
    // 8-bit samples: the data chunk's byte count is its sample count.
    bytes[34..36].copy_from_slice(&8u16.to_le_bytes());
    bytes[32..34].copy_from_slice(&1u16.to_le_bytes());
    bytes[28..32].copy_from_slice(&16_000u32.to_le_bytes());
    bytes[40..44].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let path = temp_file("claims-37-hours.wav", &bytes);
    let out = yazses(&["vad", path.to_str().unwrap()]);
    assert_clear_failure(
        &out,
        "is 37 h 16 min long by its header, over the limit of 10800 s",
    );
    assert_clear_failure(&out, "--max-duration-s");
}

/// A picture that cannot be written is said before the analysis, in words.
#[test]
fn a_plot_that_cannot_be_written_is_refused_first_in_words() {
    let file = fixture("utt00_clean.wav");
    for (target, says) in [
        (
            "/nonexistent/x.png",
            "the folder /nonexistent does not exist",
        ),
        ("out.svg", "give a name ending in .png"),
    ] {
        let out = yazses(&["vad", &file, "--plot", target]);
        assert_clear_failure(&out, says);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("Error("), "{stderr}");
    }
    assert!(!Path::new("out.svg").exists());
}

/// A slip in a key's name gets a warning in yazses' own words with the likely key.
#[test]
fn an_unknown_config_key_is_warned_about_with_the_key_it_likely_meant() {
    let cfg = temp_file("typo.toml", b"[mcp]\nask_humann = true\n");
    let out = yazses(&["--config", cfg.to_str().unwrap(), "config", "show"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "yazses: warning: {}: unknown key mcp.ask_humann ignored (did you mean mcp.ask_human?)",
            cfg.display()
        )
    );
}

/// A failed download names the address once.
#[test]
fn a_failed_download_names_its_address_once() {
    let dir = std::env::temp_dir().join(format!("yazses-cli-fetch-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_yazses"))
        .args(["model", "fetch", "tiny.en"])
        .env("YAZSES_MODEL_DIR", &dir)
        .env("YAZSES_MODEL_BASE_URL", "http://127.0.0.1:9/models")
        .output()
        .unwrap();
    assert_clear_failure(&out, "cannot download http://127.0.0.1:9/models/");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("127.0.0.1:9").count(), 1, "{stderr}");
}
