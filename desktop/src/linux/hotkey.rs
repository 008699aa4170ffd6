//! The `hotkey` trigger: the key's spelling, which desktop binds it ([`Listener`]), and on
//! X11 a passive key grab on the root window ([`Grab`]). A press of the key toggles the
//! dictation, through the same control socket a desktop shortcut would use.
//!
//! The X11 grab is made with and without Num Lock and Caps Lock, so they do not disable
//! it; a key held down (auto-repeat) toggles once. A key another program has grabbed fails
//! at start, naming the key. Wayland has no client key grabs; there the key is bound
//! through the GlobalShortcuts portal ([`super::portal`]).

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, Keycode, ModMask};

use super::keymap::Keymap;
use super::session::Desktop;
use crate::chord::{Chord, ChordError, keysym};
use crate::hotkey::HotkeyError;

/// A parsed hotkey: modifiers and a keysym.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotkey {
    /// The modifiers that must be held.
    pub modifiers: ModMask,
    /// The key.
    pub keysym: u32,
}

impl From<Chord> for Hotkey {
    fn from(chord: Chord) -> Hotkey {
        let m = chord.modifiers;
        let modifiers = [
            (m.ctrl, ModMask::CONTROL),
            (m.alt, ModMask::M1),
            (m.shift, ModMask::SHIFT),
            (m.logo, ModMask::M4),
        ]
        .into_iter()
        .filter(|(held, _)| *held)
        .fold(ModMask::from(0u16), |all, (_, m)| all | m);
        Hotkey {
            modifiers,
            keysym: chord.keysym,
        }
    }
}

impl Hotkey {
    /// Parses the [`Chord`] spelling, such as "ctrl+alt+space".
    pub fn parse(text: &str) -> Result<Hotkey, ChordError> {
        Chord::parse(text).map(Hotkey::from)
    }
}

/// `chord` in the XDG shortcuts spelling the GlobalShortcuts portal takes as a preferred
/// trigger, such as `CTRL+ALT+space`.
pub fn xdg_trigger(chord: &Chord) -> String {
    let m = chord.modifiers;
    let mut parts: Vec<String> = [
        (m.ctrl, "CTRL"),
        (m.alt, "ALT"),
        (m.shift, "SHIFT"),
        (m.logo, "LOGO"),
    ]
    .into_iter()
    .filter(|(held, _)| *held)
    .map(|(_, n)| n.to_owned())
    .collect();
    parts.push(match (chord.keysym, chord.function_key()) {
        (_, Some(n)) => format!("F{n}"),
        (keysym::SPACE, _) => "space".to_owned(),
        (keysym::RETURN, _) => "Return".to_owned(),
        (keysym::TAB, _) => "Tab".to_owned(),
        (keysym::ESCAPE, _) => "Escape".to_owned(),
        (other, _) => char::from_u32(other).map_or_else(String::new, |c| c.to_string()),
    });
    parts.join("+")
}

/// The desktop that binds the hotkey (on Wayland the GlobalShortcuts portal, since a grab
/// on Xwayland's root would only hear keys typed into X windows), or why there is none.
fn hotkey_desktop(session: Option<Desktop>) -> Result<Desktop, HotkeyError> {
    session.ok_or_else(|| {
        HotkeyError::NoDesktop("the hotkey needs a desktop session (neither WAYLAND_DISPLAY nor DISPLAY is set); use the `command` trigger and `yazses dictate toggle`".into())
    })
}

/// The bound hotkey, on either desktop.
#[derive(Debug)]
pub enum Listener {
    /// Grabbed on the X11 root window.
    X11(Box<Grab>),
    /// Bound through the GlobalShortcuts portal.
    Portal(super::portal::PortalShortcut),
}

impl Listener {
    /// Binds `chord` on the session's desktop.
    pub fn bind(chord: &Chord) -> Result<Listener, HotkeyError> {
        match hotkey_desktop(Desktop::current())? {
            Desktop::X11 => Grab::new(chord, None).map(|g| Listener::X11(Box::new(g))),
            Desktop::Wayland => {
                super::portal::PortalShortcut::bind(xdg_trigger(chord), chord).map(Listener::Portal)
            }
        }
    }

    /// Blocks until the next press.
    pub fn next_press(&self) -> Result<(), HotkeyError> {
        match self {
            Listener::X11(grab) => grab.next_press(),
            Listener::Portal(portal) => portal.next_press(),
        }
    }

    /// How the key is triggered, for the start-up message.
    pub fn describe(&self) -> String {
        match self {
            Listener::X11(grab) => format!("{} (grabbed on the X display)", grab.chord),
            Listener::Portal(p) => format!(
                "{} (bound by the desktop's GlobalShortcuts portal)",
                p.trigger
            ),
        }
    }
}

/// A grabbed hotkey on an X display.
pub struct Grab {
    conn: x11rb::rust_connection::RustConnection,
    keycode: Keycode,
    chord: Chord,
}

impl std::fmt::Debug for Grab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grab")
            .field("keycode", &self.keycode)
            .finish_non_exhaustive()
    }
}

impl Grab {
    /// Grabs `chord` on `display` (`None`: `$DISPLAY`).
    pub fn new(chord: &Chord, display: Option<&str>) -> Result<Grab, HotkeyError> {
        let hotkey = Hotkey::from(*chord);
        let (conn, screen) = x11rb::connect(display)
            .map_err(|e| HotkeyError::NoDesktop(format!("the hotkey needs an X display ({e}); on Wayland, bind a key to `yazses dictate toggle` in the desktop's shortcut settings")))?;
        let root = conn.setup().roots[screen].root;
        let keycode = Keymap::fetch(&conn)
            .map_err(|e| HotkeyError::Failed(e.to_string()))?
            .find(hotkey.keysym, 0..2, &[])
            .ok_or_else(|| {
                HotkeyError::Unavailable(format!("no key on this keyboard types \"{chord}\""))
            })?;
        // Without and with Caps Lock (LOCK) and Num Lock (M2), which would otherwise
        // make the grab miss.
        for extra in [
            0u16,
            u16::from(ModMask::LOCK),
            u16::from(ModMask::M2),
            u16::from(ModMask::LOCK | ModMask::M2),
        ] {
            conn.grab_key(
                false,
                root,
                hotkey.modifiers | ModMask::from(extra),
                keycode,
                GrabMode::ASYNC,
                GrabMode::ASYNC,
            )
            .map_err(|e| HotkeyError::Failed(format!("the X display failed: {e}")))?
            .check()
            .map_err(|_| HotkeyError::Unavailable(format!("the hotkey \"{chord}\" is already taken by another program; choose another with [dictate] hotkey")))?;
        }
        Ok(Grab {
            conn,
            keycode,
            chord: *chord,
        })
    }

    /// Blocks until the next press of the hotkey (auto-repeat while held is not a press).
    pub fn next_press(&self) -> Result<(), HotkeyError> {
        let gone = |e: x11rb::errors::ConnectionError| {
            HotkeyError::Ended(format!("the X display went away: {e}"))
        };
        let mut down = false;
        loop {
            let event = self.conn.wait_for_event().map_err(gone)?;
            match event {
                Event::KeyPress(k) if k.detail == self.keycode && !down => return Ok(()),
                Event::KeyRelease(k) if k.detail == self.keycode => {
                    // Auto-repeat sends a release and a press with the same time.
                    match self.conn.poll_for_event().map_err(gone)? {
                        Some(Event::KeyPress(p))
                            if p.detail == self.keycode && p.time == k.time =>
                        {
                            down = true;
                        }
                        _ => down = false,
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotkeys_parse_with_their_modifiers() {
        let h = Hotkey::parse("ctrl+alt+space").unwrap();
        assert_eq!(h.modifiers, ModMask::CONTROL | ModMask::M1);
        assert_eq!(h.keysym, 0x20);
        assert_eq!(Hotkey::parse("Super+F9").unwrap().keysym, 0xffc6);
        assert_eq!(Hotkey::parse("shift + d").unwrap().keysym, u32::from(b'd'));
        for bad in ["ctrl+alt", "ctrl+kitten", "a+b", "f13", ""] {
            assert!(Hotkey::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hotkeys_are_offered_to_the_portal_in_the_xdg_shortcuts_spelling() {
        let spelled = |text: &str| xdg_trigger(&Chord::parse(text).unwrap());
        assert_eq!(spelled("ctrl+alt+space"), "CTRL+ALT+space");
        assert_eq!(spelled("super+shift+F9"), "SHIFT+LOGO+F9");
        assert_eq!(spelled("alt+enter"), "ALT+Return");
        assert_eq!(spelled("ctrl+D"), "CTRL+d");
        assert_eq!(spelled("f12"), "F12");
        assert_eq!(spelled("ctrl+esc"), "CTRL+Escape");
    }

    #[test]
    fn a_wayland_session_binds_through_the_portal_even_with_xwayland_beside_it() {
        use Desktop::*;
        assert_eq!(
            hotkey_desktop(Desktop::of_session(Some("wayland-0"), Some(":0"))).ok(),
            Some(Wayland)
        );
        assert_eq!(
            hotkey_desktop(Desktop::of_session(Some("wayland-1"), None)).ok(),
            Some(Wayland)
        );
        assert_eq!(
            hotkey_desktop(Desktop::of_session(Some(""), Some(":0"))).ok(),
            Some(X11)
        );
        assert_eq!(
            hotkey_desktop(Desktop::of_session(None, Some(":1"))).ok(),
            Some(X11)
        );
        let none = hotkey_desktop(Desktop::of_session(None, Some(""))).unwrap_err();
        assert!(matches!(none, HotkeyError::NoDesktop(_)), "{none}");
        assert!(none.to_string().contains("yazses dictate toggle"), "{none}");
    }
}
