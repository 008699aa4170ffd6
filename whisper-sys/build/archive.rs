//! The source archive's checks, its unpacking and the tree's version: the parts of the build
//! script that read untrusted files, kept apart so `tests/archive.rs` can exercise them.

use std::fs::{self, File};
use std::io;
use std::path::{Component, Path};

use sha2::{Digest, Sha256};

/// A published file, known by its size and SHA-256.
pub struct Published {
    /// Its file name, for messages.
    pub name: &'static str,
    /// Its length in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: &'static str,
}

/// Is the file at `path` the published one? Else, in words, how it differs.
pub fn check(path: &Path, want: &Published) -> Result<(), String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    let mut hasher = Sha256::new();
    let bytes = io::copy(&mut file, &mut hasher).map_err(|e| e.to_string())?;
    if bytes != want.bytes {
        return Err(format!(
            "{bytes} bytes, not the {} of {}",
            want.bytes, want.name
        ));
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if digest != want.sha256 {
        return Err(format!(
            "SHA-256 {digest}, not {}'s {}",
            want.name, want.sha256
        ));
    }
    Ok(())
}

/// Unpacks what lies under `root` in the gzipped tar `archive` into `tree` (emptied first),
/// leaving out the top-level directories named in `skip` and any path that would climb out.
/// `stamp` is written last as `tree/mark`, so an interrupted unpack is not taken for a whole one.
pub fn unpack(
    archive: &Path,
    root: &str,
    skip: &[&str],
    tree: &Path,
    (mark, stamp): (&str, &str),
) -> io::Result<()> {
    if tree.exists() {
        fs::remove_dir_all(tree)?;
    }
    let gz = flate2::read::GzDecoder::new(File::open(archive)?);
    let mut entries = tar::Archive::new(gz);
    for entry in entries.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let Ok(inside) = path.strip_prefix(root) else {
            continue;
        };
        let wanted = match inside.components().next() {
            Some(Component::Normal(top)) => !skip.iter().any(|s| top == *s),
            _ => false,
        };
        let stays_inside = inside
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !wanted || !stays_inside {
            continue;
        }
        let target = tree.join(inside);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        entry.unpack(&target)?;
    }
    fs::write(tree.join(mark), stamp)
}

/// The version in a whisper.cpp tree's top-level `CMakeLists.txt`
/// (`project("whisper.cpp" VERSION x.y.z)`).
pub fn version_of(tree: &Path) -> Result<String, String> {
    let lists = tree.join("CMakeLists.txt");
    let text = fs::read_to_string(&lists)
        .map_err(|e| format!("{} is not a whisper.cpp tree: {e}", tree.display()))?;
    text.lines()
        .find_map(|line| line.trim().strip_prefix("project(\"whisper.cpp\" VERSION "))
        .and_then(|rest| rest.split(|c: char| c == ')' || c.is_whitespace()).next())
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| format!("{} names no whisper.cpp version", lists.display()))
}
