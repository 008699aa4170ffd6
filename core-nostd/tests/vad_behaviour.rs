//! The detector on synthetic signals whose answer is known.

use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::level::Level;
use yazses_core::vad::{
    CalibrationError, MIN_HIGHPASS_POLE_Q15, Preset, Vad, VadConfig, VadConfigError,
};

/// A deterministic pseudo-random generator (xorshift), so the tests need no crate.
struct Noise(u32);

impl Noise {
    fn next(&mut self) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 16) as i32 - 32768
    }

    /// White noise with peak amplitude `amp`.
    fn frame(&mut self, amp: i32) -> Frame {
        core::array::from_fn(|_| (self.next() * amp / 32768) as i16)
    }
}

/// A 440 Hz tone with a 4 Hz syllable-like envelope, mixed into noise.
fn voiced(noise: &mut Noise, amp: i32, noise_amp: i32, frame_index: usize) -> Frame {
    let mut f = noise.frame(noise_amp);
    for (i, s) in f.iter_mut().enumerate() {
        let t = (frame_index * FRAME_SAMPLES + i) as f32 / 16_000.0;
        let env = 0.6 + 0.4 * (2.0 * core::f32::consts::PI * 4.0 * t).sin();
        let v = amp as f32 * env * (2.0 * core::f32::consts::PI * 440.0 * t).sin();
        *s = (*s as i32 + v as i32).clamp(-32768, 32767) as i16;
    }
    f
}

/// 2 s of noise (amplitude 1000), 1 s of tone at `amp` over it, then `after` frames of
/// the noise alone.
fn burst(amp: i32, after: usize) -> Vec<Frame> {
    let mut n = Noise(3);
    let mut frames: Vec<Frame> = (0..200).map(|_| n.frame(1000)).collect();
    frames.extend((0..100).map(|i| voiced(&mut n, amp, 1000, i)));
    frames.extend((0..after).map(|_| n.frame(1000)));
    frames
}

fn run(vad: &mut Vad, frames: impl IntoIterator<Item = Frame>) -> Vec<bool> {
    frames.into_iter().map(|f| vad.process(&f).speech).collect()
}

#[test]
fn steady_noise_alone_is_never_speech_at_any_level() {
    for amp in [30, 300, 3000, 12000] {
        let mut n = Noise(7);
        let mut vad = Vad::default();
        let speech = run(&mut vad, (0..1000).map(|_| n.frame(amp)));
        assert_eq!(
            speech.iter().filter(|&&s| s).count(),
            0,
            "noise amplitude {amp}"
        );
    }
}

#[test]
fn a_tone_burst_10_db_over_noise_is_found_and_released() {
    let mut vad = Vad::default();
    let speech = run(&mut vad, burst(2000, 200));
    let first = speech.iter().position(|&s| s).expect("speech found");
    let last = speech.iter().rposition(|&s| s).unwrap();
    assert!((200..=204).contains(&first), "onset at frame {first}");
    assert!((299..=315).contains(&last), "release at frame {last}");
    assert!(speech[200..300].iter().filter(|&&s| s).count() >= 95);
}

#[test]
fn after_a_burst_voiced_ends_tail_frames_after_the_level_falls_and_speech_a_hangover_after() {
    let mut vad = Vad::default();
    let report: Vec<_> = burst(4000, 100).iter().map(|f| vad.process(f)).collect();
    let last_speech = report.iter().rposition(|r| r.speech).unwrap();
    let last_voiced = report.iter().rposition(|r| r.voiced).unwrap();
    let cfg = Vad::DEFAULT;
    // The level fell below the threshold after the last frame that set the hangover.
    let fell = last_speech - usize::from(cfg.hangover_frames);
    assert_eq!(
        last_voiced,
        fell + usize::from(cfg.tail_frames),
        "{report:?}"
    );
    assert!(report[fell + 1..=last_speech].iter().all(|r| r.speech));
    assert!(
        !report[last_voiced + 1..=last_speech]
            .iter()
            .any(|r| r.voiced)
    );
}

#[test]
fn the_floor_follows_noise_that_rises_slowly_instead_of_calling_it_speech() {
    let mut n = Noise(11);
    let mut vad = Vad::default();
    // Noise rising 20 dB over 10 s (x10 in amplitude).
    let speech = run(&mut vad, (0..1000).map(|i| n.frame(300 + 2700 * i / 1000)));
    assert_eq!(speech.iter().filter(|&&s| s).count(), 0);
}

#[test]
fn the_floor_recovers_after_a_loud_stretch() {
    let mut n = Noise(5);
    let mut vad = Vad::default();
    run(&mut vad, (0..100).map(|_| n.frame(500)));
    run(&mut vad, (0..300).map(|i| voiced(&mut n, 20000, 500, i)));
    // Two seconds after loud speech, quiet speech 10 dB over the noise is found again.
    let quiet = run(&mut vad, (0..200).map(|_| n.frame(500)));
    assert!(quiet[150..].iter().all(|&s| !s));
    let found = run(&mut vad, (0..50).map(|i| voiced(&mut n, 1200, 500, i)));
    assert!(found.iter().filter(|&&s| s).count() >= 40, "{found:?}");
}

#[test]
fn digital_silence_and_full_scale_do_not_break_it() {
    let mut vad = Vad::default();
    let silent = vad.process(&[0; FRAME_SAMPLES]);
    assert!(!silent.speech);
    assert_eq!(silent.level, Level::SILENCE);
    // A full-scale 1 kHz square wave: the loudest thing the band lets through.
    let square =
        |_| -> Frame { core::array::from_fn(|i| if i % 16 < 8 { i16::MAX } else { i16::MIN }) };
    let loud = (0..3).map(square).map(|f| vad.process(&f)).last().unwrap();
    assert!(loud.speech);
    assert!(loud.level <= Level::from_dbfs(4));
}

#[test]
fn calibration_settles_the_floor_before_the_capture_starts() {
    let mut n = Noise(9);
    let room: Vec<Frame> = (0..300).map(|_| n.frame(2000)).collect();
    let mut vad = Vad::default();
    let cal = vad.calibrate(&room).unwrap();
    assert!(
        cal.max - cal.min < yazses_core::level::Margin::from_tenth_db(60),
        "{cal:?}"
    );
    // Straight after calibration, the same noise is not speech from the first frame on.
    assert!(
        run(&mut vad, (0..100).map(|_| n.frame(2000)))
            .iter()
            .all(|&s| !s)
    );
}

#[test]
fn calibration_refuses_too_little_audio_or_a_room_that_was_not_quiet() {
    let mut n = Noise(2);
    let mut vad = Vad::default();
    let short: Vec<Frame> = (0..20).map(|_| n.frame(100)).collect();
    assert_eq!(
        vad.calibrate(&short),
        Err(CalibrationError::TooShort { frames: 20 })
    );
    let mut noisy: Vec<Frame> = (0..100).map(|_| n.frame(100)).collect();
    noisy.extend((0..50).map(|i| voiced(&mut n, 20000, 100, i)));
    assert!(matches!(
        vad.calibrate(&noisy),
        Err(CalibrationError::NotSteady { .. })
    ));
    // A refused calibration leaves the detector as it was.
    assert!(vad.calibrate(&short).is_err());
}

#[test]
fn presets_are_valid_and_named() {
    for p in Preset::ALL {
        assert_eq!(p.config().validate(), Ok(()), "{}", p.name());
        assert_eq!(Preset::from_name(p.name()), Some(p));
    }
    assert_eq!(VadConfig::default(), Vad::DEFAULT);
    let bad = VadConfig {
        off_margin: yazses_core::level::Margin(10_000),
        ..Vad::DEFAULT
    };
    assert_eq!(bad.validate(), Err(VadConfigError::Hysteresis));
}

#[test]
fn the_whole_detector_state_is_small() {
    // It lives in a static on the MCU: keep it a few cache lines.
    assert!(
        core::mem::size_of::<Vad>() <= 160,
        "{} bytes",
        core::mem::size_of::<Vad>()
    );
}

/// Full scale held high, then held low for `low` samples, then high again: with `low` the
/// length of the high-pass cascade's negative lobe, the second stage's output reaches the
/// L1 norm of its impulse response times full scale (about 2.3x at the default pole), the
/// input that overflowed the Q15 products before they were offset (CI's property test
/// found it).
fn lobe_matched_clicks(low: usize, period: usize, frames: usize) -> Vec<Frame> {
    let samples: Vec<i16> = (0..frames * FRAME_SAMPLES)
        .map(|i| if i % period < low { i16::MIN } else { i16::MAX })
        .collect();
    samples
        .chunks_exact(FRAME_SAMPLES)
        .map(|c| c.try_into().unwrap())
        .collect()
}

#[test]
fn full_scale_clicks_shaped_to_the_high_pass_are_heard_without_overflow() {
    for config in [Vad::DEFAULT, Vad::QUIET_ROOM, Vad::NOISY] {
        let (low, period) = (33, 3000);
        let mut vad = Vad::new(config);
        let frames = lobe_matched_clicks(low, period, 2 * period / FRAME_SAMPLES + 2);
        let levels: Vec<i32> = frames.iter().map(|f| vad.process(f).level.q8()).collect();
        assert!(
            levels.iter().all(|l| (0..64 * 256).contains(l)),
            "{levels:?}"
        );
        // The frame that holds the second click is far louder than the held level before
        // it: the clicks are heard, not wrapped around.
        let click = (period + low) / FRAME_SAMPLES;
        assert!(
            levels[click] > levels[click - 3] + 8 * 256,
            "click {} vs held {}",
            levels[click],
            levels[click - 3]
        );
    }
}

#[test]
fn the_extreme_poles_take_their_lobe_matched_clicks_without_overflow() {
    // At the steepest pole the stages' floor rounding holds up to a full-scale offset
    // after a step (it does not decay a pole this close to 1), so only the range is
    // pinned. The negative lobe is 2 samples at the lowest pole, 65,534 at the steepest.
    for (pole, low, period) in [(MIN_HIGHPASS_POLE_Q15, 2, 1000), (32_767, 65_534, 200_000)] {
        let mut vad = Vad::new(VadConfig {
            highpass_pole_q15: pole,
            ..Vad::DEFAULT
        });
        for frame in lobe_matched_clicks(low, period, 2 * period / FRAME_SAMPLES + 2) {
            let level = vad.process(&frame).level.q8();
            assert!((0..64 * 256).contains(&level), "pole {pole}: {level}");
        }
    }
}

#[test]
fn a_high_pass_above_the_voice_band_is_refused_and_clamped() {
    let sharp = VadConfig {
        highpass_pole_q15: MIN_HIGHPASS_POLE_Q15 - 1,
        ..Vad::DEFAULT
    };
    assert_eq!(sharp.validate(), Err(VadConfigError::HighpassPole));
    assert_eq!(
        Vad::new(sharp).config().highpass_pole_q15,
        MIN_HIGHPASS_POLE_Q15
    );
}
