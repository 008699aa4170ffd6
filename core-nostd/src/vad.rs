//! A fixed-point energy voice-activity detector.
//!
//! Per 10 ms frame:
//! 1. two cascaded first-order high-pass stages (about 150 Hz) take out DC and mains hum,
//!    and a 1-2-1 low-pass takes out much of broadband noise above 4 kHz;
//! 2. the frame's energy becomes a Q8 `log2` [`Level`], which is smoothed;
//! 3. a noise floor follows the minimum of the smoothed level over the last 1.6 s (eight
//!    200 ms blocks), so it tracks rising noise within two seconds and recovers after loud
//!    speech as soon as the loud blocks age out;
//! 4. the noise's mean level and mean absolute deviation are learned from the frames
//!    within `noise_window` of that floor (slowly while speech is on), because steady noise
//!    (a fan) and fluctuating noise (babble) need different headroom;
//! 5. speech starts when the smoothed level rises above the start threshold
//!    (the larger of `floor + on_margin`, `mean + gain * deviation + mean_margin` and
//!    the absolute `min_on`), continues while it stays above a lower stop threshold
//!    (hysteresis, never below `mean + gain * deviation`), and ends `hangover` frames
//!    after it falls below.
//!
//! Every step is integer arithmetic on `i32`/`u64`; the per-frame cost is one pass over
//! 160 samples plus a handful of comparisons.
//!
//! ```
//! use yazses_core::vad::Vad;
//! let mut vad = Vad::new(Vad::DEFAULT);
//! let silence = [0i16; 160];
//! assert!(!vad.process(&silence).speech);
//! ```

use crate::frame::Frame;
use crate::level::{Level, Margin, log2_q8};
use core::fmt;

/// Frames per noise-floor block: 200 ms.
pub const BLOCK_FRAMES: u16 = 20;
/// Blocks in the noise-floor window: 8 x 200 ms = 1.6 s.
pub const FLOOR_BLOCKS: usize = 8;
/// Noise mean and deviation move by `1 / 2^5` of the gap per frame they learn from while
/// speech is off (320 ms).
const NOISE_SHIFT: u32 = 5;
/// Until it has measured the noise, the detector assumes it fluctuates by 2 dB, so the
/// first frames of a capture that opens on babble do not start speech...
const INITIAL_NOISE_DEV: Margin = Margin::from_tenth_db(20);
/// ...and weighs that prior like 8 frames of evidence (the first updates move 1/8, 1/16).
const INITIAL_NOISE_WEIGHT: u32 = 8;
/// During speech they move 4x slower (1.28 s), so quiet speech in loud noise does not
/// teach the detector that it is noise.
const NOISE_SHIFT_SPEECH: u32 = 7;
/// The least calibration audio [`Vad::calibrate`] accepts: 500 ms.
pub const MIN_CALIBRATION_FRAMES: usize = 50;

/// The lowest high-pass pole a tuning may have, Q15: 0.5, a cut-off of about 1.8 kHz,
/// far above any useful one for speech. Below it the stages' Q15 products could overflow.
pub const MIN_HIGHPASS_POLE_Q15: i32 = 16_384;

/// `floor(a * v / 2^15)` for a pole `a` in `MIN_HIGHPASS_POLE_Q15..32768`, written as
/// `v + floor((a - 2^15) * v / 2^15)`: the same bits, but the product stays inside `i32`
/// for every stage output. `a * v` itself does not once `|v|` passes 65,536, which the
/// second stage reaches on full-scale square waves (its output is bounded by the L1 norm
/// of its impulse response, about 2.3x full scale at the default pole and at most 2.5x
/// at the lowest allowed pole, plus the floor rounding's drift of `3 / (1 - a)`), while
/// `|a - 2^15| <= 2^14` leaves room for `|v|` up to 2^17. An `i64` product would cost the
/// Cortex-M0 a library call per sample (docs/benchmarks.md).
#[inline(always)]
const fn mul_q15(a: i32, v: i32) -> i32 {
    v + (((a - 32768) * v) >> 15)
}

/// Tuning of the detector. Use a preset ([`Vad::DEFAULT`], [`Vad::QUIET_ROOM`],
/// [`Vad::NOISY`]) unless a benchmark says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VadConfig {
    /// Pole of each high-pass stage, Q15 (`exp(-2 pi fc / 16000)`; 30894 is 150 Hz).
    pub highpass_pole_q15: i32,
    /// How far above the noise floor the level must rise to start speech, Q8 log2.
    pub on_margin: Margin,
    /// How far above the floor it must stay to keep speech going (below `on_margin`).
    pub off_margin: Margin,
    /// Added to the minimum-statistics floor, which sits below the mean noise level.
    pub floor_bias: Margin,
    /// No speech below this level, however low the floor.
    pub min_on: Level,
    /// How far above the running mean of the noise the level must rise, on top of
    /// `noise_dev_gain_q4` times the noise's mean deviation (Q8 log2).
    pub mean_margin: Margin,
    /// Multiplier of the noise's mean absolute deviation, Q4 (48 is 3.0): fluctuating
    /// noise (babble) needs more headroom than steady noise (a fan).
    pub noise_dev_gain_q4: i32,
    /// Frames up to this far above the floor teach the noise mean and deviation.
    pub noise_window: Margin,
    /// Frames that speech continues after the level falls below the off threshold.
    pub hangover_frames: u16,
    /// The first frames of the hangover that still count as voiced (see
    /// [`VadFrame::voiced`]): the soft end of a last syllable, which the smoothed level
    /// drops below the threshold before it is over.
    pub tail_frames: u16,
    /// Level smoothing: each frame moves the smoothed level by `1 / 2^shift` of the gap.
    pub smoothing_shift: u8,
    /// Low-pass the signal before measuring energy (a 1-2-1 filter, -6 dB at 4 kHz):
    /// speech has little energy up there and broadband noise a lot.
    pub lowpass: bool,
}

/// A preset name, for configuration files and command lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Preset {
    /// [`Vad::DEFAULT`].
    #[default]
    Default,
    /// [`Vad::QUIET_ROOM`].
    QuietRoom,
    /// [`Vad::NOISY`].
    Noisy,
}

impl Preset {
    /// Every preset, in the order the docs list them.
    pub const ALL: [Preset; 3] = [Preset::Default, Preset::QuietRoom, Preset::Noisy];

    /// The tuning this preset names.
    pub const fn config(self) -> VadConfig {
        match self {
            Preset::Default => Vad::DEFAULT,
            Preset::QuietRoom => Vad::QUIET_ROOM,
            Preset::Noisy => Vad::NOISY,
        }
    }

    /// The preset's name in configuration files: `default`, `quiet_room`, `noisy`.
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::QuietRoom => "quiet_room",
            Preset::Noisy => "noisy",
        }
    }

    /// The preset with this name (`quiet-room` is accepted for `quiet_room`).
    pub fn from_name(name: &str) -> Option<Preset> {
        match name {
            "default" => Some(Preset::Default),
            "quiet_room" | "quiet-room" => Some(Preset::QuietRoom),
            "noisy" => Some(Preset::Noisy),
            _ => None,
        }
    }
}

/// A configuration the detector cannot run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum VadConfigError {
    /// `highpass_pole_q15` is outside `MIN_HIGHPASS_POLE_Q15..32768`.
    HighpassPole,
    /// `off_margin` is above `on_margin`, which would make speech flicker.
    Hysteresis,
    /// `smoothing_shift` is above 8.
    Smoothing,
}

impl fmt::Display for VadConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VadConfigError::HighpassPole => {
                "the high-pass pole must lie in 16384..32768 (Q15; a cut-off below about 1.8 kHz)"
            }
            VadConfigError::Hysteresis => "the off margin must not exceed the on margin",
            VadConfigError::Smoothing => "the smoothing shift must be at most 8",
        })
    }
}

impl core::error::Error for VadConfigError {}

impl VadConfig {
    /// Checks the invariants the detector relies on.
    pub const fn validate(&self) -> Result<(), VadConfigError> {
        if self.highpass_pole_q15 < MIN_HIGHPASS_POLE_Q15 || self.highpass_pole_q15 >= 32768 {
            return Err(VadConfigError::HighpassPole);
        }
        if self.off_margin.0 > self.on_margin.0 {
            return Err(VadConfigError::Hysteresis);
        }
        if self.smoothing_shift > 8 {
            return Err(VadConfigError::Smoothing);
        }
        Ok(())
    }
}

impl Default for VadConfig {
    fn default() -> Self {
        Vad::DEFAULT
    }
}

/// What the detector made of one frame, with the quantities behind the decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VadFrame {
    /// Whether this frame counts as speech (after hysteresis and hangover).
    pub speech: bool,
    /// Whether the frame is speech on its own level (above the start threshold, or above
    /// the keep-going one once speech runs), or within the first `tail_frames` after it.
    /// A frame only the rest of the hangover holds is speech but not voiced: the
    /// end-of-speech policy times its silence from the last voiced frame, so the hangover
    /// bridges dips inside words without adding its length to every stop.
    pub voiced: bool,
    /// The frame's own level.
    pub level: Level,
    /// The smoothed level the thresholds are compared with.
    pub smoothed: Level,
    /// The noise floor estimate.
    pub floor: Level,
    /// The level that starts speech.
    pub on_threshold: Level,
    /// The level that keeps speech going.
    pub off_threshold: Level,
}

/// Room noise measured by [`Vad::calibrate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Calibration {
    /// The noise floor the detector now starts from.
    pub floor: Level,
    /// The quietest frame.
    pub min: Level,
    /// The loudest frame.
    pub max: Level,
}

/// Why [`Vad::calibrate`] refused a stretch of audio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CalibrationError {
    /// Fewer than [`MIN_CALIBRATION_FRAMES`] frames.
    TooShort {
        /// Frames given.
        frames: usize,
    },
    /// The loudest frame stood far above the quietest: someone spoke, or something
    /// banged, while the room was meant to be quiet.
    NotSteady {
        /// Loudest minus quietest frame.
        spread: Margin,
    },
}

impl fmt::Display for CalibrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalibrationError::TooShort { frames } => write!(
                f,
                "calibration needs at least {} ms of room noise, got {} ms",
                MIN_CALIBRATION_FRAMES * 10,
                frames * 10
            ),
            CalibrationError::NotSteady { spread } => write!(
                f,
                "the room was not quiet during calibration (levels spread over {} dB)",
                spread.0 / crate::level::Q8_PER_DB
            ),
        }
    }
}

impl core::error::Error for CalibrationError {}

/// The largest level spread [`Vad::calibrate`] accepts as steady room noise: 15 dB.
pub const MAX_CALIBRATION_SPREAD: Margin = Margin::from_tenth_db(150);

/// The detector state: filter memory, noise-floor history and the speech state, about
/// 120 bytes (pinned by a test); no allocation.
#[derive(Clone, Debug)]
pub struct Vad {
    config: VadConfig,
    // High-pass memory: last input and the output of each stage.
    x1: i32,
    y1: i32,
    z1: i32,
    z2: i32,
    noise_mean: Option<Level>,
    noise_dev: i32,
    noise_frames: u32,
    smoothed: Option<Level>,
    block_min: Level,
    block_frames: u16,
    blocks: [Level; FLOOR_BLOCKS],
    blocks_filled: u8,
    block_next: u8,
    speech: bool,
    hangover: u16,
}

/// 40 ms: on the benchmark set (docs/benchmarks.md) the median stop then lands within
/// 60 ms of `end_silence` after the true end at every SNR from clean to 5 dB.
const TAIL: u16 = 4;

impl Vad {
    /// The tuning for most rooms, chosen on the noisy-speech benchmark
    /// (`docs/benchmarks.md`).
    pub const DEFAULT: VadConfig = VadConfig {
        highpass_pole_q15: 30894,
        on_margin: Margin::from_tenth_db(60),
        off_margin: Margin::from_tenth_db(30),
        floor_bias: Margin::from_tenth_db(10),
        min_on: Level::from_dbfs(-60),
        mean_margin: Margin::from_tenth_db(20),
        noise_dev_gain_q4: 40,
        noise_window: Margin::from_tenth_db(100),
        hangover_frames: 10,
        tail_frames: TAIL,
        smoothing_shift: 1,
        lowpass: true,
    };

    /// A quiet room: a lower absolute minimum, so soft speech far from the mic counts.
    pub const QUIET_ROOM: VadConfig = VadConfig {
        min_on: Level::from_dbfs(-70),
        ..Vad::DEFAULT
    };

    /// Loud, fluctuating noise (a café, an open office): more headroom over the noise's
    /// fluctuations and more smoothing, so fewer false starts at the cost of missing
    /// some soft speech.
    pub const NOISY: VadConfig = VadConfig {
        mean_margin: Margin::from_tenth_db(30),
        noise_dev_gain_q4: 56,
        smoothing_shift: 2,
        ..Vad::DEFAULT
    };

    /// A detector with this tuning. An invalid tuning (see [`VadConfig::validate`]) is
    /// clamped to the nearest valid one rather than refused, so the frame path never fails.
    pub fn new(config: VadConfig) -> Self {
        let mut config = config;
        config.highpass_pole_q15 = config.highpass_pole_q15.clamp(MIN_HIGHPASS_POLE_Q15, 32767);
        config.off_margin = Margin(config.off_margin.0.min(config.on_margin.0));
        config.smoothing_shift = config.smoothing_shift.min(8);
        Vad {
            config,
            x1: 0,
            y1: 0,
            z1: 0,
            z2: 0,
            noise_mean: None,
            noise_dev: INITIAL_NOISE_DEV.0,
            noise_frames: INITIAL_NOISE_WEIGHT,
            smoothed: None,
            block_min: Level(i32::MAX),
            block_frames: 0,
            blocks: [Level(i32::MAX); FLOOR_BLOCKS],
            blocks_filled: 0,
            block_next: 0,
            speech: false,
            hangover: 0,
        }
    }

    /// The tuning in use.
    pub const fn config(&self) -> &VadConfig {
        &self.config
    }

    /// Forgets everything heard, keeping the tuning.
    pub fn reset(&mut self) {
        *self = Vad::new(self.config);
    }

    /// Whether the last frame was speech.
    pub const fn is_speech(&self) -> bool {
        self.speech
    }

    /// The energy of one frame after the high-pass stages, as a [`Level`].
    fn frame_level(&mut self, frame: &Frame) -> Level {
        // One loop per filter shape, so the hot loop has no branch on the config.
        if self.config.lowpass {
            self.filtered_energy::<true>(frame)
        } else {
            self.filtered_energy::<false>(frame)
        }
    }

    fn filtered_energy<const LOWPASS: bool>(&mut self, frame: &Frame) -> Level {
        let a = self.config.highpass_pole_q15;
        let (mut x1, mut y1, mut z1, mut z2) = (self.x1, self.y1, self.z1, self.z2);
        let mut step = |s: i16| -> u32 {
            let x = s as i32;
            // Each stage: y[n] = x[n] - x[n-1] + a * y[n-1]. Stage outputs stay within
            // 2.5x full scale plus the rounding's drift, far inside i32; the product with
            // the pole would not, hence `mul_q15`.
            let y = x - x1 + mul_q15(a, y1);
            let z = y - y1 + mul_q15(a, z1);
            let w = if LOWPASS { (z + 2 * z1 + z2) >> 2 } else { z };
            x1 = x;
            y1 = y;
            z2 = z1;
            z1 = z;
            // Saturate to i16 so each square fits in 30 bits; only clipped shouts are
            // affected.
            let c = w.clamp(-32767, 32767);
            (c * c) as u32
        };
        // Two squares (each under 2^30) sum in a u32 without overflow: half the 64-bit adds.
        let mut energy: u64 = 0;
        for pair in frame.chunks_exact(2) {
            energy += u64::from(step(pair[0]) + step(pair[1]));
        }
        self.x1 = x1;
        self.y1 = y1;
        self.z1 = z1;
        self.z2 = z2;
        log2_q8(energy)
    }

    /// Feeds the smoothed level into the noise-floor history and returns the floor.
    fn track_floor(&mut self, smoothed: Level) -> Level {
        self.block_min = self.block_min.min(smoothed);
        let mut floor = self.block_min;
        for b in &self.blocks[..self.blocks_filled as usize] {
            floor = floor.min(*b);
        }
        self.block_frames += 1;
        if self.block_frames == BLOCK_FRAMES {
            self.blocks[self.block_next as usize] = self.block_min;
            self.block_next = (self.block_next + 1) % FLOOR_BLOCKS as u8;
            if (self.blocks_filled as usize) < FLOOR_BLOCKS {
                self.blocks_filled += 1;
            }
            self.block_frames = 0;
            self.block_min = Level(i32::MAX);
        }
        floor + self.config.floor_bias
    }

    /// Classifies one frame.
    pub fn process(&mut self, frame: &Frame) -> VadFrame {
        let level = self.frame_level(frame);
        let smoothed = match self.smoothed {
            None => level,
            Some(prev) => {
                let step = (level.0 - prev.0) >> self.config.smoothing_shift;
                Level(prev.0 + step)
            }
        };
        self.smoothed = Some(smoothed);
        let floor = self.track_floor(smoothed);
        let cfg = &self.config;
        let mean = *self.noise_mean.get_or_insert(smoothed);
        // Q8 deviation times Q4 gain, back to Q8.
        let spread = Margin((self.noise_dev * cfg.noise_dev_gain_q4) >> 4);
        let hysteresis = cfg.on_margin.0 - cfg.off_margin.0;
        let on_threshold = (floor + cfg.on_margin)
            .max(mean + spread + cfg.mean_margin)
            .max(cfg.min_on);
        // Speech that has started may dip `hysteresis` below the start threshold, but not
        // into the noise's usual range, or fluctuating noise would hold it open.
        let off_threshold = (on_threshold + Margin(-hysteresis)).max(mean + spread);
        if smoothed <= floor + cfg.noise_window {
            // Learn the noise from the frames near the minimum-statistics floor, whatever
            // the state: loud speech stays out, the noise's own peaks and troughs go in,
            // and the window is anchored to the floor so speech cannot ratchet it up. The
            // first frames average faster (1/8, 1/16, then 1/32, after the prior's weight
            // of INITIAL_NOISE_WEIGHT) so a capture that starts in noise settles within a
            // few hundred milliseconds.
            let settled = if self.speech {
                NOISE_SHIFT_SPEECH
            } else {
                NOISE_SHIFT
            };
            let shift = (32 - self.noise_frames.leading_zeros()).min(settled);
            self.noise_frames = self.noise_frames.saturating_add(1);
            let d = smoothed.0 - mean.0;
            self.noise_mean = Some(Level(mean.0 + (d >> shift)));
            self.noise_dev += (d.abs() - self.noise_dev) >> shift;
        } else if floor > mean {
            // Noise that rose while speech held the level up: the minimum-statistics
            // floor drags the mean along.
            self.noise_mean = Some(floor);
        }
        if smoothed > on_threshold || (self.speech && smoothed > off_threshold) {
            self.speech = true;
            self.hangover = cfg.hangover_frames;
        } else if self.speech {
            if self.hangover == 0 {
                self.speech = false;
            } else {
                self.hangover -= 1;
            }
        }
        let held = cfg.hangover_frames.saturating_sub(self.hangover);
        let voiced = self.speech && held <= cfg.tail_frames;
        VadFrame {
            speech: self.speech,
            voiced,
            level,
            smoothed,
            floor,
            on_threshold,
            off_threshold,
        }
    }

    /// Learns the room's noise from a stretch of audio with nobody speaking, so the
    /// detector starts with a settled floor instead of learning it during the first
    /// seconds of a capture. The detector's speech state is cleared afterwards.
    pub fn calibrate<'a>(
        &mut self,
        frames: impl IntoIterator<Item = &'a Frame>,
    ) -> Result<Calibration, CalibrationError> {
        let before = self.clone();
        let mut count = 0usize;
        let mut min = Level(i32::MAX);
        let mut max = Level(i32::MIN);
        let mut last = None;
        for frame in frames {
            let f = self.process(frame);
            count += 1;
            // Skip the high-pass settling of the first frames.
            if count > 2 {
                min = min.min(f.level);
                max = max.max(f.level);
            }
            last = Some(f.floor);
        }
        let reject = |vad: &mut Vad, e| {
            *vad = before.clone();
            Err(e)
        };
        if count < MIN_CALIBRATION_FRAMES {
            return reject(self, CalibrationError::TooShort { frames: count });
        }
        let spread = max - min;
        if spread > MAX_CALIBRATION_SPREAD {
            return reject(self, CalibrationError::NotSteady { spread });
        }
        self.speech = false;
        self.hangover = 0;
        Ok(Calibration {
            floor: last.unwrap_or(min),
            min,
            max,
        })
    }
}

impl Default for Vad {
    fn default() -> Self {
        Vad::new(Vad::DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::{MIN_HIGHPASS_POLE_Q15, mul_q15};
    use proptest::prelude::*;

    fn wide(a: i32, v: i32) -> i32 {
        ((i64::from(a) * i64::from(v)) >> 15) as i32
    }

    /// The largest stage output pole `a` allows: 2.5x full scale (the L1 norm of the
    /// second stage's impulse response at the lowest pole; it falls as the pole rises)
    /// plus the rounding's drift, `3 / (1 - a)`.
    fn stage_bound(a: i32) -> i32 {
        5 * (1 << 14) + 3 * 32_768 / (32_768 - a) + 1
    }

    #[test]
    fn the_offset_product_is_exact_at_the_extremes() {
        for a in [MIN_HIGHPASS_POLE_Q15, 30_894, 32_767] {
            let bound = stage_bound(a);
            for v in [-bound, -65_537, -1, 0, 1, 65_536, bound] {
                assert_eq!(mul_q15(a, v), wide(a, v), "a = {a}, v = {v}");
            }
        }
    }

    proptest! {
        #[test]
        fn the_offset_product_is_the_wide_product(
            a in MIN_HIGHPASS_POLE_Q15..32_768,
            unit in -1.0f64..=1.0,
        ) {
            let v = (unit * f64::from(stage_bound(a))) as i32;
            prop_assert_eq!(mul_q15(a, v), wide(a, v));
        }
    }
}
