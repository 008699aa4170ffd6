//! whisper's temperature fallback, with a bound.
//!
//! Left to itself, whisper.cpp reads a step again at temperatures 0.2, 0.4 ... 1.0 while its
//! reading looks poor (unsure, or its last 32 tokens repeat), with no limit on the time it
//! takes, and gives the last reading whatever it is: a short answer in babble came back
//! empty after six readings, while the first had the words. Here a window is read at
//! temperature 0 alone first ([`FIRST`]); only a poor reading is read [`AGAIN`], with
//! whisper.cpp's own fallback from 0.2 up, and only when the [`Bound`] leaves time for it;
//! that reading is stopped at the bound, and kept as whisper.cpp would keep it unless it
//! lost the first reading's words or loops where it did not ([`Judgement::keep_over`]).
//!
//! The price: reading again runs the encoder again (whisper.cpp's own fallback reuses it),
//! which is why a reading again is begun only where the bound leaves as long as the first
//! reading took: one that cannot finish in time would be work thrown away. The bound is
//! wall time, so on a machine busy enough to slow the first reading past half the window's
//! length, a poor reading is kept where a quiet machine would read it again.

use std::os::raw::c_int;
use std::time::{Duration, Instant};

use super::guard::{NO_SPEECH_PROB, UNSURE_LOGPROB};

/// How whisper is asked to read a window: from which temperature, and by how much it
/// raises it while its readings are poor (0: it does not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Temperatures {
    /// The first temperature.
    pub from: f32,
    /// The step up to the next, up to 1.0; 0 for one reading.
    pub step: f32,
}

/// A window's first reading: temperature 0 (beam search or greedy), and nothing more.
pub(super) const FIRST: Temperatures = Temperatures {
    from: 0.0,
    step: 0.0,
};
/// A poor first reading read again: whisper.cpp's own fallback after temperature 0, from
/// 0.2 up to 1.0 in steps of 0.2, on one encoder run.
pub(super) const AGAIN: Temperatures = Temperatures {
    from: 0.2,
    step: 0.2,
};

/// whisper.cpp's entropy threshold: the last [`ENTROPY_TOKENS`] tokens of a reading with
/// less entropy than this repeat.
const ENTROPY_THOLD: f64 = 2.4;
/// How many of a reading's last tokens the entropy is taken over (whisper.cpp's 32).
const ENTROPY_TOKENS: usize = 32;

/// Why a reading is read again (whisper.cpp's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Poor {
    /// whisper was unsure of it (mean token log-probability under -1) and did not call the
    /// audio silent.
    Unsure,
    /// Its last 32 tokens repeat.
    Repeats,
}

/// What one reading of a window is judged by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Judgement {
    /// Whether any segment has words (descriptions of the audio are not words).
    pub words: bool,
    /// The mean log-probability of its tokens, timestamps included (whisper.cpp's
    /// `avg_logprobs`); 0 for no tokens.
    pub avg_logprob: f32,
    /// whisper's probability that the audio holds no speech; 1 for a reading without
    /// segments, which whisper gives only where it called the audio silent.
    pub no_speech: f32,
    /// The entropy of its last 32 token ids, where it has more than 32 tokens.
    pub entropy: Option<f64>,
}

impl Judgement {
    /// The judgement of a reading whose tokens (ids and log-probabilities, in order) are
    /// `tokens`.
    pub fn of(tokens: &[(c_int, f32)], no_speech: f32, words: bool) -> Judgement {
        let avg_logprob = if tokens.is_empty() {
            0.0
        } else {
            tokens.iter().map(|&(_, p)| p).sum::<f32>() / tokens.len() as f32
        };
        let entropy = (tokens.len() > ENTROPY_TOKENS).then(|| {
            let last = &tokens[tokens.len() - ENTROPY_TOKENS..];
            let mut ids: Vec<c_int> = last.iter().map(|&(id, _)| id).collect();
            ids.sort_unstable();
            let n = ids.len() as f64;
            ids.chunk_by(|a, b| a == b)
                .map(|run| {
                    let p = run.len() as f64 / n;
                    -p * p.ln()
                })
                .sum()
        });
        Judgement {
            words,
            avg_logprob,
            no_speech,
            entropy,
        }
    }

    /// Whether whisper called the audio silent (whisper.cpp's rule): then nothing is read
    /// again.
    fn silent(&self) -> bool {
        self.no_speech > NO_SPEECH_PROB
    }

    /// Why the reading is worth reading again, when it is (whisper.cpp's rules).
    pub fn poor(&self) -> Option<Poor> {
        if self.entropy.is_some_and(|e| e < ENTROPY_THOLD) {
            return Some(Poor::Repeats);
        }
        (!self.silent() && self.avg_logprob < UNSURE_LOGPROB).then_some(Poor::Unsure)
    }

    /// Whether this reading again is the one to keep rather than the `first`: as whisper.cpp
    /// would, unless it lost the words the first had or loops where the first did not.
    /// Log-probabilities are not compared: whisper.cpp computes them after dividing by the
    /// temperature, so a reading at a higher one looks surer than it is.
    pub fn keep_over(&self, first: &Judgement) -> bool {
        let rank = |r: &Judgement| (r.words, r.poor() != Some(Poor::Repeats));
        rank(self) >= rank(first)
    }
}

/// How long the readings of one window may go on: as long as the window's audio lasts,
/// from the first reading's start.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bound {
    /// When a reading again in progress is stopped.
    pub until: Instant,
}

impl Bound {
    /// The bound for a window of `audio_ms` whose first reading began at `started`.
    pub fn new(started: Instant, audio_ms: u64) -> Bound {
        Bound {
            until: started + Duration::from_millis(audio_ms),
        }
    }

    /// Whether a reading again may begin at `now`, after a first reading that took
    /// `first`: only when it would end in time if it took as long.
    pub fn allows_again(&self, now: Instant, first: Duration) -> bool {
        now + first <= self.until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(words: bool, avg_logprob: f32, no_speech: f32) -> Judgement {
        Judgement {
            words,
            avg_logprob,
            no_speech,
            entropy: None,
        }
    }

    #[test]
    fn a_reading_whisper_was_unsure_of_is_read_again_unless_it_called_the_audio_silent() {
        assert_eq!(judged(true, -0.3, 0.01).poor(), None);
        assert_eq!(judged(true, -1.2, 0.01).poor(), Some(Poor::Unsure));
        // Only descriptions of the audio, or nothing, written with doubt: read again too.
        assert_eq!(judged(false, -1.2, 0.2).poor(), Some(Poor::Unsure));
        assert_eq!(judged(false, -0.2, 0.2).poor(), None);
        // whisper called it silent: nothing to read again, words or not.
        assert_eq!(judged(false, 0.0, 1.0).poor(), None);
        assert_eq!(judged(true, -1.5, 0.9).poor(), None);
    }

    #[test]
    fn a_reading_whose_last_32_tokens_repeat_is_read_again() {
        // "the end the end ..." with a timestamp: three ids over the last 32 tokens.
        let looping: Vec<(c_int, f32)> = (0..40).map(|i| (i % 3, -0.05)).collect();
        let r = Judgement::of(&looping, 0.01, true);
        assert!(r.entropy.unwrap() < ENTROPY_THOLD, "{:?}", r.entropy);
        assert_eq!(r.poor(), Some(Poor::Repeats));
        // Forty different tokens: ln 32 = 3.47 over the last 32.
        let varied: Vec<(c_int, f32)> = (0..40).map(|i| (i, -0.2)).collect();
        let r = Judgement::of(&varied, 0.01, true);
        assert!((r.entropy.unwrap() - 32f64.ln()).abs() < 1e-9);
        assert_eq!(r.poor(), None);
        assert!((r.avg_logprob + 0.2).abs() < 1e-6);
        // 32 tokens or fewer are not judged for repeats (whisper.cpp's rule).
        let short: Vec<(c_int, f32)> = (0..32).map(|_| (7, -0.1)).collect();
        assert_eq!(Judgement::of(&short, 0.01, true).entropy, None);
    }

    #[test]
    fn a_reading_again_is_kept_unless_it_lost_the_words_or_loops() {
        let empty = judged(false, -1.3, 0.2);
        let unsure = judged(true, -1.4, 0.2);
        let mut looping = judged(true, -0.1, 0.2);
        looping.entropy = Some(1.0);
        // As whisper.cpp: the reading again, when it is no worse by words and loops.
        assert!(unsure.keep_over(&judged(true, -1.1, 0.2)));
        assert!(unsure.keep_over(&empty));
        // Not one that lost the words, or loops where the first did not.
        assert!(!empty.keep_over(&unsure));
        assert!(!looping.keep_over(&unsure));
        assert!(unsure.keep_over(&looping));
    }

    #[test]
    fn a_window_is_read_again_only_when_its_length_leaves_time_for_it() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // 9 s of audio: 9 s for its readings. A first reading of 0.9 s leaves time.
        let nine = Bound::new(t0, 9_000);
        assert_eq!(nine.until, t0 + ms(9_000));
        assert!(nine.allows_again(t0 + ms(900), ms(900)));
        // A first reading of 4.6 s, on a busy machine, does not: another would end at 9.2 s.
        assert!(!nine.allows_again(t0 + ms(4_600), ms(4_600)));
        // A one-word answer of 1.2 s read in 0.7 s is not read again.
        let short = Bound::new(t0, 1_200);
        assert!(!short.allows_again(t0 + ms(700), ms(700)));
    }
}
