//! The Windows desktop for dictation.
//!
//! - Typing: `SendInput` with `KEYEVENTF_UNICODE`, one UTF-16 unit per key event, so any
//!   character arrives as written whatever the keyboard layout; a line break is Enter.
//! - Paste: the text put on the clipboard as `CF_UNICODETEXT`, Ctrl+V sent, and the
//!   clipboard's earlier text put back (other formats on it are not kept).
//! - The hotkey: `RegisterHotKey` on a thread of its own that waits for `WM_HOTKEY`.
//!
//! Windows does not let a program type into a window of a higher integrity level (one run
//! as administrator); such a window gets nothing.

// Win32 is C: handles, out-pointers and structures filled by the callee.
#![allow(unsafe_code)]

use std::time::Duration;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, OpenClipboard, SetClipboardData,
};
use windows_sys::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalUnlock};
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, KEYBDINPUT, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MOD_ALT,
    MOD_CONTROL, MOD_NOREPEAT, MOD_SHIFT, MOD_WIN, RegisterHotKey, SendInput, VK_CONTROL,
    VK_ESCAPE, VK_F1, VK_RETURN, VK_SPACE, VK_TAB,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{GetMessageW, MSG, WM_HOTKEY};

use crate::chord::{Chord, keysym};
use crate::deliver::{Deliver, DeliverError};
use crate::hotkey::HotkeyError;
use crate::hotkey_thread::Presses;

/// `CF_UNICODETEXT`: UTF-16 text, NUL-terminated.
const UNICODE_TEXT: u32 = 13;

/// One key event: a virtual key, or (`vk` 0) a UTF-16 unit.
fn key(vk: u16, unit: u16, up: bool) -> INPUT {
    let mut flags = if vk == 0 { KEYEVENTF_UNICODE } else { 0 };
    if up {
        flags |= KEYEVENTF_KEYUP;
    }
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: vk,
                wScan: unit,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

/// The key events that type `text`: each UTF-16 unit pressed and released (a character
/// outside the BMP is its two surrogates, as `KEYEVENTF_UNICODE` expects); `\n` is Enter,
/// and `\r` is dropped.
pub fn key_events(text: &str) -> Vec<INPUT> {
    let mut events = Vec::with_capacity(text.len() * 2);
    for c in text.chars().filter(|&c| c != '\r') {
        if c == '\n' {
            events.extend([key(VK_RETURN, 0, false), key(VK_RETURN, 0, true)]);
            continue;
        }
        let mut units = [0u16; 2];
        for &unit in c.encode_utf16(&mut units).iter() {
            events.extend([key(0, unit, false), key(0, unit, true)]);
        }
    }
    events
}

/// Sends `events` to whatever window has the keyboard focus.
fn send(events: &[INPUT]) -> Result<(), DeliverError> {
    for batch in events.chunks(200) {
        // SAFETY: a slice of initialised INPUTs and their size.
        let sent = unsafe {
            SendInput(
                batch.len() as u32,
                batch.as_ptr(),
                std::mem::size_of::<INPUT>() as i32,
            )
        };
        if sent as usize != batch.len() {
            return Err(DeliverError::Failed(format!(
                "Windows took {sent} of {} key events ({}); a window run as administrator \
                 cannot be typed into from a normal one",
                batch.len(),
                std::io::Error::last_os_error()
            )));
        }
        // Gives the target time to take one batch before the next.
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Types with `SendInput`.
#[derive(Debug, Default)]
pub struct Typer;

impl Deliver for Typer {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        send(&key_events(text))
    }
}

/// The typer: always there on Windows.
pub fn typer() -> Result<Box<dyn Deliver>, DeliverError> {
    Ok(Box::new(Typer))
}

/// The paster: always there on Windows.
pub fn paster() -> Result<Box<dyn Deliver>, DeliverError> {
    Ok(Box::new(Paster))
}

/// Pastes through the clipboard and gives its text back afterwards.
#[derive(Debug, Default)]
pub struct Paster;

/// The clipboard, open for as long as this lives.
struct Clipboard;

impl Clipboard {
    fn open() -> Result<Clipboard, DeliverError> {
        // Another program may hold it for a moment.
        for _ in 0..20 {
            // SAFETY: no owner window; closed by Drop.
            if unsafe { OpenClipboard(std::ptr::null_mut()) } != 0 {
                return Ok(Clipboard);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(DeliverError::Failed(format!(
            "the clipboard is held by another program ({})",
            std::io::Error::last_os_error()
        )))
    }

    /// The text on it, if any.
    fn text(&self) -> Option<Vec<u16>> {
        // SAFETY: the clipboard is open; the data stays valid until it closes, and is read
        // only up to its NUL within the locked block.
        unsafe {
            let data = GetClipboardData(UNICODE_TEXT);
            if data.is_null() {
                return None;
            }
            let p = GlobalLock(data) as *const u16;
            if p.is_null() {
                return None;
            }
            let mut len = 0;
            while *p.add(len) != 0 {
                len += 1;
            }
            let text = std::slice::from_raw_parts(p, len).to_vec();
            GlobalUnlock(data);
            Some(text)
        }
    }

    /// Puts `units` (without NUL) on it in place of what it held.
    fn set(&self, units: &[u16]) -> Result<(), DeliverError> {
        let failed = |what: &str| {
            DeliverError::Failed(format!(
                "{what} the clipboard: {}",
                std::io::Error::last_os_error()
            ))
        };
        // SAFETY: a block of units + 1 u16s, filled and unlocked before the clipboard takes
        // it (from then on it is the clipboard's to free).
        unsafe {
            if EmptyClipboard() == 0 {
                return Err(failed("emptying"));
            }
            let block = GlobalAlloc(GMEM_MOVEABLE, (units.len() + 1) * 2);
            if block.is_null() {
                return Err(failed("allocating for"));
            }
            let p = GlobalLock(block) as *mut u16;
            if p.is_null() {
                return Err(failed("locking memory for"));
            }
            std::ptr::copy_nonoverlapping(units.as_ptr(), p, units.len());
            *p.add(units.len()) = 0;
            GlobalUnlock(block);
            if SetClipboardData(UNICODE_TEXT, block as HANDLE).is_null() {
                return Err(failed("writing to"));
            }
        }
        Ok(())
    }
}

impl Drop for Clipboard {
    fn drop(&mut self) {
        // SAFETY: opened by `open`.
        unsafe { CloseClipboard() };
    }
}

impl Deliver for Paster {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let units: Vec<u16> = text.encode_utf16().collect();
        let before = {
            let clipboard = Clipboard::open()?;
            let before = clipboard.text();
            clipboard.set(&units)?;
            before
        };
        const V: u16 = b'V' as u16;
        let pasted = send(&[
            key(VK_CONTROL, 0, false),
            key(V, 0, false),
            key(V, 0, true),
            key(VK_CONTROL, 0, true),
        ]);
        // The target reads the clipboard when it handles Ctrl+V, some time after.
        std::thread::sleep(Duration::from_millis(300));
        if let Some(before) = before {
            Clipboard::open()?.set(&before)?;
        }
        pasted
    }
}

/// The virtual key of a chord's key; `None` for a keysym Windows has no key for.
fn virtual_key(chord: &Chord) -> Option<u32> {
    if let Some(n) = chord.function_key() {
        return Some(u32::from(VK_F1) + n - 1);
    }
    Some(u32::from(match chord.keysym {
        keysym::SPACE => VK_SPACE,
        keysym::RETURN => VK_RETURN,
        keysym::TAB => VK_TAB,
        keysym::ESCAPE => VK_ESCAPE,
        // Letters and digits: the virtual key is the uppercase character.
        k => {
            return char::from_u32(k)
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_uppercase() as u32);
        }
    }))
}

/// The hotkey, registered with Windows on a thread that waits for its presses.
#[derive(Debug)]
pub struct Listener {
    presses: Presses,
    chord: Chord,
}

impl Listener {
    /// Registers `chord`; fails when another program holds it.
    pub fn bind(chord: &Chord) -> Result<Listener, HotkeyError> {
        let chord = *chord;
        let vk = virtual_key(&chord).ok_or_else(|| {
            HotkeyError::Unavailable(format!("Windows has no key for \"{chord}\""))
        })?;
        let m = chord.modifiers;
        let modifiers = [
            (m.ctrl, MOD_CONTROL),
            (m.alt, MOD_ALT),
            (m.shift, MOD_SHIFT),
            (m.logo, MOD_WIN),
        ]
        .into_iter()
        .filter(|(held, _)| *held)
        .fold(MOD_NOREPEAT, |all, (_, m)| all | m);
        let presses = Presses::spawn(move |registered, press| {
            // A hotkey belongs to the thread that registers it: its presses come to
            // this thread's message queue.
            // SAFETY: no window; id 1 on this thread.
            if unsafe { RegisterHotKey(std::ptr::null_mut(), 1, modifiers, vk) } == 0 {
                let _ = registered.send(Err(HotkeyError::Unavailable(format!(
                        "the hotkey \"{chord}\" is already taken by another program ({}); choose another with [dictate] hotkey",
                        std::io::Error::last_os_error()
                    ))));
                return;
            }
            let _ = registered.send(Ok(()));
            let mut msg: MSG = unsafe { std::mem::zeroed() };
            // SAFETY: a place for each message of this thread's queue.
            while unsafe { GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0) } > 0 {
                if msg.message == WM_HOTKEY && press.try_send(()).is_err() {
                    // The listener is gone (or four presses wait unread).
                    if press.send(()).is_err() {
                        return;
                    }
                }
            }
        })?;
        Ok(Listener { presses, chord })
    }

    /// Blocks until the next press.
    pub fn next_press(&self) -> Result<(), HotkeyError> {
        self.presses.next()
    }

    /// How the key is triggered, for the start-up message.
    pub fn describe(&self) -> String {
        format!("{} (registered with Windows)", self.chord)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(events: &[INPUT]) -> Vec<(u16, u16, bool)> {
        events
            .iter()
            // SAFETY: every event here is a keyboard event.
            .map(|e| unsafe {
                let k = e.Anonymous.ki;
                (k.wVk, k.wScan, k.dwFlags & KEYEVENTF_KEYUP != 0)
            })
            .collect()
    }

    #[test]
    fn text_is_typed_as_utf16_units_whatever_the_layout() {
        assert_eq!(units(&key_events("é")), [(0, 0xe9, false), (0, 0xe9, true)]);
        // Outside the BMP: both surrogates, each pressed and released.
        assert_eq!(
            units(&key_events("🎤")),
            [
                (0, 0xd83c, false),
                (0, 0xd83c, true),
                (0, 0xdfa4, false),
                (0, 0xdfa4, true)
            ]
        );
        assert!(
            key_events("a")
                .iter()
                .all(|e| unsafe { e.Anonymous.ki.dwFlags } & KEYEVENTF_UNICODE != 0)
        );
    }

    #[test]
    fn a_line_break_is_enter_and_a_carriage_return_is_dropped() {
        assert_eq!(
            units(&key_events("a\r\n")),
            [
                (0, u16::from(b'a'), false),
                (0, u16::from(b'a'), true),
                (VK_RETURN, 0, false),
                (VK_RETURN, 0, true)
            ]
        );
    }

    #[test]
    fn hotkeys_map_to_virtual_keys() {
        let vk = |text: &str| virtual_key(&Chord::parse(text).unwrap());
        assert_eq!(vk("ctrl+alt+space"), Some(u32::from(VK_SPACE)));
        assert_eq!(vk("ctrl+d"), Some(u32::from(b'D')));
        assert_eq!(vk("f9"), Some(u32::from(VK_F1) + 8));
        assert_eq!(vk("alt+enter"), Some(u32::from(VK_RETURN)));
    }
}
