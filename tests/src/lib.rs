//! Shared helpers for the yazses integration tests.
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

pub mod wer;

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
