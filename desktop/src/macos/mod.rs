//! The macOS desktop for dictation. Built, never run: no Mac has run it (docs/platforms.md).
//!
//! - Typing: CoreGraphics keyboard events carrying the text itself
//!   (`CGEventKeyboardSetUnicodeString`), so any character arrives as written whatever the
//!   keyboard layout; a line break is Return. macOS lets a program post them only once the
//!   user allows it under Accessibility; without that, the typer says where to allow it.
//! - Paste: the text put on the general pasteboard as a string, Command-V posted, and the
//!   pasteboard's earlier text put back unless another program wrote to it meanwhile (other
//!   kinds of content on it are not kept). Command-V is the V key of a US layout carrying
//!   the text "v"; a layout that puts another letter there (Dvorak) may not paste.
//! - The hotkey: a listen-only event tap ([`hotkey`]).
//!
//! Secure input (a password field, or a terminal with "Secure Keyboard Entry" on) drops
//! posted events without a word: nothing is typed there.
#![allow(unsafe_code)]

mod hotkey;

use std::ffi::c_void;
use std::time::Duration;

use objc2_app_kit::{NSPasteboard, NSPasteboardTypeString};
use objc2_foundation::NSString;

use crate::deliver::{Deliver, DeliverError};
use hotkey::COMMAND;

/// The most UTF-16 units one event carries (`CGEventKeyboardSetUnicodeString` takes no more
/// than 20).
const UNITS_PER_EVENT: usize = 20;
/// `kVK_Return`, the Return key's virtual key code.
const RETURN_KEY: u16 = 36;
/// `kVK_ANSI_V`, the V key of a US layout.
const V_KEY: u16 = 9;
/// How long the focused app has to read the pasteboard after Command-V before the earlier
/// text goes back on it.
const PASTE_READ: Duration = Duration::from_millis(300);
/// `kCGHIDEventTap`: where events from the keyboard itself enter.
const HID_EVENT_TAP: u32 = 0;

/// Where the Accessibility permission is granted.
const ACCESSIBILITY: &str = "macOS has not allowed yazses to type into other apps: allow it \
    (or the terminal that runs it) in System Settings > Privacy & Security > Accessibility, \
    then start the dictation again";

#[link(name = "CoreGraphics", kind = "framework")]
unsafe extern "C" {
    fn CGEventCreateKeyboardEvent(source: *const c_void, key: u16, down: bool) -> *mut c_void;
    fn CGEventKeyboardSetUnicodeString(event: *mut c_void, length: usize, text: *const u16);
    fn CGEventPost(tap: u32, event: *mut c_void);
    fn CGEventSetFlags(event: *mut c_void, flags: u64);
    fn CGPreflightPostEventAccess() -> bool;
    fn CGRequestPostEventAccess() -> bool;
}

#[link(name = "CoreFoundation", kind = "framework")]
unsafe extern "C" {
    fn CFRelease(object: *const c_void);
}

/// One key press to post: some text, or Return.
#[derive(Debug, PartialEq, Eq)]
pub enum Key {
    /// Up to [`UNITS_PER_EVENT`] UTF-16 units, never a surrogate pair split.
    Text(Vec<u16>),
    /// The Return key.
    Return,
}

/// The key presses that type `text`: runs of text of at most [`UNITS_PER_EVENT`] UTF-16
/// units, `\n` as Return, `\r` dropped.
pub fn keys(text: &str) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut run: Vec<u16> = Vec::new();
    for c in text.chars().filter(|&c| c != '\r') {
        if c == '\n' {
            if !run.is_empty() {
                keys.push(Key::Text(std::mem::take(&mut run)));
            }
            keys.push(Key::Return);
            continue;
        }
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        if run.len() + units.len() > UNITS_PER_EVENT {
            keys.push(Key::Text(std::mem::take(&mut run)));
        }
        run.extend_from_slice(units);
    }
    if !run.is_empty() {
        keys.push(Key::Text(run));
    }
    keys
}

/// Posts one key's press and release to whatever has the keyboard focus.
fn post(key: &Key) -> Result<(), DeliverError> {
    match key {
        Key::Text(units) => press(0, 0, units),
        Key::Return => press(RETURN_KEY, 0, &[]),
    }
}

/// Posts the press and release of the key `code` with modifier `flags` held, carrying
/// `units` as its text when there are any.
fn press(code: u16, flags: u64, units: &[u16]) -> Result<(), DeliverError> {
    for down in [true, false] {
        // SAFETY: no event source (the default); the event is released below.
        let event = unsafe { CGEventCreateKeyboardEvent(std::ptr::null(), code, down) };
        if event.is_null() {
            return Err(DeliverError::Failed(
                "macOS would not make a keyboard event".into(),
            ));
        }
        // SAFETY: a live event, and units that outlive the call (CoreGraphics copies them).
        unsafe {
            if !units.is_empty() {
                CGEventKeyboardSetUnicodeString(event, units.len(), units.as_ptr());
            }
            if flags != 0 {
                CGEventSetFlags(event, flags);
            }
            CGEventPost(HID_EVENT_TAP, event);
            CFRelease(event);
        }
    }
    Ok(())
}

/// `Err` unless macOS lets this process post keyboard events.
fn may_post() -> Result<(), DeliverError> {
    // SAFETY: a plain query; the permission can be taken back at any time.
    if unsafe { CGPreflightPostEventAccess() } {
        Ok(())
    } else {
        Err(DeliverError::Unavailable(ACCESSIBILITY.into()))
    }
}

/// Types with CoreGraphics keyboard events.
#[derive(Debug, Default)]
pub struct Typer;

impl Deliver for Typer {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        may_post()?;
        for key in keys(text) {
            post(&key)?;
            // Gives the focused app time to take one event before the next.
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }
}

/// The typer, once macOS allows it to post keyboard events (Accessibility). Without that
/// permission, asks macOS to show its prompt and says where to grant it.
pub fn typer() -> Result<Box<dyn Deliver>, DeliverError> {
    ask_to_post()?;
    Ok(Box::new(Typer))
}

/// `Ok` once macOS lets this process post keyboard events; otherwise asks macOS to show its
/// prompt and says where to grant the permission.
fn ask_to_post() -> Result<(), DeliverError> {
    // SAFETY: plain queries; the request shows macOS's own prompt at most once.
    if unsafe { CGPreflightPostEventAccess() } || unsafe { CGRequestPostEventAccess() } {
        return Ok(());
    }
    Err(DeliverError::Unavailable(ACCESSIBILITY.into()))
}

/// The paster, once macOS allows it to post Command-V (Accessibility, as for typing).
pub fn paster() -> Result<Box<dyn Deliver>, DeliverError> {
    ask_to_post()?;
    Ok(Box::new(Paster))
}

/// Pastes through the general pasteboard and gives its text back afterwards.
#[derive(Debug, Default)]
pub struct Paster;

impl Deliver for Paster {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        may_post()?;
        let board = NSPasteboard::generalPasteboard();
        // SAFETY: a constant of AppKit.
        let string = unsafe { NSPasteboardTypeString };
        let before = board.stringForType(string);
        board.clearContents();
        if !board.setString_forType(&NSString::from_str(text), string) {
            return Err(DeliverError::Failed(
                "macOS would not put the text on the pasteboard".into(),
            ));
        }
        let ours = board.changeCount();
        let pasted = press(V_KEY, COMMAND, &[u16::from(b'v')]);
        // The focused app reads the pasteboard when it handles Command-V, some time after.
        std::thread::sleep(PASTE_READ);
        // Puts the earlier text back, unless something else was copied in the meantime.
        if let Some(before) = before
            && board.changeCount() == ours
        {
            board.clearContents();
            board.setString_forType(&before, string);
        }
        pasted
    }
}

pub use hotkey::Listener;

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Key {
        Key::Text(s.encode_utf16().collect())
    }

    #[test]
    fn a_line_break_is_return_and_a_carriage_return_is_dropped() {
        assert_eq!(
            keys("Hi.\r\nNext"),
            vec![text("Hi."), Key::Return, text("Next")]
        );
    }

    #[test]
    fn long_text_goes_in_events_of_twenty_units_without_splitting_a_surrogate_pair() {
        let s = format!("{}😀b", "a".repeat(19));
        assert_eq!(
            keys(&s),
            vec![text(&"a".repeat(19)), text("😀b")],
            "the emoji's two units do not fit beside 19 others"
        );
        assert!(keys(&"x".repeat(45)).iter().all(|k| match k {
            Key::Text(u) => u.len() <= UNITS_PER_EVENT,
            Key::Return => false,
        }));
    }
}
