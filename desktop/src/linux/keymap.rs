//! The X server's core keyboard map, as the typers and the hotkey read it: which keycode
//! types a keysym, and which keycodes type nothing.

use std::ops::Range;

use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode, Keysym};

/// The keysyms of every keycode, read in one request.
#[derive(Clone, Debug)]
pub struct Keymap {
    min: Keycode,
    per: usize,
    syms: Vec<Keysym>,
}

impl Keymap {
    /// The map the server has now.
    pub fn fetch(conn: &impl Connection) -> Result<Keymap, ReplyError> {
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let map = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        Ok(Keymap {
            min,
            per: usize::from(map.keysyms_per_keycode).max(1),
            syms: map.keysyms,
        })
    }

    /// Each keycode with its keysyms, by level.
    fn keys(&self) -> impl DoubleEndedIterator<Item = (Keycode, &[Keysym])> {
        self.syms
            .chunks(self.per)
            .enumerate()
            .map(|(i, syms)| (self.min + i as u8, syms))
    }

    /// The first keycode, other than those in `skip`, that has `sym` on one of `levels`
    /// (0: no modifier, 1: Shift).
    pub fn find(&self, sym: Keysym, levels: Range<usize>, skip: &[Keycode]) -> Option<Keycode> {
        self.keys()
            .filter(|(code, _)| !skip.contains(code))
            .find(|(_, syms)| syms.get(levels.clone()).is_some_and(|l| l.contains(&sym)))
            .map(|(code, _)| code)
    }

    /// The keycodes with no keysym at all, in ascending order.
    pub fn empty(&self) -> impl DoubleEndedIterator<Item = Keycode> {
        self.keys()
            .filter(|(_, syms)| syms.iter().all(|&s| s == 0))
            .map(|(code, _)| code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms_are_found_by_level_skipping_what_is_asked() {
        // Keycodes 8 (a/A), 9 (nothing), 10 (b/a), 11 (nothing).
        let map = Keymap {
            min: 8,
            per: 2,
            syms: vec![0x61, 0x41, 0, 0, 0x62, 0x61, 0, 0],
        };
        assert_eq!(map.find(0x61, 0..1, &[]), Some(8));
        assert_eq!(map.find(0x61, 1..2, &[]), Some(10));
        assert_eq!(map.find(0x61, 0..2, &[8]), Some(10));
        assert_eq!(map.find(0x41, 0..1, &[]), None);
        assert_eq!(map.empty().collect::<Vec<_>>(), [9, 11]);
    }
}
