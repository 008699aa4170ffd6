//! The build script's handling of the whisper.cpp source archive, on small archives made here:
//! a wrong or short download is named, unpacking keeps only the tree it is asked for and
//! never writes outside it, and a tree's version is read or its absence reported.

#[path = "../build/archive.rs"]
mod archive;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use archive::{Published, check, unpack, version_of};
use sha2::{Digest, Sha256};

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("whisper-sys-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A gzipped tar of `(path, contents)` entries; paths are written as given, `..` included.
fn tar_gz(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, data) in entries {
        let mut header = tar::Header::new_old();
        let name = &mut header.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        tar.append(&header, *data).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

fn published(bytes: &[u8]) -> Published {
    let sha: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Published {
        name: "sources.tar.gz",
        bytes: bytes.len() as u64,
        sha256: Box::leak(sha.into_boxed_str()),
    }
}

#[test]
fn only_the_published_file_passes_and_each_other_one_is_told_apart() {
    let dir = scratch("check");
    let good = tar_gz(&[("top/CMakeLists.txt", b"x")]);
    let want = published(&good);
    let path = dir.join("a.tar.gz");

    fs::write(&path, &good).unwrap();
    assert_eq!(check(&path, &want), Ok(()));

    fs::write(&path, &good[..good.len() / 2]).unwrap();
    let short = check(&path, &want).unwrap_err();
    assert!(
        short.contains("bytes, not the") && short.contains("sources.tar.gz"),
        "{short}"
    );

    let mut changed = good.clone();
    *changed.last_mut().unwrap() ^= 1;
    fs::write(&path, &changed).unwrap();
    let wrong = check(&path, &want).unwrap_err();
    assert!(
        wrong.starts_with("SHA-256 ") && wrong.contains(want.sha256),
        "{wrong}"
    );

    assert!(check(&dir.join("absent.tar.gz"), &want).is_err());
}

#[test]
fn unpacking_keeps_the_asked_tree_leaves_out_the_skipped_parts_and_never_climbs_out() {
    let dir = scratch("unpack");
    let archive = dir.join("a.tar.gz");
    fs::write(
        &archive,
        tar_gz(&[
            ("pkg/setup.py", b"not whisper"),
            ("pkg/whisper.cpp/CMakeLists.txt", b"lists"),
            ("pkg/whisper.cpp/src/whisper.cpp", b"source"),
            ("pkg/whisper.cpp/examples/main.cpp", b"example"),
            ("pkg/whisper.cpp/../escaped.txt", b"outside"),
            ("pkg/whisper.cpp/src/../../escaped-too.txt", b"outside"),
        ]),
    )
    .unwrap();
    let tree = dir.join("out/whisper.cpp");
    fs::create_dir_all(&tree).unwrap();
    fs::write(tree.join("stale.txt"), b"from an earlier unpack").unwrap();

    unpack(
        &archive,
        "pkg/whisper.cpp",
        &["examples"],
        &tree,
        (".mark", "stamp-1"),
    )
    .unwrap();

    let read = |p: &Path| fs::read_to_string(p).ok();
    assert_eq!(read(&tree.join("CMakeLists.txt")).as_deref(), Some("lists"));
    assert_eq!(
        read(&tree.join("src/whisper.cpp")).as_deref(),
        Some("source")
    );
    assert_eq!(read(&tree.join(".mark")).as_deref(), Some("stamp-1"));
    assert!(
        !tree.join("examples").exists(),
        "a skipped part was unpacked"
    );
    assert!(
        !tree.join("stale.txt").exists(),
        "the tree was not emptied first"
    );
    assert!(!tree.join("setup.py").exists() && !dir.join("out/setup.py").exists());
    assert!(!dir.join("out/escaped.txt").exists() && !tree.join("escaped.txt").exists());
    assert!(!dir.join("out/escaped-too.txt").exists() && !tree.join("escaped-too.txt").exists());
}

#[test]
fn the_version_is_read_from_the_project_line_and_its_absence_is_named() {
    let dir = scratch("version");
    assert!(
        version_of(&dir)
            .unwrap_err()
            .contains("is not a whisper.cpp tree")
    );

    let lists = dir.join("CMakeLists.txt");
    fs::write(
        &lists,
        "cmake_minimum_required(VERSION 3.5)\nproject(\"whisper.cpp\" VERSION 1.8.5)\n",
    )
    .unwrap();
    assert_eq!(version_of(&dir), Ok("1.8.5".to_owned()));

    fs::write(&lists, "project(\"whisper.cpp\" C CXX)\n").unwrap();
    let none = version_of(&dir).unwrap_err();
    assert!(
        none.contains("names no whisper.cpp version") && none.contains("CMakeLists.txt"),
        "{none}"
    );
}
