//! The decoding boundaries (audio files of every format, model files) against arbitrary
//! and damaged bytes: an error or a result, never a panic.

use std::io::Cursor;
use std::path::Path;

use proptest::prelude::*;
use yazses::audio::decode_wav;

fn valid_wav(samples: &[i16], rate: u32, channels: u16, bits: u16) -> Vec<u8> {
    let mut cur = Cursor::new(Vec::new());
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: bits,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::new(&mut cur, spec).unwrap();
    for &s in samples {
        if bits == 8 {
            w.write_sample((s >> 8) as i8).unwrap();
        } else {
            w.write_sample(s).unwrap();
        }
    }
    w.finalize().unwrap();
    cur.into_inner()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = decode_wav(Cursor::new(bytes), Path::new("fuzz.wav"));
    }

    #[test]
    fn a_riff_header_with_garbage_after_it_never_panics(tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = b"RIFF\xff\xff\xff\x7fWAVEfmt ".to_vec();
        bytes.extend(tail);
        let _ = decode_wav(Cursor::new(bytes), Path::new("fuzz.wav"));
    }

    #[test]
    fn damaged_valid_files_never_panic(
        samples in prop::collection::vec(any::<i16>(), 0..400),
        rate in prop_oneof![Just(8000u32), Just(16000), Just(44100), Just(1), Just(u32::MAX)],
        channels in 1u16..4,
        bits in prop_oneof![Just(8u16), Just(16)],
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let whole = samples.len() - samples.len() % usize::from(channels);
        let mut bytes = valid_wav(&samples[..whole], rate.clamp(1, 384_000), channels, bits);
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let keep = cut.index(bytes.len() + 1);
        bytes.truncate(keep);
        if let Ok(audio) = decode_wav(Cursor::new(bytes), Path::new("fuzz.wav")) {
            prop_assert!(!audio.samples.is_empty());
        }
    }
}

/// The whole file-decoding boundary (every format, sniffing included), not just WAV.
mod any_format {
    use super::*;
    use yazses::audio::{AudioError, Limits, decode_bytes};

    fn fixture_prefix(name: &str, len: usize) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/speech")
            .join(name);
        let mut bytes = std::fs::read(path).unwrap();
        bytes.truncate(len);
        bytes
    }

    fn decode(bytes: Vec<u8>, name: &str) -> Result<yazses::audio::Audio, AudioError> {
        let limits = Limits {
            max_bytes: 1 << 20,
            max_secs: 60,
            accept_partial: false,
        };
        decode_bytes(bytes, Path::new(name), &limits)
    }

    const MAGICS: [&[u8]; 6] = [
        b"fLaC",
        b"OggS",
        b"ID3\x04",
        b"\xff\xfb",
        b"RIFF\0\0\0\0WAVE",
        b"",
    ];
    const NAMES: [&str; 5] = ["x.flac", "x.ogg", "x.mp3", "x.wav", "x"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_bytes_behind_any_magic_never_panic(
            magic in prop::sample::select(MAGICS.to_vec()),
            name in prop::sample::select(NAMES.to_vec()),
            tail in prop::collection::vec(any::<u8>(), 0..1024),
        ) {
            let mut bytes = magic.to_vec();
            bytes.extend(tail);
            if let Ok(audio) = decode(bytes, name) {
                prop_assert!(!audio.samples.is_empty());
            }
        }

        #[test]
        fn damaged_real_flac_and_ogg_never_panic(
            ogg in any::<bool>(),
            len in 64usize..24_000,
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        ) {
            let (file, name) = if ogg { ("three.ogg", "x.ogg") } else { ("sentences.flac", "x.flac") };
            let mut bytes = fixture_prefix(file, len);
            for (at, v) in flips {
                let i = at.index(bytes.len());
                bytes[i] = v;
            }
            if let Ok(audio) = decode(bytes, name) {
                prop_assert!(!audio.samples.is_empty());
            }
        }
    }

    /// Issue 16, item 5: a truncated FLAC decoded what it could and called that success.
    #[test]
    fn a_truncated_file_is_refused_saying_where_it_stops_unless_partial_is_asked_for() {
        // FLAC states its length in its header; a cut Ogg file's length is unknown.
        for (file, name, len, states_length) in [
            ("sentences.flac", "x.flac", 60_000, true),
            ("three.ogg", "x.ogg", 20_000, false),
        ] {
            let err = decode(fixture_prefix(file, len), name).unwrap_err();
            let AudioError::CutShort {
                at_ms, expected_ms, ..
            } = err
            else {
                panic!("{file}: {err}");
            };
            assert!(at_ms > 500, "{file}: {err}");
            assert_eq!(
                expected_ms.is_some_and(|e| e > at_ms + 1000),
                states_length,
                "{file}: {err}"
            );
            assert!(err.to_string().contains("cut short"), "{err}");
            let limits = Limits {
                max_bytes: 1 << 20,
                max_secs: 60,
                accept_partial: true,
            };
            let audio = decode_bytes(fixture_prefix(file, len), Path::new(name), &limits).unwrap();
            assert_eq!(audio.cut_short_ms, Some(at_ms), "{file}");
            assert!(audio.duration_ms().abs_diff(at_ms) < 50, "{file}");
        }
        let whole = decode(fixture_prefix("three.ogg", usize::MAX), "x.ogg").unwrap();
        assert_eq!(whole.cut_short_ms, None);
    }

    #[test]
    fn garbage_is_named() {
        let err = decode(b"just some text, not audio".to_vec(), "notes.flac").unwrap_err();
        assert!(matches!(err, AudioError::Unrecognised { .. }), "{err}");
    }

    #[test]
    fn the_duration_cap_refuses_long_files() {
        let limits = Limits {
            max_bytes: 1 << 30,
            max_secs: 10,
            accept_partial: false,
        };
        let bytes = fixture_prefix("sentences.flac", usize::MAX);
        let err = decode_bytes(bytes, Path::new("long.flac"), &limits).unwrap_err();
        assert!(
            matches!(err, AudioError::TooLong { limit_secs: 10, .. }),
            "{err}"
        );
    }
}

/// The model-file readers against arbitrary bytes.
mod model_files {
    use super::*;
    use yazses::model::ct2;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn ct2_parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = ct2::parse(&bytes);
        }

        #[test]
        fn ct2_parse_never_panics_behind_a_valid_prefix(tail in prop::collection::vec(any::<u8>(), 0..512)) {
            let mut bytes = 6u32.to_le_bytes().to_vec();
            bytes.extend(12u16.to_le_bytes());
            bytes.extend(b"WhisperSpec\0");
            bytes.extend(tail);
            let _ = ct2::parse(&bytes);
        }
    }
}
