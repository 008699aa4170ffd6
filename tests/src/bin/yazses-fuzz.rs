//! A mutation fuzzer for the parsers that read what others send us, run for a fixed time:
//!
//! - `audio`: every audio format, both ways a file is read: kept whole
//!   ([`yazses::audio::decode_bytes`]) and streamed piece by piece as `yazses transcribe`
//!   reads it ([`yazses::audio::stream_bytes`]), which must agree sample for sample;
//! - `jsonrpc`: the MCP server's line discipline ([`yazses::mcp::lines`]), one line at a
//!   time and as a stream of lines.
//!
//! Inputs are the seed corpus (`fuzz/corpus/<target>/`, kept in the repository) changed by
//! a few random edits each: bit flips, byte and integer overwrites, inserted, deleted,
//! duplicated and spliced ranges, cuts. A panic, a broken invariant or an input that runs
//! for more than 20 s stops the run: the input is saved under `target/fuzz/` and the exit
//! status is 1. Runs are reproducible from the printed seed.
//!
//! `yazses-fuzz <audio|jsonrpc> [--seconds N] [--seed N] [--corpus DIR]`

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use yazses::audio::{Chunk, Limits, decode_bytes, stream_bytes};
use yazses::mcp::lines::{self, Line};
use yazses_tests::rng::Rng;

/// Values that sit on parsers' edges, written little-endian.
const EDGES: [u64; 9] = [
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
];

fn mutate(input: &[u8], corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                b[i] = rng.next_u64() as u8;
            }
            2 if len >= 4 => {
                let i = rng.below(len - 3);
                let v = EDGES[rng.below(EDGES.len())] as u32;
                b[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            3 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                b.splice(at..at, bytes);
            }
            4 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(512));
                b.drain(at..at + n);
            }
            5 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(512));
                let copy = b[at..at + n].to_vec();
                let to = rng.below(len + 1);
                b.splice(to..to, copy);
            }
            6 if !corpus.is_empty() => {
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len() + 1);
                let at = rng.below(len + 1);
                b.truncate(at);
                b.extend_from_slice(&other[from..]);
            }
            7 => b.truncate(rng.below(len + 1)),
            _ => {}
        }
    }
    b
}

/// What went wrong with one input, if anything.
type Verdict = Result<(), String>;

fn audio(input: &[u8], rng: &mut Rng) -> Verdict {
    const EXTENSIONS: [&str; 6] = ["wav", "flac", "ogg", "mp3", "bin", ""];
    let name = format!("fuzz.{}", EXTENSIONS[rng.below(EXTENSIONS.len())]);
    let limits = Limits {
        max_bytes: 1 << 20,
        max_secs: 30,
        accept_partial: rng.below(2) == 0,
    };
    let decoded = decode_bytes(input.to_vec(), Path::new(&name), &limits);
    // The streaming path (what `transcribe` uses) must hand over exactly what the keeping
    // path keeps, and fail where it fails.
    let mut tapped = Vec::new();
    let streamed = stream_bytes(
        input.to_vec(),
        Path::new(&name),
        &limits,
        &mut |c: Chunk<'_>| {
            tapped.extend_from_slice(c.samples);
            true
        },
    );
    match (&decoded, &streamed) {
        (Ok(a), Ok(s)) if a.samples != tapped || a.cut_short_ms != s.cut_short_ms => {
            return Err("streaming handed over other audio than decoding kept".into());
        }
        (Ok(_), Err(e)) => return Err(format!("streaming failed where decoding did not: {e}")),
        (Err(e), Ok(_)) => return Err(format!("decoding failed where streaming did not: {e}")),
        _ => {}
    }
    match decoded {
        Err(e) if e.to_string().is_empty() => Err("an error without words".into()),
        Err(_) => Ok(()),
        Ok(a) if a.samples.is_empty() => Err("success with no audio".into()),
        Ok(a) if a.duration_ms() > 31_000 => {
            Err(format!("{} ms passed the 30 s cap", a.duration_ms()))
        }
        Ok(a) if a.cut_short_ms.is_some() && !limits.accept_partial => {
            Err("a file cut short was returned though partial audio was not accepted".into())
        }
        Ok(_) => Ok(()),
    }
}

fn jsonrpc(input: &[u8], _: &mut Rng) -> Verdict {
    // One line on its own: a message, a blank, or a JSON-RPC error reply.
    if let Line::Reply(r) = lines::classify(input, false) {
        let code = r["error"]["code"].as_i64();
        if r["jsonrpc"] != "2.0" || !matches!(code, Some(-32700 | -32600)) {
            return Err(format!("a malformed error reply: {r}"));
        }
    }
    // The same bytes as a stream: every line is forwarded whole or answered, none lost.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    let (forwarded, replies) = runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut out = Vec::new();
        lines::filter(input, &mut out, tx, &lines::InFlight::default()).await;
        let mut replies = 0usize;
        while rx.recv().await.is_some() {
            replies += 1;
        }
        (out, replies)
    });
    let expected: Vec<&[u8]> = input
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !matches!(lines::classify(l, false), Line::Blank))
        .collect();
    let passed: Vec<&[u8]> = forwarded
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    if passed.len() + replies != expected.len() {
        return Err(format!(
            "{} lines in, {} forwarded and {replies} answered",
            expected.len(),
            passed.len()
        ));
    }
    if let Some(bad) = passed
        .iter()
        .find(|l| lines::classify(l, false) != Line::Message)
    {
        return Err(format!("forwarded a line that is not a message: {bad:?}"));
    }
    Ok(())
}

fn read_corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the corpus {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn save(target: &str, input: &[u8], why: &str) -> PathBuf {
    let dir = yazses_tests::repo_root().join("target/fuzz");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{target}-{:016x}", fxhash(input)));
    let _ = std::fs::write(&path, input);
    eprintln!(
        "yazses-fuzz: {target}: {why}; input saved as {}",
        path.display()
    );
    path
}

fn fxhash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let target = args.first().cloned().unwrap_or_default();
    let run: fn(&[u8], &mut Rng) -> Verdict = match target.as_str() {
        "audio" => audio,
        "jsonrpc" => jsonrpc,
        _ => {
            eprintln!("usage: yazses-fuzz <audio|jsonrpc> [--seconds N] [--seed N] [--corpus DIR]");
            return std::process::ExitCode::from(2);
        }
    };
    let seconds: u64 = flag("--seconds").and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = flag("--seed")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    let corpus_dir = flag("--corpus")
        .map(PathBuf::from)
        .unwrap_or_else(|| yazses_tests::repo_root().join("fuzz/corpus").join(&target));
    let corpus = read_corpus(&corpus_dir);
    assert!(
        !corpus.is_empty(),
        "the corpus {} is empty",
        corpus_dir.display()
    );
    eprintln!(
        "yazses-fuzz: {target} for {seconds} s, seed {seed}, {} seeds from {}",
        corpus.len(),
        corpus_dir.display()
    );

    // A watchdog: an input that runs too long is a hang, saved like a crash.
    let current: Arc<Mutex<(Vec<u8>, Instant)>> =
        Arc::new(Mutex::new((Vec::new(), Instant::now())));
    let watched = current.clone();
    let watched_target = target.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let Ok((input, since)) = watched.lock().map(|g| (g.0.clone(), g.1)) else {
                continue;
            };
            if since.elapsed() > Duration::from_secs(20) {
                save(&watched_target, &input, "an input ran for more than 20 s");
                std::process::exit(1);
            }
        }
    });
    // Panics are caught and reported below; the default hook would print each one.
    std::panic::set_hook(Box::new(|_| {}));

    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut runs = 0u64;
    // Each seed as it is, first.
    let mut queue: Vec<Vec<u8>> = corpus.clone();
    while started.elapsed() < Duration::from_secs(seconds) {
        let input = queue.pop().unwrap_or_else(|| {
            let base = &corpus[rng.below(corpus.len())];
            mutate(base, &corpus, &mut rng)
        });
        if let Ok(mut g) = current.lock() {
            *g = (input.clone(), Instant::now());
        }
        let mut case_rng = Rng(rng.next_u64() | 1);
        let verdict =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&input, &mut case_rng)))
                .unwrap_or_else(|p| {
                    let what = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    Err(format!("panicked: {what}"))
                });
        runs += 1;
        if let Err(why) = verdict {
            save(&target, &input, &why);
            eprintln!("yazses-fuzz: {target}: failed after {runs} inputs (seed {seed})");
            return std::process::ExitCode::FAILURE;
        }
    }
    eprintln!(
        "yazses-fuzz: {target}: {runs} inputs in {:.0} s, no failure (seed {seed})",
        started.elapsed().as_secs_f64()
    );
    std::process::ExitCode::SUCCESS
}
