//! What a new user meets first on a machine with no config file and no sound card:
//! `yazses config`, `yazses devices`.

use std::process::{Command, Output, Stdio};

use yazses_tests::{scratch, yazses_bin};

fn yazses(name: &str, args: &[&str], alsa_config: &str) -> Output {
    let alsa = scratch().join(format!("first-run-{name}.asound.conf"));
    std::fs::write(&alsa, alsa_config).unwrap();
    Command::new(yazses_bin())
        .args(args)
        .env("ALSA_CONFIG_PATH", &alsa)
        .env(
            "XDG_CONFIG_HOME",
            scratch().join(format!("first-run-{name}-home")),
        )
        .env_remove("YAZSES_CONFIG")
        .env_remove("YAZSES_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("yazses runs")
}

#[test]
fn config_alone_shows_the_defaults_and_says_there_is_no_file() {
    let out = yazses("config", &["config"], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("ask_human = false"), "{stdout}");
    assert!(
        stderr.contains("does not exist, so these are the defaults"),
        "{stderr}"
    );
    // The same as `config show`, and the TOML on stdout parses as it is.
    let show = yazses("config-show", &["config", "show"], "");
    assert_eq!(show.stdout, out.stdout);
    toml::from_str::<toml::Table>(&stdout).unwrap();
}

#[test]
fn devices_lists_inputs_and_dongles_under_headers() {
    let vmic = "pcm.vmic {\n  type file\n  slave { pcm { type null } }\n  file \"/dev/null\"\n  \
                infile \"/dev/zero\"\n  format \"raw\"\n  \
                hint { show on description \"yazses virtual microphone\" }\n}\n";
    let out = yazses("devices", &["devices"], vmic);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("Audio inputs (pin one with audio.device = \"NAME\"):\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  vmic  yazses virtual microphone\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nyazses dongles (--source serial):\n"),
        "{stdout}"
    );

    let none = yazses("no-devices", &["devices"], "");
    let stdout = String::from_utf8_lossy(&none.stdout);
    assert!(stdout.contains("  none found"), "{stdout}");
    assert!(
        none.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}
