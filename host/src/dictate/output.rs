//! Where dictated text goes: typed into the focused window, or printed.
//!
//! Typing on X11 goes through the XTEST extension, and is layout-independent: each
//! character's keysym is put on a spare keycode (one the current keymap leaves empty),
//! that key is pressed and released, and the spare keycodes are emptied again at the end.
//! Keys are mapped a batch at a time (as many distinct characters as there are spare keys),
//! so clients reread the keymap once per batch rather than once per character.
//! No character is mapped to a US key position, so a German or French layout, or
//! "Grüße, café", arrives as written.
//!
//! On Wayland there is no portable way for a client to type; `wtype` (the
//! virtual-keyboard protocol, which types Unicode itself) is run, else `ydotool type`.

use std::io::Write;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, Keycode, Keysym,
};
use x11rb::protocol::xtest::ConnectionExt as _;

/// Why text could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    /// Nothing to type with: no display, no typer installed.
    #[error("{0}")]
    Unavailable(String),
    /// The typer failed mid-way (the display went away, the command failed).
    #[error("{0}")]
    Failed(String),
}

/// Delivers one utterance's text.
pub trait Deliver: Send {
    /// Delivers `text` (never empty).
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError>;
}

/// One line per utterance on stdout (scripts and tests).
#[derive(Debug, Default)]
pub struct Stdout;

impl Deliver for Stdout {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(|e| DeliverError::Failed(format!("writing to stdout: {e}")))
    }
}

/// The typer for this session: X11 when `DISPLAY` is set and no Wayland compositor is,
/// else `wtype` or `ydotool` on Wayland. Fails at once, naming what to install.
pub fn typer() -> Result<Box<dyn Deliver>, DeliverError> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty());
    let x11 = std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty());
    if wayland {
        return Ok(Box::new(CommandTyper::find()?));
    }
    if x11 {
        return Ok(Box::new(X11Typer::connect()?));
    }
    Err(DeliverError::Unavailable(
        "there is no display to type into (neither WAYLAND_DISPLAY nor DISPLAY is set); use --output stdout"
            .into(),
    ))
}

/// Types through the X server's XTEST extension.
pub struct X11Typer {
    conn: x11rb::rust_connection::RustConnection,
    spare: Vec<Keycode>,
}

impl std::fmt::Debug for X11Typer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Typer")
            .field("spare", &self.spare)
            .finish_non_exhaustive()
    }
}

/// How many spare keycodes to rotate through.
const SPARE_KEYS: usize = 64;

impl X11Typer {
    /// Connects to `$DISPLAY` and finds spare keycodes.
    pub fn connect() -> Result<X11Typer, DeliverError> {
        X11Typer::connect_to(None)
    }

    /// Connects to `display` (such as ":0"; `None`: `$DISPLAY`) and finds spare keycodes.
    pub fn connect_to(display: Option<&str>) -> Result<X11Typer, DeliverError> {
        let unavailable = |what: String| DeliverError::Unavailable(what);
        let (conn, _) = x11rb::connect(display)
            .map_err(|e| unavailable(format!("cannot connect to the X display: {e}")))?;
        conn.xtest_get_version(2, 2)
            .map_err(|e| unavailable(format!("the X server does not answer XTEST: {e}")))?
            .reply()
            .map_err(|e| unavailable(format!("the X server has no XTEST extension: {e}")))?;
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| unavailable(e.to_string()))?
            .reply()
            .map_err(|e| unavailable(e.to_string()))?;
        let per = usize::from(map.keysyms_per_keycode).max(1);
        // Spare: keycodes with no keysym at all, from the top (where layouts leave gaps).
        let spare: Vec<Keycode> = map
            .keysyms
            .chunks(per)
            .enumerate()
            .filter(|(_, syms)| syms.iter().all(|&s| s == 0))
            .map(|(i, _)| min + i as u8)
            .rev()
            .take(SPARE_KEYS)
            .collect();
        if spare.is_empty() {
            return Err(unavailable(
                "the keyboard map has no free keycode to type unusual characters with".into(),
            ));
        }
        Ok(X11Typer { conn, spare })
    }
}

impl X11Typer {
    fn type_batches(
        &self,
        syms: &[Keysym],
        held: &mut [Option<Keysym>],
    ) -> Result<(), DeliverError> {
        let failed =
            |e: &dyn std::fmt::Display| DeliverError::Failed(format!("typing on X11: {e}"));
        for (i, batch) in batches(syms, self.spare.len()).iter().enumerate() {
            if i > 0 {
                // Keys are about to be given new keysyms: let clients read the keymap the
                // previous batch's keys were sent with first.
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // One keymap change per needed key, then one round trip, then every key of the
            // batch: clients see one MappingNotify per batch, not one per character.
            let mut slot_of = Vec::with_capacity(batch.len());
            let mut fresh = Vec::new();
            for &sym in batch {
                let slot = match held.iter().position(|&h| h == Some(sym)) {
                    Some(slot) => slot,
                    None => {
                        let slot = (0..held.len())
                            .find(|s| !fresh.contains(s) && !batch.contains(&held[*s].unwrap_or(0)))
                            .expect("a batch never needs more keys than there are");
                        self.conn
                            .change_keyboard_mapping(1, self.spare[slot], 2, &[sym, sym])
                            .map_err(|e| failed(&e))?;
                        held[slot] = Some(sym);
                        fresh.push(slot);
                        slot
                    }
                };
                slot_of.push(slot);
            }
            self.sync()?;
            for slot in slot_of {
                for kind in [KEY_PRESS_EVENT, KEY_RELEASE_EVENT] {
                    self.conn
                        .xtest_fake_input(
                            kind,
                            self.spare[slot],
                            x11rb::CURRENT_TIME,
                            x11rb::NONE,
                            0,
                            0,
                            0,
                        )
                        .map_err(|e| failed(&e))?;
                }
            }
            self.sync()?;
        }
        Ok(())
    }

    /// A round trip: everything sent so far has been handled by the server.
    fn sync(&self) -> Result<(), DeliverError> {
        let failed =
            |e: &dyn std::fmt::Display| DeliverError::Failed(format!("typing on X11: {e}"));
        self.conn
            .get_input_focus()
            .map_err(|e| failed(&e))?
            .reply()
            .map_err(|e| failed(&e))?;
        Ok(())
    }
}

impl Deliver for X11Typer {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let syms: Vec<Keysym> = text.chars().filter_map(keysym).collect();
        // Which keysym each spare key holds now.
        let mut held: Vec<Option<Keysym>> = vec![None; self.spare.len()];
        let result = self.type_batches(&syms, &mut held);
        // Leave the keymap as it was, whatever happened; after a pause in which clients
        // read the keymap the last keys were sent with.
        std::thread::sleep(std::time::Duration::from_millis(50));
        for (slot, h) in held.iter().enumerate() {
            if h.is_some() {
                let _ = self
                    .conn
                    .change_keyboard_mapping(1, self.spare[slot], 2, &[0, 0]);
            }
        }
        let _ = self.conn.flush();
        result
    }
}

/// Splits `syms` into batches, each needing at most one spare key per distinct keysym.
fn batches(syms: &[Keysym], keys: usize) -> Vec<Vec<Keysym>> {
    let mut batches: Vec<Vec<Keysym>> = Vec::new();
    let mut distinct: Vec<Keysym> = Vec::new();
    for &sym in syms {
        if !distinct.contains(&sym) {
            if distinct.len() == keys {
                distinct.clear();
                batches.push(Vec::new());
            }
            distinct.push(sym);
        }
        if batches.is_empty() {
            batches.push(Vec::new());
        }
        batches.last_mut().expect("one batch at least").push(sym);
    }
    batches
}

/// The X keysym that types `c`: Latin-1 characters are their own keysyms, other Unicode
/// characters 0x01000000 + the code point; control characters other than newline and tab
/// are dropped.
pub fn keysym(c: char) -> Option<Keysym> {
    match c {
        '\n' => Some(0xff0d), // Return
        '\t' => Some(0xff09), // Tab
        c if c.is_control() => None,
        c if (' '..='~').contains(&c) || ('\u{a0}'..='\u{ff}').contains(&c) => Some(c as u32),
        c => Some(0x0100_0000 + c as u32),
    }
}

/// Types through a Wayland typing program.
#[derive(Debug)]
pub struct CommandTyper {
    program: &'static str,
}

impl CommandTyper {
    /// `wtype` if installed, else `ydotool`; else an error naming both.
    pub fn find() -> Result<CommandTyper, DeliverError> {
        ["wtype", "ydotool"]
            .into_iter()
            .find(|p| installed(p))
            .map(|program| CommandTyper { program })
            .ok_or_else(|| {
                DeliverError::Unavailable(
                    "typing on Wayland needs wtype (the virtual-keyboard protocol; `apt install wtype`) or ydotool; neither is installed. Or use --output stdout"
                        .into(),
                )
            })
    }

    /// The command line that types `text`.
    pub fn command_line(&self, text: &str) -> Vec<String> {
        match self.program {
            // `--` ends the options: text that starts with '-' is typed, not parsed.
            "wtype" => vec!["wtype".into(), "--".into(), text.into()],
            _ => vec!["ydotool".into(), "type".into(), "--".into(), text.into()],
        }
    }
}

impl Deliver for CommandTyper {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let args = self.command_line(text);
        let out = std::process::Command::new(&args[0])
            .args(&args[1..])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| DeliverError::Failed(format!("{} could not run: {e}", self.program)))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(DeliverError::Failed(format!(
                "{} failed ({}): {}",
                self.program,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    }
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms_are_latin1_or_unicode_never_a_us_key_position() {
        assert_eq!(keysym('a'), Some(0x61));
        assert_eq!(keysym('ü'), Some(0xfc));
        assert_eq!(keysym('é'), Some(0xe9));
        assert_eq!(keysym('ß'), Some(0xdf));
        assert_eq!(keysym('€'), Some(0x0100_20ac));
        assert_eq!(keysym('ğ'), Some(0x0100_011f));
        assert_eq!(keysym('\n'), Some(0xff0d));
        assert_eq!(keysym('\u{1b}'), None);
    }

    #[test]
    fn batches_hold_no_more_distinct_keysyms_than_there_are_spare_keys() {
        let syms: Vec<Keysym> = "abcabcdd".chars().map(|c| c as u32).collect();
        let b = batches(&syms, 3);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0], syms[..6]);
        assert_eq!(b[1], syms[6..]);
        assert_eq!(batches(&syms, 64), vec![syms.clone()]);
        assert!(batches(&[], 4).is_empty());
    }

    #[test]
    fn wayland_typers_never_read_the_text_as_options() {
        let wtype = CommandTyper { program: "wtype" };
        assert_eq!(wtype.command_line("-x café"), ["wtype", "--", "-x café"]);
        let ydotool = CommandTyper { program: "ydotool" };
        assert_eq!(ydotool.command_line("hi"), ["ydotool", "type", "--", "hi"]);
    }
}
