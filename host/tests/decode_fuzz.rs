//! The WAV decoding boundary against arbitrary and damaged bytes: an error or audio,
//! never a panic.

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
