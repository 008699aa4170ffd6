//! The question `ask_human` asked, and whether what was heard closes it.
//!
//! A closed question ("Is the test green?", "Port 80 or 8080?", "Today or tomorrow?")
//! answered by a whole closed answer ("It is.", "8080.", "Tomorrow, after lunch.") is
//! rarely continued, so the turn may stop after a short silence. Two things keep that
//! from cutting an answer that goes on:
//! - a bare "yes" or "no" (or "okay", "sure") is not a closed answer: it is often the start
//!   of one ("Yes. And add a test for it."), and is waited for as any other answer;
//! - the answer must be short ([`MOST_WORDS`]) and tied to the question: for a choice,
//!   it names one of the question's own words ("Redis"); for a yes-or-no question, it
//!   opens with a yes or a no and goes on ("No, keep it."), is a subject and an auxiliary
//!   ("It is."), or names one of the question's words ("The staging cluster is ready.").
//!
//! English only, like [`super::words`]; a question in another language reads as open, and
//! its answers are waited for as before.

use super::words::{AUXILIARIES, CONTINUES, SUBJECTS, Verdict, judge, normalized_words};

/// The most words a closed answer has; a longer one may be the start of an explanation.
pub const MOST_WORDS: usize = 8;

/// What kind of question was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Question {
    /// Anything else: a "what", "why" or "how" question, or no question mark at all.
    Open,
    /// A yes-or-no question ("Should I push?"); its own content words.
    YesNo(Vec<String>),
    /// A choice between options ("Redis or Memcached?"); its own content words.
    Choice(Vec<String>),
}

/// Words that open a yes-or-no question.
#[rustfmt::skip]
const YES_NO_OPENERS: &[&str] = &[
    "is", "are", "was", "were", "am", "do", "does", "did", "have", "has", "had", "can",
    "could", "should", "would", "will", "shall", "may", "might", "must", "isn't", "aren't",
    "don't", "doesn't", "didn't", "can't", "shouldn't", "won't", "wouldn't", "haven't",
    "hasn't",
];

/// Words that say yes or no, or nothing more than that.
#[rustfmt::skip]
const BARE: &[&str] = &[
    "yes", "yeah", "yep", "yup", "no", "nope", "nah", "okay", "ok", "sure", "right",
    "correct", "exactly", "absolutely", "definitely", "please", "fine", "alright", "uh",
    "um", "hmm", "mm", "well", "so", "oh",
];

/// Words that open a yes-or-no answer that says more than yes or no.
const ANSWER_OPENERS: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "no",
    "nope",
    "not",
    "never",
    "sure",
    "absolutely",
    "definitely",
];

/// Words that carry no content of the question's: the question words and what
/// [`CONTINUES`] lists (articles, auxiliaries, pronouns, prepositions).
const NOT_CONTENT: &[&str] = &[
    "what", "which", "why", "how", "whom", "either", "neither", "only", "just", "me", "us", "them",
    "him", "it", "now", "not", "there", "here", "go", "ok", "okay",
];

/// Words that answer a choice without naming an option.
const CHOICE_WORDS: &[&str] = &["both", "neither", "either"];

impl Question {
    /// What kind of question `text` asks, judged by its last sentence ending in `?`.
    pub fn of(text: &str) -> Question {
        let Some(asked) = last_question(text) else {
            return Question::Open;
        };
        let words = normalized_words(asked);
        let content: Vec<String> = words
            .iter()
            .filter(|w| is_content(w))
            .map(|w| number(w))
            .collect();
        if words.iter().any(|w| w == "or") {
            Question::Choice(content)
        } else if words
            .first()
            .is_some_and(|w| YES_NO_OPENERS.contains(&w.as_str()))
        {
            Question::YesNo(content)
        } else {
            Question::Open
        }
    }

    /// Whether `said`, which the words signal judged `verdict`, is a whole closed answer
    /// to this question, and why, in a few words. whisper closes many short answers with
    /// an ellipsis ("It is..."), which reads as trailing off: such an answer counts when
    /// it would be a whole sentence with a period instead ("Yes, but..." does not).
    pub fn closes(&self, said: &str, verdict: Verdict) -> Option<&'static str> {
        match verdict {
            Verdict::Finished => self.closed_by(said),
            Verdict::Unfinished => {
                let cut = said
                    .trim_end()
                    .strip_suffix("...")
                    .or_else(|| said.trim_end().strip_suffix('…'))?;
                let whole = format!("{}.", cut.trim_end());
                (judge(&whole).0 == Verdict::Finished).then(|| self.closed_by(&whole))?
            }
            // Only numbers ("8,080"), which the words signal cannot judge: an answer when
            // they are one of the question's choices.
            Verdict::Unsure => self
                .closed_by(said)
                .filter(|_| matches!(self, Question::Choice(_))),
        }
    }

    /// Whether `said` (a transcript judged a whole sentence) is a whole closed answer to
    /// this question, and why, in a few words.
    fn closed_by(&self, said: &str) -> Option<&'static str> {
        let content = match self {
            Question::Open => return None,
            Question::YesNo(c) | Question::Choice(c) => c,
        };
        let words: Vec<String> = normalized_words(said).iter().map(|w| number(w)).collect();
        if words.is_empty() || words.len() > MOST_WORDS {
            return None;
        }
        if words.iter().all(|w| BARE.contains(&w.as_str())) {
            return None;
        }
        let names = words.iter().any(|w| content.contains(w));
        match self {
            Question::Choice(_) if names => Some("names one of the question's choices"),
            Question::Choice(_) if CHOICE_WORDS.contains(&words[0].as_str()) => {
                Some("answers the choice")
            }
            Question::YesNo(_) if ANSWER_OPENERS.contains(&words[0].as_str()) => {
                Some("a yes or no and what goes with it")
            }
            Question::YesNo(_) if subject_and_auxiliary(&words) => Some("a short yes or no"),
            Question::YesNo(_) if names => Some("answers with the question's words"),
            _ => None,
        }
    }
}

/// The last sentence of `text`, when it ends in a question mark: a question followed by
/// more ("Is it green? Tell me what you see.") asks for more than a yes or no.
fn last_question(text: &str) -> Option<&str> {
    let text = text.trim_end();
    let asked = text.strip_suffix('?')?;
    let start = asked.rfind(['.', '!', '?', '\n']).map_or(0, |i| i + 1);
    Some(&asked[start..])
}

/// `word` with the thousands separators whisper writes taken out of a number ("8,080").
fn number(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_digit() || c == ',') {
        word.replace(',', "")
    } else {
        word.to_owned()
    }
}

fn is_content(word: &str) -> bool {
    !CONTINUES.contains(&word) && !NOT_CONTENT.contains(&word) && word != "or"
}

/// "It is.", "They don't.", "We should not.": a subject, an auxiliary, perhaps a "not".
fn subject_and_auxiliary(words: &[String]) -> bool {
    let Some((subject, rest)) = words.split_first() else {
        return false;
    };
    let rest: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|w| *w != "not")
        .collect();
    SUBJECTS.contains(&subject.as_str()) && rest.len() == 1 && AUXILIARIES.contains(&rest[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closes(question: &str, said: &str) -> bool {
        Question::of(question).closed_by(said).is_some()
    }

    #[test]
    fn a_question_is_closed_when_it_offers_a_choice_or_asks_yes_or_no() {
        for q in [
            "Port 80 or 8080?",
            "Today or tomorrow?",
            "Which region should the bucket live in, Frankfurt or Dublin?",
        ] {
            assert!(matches!(Question::of(q), Question::Choice(_)), "{q}");
        }
        for q in [
            "Is the test green?",
            "I ran the suite. Should I push the branch?",
            "Can't it wait?",
        ] {
            assert!(matches!(Question::of(q), Question::YesNo(_)), "{q}");
        }
        for q in [
            "What should we do about the flaky test?",
            "Why did the deploy fail?",
            "Tell me the port.",
            "",
            "Is it green? Tell me what you see.",
        ] {
            assert_eq!(Question::of(q), Question::Open, "{q}");
        }
    }

    #[test]
    fn whole_closed_answers_close_a_closed_question() {
        for (q, a) in [
            ("Is the test green?", "It is."),
            ("Is the test green?", "It isn't."),
            ("Is the test green?", "No, it's red."),
            ("Is the test green?", "Not yet."),
            ("Is the test green?", "The test is green."),
            ("Port 80 or 8080?", "8080."),
            ("Today or tomorrow?", "Tomorrow."),
            ("Today or tomorrow?", "Not today."),
            ("Today or tomorrow?", "Neither."),
            (
                "Should the cache live in Redis or in Memcached?",
                "Put it in Redis.",
            ),
        ] {
            assert!(closes(q, a), "{q} / {a}");
        }
    }

    #[test]
    fn a_short_answer_whisper_closes_with_an_ellipsis_counts_and_a_trailing_one_does_not() {
        let q = Question::of("Is the test green?");
        assert!(q.closes("It is...", Verdict::Unfinished).is_some());
        assert!(q.closes("It is…", Verdict::Unfinished).is_some());
        for said in ["Yes, but...", "It is, but the", "I think...", "Yes..."] {
            assert!(q.closes(said, Verdict::Unfinished).is_none(), "{said}");
        }
        assert!(q.closes("It is.", Verdict::Unsure).is_none());
        let port = Question::of("Port 80 or 8080?");
        assert!(port.closes("8,080", Verdict::Unsure).is_some());
        assert!(port.closes("8,000 AD.", Verdict::Finished).is_none());
        assert!(port.closes("42", Verdict::Unsure).is_none());
    }

    #[test]
    fn a_bare_yes_or_no_is_waited_for_as_any_answer() {
        for a in ["Yes.", "No.", "Yeah, sure.", "Okay.", "Um, no."] {
            assert!(!closes("Is the test green?", a), "{a}");
            assert!(!closes("Today or tomorrow?", a), "{a}");
        }
    }

    #[test]
    fn an_open_question_a_long_answer_or_an_answer_beside_the_question_is_not_closed() {
        assert!(!closes("What should we do?", "Ship it on Friday."));
        assert!(!closes(
            "Is the test green?",
            "Yes, and I also looked at the other failing jobs this morning."
        ));
        // A thinking pause misheard as a sentence names nothing the question asked.
        assert!(!closes("Is the test green?", "We can try now."));
        assert!(!closes("Port 80 or 8080?", "Let me check."));
        assert!(!closes("Is the test green?", ""));
    }
}
