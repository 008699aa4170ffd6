//! A `socat` pseudo-terminal pair and the dongle simulator on one end of it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch;

/// A socat pty pair: `dongle` for the simulator, `host` for yazses. Killed on drop.
pub struct PtyPair {
    socat: Child,
    /// The simulator's end.
    pub dongle: PathBuf,
    /// yazses' end (a symlink to `/dev/pts/N`).
    pub host: PathBuf,
}

impl PtyPair {
    /// Starts socat with the two ends as links in a scratch folder named after `name`.
    pub fn new(name: &str) -> PtyPair {
        let dir = scratch().join(format!("pty-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dongle = dir.join("dongle");
        let host = dir.join("host");
        let _ = std::fs::remove_file(&dongle);
        let _ = std::fs::remove_file(&host);
        let socat = Command::new("socat")
            .arg(format!("pty,raw,echo=0,link={}", dongle.display()))
            .arg(format!("pty,raw,echo=0,link={}", host.display()))
            .stdin(Stdio::null())
            .spawn()
            .expect("socat runs (apt install socat; .ci/run installs it)");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(dongle.exists() && host.exists()) {
            assert!(Instant::now() < deadline, "socat made no pty pair");
            std::thread::sleep(Duration::from_millis(20));
        }
        PtyPair {
            socat,
            dongle,
            host,
        }
    }

    /// Runs the simulator `sim` on the dongle's end, playing `wav` at 4x real time, with
    /// `faults` (its flags) injected.
    pub fn simulate(&self, sim: &Path, wav: &Path, faults: &[&str]) -> Child {
        Command::new(sim)
            .arg("--port")
            .arg(&self.dongle)
            .arg("--wav")
            .arg(wav)
            .args(["--speed", "4"])
            .args(faults)
            .stdin(Stdio::null())
            .spawn()
            .expect("the simulator runs")
    }
}

impl Drop for PtyPair {
    fn drop(&mut self) {
        let _ = self.socat.kill();
        let _ = self.socat.wait();
    }
}
