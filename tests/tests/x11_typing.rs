//! The dictation typer on a real X server (Xvfb) into a real X client (xterm): the text
//! arrives as written, non-ASCII letters and all, under a US and a German keyboard layout.
//! Needs Xvfb, xterm and setxkbmap (`.ci/run` installs them).

use std::time::Duration;

use yazses_desktop::Deliver;
use yazses_desktop::linux::output::X11Typer;
use yazses_tests::scratch;
use yazses_tests::x11::{Xvfb, wait_for_text};

/// One display at a time: four X servers, four xterms and their typers at once on a
/// two-core machine test the machine's scheduler more than the typer.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn typed_into_xterm(layout: &str, text: &str) -> String {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let x = Xvfb::start();
    let layout_set = x.run("setxkbmap", &[layout]);
    assert!(
        layout_set.status.success(),
        "setxkbmap {layout}: {layout_set:?}"
    );
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let out = scratch().join(format!("xterm-{layout}-{}-{n}.txt", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let mut xterm = x.xterm_into(&out);
    let mut typer = X11Typer::connect_to(Some(&x.display)).expect("the typer connects");
    typer.deliver(text).expect("typed");
    let got = wait_for_text(&out, text, Duration::from_secs(10));
    let _ = xterm.kill();
    let _ = xterm.wait();
    got
}

#[test]
fn ascii_arrives_intact_under_a_us_layout() {
    let text = "Yes, use the smaller model; ship it on Friday.";
    assert_eq!(typed_into_xterm("us", text), text);
}

#[test]
fn non_ascii_arrives_intact_under_a_german_layout() {
    let text = "Grüße, café: naïve Ärger über ğ und 5 € (yz swap?)";
    assert_eq!(typed_into_xterm("de", text), text);
}

#[test]
fn more_distinct_characters_than_spare_keys_arrive_in_order() {
    // Every printable ASCII character and a few more: more distinct keysyms than the typer
    // maps at once (64), so it types in several batches.
    let mut text: String = (' '..='~').collect();
    text.push_str(" äöüß€ğ");
    assert_eq!(typed_into_xterm("de", &text), text);
}

/// The `paste` output: the text goes through the clipboard into an xterm whose Ctrl+V
/// pastes the CLIPBOARD (as a GUI editor's does), and the clipboard holds what it held
/// before (set by xclip, a separate X client) afterwards.
#[test]
fn paste_puts_the_text_in_and_gives_the_clipboard_back() {
    use std::io::Write;
    use yazses_desktop::linux::paste::X11Paster;

    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let x = Xvfb::start();
    let out = scratch().join(format!("xterm-paste-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let mut xterm = x.xterm_with(
        &out,
        &[
            "-xrm",
            "XTerm*VT100.translations: #override Ctrl<Key>v: insert-selection(CLIPBOARD)",
        ],
    );
    let clip = |args: &[&str]| {
        std::process::Command::new("xclip")
            .args(["-selection", "clipboard"])
            .args(args)
            .env("DISPLAY", &x.display)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("xclip runs: apt-get install xclip")
    };
    let mut set = clip(&["-i"]);
    set.stdin
        .take()
        .unwrap()
        .write_all("what was there before".as_bytes())
        .unwrap();
    set.wait().unwrap();
    // xclip serves the clipboard from a child it forks: wait until it does.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while clip(&["-o"]).wait_with_output().unwrap().stdout != b"what was there before" {
        assert!(
            std::time::Instant::now() < deadline,
            "xclip never took the clipboard"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut paster = X11Paster::connect_to(Some(&x.display)).expect("the paster connects");
    let text = "Grüße, café: naïve Ärger über ğ und 5 €";
    paster.deliver(text).expect("pasted");
    let got = wait_for_text(&out, text, Duration::from_secs(10));
    assert_eq!(got, text);
    let restored = clip(&["-o"]).wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&restored.stdout),
        "what was there before"
    );
    let _ = xterm.kill();
    let _ = xterm.wait();
}
