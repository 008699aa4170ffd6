//! The words signal: does the partial transcript read like a finished turn?
//!
//! Small on purpose, so every decision can be explained in one line:
//! - a trailing comma, dash or ellipsis, or a last word that needs something after it (a
//!   conjunction, a filler, a preposition, an article, a possessive, an auxiliary or a
//!   subject pronoun: "and", "um", "to", "the", "my", "should", "we") means
//!   **unfinished**;
//! - a sentence that ends on any other word means **finished**, with or without its
//!   closing `.`, `?` or `!` (whisper leaves it off some short transcripts);
//! - anything else (no transcript, only numbers or symbols) is **unsure**, and the
//!   acoustic policy decides.
//!
//! Whisper closes most fragments with a period ("I think we should."), so the last word
//! carries the weight, not the period. A few phrase endings that are complete although
//! their last word is on the list ("I think so.", "Thank you.") are taken as finished
//! (the `FINISHED_PAIRS` list), and so is a short answer of a subject and an auxiliary
//! ("We should.", "Yes, I do.") when it is all that was said.
//!
//! English only so far; another language would bring its own lists.

use serde::Serialize;

/// What a signal makes of the turn so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The speaker is done: stop now.
    Finished,
    /// The speaker is mid-thought: keep listening (up to the longest end silence).
    Unfinished,
    /// No way to tell: the acoustic policy's end silence decides.
    Unsure,
}

/// Last words after which an English sentence goes on: conjunctions, fillers,
/// prepositions, articles, possessives and determiners, auxiliaries and modals, subject
/// pronouns, and verbs that take a clause.
#[rustfmt::skip]
pub(super) const CONTINUES: &[&str] = &[
    // conjunctions and clause openers
    "and", "but", "or", "nor", "so", "because", "cause", "since", "although", "though",
    "unless", "until", "while", "whereas", "if", "when", "whether", "that", "which", "who",
    "whose", "where", "than", "then", "plus", "also",
    // fillers
    "um", "uh", "er", "erm", "uhm", "hmm", "mm", "basically", "actually",
    // prepositions
    "to", "of", "in", "on", "at", "for", "with", "from", "by", "about", "into", "onto",
    "over", "under", "between", "through", "after", "before", "without", "towards",
    "toward", "against", "via", "per",
    // articles, determiners, possessives
    "the", "a", "an", "this", "these", "those", "some", "any", "each", "every", "my",
    "your", "our", "their", "his", "her", "its",
    // auxiliaries and modals: see AUXILIARIES
    "is", "are", "was", "were", "be", "been", "am", "have", "has", "had", "do", "does",
    "should", "would", "could", "can", "will", "shall", "might", "must", "may", "gonna",
    "wanna", "let's", "did", "won't", "can't", "don't", "didn't", "isn't", "wouldn't",
    // subject pronouns
    "i", "we", "you", "they", "he", "she", "it's", "i'm", "we're", "you're", "they're",
    // verbs that take a clause or an object
    "think", "mean", "guess", "want", "need", "like", "say", "said", "use", "make",
];

/// The auxiliaries and modals of [`CONTINUES`], which can close a short answer.
#[rustfmt::skip]
pub(super) const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "am", "have", "has", "had", "do", "does", "did", "should",
    "would", "could", "can", "will", "shall", "might", "must", "may", "won't", "can't",
    "don't", "didn't", "isn't", "wouldn't",
];

/// Endings whose last word is on [`CONTINUES`] but that close a sentence: the word before
/// and the last word.
const FINISHED_PAIRS: &[(&str, &str)] = &[
    ("think", "so"),
    ("hope", "so"),
    ("guess", "so"),
    ("believe", "so"),
    ("said", "so"),
    ("do", "so"),
    ("and", "so"),
    ("or", "so"),
    ("i", "think"),
    ("i", "guess"),
    ("i", "mean"),
    ("thank", "you"),
    ("see", "you"),
    ("love", "you"),
    ("with", "you"),
    ("for", "you"),
    ("to", "you"),
    ("about", "it"),
];

/// Subjects that, followed by an auxiliary or a modal, make a short answer when that is
/// all that was said ("We should.", "Yes, I do."), and the start of a longer one
/// otherwise ("I think we should ... wait").
pub(super) const SUBJECTS: &[&str] =
    &["i", "we", "you", "they", "he", "she", "it", "that", "there"];

/// The most words a short answer ending "subject auxiliary" has ("Yes, I do.").
const SHORT_ANSWER_WORDS: usize = 3;

/// What the words so far say about the turn, and why, in a few words.
pub fn judge(text: &str) -> (Verdict, &'static str) {
    let text = text.trim();
    if text.is_empty() {
        return (Verdict::Unsure, "no words yet");
    }
    if text.ends_with("...") || text.ends_with('…') {
        return (Verdict::Unfinished, "trails off");
    }
    if text.ends_with(',') || text.ends_with('-') || text.ends_with('—') || text.ends_with(';') {
        return (Verdict::Unfinished, "ends mid-sentence");
    }
    let words = normalized_words(text);
    let Some(last) = words.last() else {
        return (Verdict::Unsure, "no words yet");
    };
    let before = words.len().checked_sub(2).map(|i| words[i].as_str());
    let closed = before.is_some_and(|b| FINISHED_PAIRS.contains(&(b, last.as_str())));
    if CONTINUES.contains(&last.as_str()) && !closed {
        let answer = words.len() <= SHORT_ANSWER_WORDS
            && before.is_some_and(|b| SUBJECTS.contains(&b))
            && AUXILIARIES.contains(&last.as_str());
        if answer && text.ends_with(['.', '?', '!']) {
            return (Verdict::Finished, "a short answer");
        }
        return (Verdict::Unfinished, "last word needs more");
    }
    if text.ends_with(['.', '?', '!']) {
        return (Verdict::Finished, "a whole sentence");
    }
    // Whisper leaves the period off some short transcripts it would close on a longer
    // one; a last word that needs nothing after it is read the same way.
    if last.chars().any(char::is_alphabetic) {
        return (Verdict::Finished, "ends on a word that needs nothing more");
    }
    (Verdict::Unsure, "no words to judge")
}

/// The words of `text`, lowercase, without the punctuation around them, with straight
/// apostrophes.
pub(super) fn normalized_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
                .replace('’', "'")
        })
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text: &str) -> Verdict {
        judge(text).0
    }

    #[test]
    fn a_sentence_that_needs_its_next_word_is_unfinished() {
        for text in [
            "I think that we should consider the",
            "Use the smaller model and",
            "Keep the release, but",
            "We could move it to",
            "Let's ship it on the.",
            "Because, um.",
            "Um",
            "It depends on whether",
            "I'd rather ask my",
            "The meeting is,",
            "I'm not sure...",
            "So what I want is -",
        ] {
            assert_eq!(verdict(text), Verdict::Unfinished, "{text}");
        }
    }

    #[test]
    fn a_closed_sentence_is_finished() {
        for text in [
            "Yes.",
            "No!",
            "Go ahead.",
            "Use the smaller model for now and ship it on Friday.",
            "Why not?",
            "I think so.",
            "I hope so.",
            "I guess.",
            "Thank you.",
            "Don't worry about it.",
        ] {
            assert_eq!(verdict(text), Verdict::Finished, "{text}");
        }
    }

    #[test]
    fn text_without_words_is_unsure_and_without_a_period_is_read_by_its_last_word() {
        for text in ["", "   ", "♪", "42"] {
            assert_eq!(verdict(text), Verdict::Unsure, "{text:?}");
        }
        assert_eq!(
            judge("Use the smaller model for now and ship it on Friday"),
            (Verdict::Finished, "ends on a word that needs nothing more")
        );
    }

    #[test]
    fn a_subject_and_an_auxiliary_alone_answer_and_after_more_words_begin() {
        for text in ["We should.", "Yes, I do.", "It is.", "I can't!"] {
            assert_eq!(verdict(text), Verdict::Finished, "{text:?}");
        }
        for text in ["I think we should.", "We should", "So yes, I can."] {
            assert_eq!(verdict(text), Verdict::Unfinished, "{text:?}");
        }
    }

    #[test]
    fn case_curly_apostrophes_and_quotes_do_not_change_the_verdict() {
        assert_eq!(verdict("LET’S."), Verdict::Unfinished);
        assert_eq!(verdict("\"Ship it.\""), Verdict::Finished);
        assert_eq!(verdict("\"Ship it to\""), Verdict::Unfinished);
        assert_eq!(verdict("AND."), Verdict::Unfinished);
    }
}
