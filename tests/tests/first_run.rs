//! What a new user meets first on a machine with no config file and no sound card:
//! `yazses config`, `yazses devices`.

use std::process::{Command, Output, Stdio};

use yazses_tests::{scratch, yazses_bin};

fn yazses(name: &str, args: &[&str], alsa_config: &str) -> Output {
    let alsa = scratch().join(format!("first-run-{name}.asound.conf"));
    std::fs::write(&alsa, alsa_config).unwrap();
    yazses_with(name, args, Some(&alsa))
}

/// `yazses ARGS` with `alsa` as its ALSA configuration, or the system's.
fn yazses_with(name: &str, args: &[&str], alsa: Option<&std::path::Path>) -> Output {
    let mut command = Command::new(yazses_bin());
    if let Some(alsa) = alsa {
        command.env("ALSA_CONFIG_PATH", alsa);
    }
    command
        .args(args)
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

/// The system's own ALSA configuration lists plugins beside the cards (null, rate
/// converters, upmix, sound servers that are not running): none of them is a microphone.
#[test]
fn devices_lists_no_alsa_plugin_as_a_microphone_and_says_when_there_is_no_card() {
    let out = yazses_with("system-alsa", &["devices"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for plugin in [
        "null",
        "lavrate",
        "samplerate",
        "speexrate",
        "upmix",
        "vdownmix",
    ] {
        assert!(
            !stdout.lines().any(|l| l
                .trim_start_matches(['*', ' '])
                .starts_with(&format!("{plugin} "))),
            "{plugin} listed: {stdout}"
        );
    }
    let cards = std::fs::read_to_string("/proc/asound/cards").unwrap_or_default();
    if cards.trim().is_empty() || cards.contains("no soundcards") {
        assert!(stdout.contains("  none found"), "{stdout}");
        let listen = yazses_with("system-alsa-listen", &["listen", "--no-transcribe"], None);
        let stderr = String::from_utf8_lossy(&listen.stderr);
        assert!(!listen.status.success());
        assert!(stderr.contains("no sound card was found"), "{stderr}");
        assert!(!stderr.contains("disconnected"), "{stderr}");
    }
    // Pinned on purpose, the null device is refused for what it is, not opened.
    let cfg = scratch().join("first-run-null-device.toml");
    std::fs::write(&cfg, "[audio]\ndevice = \"null\"\n").unwrap();
    let null = yazses_with(
        "null-device",
        &[
            "--config",
            cfg.to_str().unwrap(),
            "listen",
            "--no-transcribe",
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&null.stderr);
    assert!(!null.status.success());
    assert!(stderr.contains("ALSA's null device"), "{stderr}");
    assert!(!stderr.contains("dropped"), "{stderr}");
}
