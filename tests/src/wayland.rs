//! A real Wayland compositor (sway, headless, software rendering) and a real Wayland client
//! (foot) that writes what it is typed into a file, for the dictation tests on Wayland.
//!
//! sway refuses to run as root, so under root it runs as `nobody` (`setpriv`); its runtime
//! dir is that user's, and our clients, root, connect to it all the same. A headless seat
//! has no keyboard until a virtual one appears, and a client learns of a keyboard only
//! after it appears: a `wtype` kept waiting for the whole test holds one in place, as a
//! person's keyboard would be.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A number not used before in this process.
fn next() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// A headless sway, stopped (with its keyboard holder) when dropped.
pub struct Sway {
    child: Child,
    keyboard: Option<Child>,
    /// Its `XDG_RUNTIME_DIR`.
    pub runtime_dir: PathBuf,
    /// Its `WAYLAND_DISPLAY`.
    pub display: String,
}

impl Sway {
    /// Starts sway on a socket in a fresh runtime dir, with a keyboard on its seat.
    pub fn start() -> Sway {
        // Under the system's temporary directory, which every user may pass through: the
        // checkout's own folders may be closed to `nobody` (a clone in a `mktemp -d`).
        let runtime_dir =
            std::env::temp_dir().join(format!("yazses-sway-{}-{}", std::process::id(), next()));
        let _ = std::fs::remove_dir_all(&runtime_dir);
        std::fs::create_dir_all(&runtime_dir).expect("create sway's runtime dir");
        let config = runtime_dir.join("sway.config");
        std::fs::write(
            &config,
            "output HEADLESS-1 resolution 1280x720\ndefault_border none\n",
        )
        .expect("write sway's config");
        std::fs::set_permissions(
            &runtime_dir,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("make the runtime dir private");
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        let mut command = if root {
            let owned = Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&runtime_dir)
                .status()
                .is_ok_and(|s| s.success());
            assert!(owned, "chown the runtime dir to nobody");
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sway"]);
            c
        } else {
            Command::new("sway")
        };
        let child = command
            .arg("--config")
            .arg(&config)
            .env("XDG_RUNTIME_DIR", &runtime_dir)
            .env("HOME", &runtime_dir)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("WLR_RENDERER", "pixman")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DISPLAY")
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(
                    std::env::temp_dir().join(format!("yazses-sway-{}.log", std::process::id())),
                )
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null()),
            )
            .spawn()
            .expect("sway runs: apt-get install sway");
        let deadline = Instant::now() + Duration::from_secs(15);
        let display = loop {
            let socket = std::fs::read_dir(&runtime_dir).ok().and_then(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .find(|n| n.starts_with("wayland-") && !n.ends_with(".lock"))
            });
            if let Some(s) = socket {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "sway never made its socket in {}; its log: {}",
                runtime_dir.display(),
                std::fs::read_to_string(
                    std::env::temp_dir().join(format!("yazses-sway-{}.log", std::process::id()))
                )
                .unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut sway = Sway {
            child,
            keyboard: None,
            runtime_dir,
            display,
        };
        // A virtual keyboard that waits an hour before its one key; killed when dropped.
        sway.keyboard = Some(
            sway.command("wtype")
                .args(["-s", "3600000", "-k", "Escape"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("wtype runs: apt-get install wtype"),
        );
        std::thread::sleep(Duration::from_millis(300));
        sway
    }

    /// A command that will run as a client of this compositor.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", &self.display)
            .env_remove("DISPLAY");
        c
    }

    /// A foot terminal, focused, whose shell copies every typed character into `out` as it
    /// arrives (no line buffering, no echo), in a UTF-8 locale; `ini` is added to its
    /// config (key bindings, say).
    pub fn foot_into(&self, out: &Path, ini: &str) -> Child {
        let config = self.runtime_dir.join(format!("foot-{}.ini", next()));
        std::fs::write(&config, ini).expect("write foot's config");
        let child = self
            .command("foot")
            .arg("--config")
            .arg(&config)
            .args(["sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                out.display()
            ))
            .env("LC_ALL", "C.UTF-8")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("foot runs: apt-get install foot");
        crate::wait_for_file(out, "foot never started its shell");
        std::thread::sleep(Duration::from_millis(500));
        child
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        if let Some(k) = self.keyboard.as_mut() {
            let _ = k.kill();
            let _ = k.wait();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.runtime_dir);
    }
}
