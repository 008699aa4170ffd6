//! The dictation typer on a real X server (Xvfb) into a real X client (xterm): the text
//! arrives as written, non-ASCII letters and all, under a US and a German keyboard layout.
//! Needs Xvfb, xterm and setxkbmap (`.ci/run` installs them).

use std::time::Duration;

use yazses::dictate::output::{Deliver, X11Typer};
use yazses_tests::scratch;
use yazses_tests::x11::{Xvfb, wait_for_text};

fn typed_into_xterm(layout: &str, text: &str) -> String {
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
