//! `yazses dictate` as a user runs it: the process waits; `yazses dictate toggle` starts a
//! capture (here a recording played in real time as the microphone) and, pressed again,
//! ends it; the words come out as one line (`--output stdout`). While it dictates,
//! `yazses status --json` names the holder's purpose `dictate`, and a real MCP server's
//! `ask_human` is refused because the user is dictating. A second `yazses dictate` is
//! refused with the first one's pid; a toggle with none running says so.
//! Needs the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use yazses_tests::stdio_client::StdioClient;
use yazses_tests::{imported_model, repo_root, runtime_dir, scratch, yazses_bin};

fn config(name: &str) -> PathBuf {
    let path = scratch().join(format!("dictate-{name}-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "[mcp]\nask_human = true\n[speak]\ncommand = [\"true\"]\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = true\n\
             [transcribe]\nmodel = {:?}\n",
            repo_root()
                .join("fixtures/speech/answer.wav")
                .display()
                .to_string(),
            imported_model().display().to_string()
        ),
    )
    .unwrap();
    path
}

/// A scratch file, gone if an earlier run left it, where a window writes what it received.
fn received_file(name: &str) -> PathBuf {
    let path = scratch().join(format!("dictate-{name}-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn yazses(runtime: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(yazses_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        .env("YAZSES_RUNTIME_DIR", runtime)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A dictation process, killed when dropped (a failing test leaves none behind).
struct Dictation(Child);

impl Drop for Dictation {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a dictation types.
enum Screen<'a> {
    /// No display at all.
    None,
    /// An X display, such as ":93".
    X11(&'a str),
    /// A Wayland compositor.
    Wayland(&'a yazses_tests::wayland::Sway),
    /// A Wayland session whose only part is the D-Bus session bus with its portal.
    Portal(&'a yazses_tests::portal::Bus),
}

/// Starts `yazses dictate --output OUTPUT` on `screen` and waits until its socket answers.
fn start_dictation(runtime: &Path, config: &Path, output: &str, screen: Screen) -> Dictation {
    let mut command = match screen {
        Screen::Wayland(sway) => sway.command(yazses_bin().to_str().unwrap()),
        _ => Command::new(yazses_bin()),
    };
    command
        .arg("--config")
        .arg(config)
        .args(["dictate", "--output", output])
        .env("YAZSES_RUNTIME_DIR", runtime)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match screen {
        Screen::X11(d) => command.env("DISPLAY", d).env_remove("WAYLAND_DISPLAY"),
        Screen::None => command.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY"),
        Screen::Wayland(_) => &mut command,
        Screen::Portal(bus) => portal_session(&mut command, bus),
    };
    let child = Dictation(command.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !yazses(runtime, config, &["dictate", "status"])
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "the dictation process never answered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// Waits up to 10 s for the dictation process to say it is listening, or panics with `never`.
fn until_listening(runtime: &Path, cfg: &Path, never: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while said(&yazses(runtime, cfg, &["dictate", "status"])) != "listening" {
        assert!(Instant::now() < deadline, "{never}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first line the dictation process prints, within 60 s.
fn first_line(dictation: &mut Dictation) -> String {
    let stdout = dictation.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("nothing was dictated within 60 s")
}

#[test]
fn toggle_dictates_a_line_and_ask_human_is_refused_meanwhile() {
    let runtime = runtime_dir("dictate");
    let cfg = config("toggle");
    let none = yazses(&runtime, &cfg, &["dictate", "toggle"]);
    assert!(!none.status.success());
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.contains("no yazses dictate is running"), "{err}");

    let mut dictation = start_dictation(&runtime, &cfg, "stdout", Screen::None);
    let second = yazses(&runtime, &cfg, &["dictate", "--output", "stdout"]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second dictation was allowed");
    assert!(
        err.contains(&format!(
            "already running for this user (pid {})",
            dictation.0.id()
        )),
        "{err}"
    );

    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "toggle"])),
        "listening"
    );
    let status: Value =
        serde_json::from_str(&said(&yazses(&runtime, &cfg, &["status", "--json"]))).unwrap();
    assert_eq!(status["mic"]["purpose"], "dictate", "{status}");
    assert_eq!(status["mic"]["pid"], dictation.0.id(), "{status}");

    let mut agent = StdioClient::start(&cfg, &runtime, "agent");
    agent.call(1, "ask_human", json!({"question": "Which model?"}));
    let r = agent.response(1);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r.to_string().contains("The user is dictating right now"),
        "{r}"
    );

    // The recording is 6 s; end the dictation after it.
    std::thread::sleep(Duration::from_secs(7));
    let done = said(&yazses(&runtime, &cfg, &["dictate", "toggle"]));
    assert!(done.starts_with("delivered"), "{done}");
    let line = first_line(&mut dictation);
    let words = line.to_lowercase();
    assert!(
        words.contains("smaller model") && words.contains("friday"),
        "{line}"
    );
    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "status"])),
        "idle"
    );
    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "stop"])),
        "idle (nothing to stop)"
    );
    let status: Value =
        serde_json::from_str(&said(&yazses(&runtime, &cfg, &["status", "--json"]))).unwrap();
    assert_eq!(status["mic"], Value::Null, "{status}");
    drop(dictation);
}

/// The whole path onto a real display: the recording is heard, transcribed and typed by
/// XTEST into an xterm (a real X client) on Xvfb, under a German keyboard layout.
#[test]
fn dictated_words_are_typed_into_a_real_x_client() {
    let x = yazses_tests::x11::Xvfb::start();
    assert!(x.run("setxkbmap", &["de"]).status.success());
    let out = received_file("xterm");
    let mut xterm = x.xterm_into(&out);
    let runtime = runtime_dir("dictate-x11");
    let cfg = config("x11");
    let dictation = start_dictation(&runtime, &cfg, "type", Screen::X11(&x.display));
    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "start"])),
        "listening"
    );
    std::thread::sleep(Duration::from_secs(7));
    let done = said(&yazses(&runtime, &cfg, &["dictate", "stop"]));
    assert!(done.starts_with("delivered"), "{done}");
    let typed = yazses_tests::x11::wait_for_text(&out, "riday", Duration::from_secs(10));
    let words = typed.to_lowercase();
    assert!(
        words.contains("smaller model") && words.contains("friday"),
        "{typed:?}"
    );
    drop(dictation);
    let _ = xterm.kill();
    let _ = xterm.wait();
}

/// The window dictated into is closed before the text is ready: nothing is typed into the
/// window that has the focus then (a second xterm, under the pointer); the answer says
/// the text was kept, and `yazses dictate last` gives it.
#[test]
fn text_for_a_window_closed_mid_dictation_is_kept_not_typed_elsewhere() {
    let x = yazses_tests::x11::Xvfb::start();
    let behind_out = received_file("behind");
    let mut behind = x.xterm_into(&behind_out);
    let before = x.toplevels();
    let mut aimed = x.xterm_into(&received_file("aimed"));
    let window = x
        .toplevels()
        .into_iter()
        .find(|w| !before.contains(w))
        .expect("the second xterm has a window");
    x.focus(window);
    let runtime = runtime_dir("dictate-gone");
    let cfg = config("gone");
    let dictation = start_dictation(&runtime, &cfg, "type", Screen::X11(&x.display));
    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "start"])),
        "listening"
    );
    std::thread::sleep(Duration::from_secs(2));
    let _ = aimed.kill();
    let _ = aimed.wait();
    std::thread::sleep(Duration::from_secs(5));
    let done = said(&yazses(&runtime, &cfg, &["dictate", "stop"]));
    assert!(done.starts_with("kept"), "{done}");
    let last = said(&yazses(&runtime, &cfg, &["dictate", "last"])).to_lowercase();
    assert!(last.contains("smaller model"), "{last}");
    std::thread::sleep(Duration::from_secs(1));
    let typed = std::fs::read_to_string(&behind_out).unwrap();
    assert_eq!(typed, "", "typed into the window behind");
    drop(dictation);
    let _ = behind.kill();
    let _ = behind.wait();
}

/// The `hotkey` trigger: ctrl+alt+space, pressed on the X display through XTEST, starts a
/// dictation and, pressed again, ends it.
/// Says "start", waits out the recording, says "stop"; the words are delivered.
fn dictate_once(runtime: &Path, cfg: &Path) {
    assert_eq!(
        said(&yazses(runtime, cfg, &["dictate", "start"])),
        "listening"
    );
    std::thread::sleep(Duration::from_secs(7));
    let done = said(&yazses(runtime, cfg, &["dictate", "stop"]));
    assert!(done.starts_with("delivered"), "{done}");
}

/// Dictates the recording with `--output OUTPUT` into a foot (with `ini` added to its
/// config) on `sway`, and returns what the foot received.
fn dictated_on_wayland(sway: &yazses_tests::wayland::Sway, output: &str, ini: &str) -> String {
    let name = format!("wayland-{output}");
    let out = received_file(&format!("foot-{output}"));
    let mut foot = sway.foot_into(&out, ini);
    let runtime = runtime_dir(&name);
    let cfg = config(&name);
    let dictation = start_dictation(&runtime, &cfg, output, Screen::Wayland(sway));
    dictate_once(&runtime, &cfg);
    let received = yazses_tests::x11::wait_for_text(&out, "riday", Duration::from_secs(10));
    drop(dictation);
    let _ = foot.kill();
    let _ = foot.wait();
    received
}

#[test]
fn dictated_words_are_typed_into_a_real_wayland_client() {
    let sway = yazses_tests::wayland::Sway::start();
    let typed = dictated_on_wayland(&sway, "type", "").to_lowercase();
    assert!(
        typed.contains("smaller model") && typed.contains("friday"),
        "{typed:?}"
    );
}

/// The `paste` output on Wayland: the text goes through the clipboard into a foot whose
/// Ctrl+V pastes (as a GUI editor's does), and the clipboard holds what it held before.
#[test]
fn dictated_words_are_pasted_on_wayland_and_the_clipboard_given_back() {
    let sway = yazses_tests::wayland::Sway::start();
    let copied = sway
        .command("wl-copy")
        .arg("what the user had copied")
        .status()
        .expect("wl-copy runs: apt-get install wl-clipboard");
    assert!(copied.success());
    let pasted = dictated_on_wayland(
        &sway,
        "paste",
        "[key-bindings]\nclipboard-paste=Control+v\n",
    );
    assert!(
        pasted.to_lowercase().contains("smaller model"),
        "{pasted:?}"
    );
    let clipboard = sway
        .command("wl-paste")
        .arg("--no-newline")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&clipboard.stdout),
        "what the user had copied"
    );
}

#[test]
fn the_x11_hotkey_toggles_a_dictation() {
    let x = yazses_tests::x11::Xvfb::start();
    let runtime = runtime_dir("dictate-hotkey");
    let cfg = config("hotkey");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[dictate]\ntrigger = [\"command\", \"hotkey\"]\nhotkey = \"ctrl+alt+space\"\n");
    std::fs::write(&cfg, text).unwrap();
    let mut dictation = start_dictation(&runtime, &cfg, "stdout", Screen::X11(&x.display));
    const CTRL: u32 = 0xffe3;
    const ALT: u32 = 0xffe9;
    x.chord(&[CTRL, ALT, 0x20]);
    until_listening(&runtime, &cfg, "the hotkey did not start a dictation");
    std::thread::sleep(Duration::from_secs(7));
    x.chord(&[CTRL, ALT, 0x20]);
    let line = first_line(&mut dictation);
    let words = line.to_lowercase();
    assert!(words.contains("smaller model"), "{line}");
    drop(dictation);
}

/// `command` as in a Wayland session whose session bus is `bus`.
fn portal_session<'c>(
    command: &'c mut Command,
    bus: &yazses_tests::portal::Bus,
) -> &'c mut Command {
    command
        .env("WAYLAND_DISPLAY", "wayland-yazses-test")
        .env_remove("DISPLAY")
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
}

/// The `hotkey` trigger on Wayland: bound through the GlobalShortcuts portal with the
/// configured key as the preferred trigger; the desktop's press toggles a dictation on,
/// the next one ends it and the words come out.
#[test]
fn the_wayland_hotkey_is_bound_through_the_global_shortcuts_portal() {
    let runtime = runtime_dir("dictate-portal");
    let bus = yazses_tests::portal::Bus::start(&runtime);
    let portal = yazses_tests::portal::Portal::serve(&bus, true);
    let cfg = config("portal");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[dictate]\ntrigger = [\"command\", \"hotkey\"]\nhotkey = \"super+shift+d\"\n");
    std::fs::write(&cfg, text).unwrap();
    let mut dictation = start_dictation(&runtime, &cfg, "stdout", Screen::Portal(&bus));
    let bound = portal.bindings();
    assert_eq!(bound.len(), 1, "{bound:?}");
    assert_eq!(bound[0].id, "dictate-toggle");
    assert_eq!(bound[0].preferred_trigger, "SHIFT+LOGO+d");

    portal.press(&bound[0]);
    until_listening(
        &runtime,
        &cfg,
        "the portal's press did not start a dictation",
    );
    std::thread::sleep(Duration::from_secs(7));
    portal.press(&bound[0]);
    let line = first_line(&mut dictation);
    assert!(line.to_lowercase().contains("smaller model"), "{line}");
    drop(dictation);
}

/// A Wayland desktop without the GlobalShortcuts portal, or with no portal at all: the
/// hotkey is refused at start, pointing to `yazses dictate toggle`.
#[test]
fn the_wayland_hotkey_without_a_shortcuts_portal_is_refused_pointing_to_toggle() {
    for offers_a_portal in [true, false] {
        let runtime = runtime_dir("dictate-noportal");
        let bus = yazses_tests::portal::Bus::start(&runtime);
        let _portal = offers_a_portal.then(|| yazses_tests::portal::Portal::serve(&bus, false));
        let cfg = config("noportal");
        let mut text = std::fs::read_to_string(&cfg).unwrap();
        text.push_str("[dictate]\ntrigger = \"hotkey\"\n");
        std::fs::write(&cfg, text).unwrap();
        let mut command = Command::new(yazses_bin());
        command
            .arg("--config")
            .arg(&cfg)
            .args(["dictate", "--output", "stdout"])
            .env("YAZSES_RUNTIME_DIR", &runtime)
            .stdin(Stdio::null());
        let out = portal_session(&mut command, &bus).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("no GlobalShortcuts portal") && err.contains("yazses dictate toggle"),
            "portal there: {offers_a_portal}: {err}"
        );
    }
}

/// A hotkey spelled wrong is refused at start, before any desktop is asked, naming the
/// part yazses cannot read.
#[test]
fn a_misspelled_hotkey_is_refused_naming_the_part() {
    let runtime = runtime_dir("dictate-badkey");
    let cfg = config("badkey");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[dictate]\ntrigger = \"hotkey\"\nhotkey = \"ctrl+kitten\"\n");
    std::fs::write(&cfg, text).unwrap();
    let out = Command::new(yazses_bin())
        .arg("--config")
        .arg(&cfg)
        .args(["dictate", "--output", "stdout"])
        .env("YAZSES_RUNTIME_DIR", &runtime)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("dictate.hotkey") && err.contains("\"kitten\" in \"ctrl+kitten\""),
        "{err}"
    );
}

/// A dictation process with the `dongle` trigger on a real pty, the simulator playing
/// `answer.wav` with `sim_flags`; `during` runs while the button is down (with the runtime
/// dir and the config); returns the line dictated.
fn dongle_dictation(name: &str, sim_flags: &[&str], during: impl FnOnce(&Path, &Path)) -> String {
    let (pty, runtime, cfg) = dongle_setup(name);
    let mut dictation = start_dictation(&runtime, &cfg, "stdout", Screen::None);
    let mut sim = pty.simulate(
        Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim")),
        &repo_root().join("fixtures/speech/answer.wav"),
        sim_flags,
    );
    during(&runtime, &cfg);
    let line = first_line(&mut dictation);
    let _ = sim.kill();
    let _ = sim.wait();
    drop(dictation);
    line
}

/// A pty pair, a runtime dir and a config whose microphone is the dongle on the pty and
/// whose dictation trigger is its button.
fn dongle_setup(name: &str) -> (yazses_tests::pty::PtyPair, PathBuf, PathBuf) {
    let pty = yazses_tests::pty::PtyPair::new(name);
    let runtime = runtime_dir(name);
    let cfg = config(name);
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text = text.replace(
        "source = \"file\"",
        &format!(
            "source = \"serial\"\nserial_port = {:?}",
            pty.host.display().to_string()
        ),
    );
    text.push_str("[dictate]\ntrigger = \"dongle\"\n");
    std::fs::write(&cfg, text).unwrap();
    (pty, runtime, cfg)
}

/// A dictation waiting for the dongle's button holds its port open; an agent's
/// `ask_human` with the same dongle as its microphone still hears the user, because the
/// dictation lets the port go while the question has the microphone. Twice, so the
/// dictation is seen to give it back between questions too.
#[test]
fn an_ask_human_hears_the_user_through_the_dongle_a_waiting_dictation_holds() {
    let (pty, runtime, cfg) = dongle_setup("dictate-lend");
    let mut dictation = start_dictation(&runtime, &cfg, "stdout", Screen::None);
    let mut sim = pty.simulate(
        Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim")),
        &repo_root().join("fixtures/speech/answer.wav"),
        &["--captures", "2"],
    );
    // The dictation has opened the port (it logs nothing on stdout): give it the time.
    std::thread::sleep(Duration::from_secs(2));
    let mut agent = StdioClient::start(&cfg, &runtime, "agent");
    for id in [1, 2] {
        agent.call(id, "ask_human", json!({"question": "Which model?"}));
        let r = agent.response(id);
        assert_eq!(r["result"]["isError"], false, "question {id}: {r}");
        assert!(
            r.to_string().to_lowercase().contains("smaller model"),
            "question {id}: {r}"
        );
    }
    assert!(
        dictation.0.try_wait().unwrap().is_none(),
        "the dictation process died"
    );
    assert_eq!(
        said(&yazses(&runtime, &cfg, &["dictate", "status"])),
        "idle"
    );
    let _ = sim.kill();
    let _ = sim.wait();
}

/// The `dongle` trigger over a real pty: the simulated dongle's button goes down just
/// before the answer begins and up after it; the whole answer, first word included, comes
/// out as one line. While the button is down the holder is a dictation.
#[test]
fn holding_the_dongles_button_dictates_from_the_first_word() {
    // The simulator plays at 4x. Speech begins at 1.01 s of the recording (`yazses vad`):
    // press 60 ms before it, release at 6.2 s.
    let line = dongle_dictation(
        "dictate-button",
        &["--press-ms", "950", "--release-ms", "6200"],
        |runtime, cfg| {
            let deadline = Instant::now() + Duration::from_secs(10);
            let holder = loop {
                let st: Value =
                    serde_json::from_str(&said(&yazses(runtime, cfg, &["status", "--json"])))
                        .unwrap();
                if !st["mic"].is_null() {
                    break st["mic"].clone();
                }
                assert!(
                    Instant::now() < deadline,
                    "the press never took the microphone"
                );
                std::thread::sleep(Duration::from_millis(20));
            };
            assert_eq!(holder["purpose"], "dictate", "{holder}");
        },
    );
    let words = line.to_lowercase();
    assert!(words.starts_with("yes"), "the first word was lost: {line}");
    assert!(
        words.contains("smaller model") && words.contains("friday"),
        "{line}"
    );
}

/// The whole path from the button to a window: the simulated dongle's button held over a
/// real pty while the recording plays, the words typed by XTEST into an xterm on Xvfb
/// under a German keyboard layout.
#[test]
fn holding_the_dongles_button_types_the_words_into_a_real_x_client() {
    let x = yazses_tests::x11::Xvfb::start();
    assert!(x.run("setxkbmap", &["de"]).status.success());
    let out = received_file("button-xterm");
    let mut xterm = x.xterm_into(&out);
    let (pty, runtime, cfg) = dongle_setup("dictate-button-x11");
    let dictation = start_dictation(&runtime, &cfg, "type", Screen::X11(&x.display));
    let mut sim = pty.simulate(
        Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim")),
        &repo_root().join("fixtures/speech/answer.wav"),
        &["--press-ms", "950", "--release-ms", "6200"],
    );
    let typed = yazses_tests::x11::wait_for_text(&out, "riday", Duration::from_secs(30));
    let words = typed.to_lowercase();
    assert!(
        words.starts_with("yes"),
        "the first word was lost: {typed:?}"
    );
    assert!(words.contains("smaller model"), "{typed:?}");
    let _ = sim.kill();
    let _ = sim.wait();
    drop(dictation);
    let _ = xterm.kill();
    let _ = xterm.wait();
}

/// Unplugged mid-sentence: what was said before is typed (the user said it on purpose),
/// and nothing after.
#[test]
fn a_dongle_unplugged_mid_dictation_still_types_what_was_heard() {
    // Unplugged 2.6 s after the press at 0.95 s: after "... the smaller model" (3.50 s).
    let line = dongle_dictation(
        "dictate-unplug",
        &["--press-ms", "950", "--disconnect-after-ms", "2650"],
        |_, _| {},
    );
    let words = line.to_lowercase();
    assert!(words.contains("smaller model"), "{line}");
    assert!(!words.contains("friday"), "{line}");
}

/// A tap (a press shorter than `tap_ms`) starts a capture that the dongle's own end of
/// speech ends, with no release needed.
#[test]
fn a_tap_on_the_dongles_button_dictates_until_the_speaker_stops() {
    // Tapped from 0.5 s to 0.65 s; the answer is spoken from 1.01 s to 5.69 s.
    let line = dongle_dictation(
        "dictate-tap",
        &["--press-ms", "500", "--release-ms", "650"],
        |_, _| {},
    );
    let words = line.to_lowercase();
    assert!(words.starts_with("yes"), "{line}");
    assert!(
        words.contains("smaller model") && words.contains("friday"),
        "{line}"
    );
}
