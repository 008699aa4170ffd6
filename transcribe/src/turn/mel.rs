//! The prosody model's input: Whisper's log-mel features over the last 8 s of a capture.
//!
//! Smart Turn v3 reads what Whisper's feature extractor makes of 8 s of
//! 16 kHz audio, the way Pipecat feeds it:
//! - the last 8 s (128,000 samples), zeros in front when the capture is shorter;
//! - normalised to zero mean and unit variance (variance plus 1e-7);
//! - a centred short-time power spectrum: frames of 400 samples every 160, a periodic
//!   Hann window, the signal mirrored at both ends; 801 frames;
//! - 80 mel bands from 0 to 8 kHz on the Slaney scale, each band's triangle scaled to
//!   unit area;
//! - `log10` of each band (floored at 1e-10), the last frame dropped, everything below
//!   the loudest value minus 8 raised to it, then `(x + 4) / 4`.
//!
//! Checked against Pipecat's own numpy front end on three recordings, two shorter than
//! 8 s and one longer (`fixtures/turn/*.mel.f32`, made by `bench/turns/mel_reference.py`):
//! equal to within 1e-4 (6e-6 measured), on values from about -0.15 to 1.9.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

/// Samples the model hears: 8 s at 16 kHz.
pub const WINDOW_SAMPLES: usize = 8 * 16_000;
/// Mel bands.
pub const BANDS: usize = 80;
/// Frames in the features.
pub const FRAMES: usize = 800;

const FFT: usize = 400;
const HOP: usize = 160;
const BINS: usize = FFT / 2 + 1;

/// Computes the features; make one and reuse it (it holds the FFT plan and the filters).
pub struct LogMel {
    fft: Arc<dyn RealToComplex<f64>>,
    window: Vec<f64>,
    /// `BANDS` rows of `BINS` weights.
    filters: Vec<f64>,
}

impl Default for LogMel {
    fn default() -> Self {
        LogMel::new()
    }
}

impl LogMel {
    /// The front end, ready to use.
    pub fn new() -> LogMel {
        let window = (0..FFT)
            .map(|i| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / FFT as f64).cos())
            .collect();
        LogMel {
            fft: RealFftPlanner::<f64>::new().plan_fft_forward(FFT),
            window,
            filters: slaney_filters(),
        }
    }

    /// The features of the last 8 s of `audio` (16 kHz), `BANDS` rows of `FRAMES` values.
    pub fn features(&self, audio: &[i16]) -> Vec<f32> {
        let tail = &audio[audio.len().saturating_sub(WINDOW_SAMPLES)..];
        let mut x = vec![0f32; WINDOW_SAMPLES - tail.len()];
        x.extend(tail.iter().map(|&s| f32::from(s) / 32768.0));
        // Normalised in f32 with f64 sums, as numpy does for a float32 array.
        let n = x.len() as f64;
        let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = x
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        let (mean, scale) = (mean as f32, (var as f32 + 1e-7).sqrt());
        let x: Vec<f64> = x.iter().map(|&v| f64::from((v - mean) / scale)).collect();
        let padded = reflect(&x, FFT / 2);

        let mut frame = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut power = [0f64; BINS];
        let mut out = vec![0f64; BANDS * FRAMES];
        for f in 0..FRAMES {
            let start = f * HOP;
            for (i, v) in frame.iter_mut().enumerate() {
                *v = padded[start + i] * self.window[i];
            }
            self.fft
                .process(&mut frame, &mut spectrum)
                .expect("buffers made by the plan");
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = c.norm_sqr();
            }
            for b in 0..BANDS {
                let row = &self.filters[b * BINS..(b + 1) * BINS];
                let energy: f64 = row.iter().zip(&power).map(|(w, p)| w * p).sum();
                out[b * FRAMES + f] = energy.max(1e-10).log10();
            }
        }
        let top = out.iter().copied().fold(f64::MIN, f64::max);
        out.iter()
            .map(|&v| ((v.max(top - 8.0) + 4.0) / 4.0) as f32)
            .collect()
    }
}

/// `x` with `pad` samples mirrored in front and behind, the edge sample not repeated.
fn reflect(x: &[f64], pad: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len() + 2 * pad);
    out.extend((1..=pad).rev().map(|i| x[i]));
    out.extend_from_slice(x);
    out.extend((1..=pad).map(|i| x[x.len() - 1 - i]));
    out
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz < 1000.0 {
        3.0 * hz / 200.0
    } else {
        15.0 + (hz / 1000.0).ln() * 27.0 / 6.4f64.ln()
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel < 15.0 {
        200.0 * mel / 3.0
    } else {
        1000.0 * ((mel - 15.0) * 6.4f64.ln() / 27.0).exp()
    }
}

/// Triangular filters between 82 points equally spaced in Slaney mels from 0 to 8 kHz,
/// each scaled to unit area: `BANDS` rows of `BINS` weights.
fn slaney_filters() -> Vec<f64> {
    let top = hz_to_mel(8000.0);
    let edges: Vec<f64> = (0..BANDS + 2)
        .map(|i| mel_to_hz(top * i as f64 / (BANDS + 1) as f64))
        .collect();
    let mut filters = vec![0f64; BANDS * BINS];
    for b in 0..BANDS {
        let (lo, mid, hi) = (edges[b], edges[b + 1], edges[b + 2]);
        let area = 2.0 / (hi - lo);
        for k in 0..BINS {
            let hz = 8000.0 * k as f64 / (BINS - 1) as f64;
            let up = (hz - lo) / (mid - lo);
            let down = (hi - hz) / (hi - mid);
            filters[b * BINS + k] = up.min(down).max(0.0) * area;
        }
    }
    filters
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 4th frame of Pipecat's features, frame-major, as mel_reference.py writes them.
    fn reference(name: &str) -> Vec<f32> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/turn")
            .join(format!("{name}.mel.f32"));
        std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    fn speech(name: &str) -> Vec<i16> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/speech")
            .join(format!("{name}.wav"));
        crate::audio::read_wav(&path).unwrap().samples
    }

    /// The largest difference from the reference over the frames it keeps.
    fn largest_difference(audio: &[i16], name: &str) -> f32 {
        let ours = LogMel::new().features(audio);
        let theirs = reference(name);
        assert_eq!(theirs.len(), BANDS * FRAMES / 4);
        let mut worst = 0f32;
        for (i, t) in theirs.iter().enumerate() {
            let (frame, band) = (i / BANDS * 4, i % BANDS);
            worst = worst.max((ours[band * FRAMES + frame] - t).abs());
        }
        worst
    }

    #[test]
    fn the_features_match_pipecats_front_end_on_short_and_long_recordings() {
        let (answer, hello) = (speech("answer"), speech("hello"));
        let joined = [answer.clone(), hello.clone()].concat();
        for (audio, name) in [(answer, "answer"), (hello, "hello"), (joined, "joined")] {
            let worst = largest_difference(&audio, name);
            eprintln!("{name}: largest difference from the reference {worst:e}");
            // The features span about -0.15 to 1.9. answer and hello match exactly;
            // joined differs by 6e-6 at most (float32 rounding of the normalised signal).
            assert!(worst < 1e-4, "{name}: {worst}");
        }
    }

    #[test]
    fn silence_gives_flat_features_and_no_nan() {
        let f = LogMel::new().features(&[0; 16_000]);
        assert_eq!(f.len(), BANDS * FRAMES);
        assert!(f.iter().all(|v| v.is_finite()));
        assert!(f.iter().all(|&v| v == f[0]), "{}", f[0]);
    }
}
