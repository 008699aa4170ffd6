//! Invariants over arbitrary input: no panic or overflow, chunking does not matter, a
//! detector that is reset keeps nothing of the audio it heard before, and an end of speech
//! is timed from the last voiced frame.

use proptest::prelude::*;
use yazses_core::autostop::{Autostop, FrameReport};
use yazses_core::endpoint::{EndpointConfig, Stop, StopReason};
use yazses_core::time::Instant;
use yazses_core::vad::{MIN_HIGHPASS_POLE_Q15, Preset, Vad, VadConfig};

fn decisions(
    samples: &[i16],
    chunks: &[usize],
    preset: Preset,
) -> (Vec<FrameReport>, Option<Stop>) {
    let mut capture = Autostop::new(preset.config(), EndpointConfig::default(), Instant::ZERO);
    let mut frames = Vec::new();
    let mut rest = samples;
    let mut stop = None;
    let mut i = 0;
    while !rest.is_empty() && stop.is_none() {
        let n = chunks[i % chunks.len()].clamp(1, rest.len());
        i += 1;
        let (now, later) = rest.split_at(n);
        rest = later;
        stop = capture.push_samples(now, |r| frames.push(*r));
    }
    (frames, stop)
}

/// Audio that mixes silence, loud bursts and extreme values, so both states are visited.
fn audio() -> impl Strategy<Value = Vec<i16>> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::collection::vec(any::<i16>(), 160..1600),
            2 => prop::collection::vec(-40i16..40, 160..3200),
            1 => prop::collection::vec(prop_oneof![Just(i16::MIN), Just(i16::MAX)], 1..800),
            1 => full_scale_square(),
        ],
        1..12,
    )
    .prop_map(|parts| parts.concat())
}

/// Full-scale runs of random lengths: the shape that drives the high-pass stages hardest
/// (a long run, then one about as long as their impulse response's negative lobe).
fn full_scale_square() -> impl Strategy<Value = Vec<i16>> {
    prop::collection::vec((any::<bool>(), 1usize..2500), 1..8).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(high, n)| std::iter::repeat_n(if high { i16::MAX } else { i16::MIN }, n))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_input_is_classified_without_panic(samples in prop::collection::vec(any::<i16>(), 0..8000)) {
        for preset in Preset::ALL {
            let mut vad = Vad::new(preset.config());
            for frame in samples.chunks_exact(160) {
                let f = vad.process(frame.try_into().unwrap());
                prop_assert!(f.off_threshold <= f.on_threshold);
                prop_assert!(f.level.q8() >= 0 && f.level.q8() < 64 * 256);
            }
        }
    }

    #[test]
    fn any_allowed_high_pass_takes_full_scale_squares_without_overflow(
        pole in MIN_HIGHPASS_POLE_Q15..32_768,
        samples in full_scale_square(),
    ) {
        let mut vad = Vad::new(VadConfig { highpass_pole_q15: pole, ..Vad::DEFAULT });
        for frame in samples.chunks_exact(160) {
            let level = vad.process(frame.try_into().unwrap()).level.q8();
            prop_assert!((0..64 * 256).contains(&level));
        }
    }

    #[test]
    fn chunking_does_not_change_any_decision(
        samples in audio(),
        chunks in prop::collection::vec(1usize..700, 1..8),
    ) {
        let whole = decisions(&samples, &[160], Preset::Default);
        let split = decisions(&samples, &chunks, Preset::Default);
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn a_reset_detector_decides_as_a_new_one(before in audio(), samples in audio()) {
        for preset in Preset::ALL {
            let mut used = Vad::new(preset.config());
            for frame in before.chunks_exact(160) {
                used.process(frame.try_into().unwrap());
            }
            used.reset();
            let mut fresh = Autostop::new(preset.config(), EndpointConfig::default(), Instant::ZERO);
            let mut reused = Autostop::with_vad(used, EndpointConfig::default(), Instant::ZERO);
            for frame in samples.chunks_exact(160) {
                let frame = frame.try_into().unwrap();
                prop_assert_eq!(fresh.push_frame(frame), reused.push_frame(frame));
            }
        }
    }

    #[test]
    fn an_end_of_speech_comes_end_silence_after_the_last_voiced_frame(samples in audio()) {
        let (frames, stop) = decisions(&samples, &[160], Preset::Default);
        for f in &frames {
            prop_assert!(!f.vad.voiced || f.vad.speech, "voiced but not speech: {f:?}");
        }
        if let Some(stop) = stop.filter(|s| s.reason == StopReason::EndOfSpeech) {
            let end = stop.speech_end.unwrap();
            prop_assert_eq!(stop.at - end, EndpointConfig::default().end_silence);
            let last_voiced = frames.iter().rev().find(|f| f.vad.voiced).unwrap();
            prop_assert_eq!(last_voiced.end, end);
        }
    }

    #[test]
    fn a_stop_is_never_before_speech_started_or_after_the_cap(samples in audio()) {
        let (frames, stop) = decisions(&samples, &[160], Preset::Default);
        if let Some(stop) = stop {
            prop_assert_eq!(stop.at, frames.last().unwrap().end);
            if let (Some(start), Some(end)) = (stop.speech_start, stop.speech_end) {
                prop_assert!(start < end && end <= stop.at);
            }
            prop_assert!(stop.at <= Instant::from_millis(120_000));
        }
    }
}
