//! The `paste` output on Wayland, through `wl-clipboard` and `wtype`: the clipboard's text
//! is read (`wl-paste`), the dictated text offered once (`wl-copy --foreground
//! --paste-once`), the paste keystroke (Ctrl+V) typed through the virtual-keyboard protocol
//! (`wtype`), and once the focused program has taken the text, the clipboard is given back
//! what it held (`wl-copy`), or cleared when it held nothing.
//!
//! Offering the text once is how this knows the paste happened: `wl-copy` exits after
//! serving it. A window that does not paste on Ctrl+V (a terminal that wants Ctrl+Shift+V)
//! takes nothing within two seconds; then the clipboard is restored and the error says so.
//! What the clipboard held is restored as text: an image on it is not kept.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::installed;
use crate::deliver::{Deliver, DeliverError};

/// How long the focused program has to take the text after the keystroke.
const TAKE_WITHIN: Duration = Duration::from_secs(2);

/// Pastes through the Wayland clipboard.
#[derive(Debug)]
pub struct WaylandPaster;

impl WaylandPaster {
    /// A paster, or why not: `wl-copy`, `wl-paste` and `wtype` must be installed.
    pub fn find() -> Result<WaylandPaster, DeliverError> {
        let missing: Vec<&str> = ["wl-copy", "wl-paste", "wtype"]
            .into_iter()
            .filter(|p| !installed(p))
            .collect();
        if missing.is_empty() {
            Ok(WaylandPaster)
        } else {
            Err(DeliverError::Unavailable(format!(
                "pasting on Wayland needs {} (`apt install wl-clipboard wtype`); or use --output type or stdout",
                missing.join(" and ")
            )))
        }
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> DeliverError {
    DeliverError::Failed(format!("{what}: {e}"))
}

/// The clipboard's text, or `None` when it holds none.
fn clipboard_text() -> Option<Vec<u8>> {
    let out = Command::new("wl-paste")
        .args(["--no-newline", "--type", "text"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Puts `bytes` on the clipboard (or clears it) and returns once it is there.
fn set_clipboard(bytes: Option<&[u8]>) -> Result<(), DeliverError> {
    let mut command = Command::new("wl-copy");
    match bytes {
        None => command.arg("--clear").stdin(Stdio::null()),
        Some(_) => command.stdin(Stdio::piped()),
    };
    // Without --foreground, wl-copy returns once it holds the selection (a child of its
    // own keeps serving it, and keeps whatever descriptors it was given: so no pipe but
    // stdin, or waiting for their end would wait for the next copy).
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("wl-copy could not run", e))?;
    if let (Some(bytes), Some(mut stdin)) = (bytes, child.stdin.take()) {
        stdin
            .write_all(bytes)
            .map_err(|e| failed("writing to wl-copy", e))?;
    }
    let status = child.wait().map_err(|e| failed("wl-copy", e))?;
    if status.success() {
        Ok(())
    } else {
        Err(DeliverError::Failed(format!("wl-copy failed ({status})")))
    }
}

/// Offers `text` for one paste; the child exits once it has been pasted.
fn offer_once(text: &str) -> Result<Child, DeliverError> {
    let mut child = Command::new("wl-copy")
        .args([
            "--foreground",
            "--paste-once",
            "--type",
            "text/plain;charset=utf-8",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("wl-copy could not run", e))?;
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(text.as_bytes())
        .map_err(|e| failed("writing to wl-copy", e))?;
    drop(stdin);
    Ok(child)
}

/// Waits for `child` to exit, at most `limit`; kills it after that. True if it exited.
fn exited_within(child: &mut Child, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

impl Deliver for WaylandPaster {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let before = clipboard_text();
        let mut offer = offer_once(text)?;
        // wl-copy in the foreground has nothing to say when it holds the selection; it
        // takes it within a few milliseconds of starting.
        std::thread::sleep(Duration::from_millis(150));
        let keys = Command::new("wtype")
            .args(["-M", "ctrl", "v", "-m", "ctrl"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| failed("wtype could not run", e));
        let taken = keys.is_ok() && exited_within(&mut offer, TAKE_WITHIN);
        let restored = set_clipboard(before.as_deref());
        let keys = keys?;
        if !keys.status.success() {
            return Err(DeliverError::Failed(format!(
                "wtype failed ({}): {}",
                keys.status,
                String::from_utf8_lossy(&keys.stderr).trim()
            )));
        }
        if !taken {
            return Err(DeliverError::Failed(
                "the focused window did not take the paste within 2 s (it may paste with another key than Ctrl+V); use --output type"
                    .into(),
            ));
        }
        if let Err(e) = restored {
            tracing::warn!(error = %e, "the clipboard could not be given back what it held");
        }
        Ok(())
    }
}
