//! The spelling of `[dictate] hotkey`, the same on every desktop: modifiers and one key,
//! such as `ctrl+alt+space`. Each desktop in this crate turns a
//! [`Chord`] into its own key codes.

/// The modifiers a chord holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Control.
    pub ctrl: bool,
    /// Alt.
    pub alt: bool,
    /// Shift.
    pub shift: bool,
    /// The logo key: Super on Linux, Windows on Windows, Command on macOS.
    pub logo: bool,
}

/// A parsed hotkey: modifiers and one key, the key as an X keysym (a lowercase letter or
/// a digit as itself, space 0x20, the named keys and F1-F12 as X numbers them), a
/// numbering every desktop can translate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chord {
    /// The modifiers that must be held.
    pub modifiers: Modifiers,
    /// The key.
    pub keysym: u32,
}

/// X's keysyms for the named keys.
pub mod keysym {
    /// Space.
    pub const SPACE: u32 = 0x20;
    /// Enter.
    pub const RETURN: u32 = 0xff0d;
    /// Tab.
    pub const TAB: u32 = 0xff09;
    /// Escape.
    pub const ESCAPE: u32 = 0xff1b;
    /// F1; F2-F12 follow it.
    pub const F1: u32 = 0xffbe;
}

/// Why a `[dictate] hotkey` spelling is not a chord.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChordError {
    /// More than one key besides the modifiers.
    #[error("{0:?} names two keys; write one key after the modifiers, such as ctrl+alt+space")]
    TwoKeys(String),
    /// A part that is neither a modifier nor a key yazses knows.
    #[error(
        "{part:?} in {text:?} is not a key yazses knows: use a letter, a digit, space, enter, tab, escape or f1-f12"
    )]
    UnknownKey {
        /// The part.
        part: String,
        /// The whole spelling.
        text: String,
    },
    /// Only modifiers.
    #[error("{0:?} names no key, only modifiers")]
    NoKey(String),
}

impl Chord {
    /// Parses "ctrl+alt+space" style: modifiers (ctrl, alt or option, shift, super, win or
    /// cmd) and one key (a
    /// letter or digit, space, enter, tab, escape, f1-f12), case-insensitive.
    pub fn parse(text: &str) -> Result<Chord, ChordError> {
        let mut modifiers = Modifiers::default();
        let mut key = None;
        for part in text.split('+').map(|p| p.trim().to_ascii_lowercase()) {
            let held = match part.as_str() {
                "ctrl" | "control" => &mut modifiers.ctrl,
                "alt" | "option" | "opt" => &mut modifiers.alt,
                "shift" => &mut modifiers.shift,
                "super" | "win" | "meta" | "cmd" | "command" => &mut modifiers.logo,
                _ => {
                    if key.is_some() {
                        return Err(ChordError::TwoKeys(text.to_owned()));
                    }
                    key = Some(key_name(&part).ok_or_else(|| ChordError::UnknownKey {
                        part: part.clone(),
                        text: text.to_owned(),
                    })?);
                    continue;
                }
            };
            *held = true;
        }
        let keysym = key.ok_or_else(|| ChordError::NoKey(text.to_owned()))?;
        Ok(Chord { modifiers, keysym })
    }

    /// The function key's number (1-12), when the key is one.
    pub fn function_key(&self) -> Option<u32> {
        (keysym::F1..keysym::F1 + 12)
            .contains(&self.keysym)
            .then(|| self.keysym - keysym::F1 + 1)
    }
}

/// Writes the chord back in the spelling [`Chord::parse`] reads, lowercase, with the
/// modifiers in one order (`ctrl+alt+shift+super+space`), so every message names a key
/// the same way however the configuration wrote it.
impl std::fmt::Display for Chord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.modifiers;
        for (held, name) in [
            (m.ctrl, "ctrl"),
            (m.alt, "alt"),
            (m.shift, "shift"),
            (m.logo, "super"),
        ] {
            if held {
                write!(f, "{name}+")?;
            }
        }
        match self.keysym {
            keysym::SPACE => f.write_str("space"),
            keysym::RETURN => f.write_str("enter"),
            keysym::TAB => f.write_str("tab"),
            keysym::ESCAPE => f.write_str("escape"),
            _ => match self.function_key() {
                Some(n) => write!(f, "f{n}"),
                None => match char::from_u32(self.keysym) {
                    Some(c) if c.is_ascii_alphanumeric() => write!(f, "{c}"),
                    _ => write!(f, "keysym {:#x}", self.keysym),
                },
            },
        }
    }
}

impl std::str::FromStr for Chord {
    type Err = ChordError;

    fn from_str(text: &str) -> Result<Chord, ChordError> {
        Chord::parse(text)
    }
}

fn key_name(name: &str) -> Option<u32> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && c.is_ascii_alphanumeric()
    {
        return Some(c as u32);
    }
    Some(match name {
        "space" => keysym::SPACE,
        "enter" | "return" => keysym::RETURN,
        "tab" => keysym::TAB,
        "escape" | "esc" => keysym::ESCAPE,
        f if f.starts_with('f') => {
            let n: u32 = f[1..].parse().ok().filter(|n| (1..=12).contains(n))?;
            keysym::F1 + n - 1
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_with_their_modifiers() {
        let c = Chord::parse("ctrl+alt+space").unwrap();
        let ctrl_alt = Modifiers {
            ctrl: true,
            alt: true,
            ..Modifiers::default()
        };
        assert_eq!(c.modifiers, ctrl_alt);
        assert_eq!(c.keysym, keysym::SPACE);
        let f9 = Chord::parse("Super+F9").unwrap();
        assert_eq!((f9.keysym, f9.function_key()), (0xffc6, Some(9)));
        assert!(f9.modifiers.logo);
        assert_eq!(Chord::parse("shift + d").unwrap().keysym, u32::from(b'd'));
        assert_eq!(Chord::parse("esc").unwrap().function_key(), None);
        assert_eq!(
            Chord::parse("ctrl+alt"),
            Err(ChordError::NoKey("ctrl+alt".into()))
        );
        for bad in ["ctrl+kitten", "f13", "f0", ""] {
            assert!(
                matches!(Chord::parse(bad), Err(ChordError::UnknownKey { .. })),
                "{bad}"
            );
        }
        assert_eq!(Chord::parse("a+b"), Err(ChordError::TwoKeys("a+b".into())));
    }

    #[test]
    fn a_mac_spelling_means_the_same_chord() {
        assert_eq!(
            Chord::parse("cmd+option+space"),
            Chord::parse("super+alt+space")
        );
        assert_eq!(Chord::parse("Command+Opt+d"), Chord::parse("super+alt+d"));
    }

    #[test]
    fn a_chord_is_written_in_one_spelling() {
        let written = |text: &str| Chord::parse(text).unwrap().to_string();
        assert_eq!(written("Space + Alt + CTRL"), "ctrl+alt+space");
        assert_eq!(written("cmd+shift+F12"), "shift+super+f12");
        assert_eq!(written("option+return"), "alt+enter");
        assert_eq!(written("esc"), "escape");
        assert_eq!(written("ctrl+7"), "ctrl+7");
    }

    proptest::proptest! {
        /// Whatever the order, case and aliases of a spelling, the chord written back
        /// reads as the same chord.
        #[test]
        fn a_written_chord_reads_back_as_itself(
            held in proptest::sample::subsequence(
                vec!["Ctrl", "control", "ALT", "option", "shift", "super", "cmd", "win"], 0..4),
            key in proptest::sample::select(vec![
                "a", "Z", "0", "9", "space", "Enter", "return", "tab", "Esc", "escape", "f1", "F12",
            ]),
            key_at in 0usize..5,
        ) {
            let mut parts: Vec<&str> = held;
            parts.insert(key_at.min(parts.len()), key);
            let chord = Chord::parse(&parts.join("+")).unwrap();
            proptest::prop_assert_eq!(chord.to_string().parse::<Chord>(), Ok(chord));
        }
    }
}
