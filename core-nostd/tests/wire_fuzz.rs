//! The frame reader against arbitrary bytes: it never panics, always makes progress, and
//! is back in step within one frame once the garbage ends.

use proptest::prelude::*;
use yazses_core::wire::{self, AudioBytes, DeviceMessage, FrameReader, MAX_FRAME};

/// A stream of audio frames `first..first + n`, each carrying its own number as samples.
fn audio_stream(first: u32, n: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut frame = [0u8; MAX_FRAME];
    let mut scratch = [0u8; 320];
    for seq in first..first + n {
        let samples = [seq as i16; 160];
        let message = DeviceMessage::Audio {
            capture: u32::MAX - seq,
            seq,
            samples: AudioBytes::encode(&samples, &mut scratch),
        };
        let len = wire::encode(&message, &mut frame).unwrap();
        out.extend_from_slice(&frame[..len]);
    }
    out
}

/// Feeds `bytes` in chunks of `chunk`; returns the audio sequence numbers decoded and
/// checks each decoded frame's samples carry its number.
fn decoded_seqs(reader: &mut FrameReader, bytes: &[u8], chunk: usize) -> Vec<u32> {
    let mut seqs = Vec::new();
    for mut piece in bytes.chunks(chunk.max(1)) {
        while !piece.is_empty() {
            let (used, message) = reader.read::<DeviceMessage>(piece);
            assert!(used > 0, "the reader made no progress");
            piece = &piece[used..];
            if let Some(Ok(DeviceMessage::Audio {
                capture,
                seq,
                samples,
            })) = message
            {
                assert!(samples.samples().all(|s| s == seq as i16));
                assert_eq!(capture, u32::MAX - seq);
                seqs.push(seq);
            }
        }
    }
    seqs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096),
                                   chunk in 1usize..600) {
        let mut reader = FrameReader::new();
        decoded_seqs(&mut reader, &bytes, chunk);
    }

    #[test]
    fn every_frame_after_the_garbage_arrives(
        garbage in proptest::collection::vec(any::<u8>(), 0..2048),
        chunk in 1usize..700,
    ) {
        let mut stream = audio_stream(0, 3);
        stream.extend_from_slice(&garbage);
        stream.extend(audio_stream(100, 4));
        let mut reader = FrameReader::new();
        let seqs = decoded_seqs(&mut reader, &stream, chunk);
        let after: Vec<u32> = seqs.iter().copied().filter(|&s| s >= 100).collect();
        prop_assert_eq!(after, vec![100, 101, 102, 103]);
        prop_assert_eq!(&seqs[..3], &[0, 1, 2]);
    }

    #[test]
    fn corrupted_bytes_lose_only_their_own_frames(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..20),
    ) {
        let clean = audio_stream(0, 30);
        let mut stream = clean.clone();
        for (at, xor) in &flips {
            let i = at.index(stream.len());
            stream[i] ^= xor;
        }
        let mut reader = FrameReader::new();
        let seqs = decoded_seqs(&mut reader, &stream, 64);
        // Nothing is invented, nothing repeats, and a flip costs at most the two frames
        // around it (it may turn a byte into a delimiter, splitting one frame or joining two).
        prop_assert!(seqs.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(seqs.iter().all(|&s| s < 30));
        prop_assert!(seqs.len() + 2 * flips.len() >= 30, "{} of 30 survived {} flips", seqs.len(), flips.len());
    }
}
