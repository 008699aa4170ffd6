//! Shared helpers for the yazses integration tests.
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

pub mod client_check;
pub mod portal;
pub mod pty;
pub mod rng;
pub mod stdio_client;
pub mod wayland;
pub mod wer;
pub mod x11;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repo root")
        .to_owned()
}

/// Compares `actual` with the golden file at `path`, or rewrites the file when the
/// environment has `UPDATE_GOLDEN=1`. Golden files change only on purpose.
pub fn assert_golden(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("golden files live in a folder"))
            .expect("create golden dir");
        std::fs::write(path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read golden file {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert_eq!(
        expected,
        actual,
        "{} is stale; if the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff",
        path.display()
    );
}

/// A path from the environment that `./ci.sh assets` sets, or a panic that says so.
pub fn env_path(var: &str) -> PathBuf {
    let p = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run `./ci.sh test`, which fetches the test model and audio")
    });
    assert!(p.exists(), "{var}={} does not exist", p.display());
    p
}

/// Waits up to 45 s for a terminal's shell to make `out` (the sign it is ready for typing),
/// or panics with `never`. The wait is long because a loaded 2-core machine has been seen
/// to take over 15 s to start xterm's shell; a shell that never starts still fails.
pub fn wait_for_file(out: &Path, never: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(45);
    while !out.exists() {
        assert!(std::time::Instant::now() < deadline, "{never}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A scratch directory under `target/` for tests that write files.
pub fn scratch() -> PathBuf {
    let dir = repo_root().join("target/yazses-real-model-tests");
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// The test model (`YAZSES_TEST_CT2_DIR`), imported with our converter once per test
/// process, so the model under test is the importer's output.
pub fn imported_model() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let out = scratch().join(format!("ggml-tiny.en-{}.bin", std::process::id()));
        yazses::model::import::import_dir(
            &env_path("YAZSES_TEST_CT2_DIR"),
            &out,
            yazses::model::import::Weights::F16,
        )
        .expect("the test model imports");
        out
    })
}

/// The `yazses` binary cargo built beside the running test.
pub fn yazses_bin() -> PathBuf {
    // Integration tests live in target/<profile>/deps; the workspace's binary beside it.
    let exe = std::env::current_exe().expect("the test's own path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .join("yazses");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace`",
        bin.display()
    );
    bin
}

/// Writes 16 kHz mono 16-bit samples as a WAV file.
pub fn write_wav(path: &Path, samples: &[i16]) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).expect("create the WAV file");
    for &s in samples {
        w.write_sample(s).expect("write a sample");
    }
    w.finalize().expect("finish the WAV file");
}

/// A fresh runtime dir (`YAZSES_RUNTIME_DIR`) for one test's yazses processes, so tests
/// running at once neither share a microphone lease nor spend one interrupt budget.
pub fn runtime_dir(name: &str) -> PathBuf {
    // Unique within the process too: tests of one binary run on several threads.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = scratch().join(format!("runtime-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the runtime dir");
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("make the runtime dir private");
    dir
}
