//! The dictation hotkey on macOS: a listen-only CoreGraphics event tap on a thread of its own
//! that watches key presses for the chord. Built, never run.
//!
//! macOS lets a program watch the keyboard only once the user allows it under Privacy &
//! Security > Input Monitoring; without that the tap cannot be made and the listener says
//! where to allow it. A listen-only tap sees the chord without taking it from the focused
//! app (Windows' `RegisterHotKey` takes it), so choose a chord no app uses.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::mpsc::SyncSender;

use crate::chord::{Chord, keysym};
use crate::hotkey::HotkeyError;
use crate::hotkey_thread::Presses;

/// `kCGSessionEventTap`: events as they reach the user's session.
const SESSION_TAP: u32 = 1;
/// `kCGHeadInsertEventTap`.
const HEAD_INSERT: u32 = 0;
/// `kCGEventTapOptionListenOnly`: watch, never change or swallow.
const LISTEN_ONLY: u32 = 1;
/// `kCGEventKeyDown`.
const KEY_DOWN: u32 = 10;
/// `kCGEventTapDisabledByTimeout` and `kCGEventTapDisabledByUserInput`: macOS turned the
/// tap off, and it must be turned on again.
const DISABLED: [u32; 2] = [0xFFFF_FFFE, 0xFFFF_FFFF];
/// `kCGKeyboardEventAutorepeat` and `kCGKeyboardEventKeycode`.
const AUTOREPEAT_FIELD: u32 = 8;
const KEYCODE_FIELD: u32 = 9;
/// `kCGEventFlagMask{Shift,Control,Alternate,Command}`.
const SHIFT: u64 = 0x0002_0000;
const CONTROL: u64 = 0x0004_0000;
const OPTION: u64 = 0x0008_0000;
pub(super) const COMMAND: u64 = 0x0010_0000;

/// Where the Input Monitoring permission is granted.
const INPUT_MONITORING: &str = "macOS has not allowed yazses to watch the keyboard for the \
    hotkey: allow it (or the terminal that runs it) in System Settings > Privacy & Security > \
    Input Monitoring, then start the dictation again";

type TapCallback = extern "C" fn(*mut c_void, u32, *mut c_void, *mut c_void) -> *mut c_void;

#[link(name = "CoreGraphics", kind = "framework")]
unsafe extern "C" {
    fn CGEventTapCreate(
        tap: u32,
        place: u32,
        options: u32,
        events: u64,
        callback: TapCallback,
        user_info: *mut c_void,
    ) -> *mut c_void;
    fn CGEventTapEnable(tap: *mut c_void, enable: bool);
    fn CGEventGetIntegerValueField(event: *mut c_void, field: u32) -> i64;
    fn CGEventGetFlags(event: *mut c_void) -> u64;
    fn CGPreflightListenEventAccess() -> bool;
    fn CGRequestListenEventAccess() -> bool;
}

#[link(name = "CoreFoundation", kind = "framework")]
unsafe extern "C" {
    static kCFRunLoopCommonModes: *const c_void;
    fn CFMachPortCreateRunLoopSource(
        allocator: *const c_void,
        port: *mut c_void,
        order: isize,
    ) -> *mut c_void;
    fn CFRunLoopGetCurrent() -> *mut c_void;
    fn CFRunLoopAddSource(run_loop: *mut c_void, source: *mut c_void, mode: *const c_void);
    fn CFRunLoopRun();
    fn CFRunLoopStop(run_loop: *mut c_void);
}

/// The virtual key code (`kVK_*` of HIToolbox's Events.h, where the key sits on a US
/// keyboard) of a chord's key; `None` for one macOS has no key for.
pub fn key_code(chord: &Chord) -> Option<u16> {
    if let Some(n) = chord.function_key() {
        const F: [u16; 12] = [122, 120, 99, 118, 96, 97, 98, 100, 101, 109, 103, 111];
        return F.get(n as usize - 1).copied();
    }
    Some(match chord.keysym {
        keysym::SPACE => 49,
        keysym::RETURN => 36,
        keysym::TAB => 48,
        keysym::ESCAPE => 53,
        k => {
            let c = char::from_u32(k)?.to_ascii_lowercase();
            const LETTERS: &[u8; 26] = &[
                0, 11, 8, 2, 14, 3, 5, 4, 34, 38, 40, 37, 46, 45, 31, 35, 12, 15, 1, 17, 32, 9, 13,
                7, 16, 6,
            ];
            const DIGITS: &[u8; 10] = &[29, 18, 19, 20, 21, 23, 22, 26, 28, 25];
            match c {
                'a'..='z' => u16::from(LETTERS[c as usize - 'a' as usize]),
                '0'..='9' => u16::from(DIGITS[c as usize - '0' as usize]),
                _ => return None,
            }
        }
    })
}

/// The modifier flags a chord holds; the logo key is Command.
pub fn flags(chord: &Chord) -> u64 {
    let m = chord.modifiers;
    [
        (m.ctrl, CONTROL),
        (m.alt, OPTION),
        (m.shift, SHIFT),
        (m.logo, COMMAND),
    ]
    .into_iter()
    .filter(|(held, _)| *held)
    .fold(0, |all, (_, f)| all | f)
}

/// What the tap's callback needs; lives as long as the tap's thread.
struct Watch {
    code: i64,
    flags: u64,
    press: SyncSender<()>,
    tap: AtomicPtr<c_void>,
}

extern "C" fn on_event(
    _proxy: *mut c_void,
    kind: u32,
    event: *mut c_void,
    user_info: *mut c_void,
) -> *mut c_void {
    // SAFETY: `user_info` is the thread's `Watch`, which outlives its run loop.
    let watch = unsafe { &*(user_info as *const Watch) };
    if DISABLED.contains(&kind) {
        // SAFETY: the tap this callback belongs to.
        unsafe { CGEventTapEnable(watch.tap.load(Ordering::Relaxed), true) };
        return event;
    }
    if kind != KEY_DOWN {
        return event;
    }
    // SAFETY: a live key-down event, only read.
    let (code, repeat, held) = unsafe {
        (
            CGEventGetIntegerValueField(event, KEYCODE_FIELD),
            CGEventGetIntegerValueField(event, AUTOREPEAT_FIELD),
            CGEventGetFlags(event) & (SHIFT | CONTROL | OPTION | COMMAND),
        )
    };
    if code == watch.code
        && repeat == 0
        && held == watch.flags
        && let Err(std::sync::mpsc::TrySendError::Disconnected(())) = watch.press.try_send(())
    {
        // The listener is gone: end the thread.
        // SAFETY: this thread's own run loop.
        unsafe { CFRunLoopStop(CFRunLoopGetCurrent()) };
    }
    event
}

/// The hotkey, watched by an event tap on a thread of its own.
#[derive(Debug)]
pub struct Listener {
    presses: Presses,
    chord: Chord,
}

impl Listener {
    /// Starts watching for `chord`; fails without the Input Monitoring permission, after
    /// asking macOS to show its prompt.
    pub fn bind(chord: &Chord) -> Result<Listener, HotkeyError> {
        let chord = *chord;
        let code = key_code(&chord)
            .ok_or_else(|| HotkeyError::Unavailable(format!("macOS has no key for \"{chord}\"")))?;
        // SAFETY: plain queries; the request shows macOS's own prompt at most once.
        if !unsafe { CGPreflightListenEventAccess() } && !unsafe { CGRequestListenEventAccess() } {
            return Err(HotkeyError::Denied(INPUT_MONITORING.into()));
        }
        let flags = flags(&chord);
        let presses = Presses::spawn(move |made, press| {
            let watch = Box::new(Watch {
                code: i64::from(code),
                flags,
                press,
                tap: AtomicPtr::new(std::ptr::null_mut()),
            });
            let user_info = &*watch as *const Watch as *mut c_void;
            // SAFETY: `watch` lives until this thread's run loop ends, below.
            let tap = unsafe {
                CGEventTapCreate(
                    SESSION_TAP,
                    HEAD_INSERT,
                    LISTEN_ONLY,
                    1 << KEY_DOWN,
                    on_event,
                    user_info,
                )
            };
            if tap.is_null() {
                let _ = made.send(Err(HotkeyError::Denied(INPUT_MONITORING.into())));
                return;
            }
            watch.tap.store(tap, Ordering::Relaxed);
            // SAFETY: a live tap, its source added to this thread's run loop, which then
            // runs until the listener is gone.
            unsafe {
                let source = CFMachPortCreateRunLoopSource(std::ptr::null(), tap, 0);
                if source.is_null() {
                    let _ = made.send(Err(HotkeyError::Failed(
                        "macOS would not watch the hotkey's tap".into(),
                    )));
                    return;
                }
                CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopCommonModes);
                CGEventTapEnable(tap, true);
                let _ = made.send(Ok(()));
                CFRunLoopRun();
            }
            drop(watch);
        })?;
        Ok(Listener { presses, chord })
    }

    /// Blocks until the next press.
    pub fn next_press(&self) -> Result<(), HotkeyError> {
        self.presses.next()
    }

    /// How the key is triggered, for the start-up message.
    pub fn describe(&self) -> String {
        format!(
            "{} (watched by a macOS event tap; Command is `super`)",
            self.chord
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<u16> {
        key_code(&Chord::parse(text).unwrap())
    }

    #[test]
    fn keys_are_the_us_keyboard_positions_of_events_h() {
        assert_eq!(code("ctrl+alt+space"), Some(49));
        assert_eq!(code("cmd+a"), Some(0));
        assert_eq!(code("super+v"), Some(9));
        assert_eq!(code("super+z"), Some(6));
        assert_eq!(code("super+0"), Some(29));
        assert_eq!(code("super+5"), Some(23));
        assert_eq!(code("f1"), Some(122));
        assert_eq!(code("f12"), Some(111));
        assert_eq!(code("ctrl+escape"), Some(53));
    }

    #[test]
    fn super_is_command_and_alt_is_option() {
        let chord = Chord::parse("super+alt+shift+ctrl+d").unwrap();
        assert_eq!(flags(&chord), COMMAND | OPTION | SHIFT | CONTROL);
        assert_eq!(flags(&Chord::parse("f5").unwrap()), 0);
    }
}
