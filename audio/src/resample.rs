//! Streaming conversion of mono `f32` audio at any rate to the core's 16 kHz `i16`, a
//! chunk at a time: the decoders and the live microphone both feed it as audio arrives,
//! so nothing holds a whole recording at its own rate.

use rubato::{
    Resampler, SincFixedIn, SincInterpolationParameters, SincInterpolationType, WindowFunction,
};
use yazses_core::frame::SAMPLE_RATE_HZ;

/// Which filter: the best for files, or a shorter one with less delay for a live input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quality {
    /// 128-tap cubic sinc on 1024-sample chunks: files.
    File,
    /// 64-tap linear sinc on 480-sample chunks: a microphone, where each chunk is latency.
    Live,
}

impl Quality {
    fn chunk(self) -> usize {
        match self {
            Quality::File => 1024,
            Quality::Live => 480,
        }
    }

    fn params(self) -> SincInterpolationParameters {
        match self {
            Quality::File => SincInterpolationParameters {
                sinc_len: 128,
                f_cutoff: 0.925,
                interpolation: SincInterpolationType::Cubic,
                oversampling_factor: 128,
                window: WindowFunction::BlackmanHarris2,
            },
            Quality::Live => SincInterpolationParameters {
                sinc_len: 64,
                f_cutoff: 0.915,
                interpolation: SincInterpolationType::Linear,
                oversampling_factor: 64,
                window: WindowFunction::BlackmanHarris2,
            },
        }
    }
}

/// A streaming converter to 16 kHz `i16`. At 16 kHz it only converts the samples.
pub struct To16k {
    resampler: Option<SincFixedIn<f32>>,
    chunk: usize,
    ratio: f64,
    pending: Vec<f32>,
    frames_in: u64,
    frames_out: u64,
}

impl std::fmt::Debug for To16k {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("To16k")
            .field("ratio", &self.ratio)
            .field("frames_in", &self.frames_in)
            .field("frames_out", &self.frames_out)
            .finish()
    }
}

/// Why audio could not be converted to 16 kHz.
#[derive(Debug, thiserror::Error)]
pub enum ResampleError {
    /// The input claims no sample rate.
    #[error("a sample rate of 0 Hz")]
    ZeroRate,
    /// rubato would not make a converter for the rate.
    #[error(transparent)]
    Setup(#[from] rubato::ResamplerConstructionError),
    /// rubato failed on a block.
    #[error(transparent)]
    Run(#[from] rubato::ResampleError),
}

impl To16k {
    /// A converter from `rate` Hz.
    pub fn new(rate: u32, quality: Quality) -> Result<To16k, ResampleError> {
        if rate == 0 {
            return Err(ResampleError::ZeroRate);
        }
        let ratio = f64::from(SAMPLE_RATE_HZ) / f64::from(rate);
        let chunk = quality.chunk();
        let resampler = if rate == SAMPLE_RATE_HZ {
            None
        } else {
            Some(SincFixedIn::<f32>::new(
                ratio,
                1.0,
                quality.params(),
                chunk,
                1,
            )?)
        };
        Ok(To16k {
            resampler,
            chunk,
            ratio,
            pending: Vec::with_capacity(chunk),
            frames_in: 0,
            frames_out: 0,
        })
    }

    /// Frames pushed so far, at the input rate.
    pub fn frames_in(&self) -> u64 {
        self.frames_in
    }

    /// Converts what `input` completes; the rest waits for the next push or [`Self::finish`].
    pub fn push(&mut self, input: &[f32], out: &mut impl Extend<i16>) -> Result<(), ResampleError> {
        self.frames_in += input.len() as u64;
        let Some(resampler) = self.resampler.as_mut() else {
            self.frames_out += input.len() as u64;
            out.extend(input.iter().map(|&s| to_i16(s)));
            return Ok(());
        };
        let mut rest = input;
        if !self.pending.is_empty() {
            let take = (self.chunk - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() < self.chunk {
                return Ok(());
            }
            let r = resampler.process(&[&self.pending], None)?;
            self.frames_out += r[0].len() as u64;
            out.extend(r[0].iter().map(|&s| to_i16(s)));
            self.pending.clear();
        }
        let mut chunks = rest.chunks_exact(self.chunk);
        for chunk in &mut chunks {
            let r = resampler.process(&[chunk], None)?;
            self.frames_out += r[0].len() as u64;
            out.extend(r[0].iter().map(|&s| to_i16(s)));
        }
        self.pending.extend_from_slice(chunks.remainder());
        Ok(())
    }

    /// Converts what is left and flushes the filter, so the whole output has the input's
    /// duration: `round(frames_in * 16000 / rate)` samples, aligned in time with it.
    pub fn finish(mut self, out: &mut impl Extend<i16>) -> Result<(), ResampleError> {
        let Some(resampler) = self.resampler.as_mut() else {
            return Ok(());
        };
        let expected = (self.frames_in as f64 * self.ratio).round() as u64;
        let mut tail = Vec::new();
        // An empty partial chunk is not "no input" to rubato (it fails with "Insufficient
        // buffer size 0"), so a length that is a whole number of chunks goes straight to
        // flushing.
        if !self.pending.is_empty() {
            let r = resampler.process_partial(Some(&[&self.pending]), None)?;
            tail.extend_from_slice(&r[0]);
        }
        // rubato 0.16's sinc resampler starts aligned (its output_delay() does not apply to
        // the samples it returns), so only the tail needs flushing out of the filter.
        while self.frames_out + (tail.len() as u64) < expected {
            let r = resampler.process_partial::<&[f32]>(None, None)?;
            if r[0].is_empty() {
                break;
            }
            tail.extend_from_slice(&r[0]);
        }
        let keep = expected.saturating_sub(self.frames_out) as usize;
        tail.truncate(keep);
        out.extend(tail.iter().map(|&s| to_i16(s)));
        Ok(())
    }
}

/// Resamples a whole clip of mono `f32` at `rate` to 16 kHz `i16`, with [`Quality::File`].
pub fn resample(mono: &[f32], rate: u32) -> Result<Vec<i16>, ResampleError> {
    let mut to16k = To16k::new(rate, Quality::File)?;
    let mut out = Vec::with_capacity((mono.len() as f64 * to16k.ratio) as usize + 16);
    to16k.push(mono, &mut out)?;
    to16k.finish(&mut out)?;
    Ok(out)
}

/// A sample in -1..1 as `i16`, rounded and clamped.
pub fn to_i16(s: f32) -> i16 {
    (s * 32768.0).round().clamp(-32768.0, 32767.0) as i16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn resampling_keeps_time_an_impulse_stays_where_it_was() {
        for rate in [8_000u32, 22_050, 44_100, 48_000] {
            let mut x = vec![0f32; rate as usize];
            x[rate as usize / 2] = 1.0;
            let out = resample(&x, rate).unwrap();
            assert_eq!(out.len(), 16_000);
            let peak = (0..out.len()).max_by_key(|&i| out[i]).unwrap();
            assert!(
                (7999..=8001).contains(&peak),
                "{rate} Hz: impulse at {peak}, not 8000"
            );
        }
    }

    /// A length that is an exact multiple of the 1024-sample chunk leaves an empty last
    /// chunk, which the resampler must not be handed ("Insufficient buffer size 0").
    #[test]
    fn whole_multiples_of_the_chunk_one_frame_and_nothing_resample() {
        for rate in [8_000u32, 44_100, 48_000] {
            for len in [0usize, 1, 1024, 2048, 1024 * 7] {
                let out = resample(&vec![0.25; len], rate).unwrap();
                let expected = (len as f64 * 16_000.0 / f64::from(rate)).round() as usize;
                assert_eq!(out.len(), expected, "{rate} Hz, {len} frames");
            }
        }
    }

    fn pushed_in_pieces(mono: &[f32], rate: u32, cuts: &[usize]) -> Vec<i16> {
        let mut to16k = To16k::new(rate, Quality::File).unwrap();
        let mut out = Vec::new();
        let mut at = 0;
        for &cut in cuts {
            let end = (at + cut).min(mono.len());
            to16k.push(&mono[at..end], &mut out).unwrap();
            at = end;
        }
        to16k.push(&mono[at..], &mut out).unwrap();
        to16k.finish(&mut out).unwrap();
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any rate, any length, fed in any pieces: the output has the input's duration
        /// and is the same as converting the whole clip at once.
        #[test]
        fn any_rate_and_length_in_any_pieces_keeps_its_duration(
            rate in prop_oneof![Just(8_000u32), Just(11_025), Just(16_000), Just(22_050),
                                Just(44_100), Just(48_000), Just(96_000), 1_000u32..200_000],
            len in prop_oneof![0usize..3000, (0usize..6).prop_map(|k| k * 1024)],
            cuts in prop::collection::vec(0usize..2500, 0..5),
        ) {
            let mono: Vec<f32> = (0..len).map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0).collect();
            let whole = resample(&mono, rate).unwrap();
            let expected = (len as f64 * 16_000.0 / f64::from(rate)).round() as usize;
            prop_assert_eq!(whole.len(), expected);
            prop_assert_eq!(pushed_in_pieces(&mono, rate, &cuts), whole);
        }
    }
}
