//! A real X server (Xvfb) and a real X client (xterm) that writes what it is typed into a
//! file, for the dictation typing tests. No window manager: the keyboard focus follows the
//! pointer, and the xterm covers the whole screen.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb server, stopped when dropped.
pub struct Xvfb {
    child: Child,
    /// Its display, such as `:93`.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display it picks itself (`-displayfd`: it writes the number it
    /// took, so two tests starting servers at once never share one).
    pub fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb runs: apt-get install xvfb");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("piped")),
            &mut line,
        )
        .expect("Xvfb says its display");
        let num: u32 = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("Xvfb did not start (it said {line:?})")
        });
        Xvfb {
            child,
            display: format!(":{num}"),
        }
    }

    /// Runs an X program on this display to completion.
    pub fn run(&self, program: &str, args: &[&str]) -> std::process::Output {
        Command::new(program)
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .unwrap_or_else(|e| {
                panic!("{program} runs ({e}): apt-get install x11-utils x11-xkb-utils")
            })
    }

    /// An xterm over the whole screen whose shell copies every typed character into
    /// `out` as it arrives (no line buffering, no echo), in a UTF-8 locale.
    pub fn xterm_into(&self, out: &Path) -> Child {
        self.xterm_with(out, &[])
    }

    /// [`Xvfb::xterm_into`] with more xterm options (resources, translations).
    pub fn xterm_with(&self, out: &Path, options: &[&str]) -> Child {
        let child = Command::new("xterm")
            .args(options)
            .args(["-geometry", "400x200+0+0", "-u8", "-e", "sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                out.display()
            ))
            .env("DISPLAY", &self.display)
            .env("LC_ALL", "C.UTF-8")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xterm runs: apt-get install xterm");
        crate::wait_for_file(out, "xterm never started its shell");
        std::thread::sleep(Duration::from_millis(300));
        child
    }
}

impl Xvfb {
    /// Presses the keys that type `keysyms` in order, then releases them in reverse (a
    /// chord such as Control_L, Alt_L, space), through XTEST as a person's keyboard would.
    pub fn chord(&self, keysyms: &[u32]) {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::{ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT};
        use x11rb::protocol::xtest::ConnectionExt as _;
        let (conn, _) = x11rb::connect(Some(&self.display)).expect("connect to Xvfb");
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let map = conn
            .get_keyboard_mapping(min, max - min + 1)
            .unwrap()
            .reply()
            .unwrap();
        let per = usize::from(map.keysyms_per_keycode);
        let codes: Vec<u8> = keysyms
            .iter()
            .map(|&ks| {
                let i = map.keysyms.chunks(per).position(|s| s.first() == Some(&ks));
                min + i.unwrap_or_else(|| panic!("no key for keysym {ks:#x}")) as u8
            })
            .collect();
        let fake = |kind, code| {
            conn.xtest_fake_input(kind, code, x11rb::CURRENT_TIME, x11rb::NONE, 0, 0, 0)
                .unwrap();
        };
        for &c in &codes {
            fake(KEY_PRESS_EVENT, c);
        }
        for &c in codes.iter().rev() {
            fake(KEY_RELEASE_EVENT, c);
        }
        conn.get_input_focus().unwrap().reply().unwrap();
    }
}

impl Xvfb {
    /// The top-level windows now (children of the root), mapped or not.
    pub fn toplevels(&self) -> Vec<u32> {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::ConnectionExt as _;
        let (conn, screen) = x11rb::connect(Some(&self.display)).expect("connect to Xvfb");
        let root = conn.setup().roots[screen].root;
        conn.query_tree(root).unwrap().reply().unwrap().children
    }

    /// Gives `window` the keyboard focus, as a window manager does on a click; when the
    /// window goes, the focus goes back to following the pointer.
    pub fn focus(&self, window: u32) {
        use x11rb::protocol::xproto::{ConnectionExt as _, InputFocus};
        let (conn, _) = x11rb::connect(Some(&self.display)).expect("connect to Xvfb");
        conn.set_input_focus(InputFocus::POINTER_ROOT, window, x11rb::CURRENT_TIME)
            .unwrap()
            .check()
            .unwrap();
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `out` holds `expected` (or more), and returns what it holds.
pub fn wait_for_text(out: &Path, expected: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let got = std::fs::read_to_string(out).unwrap_or_default();
        if got.contains(expected) || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
