//! Whisper's text made into what was said: descriptions of the audio taken out, a phrase
//! looped back on itself said once.

/// The fewest words a phrase must have for [`without_repeats`] to take its repeat out when
/// it is not a whole sentence.
const REPEAT_MIN_WORDS: usize = 3;

/// `text` with each phrase that only repeats the one before it taken out: a phrase of three
/// words or more ("The first one. The first one." is "The first one."), and a shorter one
/// when both are whole sentences ("Go ahead. Go ahead. Go ahead." is "Go ahead."). Whisper
/// loops like this on short clips cut to fit its window (tiny.en, greedy: "I think we
/// should. I think we should." for "I think we should"; an end-of-turn check's partial of
/// a short answer said once by a Piper voice came back repeated in 6 of 102 turns). A
/// person who said it twice loses nothing of the meaning, and short repeats within a
/// sentence ("No, no, no.", "very, very") are kept.
pub(crate) fn without_repeats(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut last_sentence, mut last_phrase) = (String::new(), String::new());
    for sentence in text.split_inclusive(['.', '?', '!']) {
        let whole = sentence.trim_end().ends_with(['.', '?', '!']);
        let key = words_key(sentence);
        if whole && !key.is_empty() && key == last_sentence {
            continue;
        }
        for phrase in sentence.split_inclusive(',') {
            let key = words_key(phrase);
            if key.split(' ').count() < REPEAT_MIN_WORDS || key != last_phrase {
                out.push_str(phrase);
            }
            if !key.is_empty() {
                last_phrase = key;
            }
        }
        if !key.is_empty() {
            last_sentence = key;
        }
    }
    out.trim().to_owned()
}

/// What a phrase says, for [`without_repeats`] and the guard's loops and echoes: its words,
/// lower case, without punctuation.
pub(super) fn words_key(phrase: &str) -> String {
    phrase
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A segment's words without whisper's descriptions of the audio: "[BLANK_AUDIO]" and
/// "[MUSIC]" wherever they stand (tiny.en ends a 10 s answer followed by silence with
/// "... end of the month. [BLANK_AUDIO]"), and a segment that is only "(wind blowing)" or
/// music notes. Speech has no square brackets; words in parentheses are kept when there
/// are words beside them. Trimmed; empty when nothing was said.
pub(super) fn without_annotations(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        match rest[open..].find(']') {
            Some(close) => {
                kept.push_str(&rest[..open]);
                rest = &rest[open + close + 1..];
            }
            None => break,
        }
    }
    kept.push_str(rest);
    let words = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let described = words.starts_with('(')
        && words.ends_with(')')
        && words[1..].find(')') == Some(words.len() - 2);
    let notes = words.chars().all(|c| matches!(c, '♪' | '♫' | ' ' | '*'));
    if described || notes {
        String::new()
    } else {
        words
    }
}

#[cfg(test)]
mod tests {
    use super::{without_annotations, without_repeats};

    #[test]
    fn a_phrase_said_again_right_after_itself_is_kept_once() {
        assert_eq!(
            without_repeats("The first one. The first one."),
            "The first one."
        );
        assert_eq!(
            without_repeats("the first one, the first one, the first one,"),
            "the first one,"
        );
        assert_eq!(
            without_repeats("I checked a lot. i checked a LOT!"),
            "I checked a lot."
        );
        assert_eq!(
            without_repeats("Go ahead. Go ahead. Go ahead."),
            "Go ahead."
        );
        assert_eq!(without_repeats("Stop! stop."), "Stop!");
        for kept in [
            "Yes, use the smaller model. And ship it on Friday.",
            "No. Yes. No.",
            "No, no, no.",
            "No, no. No.",
            "very, very good.",
            "",
        ] {
            assert_eq!(without_repeats(kept), kept);
        }
    }

    #[test]
    fn descriptions_of_the_audio_are_not_words() {
        for (heard, words) in [
            ("[BLANK_AUDIO]", ""),
            (" [MUSIC] ", ""),
            ("(wind blowing)", ""),
            ("♪ ♪", ""),
            ("*", ""),
            (" end of the month. [BLANK_AUDIO]", "end of the month."),
            ("[BLANK_AUDIO] Yes.", "Yes."),
            (" Yes, go ahead.", "Yes, go ahead."),
            (
                "(laughs) That is fine (really).",
                "(laughs) That is fine (really).",
            ),
            (
                "Use the smaller model (for now).",
                "Use the smaller model (for now).",
            ),
            ("an open [ bracket", "an open [ bracket"),
        ] {
            assert_eq!(without_annotations(heard), words, "{heard:?}");
        }
    }
}
