//! Where dictated text goes: typed into the focused window, or printed.
//!
//! Typing on X11 goes through the XTEST extension, and is layout-independent: each
//! character's keysym is put on a spare keycode (one the current keymap leaves empty),
//! that key is pressed and released; the spare keycodes are emptied again when the typer
//! ends. Characters the current layout already has a key for (on its first level, or the
//! second with Shift) are typed on that key, so ordinary text changes no keymap at all.
//! The others are mapped a batch at a time (as many distinct characters as there are spare
//! keys), so clients reread the keymap once per batch rather than once per character.
//! No character is mapped to a US key position, so a German or French layout, or
//! "Grüße, café", arrives as written.
//!
//! On Wayland there is no portable way for a client to type; `wtype` (the
//! virtual-keyboard protocol, which types Unicode itself) is run, else `ydotool type`.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AutoRepeatMode, ChangeKeyboardControlAux, ConnectionExt as _, KEY_PRESS_EVENT,
    KEY_RELEASE_EVENT, Keycode, Keysym,
};
use x11rb::protocol::xtest::ConnectionExt as _;

use super::focus::Aim;
use super::installed;
use super::keymap::Keymap;
use super::session::Desktop;
use crate::deliver::{Deliver, DeliverError};

/// The typer for this session: X11 when `DISPLAY` is set and no Wayland compositor is,
/// else `wtype` or `ydotool` on Wayland. Fails at once, naming what to install.
pub fn typer() -> Result<Box<dyn Deliver>, DeliverError> {
    match Desktop::current() {
        Some(Desktop::Wayland) => Ok(Box::new(CommandTyper::find()?)),
        Some(Desktop::X11) => Ok(Box::new(X11Typer::connect()?)),
        None => Err(DeliverError::Unavailable(
            "there is no display to type into (neither WAYLAND_DISPLAY nor DISPLAY is set); use --output stdout"
                .into(),
        )),
    }
}

/// The paster for this session: the Wayland clipboard through wl-clipboard and wtype when
/// a Wayland compositor is running, else the X11 clipboard. Fails at once, naming what to
/// install.
pub fn paster() -> Result<Box<dyn Deliver>, DeliverError> {
    match Desktop::current() {
        Some(Desktop::Wayland) => Ok(Box::new(super::wayland_paste::WaylandPaster::find()?)),
        Some(Desktop::X11) => Ok(Box::new(super::paste::X11Paster::connect_to(None)?)),
        None => Err(DeliverError::Unavailable(
            "there is no display to paste into (neither WAYLAND_DISPLAY nor DISPLAY is set); use --output stdout".into(),
        )),
    }
}

/// Types through the X server's XTEST extension.
pub struct X11Typer {
    conn: x11rb::rust_connection::RustConnection,
    /// Consecutive empty keycodes.
    spare: Vec<Keycode>,
    /// Which keysym each spare key holds now. Kept between utterances (a repeated
    /// character needs no new mapping) and emptied when the typer is dropped: emptying
    /// them right after typing could reach a client before it has read the keys it was
    /// sent.
    held: Vec<Option<Keysym>>,
    /// The window the dictation began in.
    aim: Aim,
}

impl std::fmt::Debug for X11Typer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Typer")
            .field("spare", &self.spare)
            .finish_non_exhaustive()
    }
}

fn typing_failed(e: impl std::fmt::Display) -> DeliverError {
    DeliverError::Failed(format!("typing on X11: {e}"))
}

/// The most spare keycodes used.
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
        // Spare: keycodes with no keysym at all, from the top (where layouts leave gaps),
        // in ascending order so that runs of them are mapped by one request each.
        let mut spare: Vec<Keycode> = Keymap::fetch(&conn)
            .map_err(|e| unavailable(e.to_string()))?
            .empty()
            .rev()
            .take(SPARE_KEYS)
            .collect();
        spare.sort_unstable();
        if spare.is_empty() {
            return Err(unavailable(
                "the keyboard map has no free keycode to type unusual characters with".into(),
            ));
        }
        // A busy machine can hold a key down long enough to repeat: not these keys.
        for &key in &spare {
            conn.change_keyboard_control(
                &ChangeKeyboardControlAux::new()
                    .key(u32::from(key))
                    .auto_repeat_mode(AutoRepeatMode::OFF),
            )
            .map_err(|e| unavailable(e.to_string()))?;
        }
        let held = vec![None; spare.len()];
        Ok(X11Typer {
            conn,
            spare,
            held,
            aim: Aim::default(),
        })
    }
}

/// How one character is typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stroke {
    /// A key the current layout already has for it, with Shift or without.
    Key { code: Keycode, shift: bool },
    /// A spare key given this keysym.
    Spare(Keysym),
}

impl X11Typer {
    /// How each keysym is typed under the keymap the server has now: a key that types it
    /// (first level, or second with Shift) where the layout has one, so ordinary text
    /// needs no keymap change at all (no client has to reread the keymap in time); a spare
    /// key otherwise.
    fn strokes(&self, syms: &[Keysym]) -> Result<(Vec<Stroke>, Option<Keycode>), DeliverError> {
        let map = Keymap::fetch(&self.conn).map_err(typing_failed)?;
        let find = |sym: Keysym, level: usize| map.find(sym, level..level + 1, &self.spare);
        let shift = find(0xffe1, 0); // Shift_L
        let strokes = syms
            .iter()
            .map(|&sym| {
                if let Some(code) = find(sym, 0) {
                    return Stroke::Key { code, shift: false };
                }
                match (find(sym, 1), shift) {
                    (Some(code), Some(_)) => Stroke::Key { code, shift: true },
                    _ => Stroke::Spare(sym),
                }
            })
            .collect();
        Ok((strokes, shift))
    }

    fn type_strokes(
        &mut self,
        strokes: &[Stroke],
        shift: Option<Keycode>,
    ) -> Result<(), DeliverError> {
        let spare_sym = |s: &Stroke| match s {
            Stroke::Spare(sym) => Some(*sym),
            Stroke::Key { .. } => None,
        };
        for batch in batches(strokes, self.spare.len(), spare_sym) {
            let mut changed = false;
            let needed: Vec<Keysym> = batch.iter().filter_map(spare_sym).collect();
            for &sym in &needed {
                if !self.held.contains(&Some(sym)) {
                    let slot = (0..self.held.len())
                        .find(|&s| self.held[s].is_none_or(|h| !needed.contains(&h)))
                        .expect("a batch never needs more keys than there are");
                    self.held[slot] = Some(sym);
                    changed = true;
                }
            }
            if changed {
                // One request per run of consecutive spare keys, then a pause in which
                // clients reread the keymap before the first key that needs it arrives.
                for (start, len) in runs(&self.spare) {
                    let flat: Vec<Keysym> = self.held[start..start + len]
                        .iter()
                        .flat_map(|h| [h.unwrap_or(0), h.unwrap_or(0)])
                        .collect();
                    self.conn
                        .change_keyboard_mapping(len as u8, self.spare[start], 2, &flat)
                        .map_err(typing_failed)?;
                }
                self.sync()?;
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            let mut events: Vec<(u8, Keycode)> = Vec::new();
            for stroke in batch {
                let (code, shifted) = match *stroke {
                    Stroke::Key { code, shift } => (code, shift),
                    Stroke::Spare(sym) => {
                        let slot = self
                            .held
                            .iter()
                            .position(|&h| h == Some(sym))
                            .expect("mapped above");
                        (self.spare[slot], false)
                    }
                };
                let shift_key = shift.filter(|_| shifted);
                if let Some(s) = shift_key {
                    events.push((KEY_PRESS_EVENT, s));
                }
                events.push((KEY_PRESS_EVENT, code));
                events.push((KEY_RELEASE_EVENT, code));
                if let Some(s) = shift_key {
                    events.push((KEY_RELEASE_EVENT, s));
                }
            }
            for (kind, code) in events {
                self.conn
                    .xtest_fake_input(kind, code, x11rb::CURRENT_TIME, x11rb::NONE, 0, 0, 0)
                    .map_err(typing_failed)?;
            }
            self.sync()?;
        }
        Ok(())
    }

    /// A round trip: everything sent so far has been handled by the server.
    fn sync(&self) -> Result<(), DeliverError> {
        self.conn
            .get_input_focus()
            .map_err(typing_failed)?
            .reply()
            .map_err(typing_failed)?;
        Ok(())
    }
}

impl Deliver for X11Typer {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        std::mem::take(&mut self.aim).still_there(&self.conn)?;
        let syms: Vec<Keysym> = text.chars().filter_map(keysym).collect();
        let (strokes, shift) = self.strokes(&syms)?;
        self.type_strokes(&strokes, shift)
    }

    fn aim(&mut self) {
        self.aim = Aim::now(&self.conn);
    }
}

impl Drop for X11Typer {
    fn drop(&mut self) {
        // Leave the keymap as it was.
        if self.held.iter().any(Option::is_some) {
            for (start, len) in runs(&self.spare) {
                let empty = vec![0; 2 * len];
                let _ = self
                    .conn
                    .change_keyboard_mapping(len as u8, self.spare[start], 2, &empty);
            }
            let _ = self.conn.flush();
        }
    }
}

/// Runs of consecutive keycodes in `keys` (ascending): (index of the first, length).
fn runs(keys: &[Keycode]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, &k) in keys.iter().enumerate() {
        match out.last_mut() {
            Some((start, len)) if keys[*start] as usize + *len == k as usize => *len += 1,
            _ => out.push((i, 1)),
        }
    }
    out
}

/// Splits `items` into runs in order, each needing at most `keys` distinct keysyms on spare
/// keys (`spare_sym` says which keysym an item needs a spare key for, if any).
fn batches<T>(items: &[T], keys: usize, spare_sym: impl Fn(&T) -> Option<Keysym>) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut distinct: Vec<Keysym> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(sym) = spare_sym(item)
            && !distinct.contains(&sym)
        {
            if distinct.len() == keys {
                out.push(&items[start..i]);
                start = i;
                distinct.clear();
            }
            distinct.push(sym);
        }
    }
    if start < items.len() {
        out.push(&items[start..]);
    }
    out
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
        let b = batches(&syms, 3, |&s| Some(s));
        assert_eq!(b, [&syms[..6], &syms[6..]]);
        assert_eq!(batches(&syms, 64, |&s| Some(s)), [&syms[..]]);
        // Items that need no spare key never start a batch.
        assert_eq!(
            batches(&syms, 1, |&s| (s == 0x64).then_some(s)),
            [&syms[..]]
        );
        assert!(batches(&[] as &[Keysym], 4, |&s| Some(s)).is_empty());
    }

    #[test]
    fn spare_keys_are_mapped_in_runs_of_consecutive_keycodes() {
        assert_eq!(runs(&[8, 9, 10, 20, 22, 23]), [(0, 3), (3, 1), (4, 2)]);
        assert_eq!(runs(&[255]), [(0, 1)]);
        assert!(runs(&[]).is_empty());
    }

    #[test]
    fn wayland_typers_never_read_the_text_as_options() {
        let wtype = CommandTyper { program: "wtype" };
        assert_eq!(wtype.command_line("-x café"), ["wtype", "--", "-x café"]);
        let ydotool = CommandTyper { program: "ydotool" };
        assert_eq!(ydotool.command_line("hi"), ["ydotool", "type", "--", "hi"]);
    }
}
