//! Which desktop the session runs, for everything in a dictation that depends on it: the
//! hotkey (an X11 grab or the GlobalShortcuts portal), the typer and the paster.

/// The session's desktop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Desktop {
    /// An X server.
    X11,
    /// A Wayland compositor. Its Xwayland only sees X windows: keys grabbed or typed there
    /// would miss every Wayland window.
    Wayland,
}

impl Desktop {
    /// The desktop from `WAYLAND_DISPLAY` and `DISPLAY`: Wayland wins when both are set,
    /// since its X server is then only Xwayland; `None` when neither is set (an empty
    /// value counts as unset).
    pub fn of_session(wayland: Option<&str>, x11: Option<&str>) -> Option<Desktop> {
        let set = |v: Option<&str>| v.is_some_and(|v| !v.is_empty());
        if set(wayland) {
            Some(Desktop::Wayland)
        } else if set(x11) {
            Some(Desktop::X11)
        } else {
            None
        }
    }

    /// The desktop of this process's environment.
    pub fn current() -> Option<Desktop> {
        let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
        Desktop::of_session(var("WAYLAND_DISPLAY").as_deref(), var("DISPLAY").as_deref())
    }
}
