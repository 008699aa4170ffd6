use std::path::Path;

use super::*;

#[test]
fn docs_configuration_md_is_generated_from_the_code() {
    let page = reference();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, &page).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == page,
        "docs/configuration.md is stale; regenerate it with UPDATE_GOLDEN=1 cargo test -p yazses --lib config"
    );
}

#[test]
fn every_key_in_the_reference_has_a_description_and_every_rule_a_key() {
    let page = reference();
    for line in page.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        assert!(cells.len() >= 4 && !cells[2].trim().is_empty(), "{line}");
    }
    for key in rules::RULES.iter().map(|r| r.key) {
        let (table, name) = key.split_once('.').unwrap();
        assert!(
            page.contains(&format!("## `[{table}]`")) && page.contains(&format!("| `{name}` |")),
            "{key} has a rule but no row"
        );
    }
}

#[test]
fn an_empty_file_is_the_defaults_and_ask_human_is_off() {
    let (c, unknown) = parse("").unwrap();
    assert_eq!(c, Config::default());
    assert!(unknown.is_empty());
    assert!(!c.mcp.ask_human);
    assert_eq!(c.mcp.ask_human_per_hour, 3);
    assert_eq!(c.mcp.ask_human_end_silence_s, 1.2);
    assert_eq!(c.mcp.ask_human_no_speech_s, 8.0);
}

#[test]
fn set_keys_are_read_and_unknown_keys_reported_not_fatal() {
    let (c, unknown) = parse(
        "[mcp]\nask_human = true\nask_humn_per_hour = 9\n[audio]\nsource = \"file\"\nfile = \"a.wav\"\n[colour]\nx = 1\n",
    )
    .unwrap();
    assert!(c.mcp.ask_human);
    assert_eq!(c.audio.source, SourceKind::File);
    assert_eq!(unknown, ["colour", "mcp.ask_humn_per_hour"]);
}

#[test]
fn an_unknown_key_near_a_known_one_is_named_as_the_likely_meaning() {
    use super::load::closest_key;
    assert_eq!(
        closest_key("mcp.ask_humann").as_deref(),
        Some("mcp.ask_human")
    );
    assert_eq!(
        closest_key("mcp.ask_humn_per_hour").as_deref(),
        Some("mcp.ask_human_per_hour")
    );
    // The right key in the wrong table.
    assert_eq!(
        closest_key("mcp.beam_size").as_deref(),
        Some("transcribe.beam_size")
    );
    assert_eq!(closest_key("audoi").as_deref(), Some("audio"));
    assert_eq!(closest_key("colour"), None);
    assert_eq!(closest_key("mcp.something_else_entirely"), None);
}

#[test]
fn bad_values_are_refused_with_the_key_named() {
    let (c, _) = parse("[mcp]\nask_human_per_hour = 0\n").unwrap();
    let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
    assert!(err.contains("mcp.ask_human_per_hour = 0"), "{err}");
    let err = parse("[mcp]\nask_human = \"yes\"\n").unwrap_err().0;
    assert!(err.contains("bool") || err.contains("boolean"), "{err}");
    let err = parse("[audio]\nsource = \"radio\"\n").unwrap_err().0;
    assert!(err.contains("radio"), "{err}");
}

/// A value of the wrong type is named by its key and its line.
#[test]
fn a_wrong_type_or_bad_syntax_names_the_key_and_the_line() {
    let err = parse("[mcp]\nask_human = true\n\n[transcribe]\nthreads = \"four\"\n")
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("line 5: transcribe.threads: invalid type: string \"four\""),
        "{err}"
    );
    let err = parse("[speak]\ncommand = \"espeak-ng\"\n").unwrap_err().0;
    assert!(err.starts_with("line 2: speak.command: "), "{err}");
    let err = parse("[mcp]\n\nask_human = yes\n").unwrap_err().0;
    assert!(err.starts_with("line 3: "), "{err}");
}

// Devices and FIFOs in the file system are Unix's.
#[cfg(unix)]
#[test]
fn a_config_path_that_is_a_device_a_fifo_or_huge_is_refused_at_once_naming_it() {
    let dir = std::env::temp_dir().join(format!("yazses-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zero = dir.join("zero.toml");
    let _ = std::fs::remove_file(&zero);
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let fifo = dir.join("fifo.toml");
    let _ = std::fs::remove_file(&fifo);
    // mkfifo(1): rustix has no mkfifoat on macOS.
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}: {made}", fifo.display());
    let huge = dir.join("huge.toml");
    std::fs::write(&huge, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
    for (path, why) in [
        (&zero, "not a regular file"),
        (&fifo, "not a regular file"),
        (&huge, "larger than 1024 KiB"),
    ] {
        let t = std::time::Instant::now();
        let err = load(Some(path)).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains(why),
            "{err}"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{path:?} took {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn the_turn_policy_is_read_and_its_limits_named() {
    let (c, unknown) =
        parse("[turn]\nmode = \"smart\"\ncheck_after_ms = 250\nmax_end_silence_ms = 2500\n")
            .unwrap();
    assert!(unknown.is_empty());
    assert_eq!(c.turn.mode, crate::turn::TurnMode::Smart);
    assert_eq!(
        (c.turn.check_after_ms, c.turn.max_end_silence_ms),
        (250, 2500)
    );
    c.validate(Path::new("c.toml")).unwrap();
    let (c, _) = parse("[turn]\nmin_end_silence_ms = 4000\n").unwrap();
    let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
    assert!(err.contains("turn.min_end_silence_ms = 4000"), "{err}");
    let (c, _) = parse("[turn]\ncheck_after_ms = 900\nmax_end_silence_ms = 600\n").unwrap();
    let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
    assert!(err.contains("turn.check_after_ms = 900"), "{err}");
    assert!(parse("[turn]\nmode = \"psychic\"\n").is_err());
}

#[test]
fn the_effective_config_round_trips() {
    let c = Config::default();
    assert_eq!(parse(&c.to_toml()).unwrap().0, c);
}
