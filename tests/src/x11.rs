//! A real X server (Xvfb) and a real X client (xterm) that writes what it is typed into a
//! file, for the dictation typing tests. No window manager: the keyboard focus follows the
//! pointer, and the xterm covers the whole screen.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb server, stopped when dropped.
pub struct Xvfb {
    child: Child,
    /// Its display, such as `:93`.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display it picks itself (`-displayfd`: it writes the number it
    /// took, so two tests starting servers at once never share one).
    pub fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb runs: apt-get install xvfb");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("piped")),
            &mut line,
        )
        .expect("Xvfb says its display");
        let num: u32 = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("Xvfb did not start (it said {line:?})")
        });
        Xvfb {
            child,
            display: format!(":{num}"),
        }
    }

    /// Runs an X program on this display to completion.
    pub fn run(&self, program: &str, args: &[&str]) -> std::process::Output {
        Command::new(program)
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .unwrap_or_else(|e| {
                panic!("{program} runs ({e}): apt-get install x11-utils x11-xkb-utils")
            })
    }

    /// An xterm over the whole screen whose shell copies every typed character into
    /// `out` as it arrives (no line buffering, no echo), in a UTF-8 locale.
    pub fn xterm_into(&self, out: &Path) -> Child {
        let child = Command::new("xterm")
            .args(["-geometry", "400x200+0+0", "-u8", "-e", "sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                out.display()
            ))
            .env("DISPLAY", &self.display)
            .env("LC_ALL", "C.UTF-8")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xterm runs: apt-get install xterm");
        // Ready when its shell has made the file.
        let deadline = Instant::now() + Duration::from_secs(15);
        while !out.exists() {
            assert!(Instant::now() < deadline, "xterm never started its shell");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        child
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `out` holds `expected` (or more), and returns what it holds.
pub fn wait_for_text(out: &Path, expected: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let got = std::fs::read_to_string(out).unwrap_or_default();
        if got.contains(expected) || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
