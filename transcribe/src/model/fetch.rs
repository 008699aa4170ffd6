//! `yazses model fetch`: download an official model over HTTPS with a progress bar,
//! resuming a partial download, verifying SHA-256, and renaming into place only once the
//! file is whole and verified.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::KnownModel;

/// Why a download did not produce a verified file.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No connection (offline, DNS, TLS, refused).
    #[error("cannot download {url}: {reason}. Offline? {hint}")]
    Unreachable {
        /// The address.
        url: String,
        /// The transport's reason.
        reason: String,
        /// What to do without the network.
        hint: &'static str,
    },
    /// The server answered with an error status.
    #[error("the server answered {status} for {url}")]
    Status {
        /// The address.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The file arrived but is not the published one.
    #[error(
        "the downloaded file does not match its published SHA-256 (expected {expected}, got {found}); it was deleted, run the command again"
    )]
    Checksum {
        /// Published hash.
        expected: String,
        /// Hash of what arrived.
        found: String,
    },
    /// The server sent more than the published size.
    #[error("{url} sent more than the published {expected} bytes; the partial file was deleted")]
    TooLarge {
        /// The address.
        url: String,
        /// The published size.
        expected: u64,
    },
    /// A downloaded archive that verified holds no usable copy of the file wanted.
    #[error("{archive}: {reason}; it was deleted, run the command again")]
    Archive {
        /// The archive.
        archive: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing a local file failed, or the connection broke mid-file.
    #[error("{what}: {source} (run the command again to resume)")]
    Io {
        /// What was being done.
        what: String,
        /// The reason.
        source: io::Error,
    },
}

/// What a whisper model's download failing offline points to.
pub const IMPORT_HINT: &str =
    "`yazses model import DIR --name NAME` converts a faster-whisper model you already have";

/// Downloads `model` from `base_url` into `dir` and returns its path. A file already
/// there that verifies is kept as it is.
pub fn fetch(
    model: &KnownModel,
    base_url: &str,
    dir: &Path,
    progress: bool,
) -> Result<PathBuf, FetchError> {
    let dest = dir.join(model.file_name());
    if dest.is_file() && sha256_file(&dest).ok().as_deref() == Some(model.sha256) {
        return Ok(dest);
    }
    fs::create_dir_all(dir).map_err(|source| FetchError::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    download_verified(
        &model.url(base_url),
        model.sha256,
        Some(model.bytes),
        &dest,
        progress,
    )?;
    Ok(dest)
}

/// The partial file a download resumes from.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut s = dest.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// What went wrong on the way, without the address ureq puts first (the error names it).
fn transport_reason(t: &ureq::Transport) -> String {
    let mut reason = t.kind().to_string();
    let source = std::error::Error::source(t).map(ToString::to_string);
    for detail in [t.message().map(str::to_owned), source]
        .into_iter()
        .flatten()
    {
        reason.push_str(": ");
        reason.push_str(&detail);
    }
    reason
}

/// Downloads `url` to `dest`, resuming from `dest.part`, and renames it into place only
/// when its SHA-256 is `sha256`. A mismatch deletes the partial file.
pub fn download_verified(
    url: &str,
    sha256: &str,
    bytes: Option<u64>,
    dest: &Path,
    progress: bool,
) -> Result<(), FetchError> {
    let part = part_path(dest);
    let io_err = |what: String| move |source| FetchError::Io { what, source };
    let have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(20))
        .timeout_read(Duration::from_secs(60))
        .build();
    let mut request = agent.get(url);
    if have > 0 {
        request = request.set("Range", &format!("bytes={have}-"));
    }
    let (resume_from, response) = match request.call() {
        Ok(r) if r.status() == 206 => (have, Some(r)),
        Ok(r) => (0, Some(r)),
        // The partial file is already whole; verify it as it is.
        Err(ureq::Error::Status(416, _)) if have > 0 => (have, None),
        Err(ureq::Error::Status(status, _)) => {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status,
            });
        }
        Err(ureq::Error::Transport(t)) => {
            return Err(FetchError::Unreachable {
                url: url.to_owned(),
                reason: transport_reason(&t),
                hint: IMPORT_HINT,
            });
        }
    };
    let mut hasher = Sha256::new();
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(resume_from == 0)
        .open(&part)
        .map_err(io_err(format!("opening {}", part.display())))?;
    if resume_from > 0 {
        // Hash what is already there, so the final hash covers the whole file.
        io::copy(
            &mut (&mut file).take(resume_from),
            &mut HashWriter(&mut hasher),
        )
        .map_err(io_err(format!("reading {}", part.display())))?;
    }
    if let Some(response) = response {
        let total = bytes.or_else(|| {
            response
                .header("Content-Length")
                .and_then(|l| l.parse::<u64>().ok())
                .map(|l| l + resume_from)
        });
        let bar = progress_bar(total, resume_from, progress, dest);
        let mut reader = response.into_reader();
        let mut buf = vec![0u8; 1 << 16];
        let mut written = resume_from;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    bar.abandon();
                    return Err(FetchError::Io {
                        what: format!("downloading {url}"),
                        source: e,
                    });
                }
            };
            written += n as u64;
            if bytes.is_some_and(|b| written > b) {
                // Not the published file, whatever it is; do not fill the disk with it.
                bar.abandon();
                drop(file);
                let _ = fs::remove_file(&part);
                return Err(FetchError::TooLarge {
                    url: url.to_owned(),
                    expected: bytes.unwrap_or(0),
                });
            }
            file.write_all(&buf[..n])
                .map_err(io_err(format!("writing {}", part.display())))?;
            hasher.update(&buf[..n]);
            bar.inc(n as u64);
        }
        bar.finish_and_clear();
    }
    file.sync_all()
        .map_err(io_err(format!("writing {}", part.display())))?;
    drop(file);
    let found = hex(&hasher.finalize());
    if found != sha256 {
        let _ = fs::remove_file(&part);
        return Err(FetchError::Checksum {
            expected: sha256.to_owned(),
            found,
        });
    }
    fs::rename(&part, dest).map_err(io_err(format!("renaming into {}", dest.display())))
}

fn progress_bar(total: Option<u64>, done: u64, show: bool, dest: &Path) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => indicatif::ProgressBar::new(t),
        None => indicatif::ProgressBar::no_length(),
    };
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned());
    bar.set_message(name.unwrap_or_default());
    bar.set_position(done);
    bar
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// SHA-256 of a file, lowercase hex.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut fs::File::open(path)?, &mut HashWriter(&mut hasher))?;
    Ok(hex(&hasher.finalize()))
}

/// Lowercase hex, as SHA-256 sums are published.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
