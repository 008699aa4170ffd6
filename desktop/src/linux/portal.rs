//! The `hotkey` trigger on Wayland: the xdg-desktop-portal GlobalShortcuts interface.
//! Wayland gives clients no key grabs; the desktop binds the key instead, asking the user
//! where it wants to (GNOME and KDE show a dialog), and tells yazses when it is pressed.
//! A press toggles the dictation, through the same control socket the X11 grab uses.
//!
//! Where the desktop offers no such portal (sway and the other wlroots compositors,
//! GNOME before 48), binding fails with a message that points to `yazses dictate toggle`
//! in the desktop's own shortcut settings.

use std::sync::mpsc;

use ashpd::desktop::global_shortcuts::{GlobalShortcuts, NewShortcut};
use futures_util::StreamExt;

use crate::chord::Chord;
use crate::hotkey::HotkeyError;

/// The shortcut's id in the portal session; the desktop keeps the user's choice under it.
pub const SHORTCUT_ID: &str = "dictate-toggle";

/// What the user sees in the desktop's shortcut settings.
const DESCRIPTION: &str = "Start or end a yazses dictation";

/// A shortcut bound through the portal: presses arrive from the thread that keeps the
/// D-Bus session open.
#[derive(Debug)]
pub struct PortalShortcut {
    presses: mpsc::Receiver<Result<(), HotkeyError>>,
    /// How the desktop says the key is triggered (what the user chose, or our preference).
    pub trigger: String,
}

impl PortalShortcut {
    /// Binds the key `preferred` (in the XDG shortcuts spelling, such as
    /// `CTRL+ALT+space`, made from `chord`, which messages name) through the
    /// portal on the session bus; blocks until the desktop answers, which can mean until
    /// the user has answered the desktop's dialog.
    pub fn bind(preferred: String, chord: &Chord) -> Result<PortalShortcut, HotkeyError> {
        let name = chord.to_string();
        let (ready_tx, ready_rx) = mpsc::channel();
        let (press_tx, presses) = mpsc::channel();
        std::thread::Builder::new()
            .name("hotkey-portal".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(HotkeyError::Failed(format!(
                            "the hotkey's thread failed: {e}"
                        ))));
                        return;
                    }
                };
                runtime.block_on(serve(preferred, name, ready_tx, press_tx));
            })
            .map_err(|e| HotkeyError::Failed(format!("the hotkey's thread failed: {e}")))?;
        let trigger = ready_rx
            .recv()
            .map_err(|_| HotkeyError::Failed("the hotkey's thread stopped".into()))??;
        Ok(PortalShortcut { presses, trigger })
    }

    /// Blocks until the next press of the shortcut.
    pub fn next_press(&self) -> Result<(), HotkeyError> {
        self.presses
            .recv()
            .map_err(|_| HotkeyError::Ended("the GlobalShortcuts portal session ended".into()))?
    }
}

/// Binds the shortcut, reports the trigger (or why not) on `ready`, then forwards every
/// activation to `presses` for as long as the session lasts.
async fn serve(
    preferred: String,
    name: String,
    ready: mpsc::Sender<Result<String, HotkeyError>>,
    presses: mpsc::Sender<Result<(), HotkeyError>>,
) {
    let (portal, session) = match bind(&preferred, &name).await {
        Ok((portal, session, trigger)) => {
            let _ = ready.send(Ok(trigger));
            (portal, session)
        }
        Err(why) => {
            let _ = ready.send(Err(why));
            return;
        }
    };
    let mut activated = match portal.receive_activated().await {
        Ok(stream) => stream,
        Err(e) => {
            let _ = presses.send(Err(HotkeyError::Failed(format!(
                "the portal's presses cannot be heard: {e}"
            ))));
            return;
        }
    };
    // The session lives as long as this loop: dropping it would end the binding.
    let _session = session;
    while let Some(press) = activated.next().await {
        if press.shortcut_id() != SHORTCUT_ID {
            continue;
        }
        if presses.send(Ok(())).is_err() {
            break;
        }
    }
    let _ = presses.send(Err(HotkeyError::Ended(
        "the GlobalShortcuts portal went away".into(),
    )));
}

type Bound = (
    GlobalShortcuts,
    ashpd::desktop::Session<GlobalShortcuts>,
    String,
);

async fn bind(preferred: &str, name: &str) -> Result<Bound, HotkeyError> {
    let unavailable = |e: &dyn std::fmt::Display| {
        HotkeyError::NoDesktop(format!(
            "the desktop offers no GlobalShortcuts portal for the hotkey ({e}); sway and other wlroots compositors, and GNOME before 48, have none: bind a key to `yazses dictate toggle` in the desktop's shortcut settings instead"
        ))
    };
    let portal = GlobalShortcuts::new().await.map_err(|e| unavailable(&e))?;
    let session = portal
        .create_session(Default::default())
        .await
        .map_err(|e| unavailable(&e))?;
    let shortcut = NewShortcut::new(SHORTCUT_ID, DESCRIPTION).preferred_trigger(preferred);
    let request = portal
        .bind_shortcuts(&session, &[shortcut], None, Default::default())
        .await
        .map_err(|e| unavailable(&e))?;
    let bound = request.response().map_err(|e| match e {
        ashpd::Error::Response(ashpd::desktop::ResponseError::Cancelled) => HotkeyError::Unavailable(format!(
            "the hotkey \"{name}\" was declined in the desktop's dialog; run yazses dictate again to be asked again, or bind a key to `yazses dictate toggle`"
        )),
        other => HotkeyError::Failed(format!("the desktop did not bind the hotkey \"{name}\": {other}")),
    })?;
    let ours = bound
        .shortcuts()
        .iter()
        .find(|s| s.id() == SHORTCUT_ID)
        .ok_or_else(|| {
            HotkeyError::Unavailable(format!("the desktop bound no key for \"{name}\"; bind one in its shortcut settings (\"{DESCRIPTION}\") or to `yazses dictate toggle`"))
        })?;
    let trigger = match ours.trigger_description() {
        "" => preferred.to_owned(),
        described => described.to_owned(),
    };
    Ok((portal, session, trigger))
}
