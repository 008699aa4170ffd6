//! The desktop of a dictation where yazses has none yet (macOS): `--output stdout` and
//! `yazses dictate toggle` work; typing, pasting and the hotkey say that they are not
//! built here.

use crate::dictate::deliver::{Deliver, DeliverError};

const NOT_BUILT: &str =
    "typing into other windows is not built for this system yet; use --output stdout";

/// The typer: none here.
pub fn typer() -> Result<Box<dyn Deliver>, DeliverError> {
    Err(DeliverError::Unavailable(NOT_BUILT.into()))
}

/// The paster: none here.
pub fn paster() -> Result<Box<dyn Deliver>, DeliverError> {
    Err(DeliverError::Unavailable(NOT_BUILT.into()))
}

/// The hotkey: none here.
#[derive(Debug)]
pub enum Listener {}

impl Listener {
    /// Says that no hotkey can be bound here.
    pub fn bind(_name: &str) -> Result<Listener, String> {
        Err("a global hotkey is not built for this system yet; bind a key to `yazses dictate toggle` in the system's shortcut settings".into())
    }

    /// Never called: no listener exists.
    pub fn next_press(&self) -> Result<(), String> {
        match *self {}
    }

    /// Never called: no listener exists.
    pub fn describe(&self, _name: &str) -> String {
        match *self {}
    }
}
