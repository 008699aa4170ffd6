//! The hallucination guard: which of whisper's segments were said. whisper writes text
//! over audio that holds no words (babble read alone came back as "I'll see you in the
//! middle, and see you in the middle, and see you in the middle.") and loops on a phrase.
//! whisper.cpp already skips a 30 s step it calls silent (no-speech probability over 0.6
//! with a mean token log-probability under -1), and a step it is unsure of or whose last 32
//! tokens repeat is read again at a higher temperature (fallback.rs); what it writes past
//! those checks is judged here, segment by segment, with
//! what whisper.cpp does not see: the detector's verdict on the segment's audio, and
//! whether the segment came from a window's left-out tail read again on its own.
//!
//! Every rule is a pure function of the segment, so the same file gives the same text every
//! time; what is dropped is reported ([`Dropped`]), never silently lost.

use serde::Serialize;

use super::clean::words_key as key;

/// Why a segment, or part of one, was left out of a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// whisper itself judged the audio silent (no-speech probability over 0.6) and was
    /// unsure of the words (mean token log-probability under -1): whisper.cpp's own rule,
    /// applied per segment.
    NoSpeech,
    /// The detector heard no speech under the segment at all.
    NotHeard,
    /// Words whisper was unsure of (mean token log-probability under -0.7) after other
    /// words, over audio the detector heard little speech in (under a quarter of its
    /// frames), or over a window's left-out tail read again on its own: noise after an
    /// answer, read as a sentence.
    UnsureOverNoise,
    /// A phrase of two or more words written three times or more in a row (the repeats
    /// after its first time), or a segment that only says again the words that end the
    /// one before it: whisper, prompted with the words so far, writes them again over
    /// noise.
    Repeat,
}

/// What is known of one segment besides its words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Evidence {
    /// whisper's probability that the audio of the call holds no speech.
    pub no_speech: f32,
    /// The mean log-probability of the segment's text tokens.
    pub avg_logprob: f32,
    /// The share of the segment's 10 ms frames the detector called speech; `None` where
    /// the segment lies in audio the detector's verdicts were not kept for.
    pub heard: Option<f32>,
    /// Whether the segment came from a left-out tail read again on its own.
    pub tail: bool,
}

/// What the transcript said just before a segment, for the echo rule.
pub(crate) type Before<'a> = Option<&'a str>;

/// What the guard made of a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Kept as whisper wrote it.
    Keep,
    /// Left out whole.
    Drop(Reason),
    /// Kept shortened to `kept`; `left_out` is what was taken out.
    Shorten {
        /// The words kept.
        kept: String,
        /// The words left out.
        left_out: String,
    },
}

/// whisper.cpp's no-speech threshold.
pub(super) const NO_SPEECH_PROB: f32 = 0.6;
/// whisper.cpp's threshold of an unsure decoding: a mean token log-probability under it.
pub(super) const UNSURE_LOGPROB: f32 = -1.0;
/// Over thin speech, a segment is kept only when whisper is at least this sure of it (mean
/// token log-probability). Of the 301 segments whisper wrote on bench/transcribe/shortset.py
/// (beam 5 and greedy), 20 are under it; the one of them over thin speech is over noise
/// alone.
const THIN_LOGPROB: f32 = -0.7;
/// Speech is thin under a segment when the detector heard it in fewer of its frames than
/// this. On the same set, every segment over an answer has 0.28 or more, nearly all 0.48
/// or more.
const THIN_SPEECH: f32 = 0.25;
/// The fewest times in a row a phrase must come to be a loop.
const LOOP_TIMES: usize = 3;

/// The verdict on a segment with the words `text`, written after `before`.
pub(crate) fn judge(text: &str, e: &Evidence, before: Before<'_>) -> Verdict {
    if e.no_speech > NO_SPEECH_PROB && e.avg_logprob < UNSURE_LOGPROB {
        return Verdict::Drop(Reason::NoSpeech);
    }
    if e.heard == Some(0.0) {
        return Verdict::Drop(Reason::NotHeard);
    }
    // A transcript's first words are what was asked for, and a one-word answer fills
    // little of the window it is read in: only words after words are judged thin.
    let thin = e.tail || (before.is_some() && e.heard.is_some_and(|h| h < THIN_SPEECH));
    if thin && e.avg_logprob < THIN_LOGPROB {
        return Verdict::Drop(Reason::UnsureOverNoise);
    }
    let unlooped = without_loops(text);
    let said = unlooped.as_ref().map_or(text, |(kept, _)| kept.as_str());
    if before.is_some_and(|b| echoes(said, b)) {
        return Verdict::Drop(Reason::Repeat);
    }
    match unlooped {
        Some((kept, left_out)) => Verdict::Shorten { kept, left_out },
        None => Verdict::Keep,
    }
}

/// Whether `text`, two words or more, only says again the words `before` ends with.
fn echoes(text: &str, before: &str) -> bool {
    let said: Vec<String> = text.split_whitespace().map(key).collect();
    let before: Vec<String> = before.split_whitespace().map(key).collect();
    said.len() >= 2 && before.ends_with(&said)
}

/// `text` with each loop said once, and the words taken out; `None` when nothing loops.
/// A loop is a stretch that repeats with a period of two or more words and holds a phrase
/// of two or more words [`LOOP_TIMES`] times: "up and down, up and down, up and down" is
/// "up and down,"; "see you in the middle, and see you in the middle, and see you in the
/// middle" is "see you in the middle". Words compare by their letters and digits, case
/// aside ("middle," and "middle." match).
fn without_loops(text: &str) -> Option<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let keys: Vec<String> = words.iter().map(|w| key(w)).collect();
    let (mut kept, mut left_out) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < words.len() {
        match loop_at(&keys, i) {
            Some((period, len)) => {
                // Whole periods: the period once. Two and a part: what comes three times
                // is the part, and the rest of the period only joins its copies.
                let part = len - 2 * period;
                let keep = if part < period { part } else { period };
                kept.extend_from_slice(&words[i..i + keep]);
                left_out.extend_from_slice(&words[i + keep..i + len]);
                i += len;
            }
            None => {
                kept.push(words[i]);
                i += 1;
            }
        }
    }
    if left_out.is_empty() {
        return None;
    }
    let mut kept = kept.join(" ");
    // The loop's own end closes the sentence the kept phrase now ends.
    let closing = left_out.last().and_then(|w| w.chars().last());
    if let Some(end @ ('.' | '?' | '!')) = closing
        && !kept.ends_with(['.', '?', '!'])
    {
        kept = kept.trim_end_matches([',', ';', ':']).to_owned();
        kept.push(end);
    }
    Some((kept, left_out.join(" ")))
}

/// The shortest period (in words, at least two) of a loop starting at word `i`, with the
/// loop's length in words: the stretch from `i` that repeats with that period is long
/// enough to hold a phrase of two or more words [`LOOP_TIMES`] times.
fn loop_at(keys: &[String], i: usize) -> Option<(usize, usize)> {
    let left = keys.len() - i;
    (2..=left.saturating_sub(2) / (LOOP_TIMES - 1)).find_map(|period| {
        if keys[i..i + period].iter().all(String::is_empty) {
            return None;
        }
        let repeats = (i + period..keys.len())
            .take_while(|&j| keys[j] == keys[j - period])
            .count();
        let len = period + repeats;
        (len >= (LOOP_TIMES - 1) * period + 2).then_some((period, len))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sure() -> Evidence {
        Evidence {
            no_speech: 0.1,
            avg_logprob: -0.3,
            heard: Some(0.9),
            tail: false,
        }
    }

    #[test]
    fn words_whisper_is_sure_of_over_speech_are_kept() {
        let said = "Yes, merge it today. The reviewers already signed off.";
        assert_eq!(judge(said, &sure(), None), Verdict::Keep);
    }

    #[test]
    fn a_segment_whisper_calls_silent_and_is_unsure_of_is_dropped() {
        let e = Evidence {
            no_speech: 0.7,
            avg_logprob: -1.2,
            ..sure()
        };
        assert_eq!(
            judge("Thank you.", &e, None),
            Verdict::Drop(Reason::NoSpeech)
        );
        // Silent by whisper's guess but sure of the words, or unsure over speech: kept.
        let sure_words = Evidence {
            no_speech: 0.7,
            avg_logprob: -0.4,
            ..sure()
        };
        assert_eq!(judge("Thank you.", &sure_words, None), Verdict::Keep);
        let unsure_speech = Evidence {
            avg_logprob: -1.2,
            ..sure()
        };
        assert_eq!(judge("Thank you.", &unsure_speech, None), Verdict::Keep);
    }

    #[test]
    fn a_segment_over_audio_the_detector_heard_no_speech_in_is_dropped() {
        let e = Evidence {
            heard: Some(0.0),
            ..sure()
        };
        assert_eq!(judge("You", &e, None), Verdict::Drop(Reason::NotHeard));
        let unknown = Evidence {
            heard: None,
            ..sure()
        };
        assert_eq!(judge("You", &unknown, None), Verdict::Keep);
    }

    #[test]
    fn noise_after_an_answer_read_again_alone_is_dropped_when_whisper_is_unsure() {
        let tail = Evidence {
            avg_logprob: -0.9,
            tail: true,
            ..sure()
        };
        assert_eq!(
            judge(
                "The field will be a little bit more uncomfortable.",
                &tail,
                None
            ),
            Verdict::Drop(Reason::UnsureOverNoise)
        );
        // The same doubt outside a re-read tail is not enough.
        let first_read = Evidence {
            tail: false,
            ..tail
        };
        assert_eq!(
            judge(
                "The field will be a little bit more uncomfortable.",
                &first_read,
                None
            ),
            Verdict::Keep
        );
    }

    #[test]
    fn words_whisper_is_unsure_of_over_thin_speech_are_dropped() {
        // The test's babble after an answer: the detector heard speech in 16 % of the
        // segment, whisper's mean log-probability -0.80.
        let babble = Evidence {
            heard: Some(0.16),
            avg_logprob: -0.8,
            ..sure()
        };
        let answer = Some("Yes, use the smaller model, and ship it on Friday.");
        assert_eq!(
            judge("I am sure I'll be on the other side.", &babble, answer),
            Verdict::Drop(Reason::UnsureOverNoise)
        );
        // A transcript's first words are not judged thin: "Okay." said once in a window
        // of silence around it.
        assert_eq!(judge("Okay.", &babble, None), Verdict::Keep);
        // Sure words over thin speech, or unsure words over speech, stay.
        let sure_words = Evidence {
            avg_logprob: -0.3,
            ..babble
        };
        assert_eq!(judge("Yes.", &sure_words, answer), Verdict::Keep);
        let over_speech = Evidence {
            heard: Some(0.5),
            ..babble
        };
        assert_eq!(judge("Yes.", &over_speech, answer), Verdict::Keep);
    }

    #[test]
    fn a_segment_that_only_says_again_the_words_before_it_is_dropped() {
        let before = Some("Yes, use the smaller model, and we'll be on Friday.");
        // Looped, then said once: still only the end of what came before.
        assert_eq!(
            judge(
                "and we'll be on Friday, and we'll be on Friday, and we'll be on Friday.",
                &sure(),
                before
            ),
            Verdict::Drop(Reason::Repeat)
        );
        assert_eq!(
            judge("On Friday.", &sure(), before),
            Verdict::Drop(Reason::Repeat)
        );
        // One word, or new words, stay.
        assert_eq!(judge("Friday.", &sure(), before), Verdict::Keep);
        assert_eq!(
            judge("And ship it on Friday.", &sure(), before),
            Verdict::Keep
        );
    }

    #[test]
    fn a_phrase_looped_three_times_is_said_once_and_the_repeats_reported() {
        assert_eq!(
            judge(
                "I'll see you in the middle, and see you in the middle, and see you in the middle.",
                &sure(),
                None
            ),
            Verdict::Shorten {
                kept: "I'll see you in the middle.".into(),
                left_out: "and see you in the middle, and see you in the middle.".into()
            }
        );
        assert_eq!(
            judge("Thank you. Thank you. Thank you. Thank you.", &sure(), None),
            Verdict::Shorten {
                kept: "Thank you.".into(),
                left_out: "Thank you. Thank you. Thank you.".into()
            }
        );
        // Said twice, or one word three times: what people say.
        assert_eq!(judge("Go ahead. Go ahead.", &sure(), None), Verdict::Keep);
        assert_eq!(
            judge("No, no, no, not that one.", &sure(), None),
            Verdict::Keep
        );
        assert_eq!(
            judge("It is very, very, very good.", &sure(), None),
            Verdict::Keep
        );
    }

    #[test]
    fn the_words_around_a_loop_stay() {
        assert_eq!(
            without_loops("So we go up and down, up and down, up and down until it works."),
            Some((
                "So we go up and down, until it works.".into(),
                "up and down, up and down".into()
            ))
        );
        assert_eq!(without_loops("one two three"), None);
        assert_eq!(without_loops(""), None);
    }
}
