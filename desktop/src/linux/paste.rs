//! The `paste` output on X11: the text is put on the CLIPBOARD, the paste keystroke
//! (Ctrl+V) is sent through XTEST, and the clipboard is given back what it held before.
//!
//! X11 has no stored clipboard: its owner serves each request. So this process serves the
//! dictated text while the focused program pastes it, then serves what the clipboard held
//! before (read as UTF-8 text before taking it over), until another program takes the
//! clipboard; when it held nothing, the clipboard is let go. A previous content that is not
//! text, or too large to read in one piece (INCR), cannot be restored: the paste still
//! happens, and a warning says so.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, KEY_PRESS_EVENT,
    KEY_RELEASE_EVENT, PropMode, SELECTION_NOTIFY_EVENT, SelectionNotifyEvent, Window, WindowClass,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::keymap::Keymap;
use crate::deliver::{Deliver, DeliverError};

/// The atoms the clipboard needs.
#[derive(Clone, Copy, Debug)]
struct Atoms {
    clipboard: Atom,
    utf8: Atom,
    targets: Atom,
    text: Atom,
    property: Atom,
    incr: Atom,
}

impl Atoms {
    fn intern(conn: &RustConnection) -> Result<Atoms, ReplyError> {
        let get = |name: &str| -> Result<Atom, ReplyError> {
            Ok(conn.intern_atom(false, name.as_bytes())?.reply()?.atom)
        };
        Ok(Atoms {
            clipboard: get("CLIPBOARD")?,
            utf8: get("UTF8_STRING")?,
            targets: get("TARGETS")?,
            text: get("TEXT")?,
            property: get("YAZSES_CLIPBOARD")?,
            incr: get("INCR")?,
        })
    }
}

/// What this process serves as the clipboard, and how many requests it has answered.
#[derive(Debug, Default)]
struct Served {
    content: Option<Vec<u8>>,
    answered: u64,
}

/// Pastes through the X11 clipboard.
pub struct X11Paster {
    /// Reads the old clipboard and sends the keystroke.
    conn: RustConnection,
    reader: Window,
    /// The window that owns the clipboard, and its connection, whose events a thread
    /// serves. The server sends clipboard requests to the client that took ownership, so
    /// ownership is taken through this connection too.
    owner: Window,
    owner_conn: Arc<RustConnection>,
    atoms: Atoms,
    served: Arc<Mutex<Served>>,
    /// The window the dictation began in.
    aim: super::focus::Aim,
}

impl std::fmt::Debug for X11Paster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Paster").finish_non_exhaustive()
    }
}

/// Why the clipboard's text could not be read back, to be put back after the paste.
#[derive(Debug, thiserror::Error)]
enum Unreadable {
    #[error(transparent)]
    X11(#[from] ReplyError),
    #[error("the clipboard's owner offers no text")]
    NoText,
    #[error("the clipboard holds too much to read back in one piece")]
    TooLarge,
    #[error("the clipboard's owner did not answer within 2 s")]
    NoAnswer,
    #[error("serving the clipboard stopped unexpectedly")]
    Stopped,
}

impl From<ConnectionError> for Unreadable {
    fn from(e: ConnectionError) -> Unreadable {
        Unreadable::X11(e.into())
    }
}

fn unavailable(e: impl std::fmt::Display) -> DeliverError {
    DeliverError::Unavailable(format!("pasting on X11: {e}"))
}

fn failed(e: impl std::fmt::Display) -> DeliverError {
    DeliverError::Failed(format!("pasting on X11: {e}"))
}

impl X11Paster {
    /// Connects to `display` (`None`: `$DISPLAY`), with a thread that serves the clipboard.
    pub fn connect_to(display: Option<&str>) -> Result<X11Paster, DeliverError> {
        let (conn, screen) = x11rb::connect(display).map_err(unavailable)?;
        conn.xtest_get_version(2, 2)
            .map_err(unavailable)?
            .reply()
            .map_err(|e| unavailable(format!("the X server has no XTEST extension: {e}")))?;
        let atoms = Atoms::intern(&conn).map_err(unavailable)?;
        let root = conn.setup().roots[screen].root;
        let reader = hidden_window(&conn, root).map_err(unavailable)?;
        let (owner_conn, _) = x11rb::connect(display).map_err(unavailable)?;
        let owner = hidden_window(&owner_conn, root).map_err(unavailable)?;
        let owner_conn = Arc::new(owner_conn);
        let served = Arc::new(Mutex::new(Served::default()));
        let (serving, serving_conn) = (served.clone(), owner_conn.clone());
        std::thread::spawn(move || serve(&serving_conn, atoms, serving));
        Ok(X11Paster {
            conn,
            reader,
            owner,
            owner_conn,
            atoms,
            served,
            aim: super::focus::Aim::default(),
        })
    }

    /// The clipboard's text now: `Ok(None)` when nobody owns it; `Err` when it holds
    /// something that cannot be read back as text in one piece.
    fn read_clipboard(&self) -> Result<Option<Vec<u8>>, Unreadable> {
        let owner = self
            .conn
            .get_selection_owner(self.atoms.clipboard)?
            .reply()?
            .owner;
        if owner == x11rb::NONE {
            return Ok(None);
        }
        if owner == self.owner {
            return Ok(self
                .served
                .lock()
                .map_err(|_| Unreadable::Stopped)?
                .content
                .clone());
        }
        self.conn.convert_selection(
            self.reader,
            self.atoms.clipboard,
            self.atoms.utf8,
            self.atoms.property,
            x11rb::CURRENT_TIME,
        )?;
        self.conn.flush()?;
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match self.conn.poll_for_event()? {
                Some(Event::SelectionNotify(n)) if n.requestor == self.reader => {
                    if n.property == x11rb::NONE {
                        return Err(Unreadable::NoText);
                    }
                    let reply = self
                        .conn
                        .get_property(
                            true,
                            self.reader,
                            self.atoms.property,
                            AtomEnum::ANY,
                            0,
                            1 << 22,
                        )?
                        .reply()?;
                    if reply.type_ == self.atoms.incr || reply.bytes_after > 0 {
                        return Err(Unreadable::TooLarge);
                    }
                    return Ok(Some(reply.value));
                }
                Some(_) => {}
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        Err(Unreadable::NoAnswer)
    }

    fn own(&self, content: Option<Vec<u8>>) -> Result<(), DeliverError> {
        let owner = if content.is_some() {
            self.owner
        } else {
            x11rb::NONE
        };
        self.served.lock().map_err(failed)?.content = content;
        self.owner_conn
            .set_selection_owner(owner, self.atoms.clipboard, x11rb::CURRENT_TIME)
            .map_err(failed)?;
        // A round trip: the clipboard is ours before the keystroke is sent.
        self.owner_conn
            .get_input_focus()
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        Ok(())
    }

    /// Sends Ctrl+V: the keys that type Control_L and `v` in the current keymap.
    fn paste_keystroke(&self) -> Result<(), DeliverError> {
        let map = Keymap::fetch(&self.conn).map_err(failed)?;
        let key = |sym: u32| {
            map.find(sym, 0..1, &[])
                .ok_or_else(|| failed(format!("no key types keysym {sym:#x}")))
        };
        let (ctrl, v) = (key(0xffe3)?, key(u32::from(b'v'))?);
        for (kind, code) in [
            (KEY_PRESS_EVENT, ctrl),
            (KEY_PRESS_EVENT, v),
            (KEY_RELEASE_EVENT, v),
            (KEY_RELEASE_EVENT, ctrl),
        ] {
            self.conn
                .xtest_fake_input(kind, code, x11rb::CURRENT_TIME, x11rb::NONE, 0, 0, 0)
                .map_err(failed)?;
        }
        self.conn
            .get_input_focus()
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        Ok(())
    }
}

impl Deliver for X11Paster {
    fn aim(&mut self) {
        self.aim = super::focus::Aim::now(&self.conn);
    }

    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        std::mem::take(&mut self.aim).still_there(&self.conn)?;
        let before = self.read_clipboard();
        if let Err(why) = &before {
            tracing::warn!("the clipboard will not be restored after the paste: {why}");
        }
        let answered = self.served.lock().map_err(failed)?.answered;
        self.own(Some(text.as_bytes().to_vec()))?;
        self.paste_keystroke()?;
        // The program pastes by asking the clipboard's owner: wait for that request (or
        // give up after 3 s: a program without a Ctrl+V paste never asks, and a busy one
        // may take a while).
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if self.served.lock().map_err(failed)?.answered > answered {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // A program may ask more than once (TARGETS, then the text): a moment more.
        std::thread::sleep(Duration::from_millis(50));
        self.own(before.unwrap_or(None))
    }
}

fn hidden_window(conn: &RustConnection, root: Window) -> Result<Window, ReplyOrIdError> {
    let window = conn.generate_id()?;
    conn.create_window(
        0,
        window,
        root,
        -10,
        -10,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
    )?
    .check()?;
    Ok(window)
}

/// Answers clipboard requests with what `served` holds, until the display goes away.
fn serve(conn: &RustConnection, atoms: Atoms, served: Arc<Mutex<Served>>) {
    while let Ok(event) = conn.wait_for_event() {
        match event {
            Event::SelectionRequest(req) => {
                let content = served.lock().ok().and_then(|s| s.content.clone());
                let property = if req.property == x11rb::NONE {
                    req.target
                } else {
                    req.property
                };
                let answered = match content {
                    Some(_) if req.target == atoms.targets => conn
                        .change_property32(
                            PropMode::REPLACE,
                            req.requestor,
                            property,
                            AtomEnum::ATOM,
                            &[
                                atoms.targets,
                                atoms.utf8,
                                u32::from(AtomEnum::STRING),
                                atoms.text,
                            ],
                        )
                        .is_ok(),
                    Some(bytes)
                        if [atoms.utf8, u32::from(AtomEnum::STRING), atoms.text]
                            .contains(&req.target) =>
                    {
                        conn.change_property8(
                            PropMode::REPLACE,
                            req.requestor,
                            property,
                            req.target,
                            &bytes,
                        )
                        .is_ok()
                    }
                    _ => false,
                };
                let notify = SelectionNotifyEvent {
                    response_type: SELECTION_NOTIFY_EVENT,
                    sequence: 0,
                    time: req.time,
                    requestor: req.requestor,
                    selection: req.selection,
                    target: req.target,
                    property: if answered { property } else { x11rb::NONE },
                };
                let _ = conn.send_event(false, req.requestor, EventMask::NO_EVENT, notify);
                let _ = conn.flush();
                if answered
                    && req.target != atoms.targets
                    && let Ok(mut s) = served.lock()
                {
                    s.answered += 1;
                }
            }
            Event::SelectionClear(_) => {
                // Another program took the clipboard: nothing of ours to serve.
                if let Ok(mut s) = served.lock() {
                    s.content = None;
                }
            }
            _ => {}
        }
    }
}
