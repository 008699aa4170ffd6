//! A private D-Bus session bus (a real `dbus-daemon`) and, on it, a desktop's side of the
//! xdg-desktop-portal GlobalShortcuts interface as its specification lays it out: sessions
//! and requests at the object paths the caller's tokens name, answers as `Response`
//! signals on the request, presses as `Activated`/`Deactivated` signals. Debian 12's own
//! portal (1.16) predates this interface, and the desktops that implement it (GNOME 48,
//! KDE) do not run headless here, so the test plays the desktop; yazses' side is the real
//! client (ashpd over zbus).

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

const DESKTOP: &str = "/org/freedesktop/portal/desktop";

/// A bound shortcut, as the caller asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The caller's id for it.
    pub id: String,
    /// The trigger the caller preferred (`CTRL+ALT+space`).
    pub preferred_trigger: String,
    /// The session it was bound in.
    pub session: String,
}

/// A `dbus-daemon` on a socket of its own, stopped when dropped.
pub struct Bus {
    daemon: Child,
    /// The address to give clients as `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
}

impl Bus {
    /// Starts a session bus listening on a socket under `dir`.
    pub fn start(dir: &Path) -> Bus {
        let socket = dir.join("bus");
        let _ = std::fs::remove_file(&socket);
        let address = format!("unix:path={}", socket.display());
        let daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdout(Stdio::null())
            .spawn()
            .expect("dbus-daemon (apt install dbus-daemon) starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !socket.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "dbus-daemon made no socket"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Bus { daemon, address }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// The desktop's side of GlobalShortcuts on a [`Bus`], as `org.freedesktop.portal.Desktop`.
pub struct Portal {
    runtime: tokio::runtime::Runtime,
    connection: zbus::Connection,
    bindings: Arc<Mutex<Vec<Binding>>>,
}

impl Portal {
    /// Serves the portal on `bus`. With `offers_shortcuts` false, the portal is there but
    /// without the GlobalShortcuts interface, as on a desktop that lacks it.
    pub fn serve(bus: &Bus, offers_shortcuts: bool) -> Portal {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let bindings = Arc::new(Mutex::new(Vec::new()));
        let shortcuts = Shortcuts {
            bindings: bindings.clone(),
        };
        let connection = runtime.block_on(async {
            let builder = zbus::connection::Builder::address(bus.address.as_str())
                .unwrap()
                .name("org.freedesktop.portal.Desktop")
                .unwrap();
            let builder = if offers_shortcuts {
                builder.serve_at(DESKTOP, shortcuts).unwrap()
            } else {
                builder.serve_at(DESKTOP, Other).unwrap()
            };
            builder.build().await.expect("the portal joins the bus")
        });
        Portal {
            runtime,
            connection,
            bindings,
        }
    }

    /// The shortcuts bound so far.
    pub fn bindings(&self) -> Vec<Binding> {
        self.bindings.lock().unwrap().clone()
    }

    /// Presses and releases the shortcut `binding` as the user would on the keyboard.
    pub fn press(&self, binding: &Binding) {
        let session = OwnedObjectPath::try_from(binding.session.as_str()).unwrap();
        let options: HashMap<&str, Value<'_>> = HashMap::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        for (signal, at) in [("Activated", now), ("Deactivated", now + 80)] {
            self.runtime
                .block_on(self.connection.emit_signal(
                    None::<&str>,
                    DESKTOP,
                    "org.freedesktop.portal.GlobalShortcuts",
                    signal,
                    &(&session, binding.id.as_str(), at, &options),
                ))
                .unwrap();
        }
    }
}

/// The request and session paths a caller's tokens name (the specification's rule).
fn path_for(kind: &str, sender: &str, token: &str) -> String {
    let sender = sender.trim_start_matches(':').replace('.', "_");
    format!("{DESKTOP}/{kind}/{sender}/{token}")
}

fn text(options: &HashMap<String, OwnedValue>, key: &str) -> String {
    options
        .get(key)
        .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
        .unwrap_or_default()
}

/// Answers the request at `request` with success and `results`.
async fn respond(
    connection: &zbus::Connection,
    sender: &str,
    request: &str,
    results: HashMap<&str, Value<'_>>,
) -> zbus::fdo::Result<()> {
    connection
        .emit_signal(
            Some(sender),
            request,
            "org.freedesktop.portal.Request",
            "Response",
            &(0u32, results),
        )
        .await
        .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))
}

struct Shortcuts {
    bindings: Arc<Mutex<Vec<Binding>>>,
}

#[zbus::interface(name = "org.freedesktop.portal.GlobalShortcuts")]
impl Shortcuts {
    async fn create_session(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
        options: HashMap<String, OwnedValue>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        let sender = header.sender().expect("a caller").to_string();
        let request = path_for("request", &sender, &text(&options, "handle_token"));
        let session = path_for("session", &sender, &text(&options, "session_handle_token"));
        // As xdg-desktop-portal does, the handle goes back as a string.
        let results = HashMap::from([("session_handle", Value::from(session))]);
        respond(connection, &sender, &request, results).await?;
        Ok(OwnedObjectPath::try_from(request).unwrap())
    }

    async fn bind_shortcuts(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] connection: &zbus::Connection,
        session: OwnedObjectPath,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        let sender = header.sender().expect("a caller").to_string();
        let request = path_for("request", &sender, &text(&options, "handle_token"));
        let mut bound = Vec::new();
        for (id, info) in &shortcuts {
            let preferred = text(info, "preferred_trigger");
            self.bindings.lock().unwrap().push(Binding {
                id: id.clone(),
                preferred_trigger: preferred.clone(),
                session: session.to_string(),
            });
            let described = HashMap::from([
                ("description", Value::from(text(info, "description"))),
                (
                    "trigger_description",
                    Value::from(format!("Press {preferred}")),
                ),
            ]);
            bound.push((id.clone(), described));
        }
        let results = HashMap::from([("shortcuts", Value::from(bound))]);
        respond(connection, &sender, &request, results).await?;
        Ok(OwnedObjectPath::try_from(request).unwrap())
    }

    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        1
    }
}

/// Some other portal interface, so the desktop object exists without GlobalShortcuts.
struct Other;

#[zbus::interface(name = "org.freedesktop.portal.Settings")]
impl Other {
    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        2
    }
}
