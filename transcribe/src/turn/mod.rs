//! End of turn: above the core's acoustic end of speech, decide whether the user has
//! finished, and stop sooner when they have, later when they are mid-thought.
//!
//! [`Turn`] is a pure machine on the capture's own clock, like the core below it: after
//! every frame it is told where the last speech ended and what time it is, and answers
//! [`Step::Listen`], [`Step::Begin`] (start reading the signals, at [`PREFETCH_MS`] of
//! silence), [`Step::Check`] (their verdict is needed now) or [`Step::Stop`]. The driver
//! (`yazses::capture::listen_with`) runs the [`Signals`] and hands back a
//! [`Judgement`]. The signals read the audio up to the begin point, and the verdict is
//! applied at the check point, whatever the wall clock says: a file played faster than
//! real time gets the same decisions as a live microphone (whose frames wait in the
//! source's buffer while a check is waited for).
//!
//! After `check_after_ms` of silence, one check per pause:
//! - **finished**: stop once `min_end_silence_ms` of silence has passed (1.2 s by
//!   default: a breath between two sentences is shorter, so a second sentence is not
//!   cut off); when the turn answers a closed question ([`Turn::asking`]) and the words
//!   are a whole closed answer to it ([`question`]) at the turn's first pause, once
//!   `closed_end_silence_ms` has passed (0.45 s by default): such an answer is rarely
//!   continued;
//! - **unfinished**: keep listening up to `max_end_silence_ms`;
//! - **unsure**: the acoustic policy's own end silence.
//!
//! Speech after a check starts a new pause and a new check. The signals
//! ([`signals::Smart`]):
//! [`words`] (the partial transcript, whose text is reused as the answer when nothing was
//! said after it) and [`prosody`] (the Smart Turn model), weighed by
//! [`Judgement::with_prosody`]. Without the model's files `mode = "smart"` runs on the
//! words and the acoustics alone and says so once in the log.

pub mod mel;
pub mod prosody;
pub mod question;
pub mod signals;
pub mod words;

use serde::{Deserialize, Serialize};
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Duration;

use crate::transcribe::Said;

pub use question::Question;
pub use words::Verdict;

/// Silence after speech at which the signals start reading, in milliseconds: early
/// enough that the partial transcript is mostly done by the check, late enough that the
/// last word is whole.
pub const PREFETCH_MS: u64 = 100;

/// Silence added after the audio a check transcribes, in samples: with only the short
/// silence of the check behind the last word, whisper (greedy too, in a window cut to fit)
/// often says the sentence twice ("Send the report. Send the report."); with a second of
/// silence after it, as the fixed policy's transcription has, it does so far less often
/// (8 of 90 partial transcripts on the turn set before, 4 of 102 after), and a capture's
/// transcription takes out what is left.
pub const CHECK_PAD_SAMPLES: usize = 16_000;

/// `[turn] mode`. `smart` is the default: a finished answer stops where `fixed` would, an
/// unfinished one is waited for longer, and the answer is read (with a beam) while the
/// turn waits, ready at the stop (docs/decisions/2026-12-04-whisper-cpp-1-8-5.md, "Smart by
/// default").
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TurnMode {
    /// Stop after the acoustic end silence, whatever was said.
    Fixed,
    /// Decide from what was said: stop sooner after a finished answer, wait through a
    /// thinking pause (the default).
    #[default]
    Smart,
}

/// `[turn]`: the end-of-turn policy for `ask_human` and `yazses listen`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TurnConfig {
    /// `fixed` (acoustics only) or `smart` (words, then acoustics).
    pub mode: TurnMode,
    /// Silence after speech before the first check, in milliseconds.
    pub check_after_ms: u64,
    /// The least silence a finished turn stops after, in milliseconds: longer than a
    /// breath between two sentences, or the second is cut off.
    pub min_end_silence_ms: u64,
    /// The least silence a whole closed answer to a closed question stops after, in
    /// milliseconds (`ask_human` only: the other captures have no question); never more
    /// than `min_end_silence_ms`.
    pub closed_end_silence_ms: u64,
    /// The most silence an unfinished turn is waited through, in milliseconds.
    pub max_end_silence_ms: u64,
    /// The prosody model's probability at and above which the voice counts as complete.
    pub prosody_threshold: f32,
}

impl Default for TurnConfig {
    fn default() -> Self {
        TurnConfig {
            mode: TurnMode::Smart,
            check_after_ms: 300,
            min_end_silence_ms: MIN_END_SILENCE_MS,
            closed_end_silence_ms: CLOSED_END_SILENCE_MS,
            max_end_silence_ms: 3000,
            prosody_threshold: PROSODY_THRESHOLD,
        }
    }
}

/// `[turn] min_end_silence_ms` by default: equal to the default acoustic end silence of
/// `ask_human` and `listen` (it does not follow a configured one), so a finished answer
/// stops where `fixed` would with the defaults. A finished sentence's check cannot tell
/// whether another follows after a breath, and shorter waits cut such second sentences
/// (docs/decisions/2026-12-04-whisper-cpp-1-8-5.md, "Smart by default").
pub const MIN_END_SILENCE_MS: u64 = 1200;

/// `[turn] closed_end_silence_ms` by default: a whole closed answer ("It is.",
/// "Tomorrow.") after a closed question is rarely continued, and waiting the breath a
/// second sentence needs made `ask_human` answer 1.3 s after such answers ended. A bare
/// "yes" or "no", often continued, waits [`MIN_END_SILENCE_MS`] as before.
pub const CLOSED_END_SILENCE_MS: u64 = 450;

/// Which signal decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The partial transcript.
    Words,
    /// The voice (the Smart Turn model).
    Prosody,
    /// The partial transcript and the voice, agreeing that the turn is over.
    WordsAndProsody,
    /// Nothing else could tell; the acoustic end silence decided.
    Silence,
}

/// What a check found.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// Which signal gave it.
    pub signal: Signal,
    /// Why, in a few words.
    pub why: String,
    /// The partial transcript the check read, when it read one.
    pub said: Option<Said>,
    /// The prosody model's probability that the turn is complete, when it ran.
    pub probability: Option<f32>,
}

/// The probability at and above which Pipecat calls a turn complete.
pub const COMPLETE: f32 = 0.5;

/// `[turn] prosody_threshold` by default: lower than Pipecat's [`COMPLETE`], because Smart
/// Turn gives many finished answers a low probability and 0.5 kept them waiting
/// (docs/decisions/2026-12-04-end-of-turn.md).
pub const PROSODY_THRESHOLD: f32 = 0.1;

impl Judgement {
    /// No signal could be read (no transcriber, or it failed): the acoustics decide.
    pub fn unsure(why: impl Into<String>) -> Judgement {
        Judgement {
            verdict: Verdict::Unsure,
            signal: Signal::Silence,
            why: why.into(),
            said: None,
            probability: None,
        }
    }

    /// The words signal's verdict on `said`.
    pub fn of_words(said: Said) -> Judgement {
        let (verdict, why) = words::judge(&said.text);
        let signal = match verdict {
            Verdict::Unsure => Signal::Silence,
            _ => Signal::Words,
        };
        Judgement {
            verdict,
            signal,
            why: why.to_owned(),
            said: Some(said),
            probability: None,
        }
    }

    /// This words judgement weighed with the prosody model's `probability` that the
    /// turn is complete, the voice counting as complete at and above `threshold`:
    /// - words unfinished: unfinished, whatever the voice (a trailing "and" is not a
    ///   complete turn however it sounds);
    /// - words finished and the voice complete: finished;
    /// - words finished and the voice mid-turn: unsure, so the acoustic end silence
    ///   decides, as under `mode = "fixed"`. The voice vetoes some thinking pauses misheard
    ///   as whole sentences ("We could try the" as "We can try now."), and as many
    ///   finished answers (most of them said by espeak-ng's flat voices): waiting the
    ///   longest pause for those made smart's slowest stops slower than fixed's;
    /// - no words: the acoustics. On the turn set, babble before an answer was heard as no
    ///   words and a complete voice, and stopped the capture before the user spoke.
    pub fn with_prosody(self, probability: f32, threshold: f32) -> Judgement {
        let complete = probability >= threshold;
        let (verdict, signal, why) = match (self.verdict, complete) {
            (Verdict::Unfinished, _) => (Verdict::Unfinished, Signal::Words, self.why),
            (Verdict::Finished, true) => (
                Verdict::Finished,
                Signal::WordsAndProsody,
                format!("{}; the voice sounds complete", self.why),
            ),
            (Verdict::Finished, false) => (
                Verdict::Unsure,
                Signal::Prosody,
                format!("{}, but the voice sounds mid-turn", self.why),
            ),
            // Nothing was heard as words: other people talking (babble) sounds complete
            // to the voice model too, so it does not end a turn alone.
            (Verdict::Unsure, _) => (Verdict::Unsure, Signal::Silence, self.why),
        };
        Judgement {
            verdict,
            signal,
            why,
            probability: Some(probability),
            ..self
        }
    }
}

/// How the turn was judged, as `ask_human` and `yazses listen --json` report it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TurnReport {
    /// The last check's verdict: finished, unfinished or unsure.
    pub decision: Verdict,
    /// Which signal gave it: the partial transcript (`words`), the voice (`prosody`),
    /// both agreeing (`words_and_prosody`), or none could tell (`silence`).
    pub decided_by: Signal,
    /// The prosody model's probability that the turn was complete, when it ran (to four
    /// decimals).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub probability: Option<f64>,
    /// Why, in a few words.
    pub why: String,
    /// When the check was made, in milliseconds of audio from the start of listening.
    pub at_ms: u64,
    /// The silence before the check, in milliseconds.
    pub silence_ms: u64,
    /// The end-of-turn checks made during the capture (one per pause).
    pub checks: u32,
}

/// The end-of-turn signals, read between frames on the capture's thread.
pub trait Signals {
    /// Start reading `kept` (the audio so far, ending in a short silence) in the
    /// background; a read begun earlier and not judged is dropped.
    fn begin(&mut self, kept: &[i16]);
    /// The judgement on what [`Signals::begin`] was last given; waits for it.
    fn judge(&mut self) -> Judgement;
    /// The read last begun will not be judged: the speaker went on before its check, or
    /// the capture ended. A read that costs stops early (by default nothing is done).
    fn abandon(&mut self) {}
    /// The speaker went on after the last judged pause: what was begun at its check (the
    /// answer's read) is not wanted. By default nothing is done.
    fn resumed(&mut self) {}
}

/// What to do after a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep listening.
    Listen,
    /// Start reading the signals over the audio so far ([`Signals::begin`]), then call
    /// [`Turn::begun`].
    Begin,
    /// Ask the signals now, then call [`Turn::judged`].
    Check,
    /// The turn is over.
    Stop,
}

/// The end-of-turn policy for one capture.
#[derive(Clone, Debug)]
pub struct Turn {
    config: TurnConfig,
    /// The acoustic end silence an unsure verdict falls back to, in milliseconds.
    end_silence_ms: u64,
    /// The pause the signals were last begun for (where its speech ended).
    begun: Option<u64>,
    /// The pause the last check was for, its verdict, and whether it closed the question.
    last: Option<(u64, Verdict, bool)>,
    /// The question the turn answers.
    question: Question,
    report: Option<TurnReport>,
    said: Option<Said>,
}

impl Turn {
    /// The policy over `acoustic`, the endpoint the capture would run on alone.
    pub fn new(config: TurnConfig, acoustic: &EndpointConfig) -> Turn {
        Turn {
            config,
            end_silence_ms: acoustic.end_silence.total_millis(),
            begun: None,
            last: None,
            question: Question::Open,
            report: None,
            said: None,
        }
    }

    /// The policy for an answer to `question`: a whole closed answer to a closed question
    /// stops after `closed_end_silence_ms`.
    pub fn asking(self, question: &str) -> Turn {
        Turn {
            question: Question::of(question),
            ..self
        }
    }

    /// The endpoint the core runs on under this policy: the acoustic one, with its end
    /// silence raised to the longest this policy may wait, so that the turn decides
    /// every end of speech before it.
    pub fn core_endpoint(&self, acoustic: &EndpointConfig) -> EndpointConfig {
        let longest = self.config.max_end_silence_ms.max(self.end_silence_ms);
        EndpointConfig {
            end_silence: Duration::from_millis(longest),
            ..*acoustic
        }
    }

    /// After a frame: `speech_end_ms` is where the last speech ended (once speech has
    /// started), `now_ms` the end of the frame, both on the capture's clock.
    pub fn step(&self, speech_end_ms: Option<u64>, now_ms: u64) -> Step {
        let Some(end) = speech_end_ms else {
            return Step::Listen;
        };
        let silence = now_ms.saturating_sub(end);
        let wait = match self.last {
            Some((checked, verdict, closed)) if checked == end => match verdict {
                Verdict::Finished if closed => self
                    .config
                    .closed_end_silence_ms
                    .min(self.config.min_end_silence_ms),
                Verdict::Finished => self.config.min_end_silence_ms,
                Verdict::Unfinished => self.config.max_end_silence_ms,
                Verdict::Unsure => self.end_silence_ms,
            },
            _ if silence < PREFETCH_MS.min(self.config.check_after_ms) => return Step::Listen,
            _ if self.begun != Some(end) => return Step::Begin,
            _ if silence >= self.config.check_after_ms => return Step::Check,
            _ => return Step::Listen,
        };
        if silence >= wait {
            Step::Stop
        } else {
            Step::Listen
        }
    }

    /// The signals were begun, as [`Step::Begin`] asked, for the pause after
    /// `speech_end_ms`.
    pub fn begun(&mut self, speech_end_ms: u64) {
        self.begun = Some(speech_end_ms);
    }

    /// The check [`Step::Check`] asked for, made at `now_ms` for the pause after
    /// `speech_end_ms`.
    pub fn judged(&mut self, speech_end_ms: u64, now_ms: u64, mut judgement: Judgement) {
        let checks = self.report.as_ref().map_or(0, |r| r.checks) + 1;
        // Only the first pause: a speaker who went on after one is explaining, and may
        // go on again.
        let closes = match &judgement.said {
            Some(said) if checks == 1 => self.question.closes(&said.text, judgement.verdict),
            _ => None,
        };
        if let Some(why) = closes {
            judgement.why = match judgement.verdict {
                Verdict::Finished => format!("{}; {why}", judgement.why),
                _ => format!("{why} (read without whisper's closing ellipsis)"),
            };
            judgement.verdict = Verdict::Finished;
        }
        self.last = Some((speech_end_ms, judgement.verdict, closes.is_some()));
        self.report = Some(TurnReport {
            decision: judgement.verdict,
            decided_by: judgement.signal,
            probability: judgement
                .probability
                .map(|p| (f64::from(p) * 1e4).round() / 1e4),
            why: judgement.why,
            at_ms: now_ms,
            silence_ms: now_ms.saturating_sub(speech_end_ms),
            checks,
        });
        self.said = judgement.said;
    }

    /// The report, once a check was made.
    pub fn report(&self) -> Option<&TurnReport> {
        self.report.as_ref()
    }

    /// The last check's transcript, when nothing was said after it: then the check read
    /// the whole answer, and the capture need not be transcribed again. `speech_end_ms` is where speech ended
    /// when the capture stopped.
    pub fn answer(&self, speech_end_ms: Option<u64>) -> Option<&Said> {
        match self.last {
            Some((checked, _, _)) if Some(checked) == speech_end_ms => self.said.as_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Said;

    fn turn() -> Turn {
        let acoustic = EndpointConfig {
            end_silence: Duration::from_millis(1200),
            ..EndpointConfig::default()
        };
        Turn::new(
            TurnConfig {
                mode: TurnMode::Smart,
                ..TurnConfig::default()
            },
            &acoustic,
        )
    }

    fn words(text: &str) -> Judgement {
        Judgement::of_words(Said {
            text: text.into(),
            heard: true,
        })
    }

    #[test]
    fn the_core_waits_as_long_as_the_longest_pause_the_turn_may_wait_through() {
        let acoustic = EndpointConfig::default();
        let t = Turn::new(TurnConfig::default(), &acoustic);
        assert_eq!(t.core_endpoint(&acoustic).end_silence.total_millis(), 3000);
        assert_eq!(t.core_endpoint(&acoustic).no_speech, acoustic.no_speech);
    }

    #[test]
    fn a_finished_answer_is_judged_at_the_first_check_and_stops_at_the_end_silence() {
        let mut t = turn();
        // Speech ended at 2000 ms; silence grows frame by frame.
        assert_eq!(t.step(None, 1000), Step::Listen);
        assert_eq!(t.step(Some(2000), 2090), Step::Listen);
        assert_eq!(t.step(Some(2000), 2100), Step::Begin);
        t.begun(2000);
        assert_eq!(t.step(Some(2000), 2290), Step::Listen);
        assert_eq!(t.step(Some(2000), 2300), Step::Check);
        t.judged(2000, 2300, words("Ship it on Friday."));
        assert_eq!(t.step(Some(2000), 2300), Step::Listen);
        assert_eq!(t.step(Some(2000), 3190), Step::Listen);
        assert_eq!(t.step(Some(2000), 3200), Step::Stop);
        let r = t.report().unwrap();
        assert_eq!(
            (r.decision, r.decided_by, r.at_ms, r.silence_ms, r.checks),
            (Verdict::Finished, Signal::Words, 2300, 300, 1)
        );
        assert_eq!(t.answer(Some(2000)).unwrap().text, "Ship it on Friday.");
    }

    #[test]
    fn a_second_sentence_after_a_breath_is_heard_and_the_first_check_is_not_reused() {
        let mut t = turn();
        // "Yes, use the smaller model." ends at 2000 ms and reads as a whole answer...
        t.begun(2000);
        t.judged(2000, 2300, words("Yes, use the smaller model."));
        // ...but after an 800 ms breath the user says "And ship it on Friday.", which
        // ends at 4000 ms.
        assert_eq!(t.step(Some(2000), 2800), Step::Listen);
        assert_eq!(t.step(Some(4000), 4050), Step::Listen);
        assert!(t.answer(Some(4000)).is_none(), "new words since the check");
        assert_eq!(t.step(Some(4000), 4100), Step::Begin);
        t.begun(4000);
        assert_eq!(t.step(Some(4000), 4300), Step::Check);
        t.judged(
            4000,
            4300,
            words("Yes, use the smaller model. And ship it on Friday."),
        );
        assert_eq!(t.step(Some(4000), 5190), Step::Listen);
        assert_eq!(t.step(Some(4000), 5200), Step::Stop);
        assert_eq!(t.report().unwrap().checks, 2);
        assert!(t.answer(Some(4000)).unwrap().text.ends_with("Friday."));
    }

    #[test]
    fn a_shorter_end_silence_answers_sooner_and_cuts_the_breath() {
        let mut t = Turn::new(
            TurnConfig {
                min_end_silence_ms: 300,
                ..TurnConfig::default()
            },
            &EndpointConfig::default(),
        );
        t.judged(2000, 2300, words("Yes, use the smaller model."));
        assert_eq!(
            t.step(Some(2000), 2300),
            Step::Stop,
            "before the breath ends"
        );
    }

    #[test]
    fn a_thinking_pause_is_waited_through_and_the_next_words_are_checked_again() {
        let mut t = turn();
        t.begun(2000);
        assert_eq!(t.step(Some(2000), 2300), Step::Check);
        t.judged(2000, 2300, words("I think we should"));
        // Past the acoustic 1.2 s: still listening.
        assert_eq!(t.step(Some(2000), 3300), Step::Listen);
        assert_eq!(t.step(Some(2000), 4990), Step::Listen);
        // The user goes on at 4000 ms and stops at 5000 ms.
        assert_eq!(t.step(Some(5000), 5050), Step::Listen);
        assert!(t.answer(Some(5000)).is_none(), "new words since the check");
        assert_eq!(t.step(Some(5000), 5100), Step::Begin);
        t.begun(5000);
        assert_eq!(t.step(Some(5000), 5300), Step::Check);
        t.judged(5000, 5300, words("I think we should wait."));
        assert_eq!(t.step(Some(5000), 6200), Step::Stop);
        assert_eq!(t.report().unwrap().checks, 2);
    }

    #[test]
    fn an_unfinished_turn_that_never_goes_on_stops_at_the_longest_pause() {
        let mut t = turn();
        t.judged(2000, 2300, words("Because"));
        assert_eq!(t.step(Some(2000), 4990), Step::Listen);
        assert_eq!(t.step(Some(2000), 5000), Step::Stop);
        assert_eq!(t.answer(Some(2000)).unwrap().text, "Because");
    }

    #[test]
    fn the_voice_confirms_finished_words_or_leaves_them_to_the_silence() {
        let both = words("Ship it on Friday.").with_prosody(0.93, COMPLETE);
        assert_eq!(
            (both.verdict, both.signal, both.probability),
            (Verdict::Finished, Signal::WordsAndProsody, Some(0.93))
        );
        // "We could try the", misheard as a whole sentence: the voice is mid-turn.
        let veto = words("We can try now.").with_prosody(0.02, COMPLETE);
        assert_eq!(
            (veto.verdict, veto.signal),
            (Verdict::Unsure, Signal::Prosody)
        );
        assert!(veto.why.contains("mid-turn"), "{}", veto.why);
        assert_eq!(veto.said.unwrap().text, "We can try now.", "still reusable");
        let trailing = words("I think we should").with_prosody(0.99, COMPLETE);
        assert_eq!(
            (trailing.verdict, trailing.signal),
            (Verdict::Unfinished, Signal::Words)
        );
        // Exactly Pipecat's threshold is complete.
        assert_eq!(
            words("Yes.").with_prosody(COMPLETE, COMPLETE).verdict,
            Verdict::Finished
        );
        // No words (babble, or a failed transcript): the voice does not end it alone.
        let no_words = Judgement::unsure("the partial transcript failed");
        let j = no_words.with_prosody(0.93, COMPLETE);
        assert_eq!(
            (j.verdict, j.signal, j.probability),
            (Verdict::Unsure, Signal::Silence, Some(0.93))
        );
    }

    #[test]
    fn a_vetoed_answer_stops_at_the_acoustic_end_silence_and_reports_the_probability() {
        let mut t = turn();
        t.judged(
            2000,
            2300,
            words("We can try now.").with_prosody(0.02, COMPLETE),
        );
        assert_eq!(t.step(Some(2000), 3190), Step::Listen);
        assert_eq!(t.step(Some(2000), 3200), Step::Stop, "the acoustic 1.2 s");
        let r = t.report().unwrap();
        assert_eq!(
            (r.decision, r.decided_by, r.probability),
            (Verdict::Unsure, Signal::Prosody, Some(0.02))
        );
        assert_eq!(t.answer(Some(2000)).unwrap().text, "We can try now.");
    }

    #[test]
    fn a_whole_closed_answer_to_a_closed_question_stops_after_a_short_silence() {
        let mut t = turn().asking("Port 80 or 8080?");
        // "8080." ends at 2000 ms and is checked at 300 ms of silence.
        t.begun(2000);
        assert_eq!(t.step(Some(2000), 2300), Step::Check);
        t.judged(2000, 2300, words("8080."));
        assert_eq!(t.step(Some(2000), 2440), Step::Listen);
        assert_eq!(t.step(Some(2000), 2450), Step::Stop);
        let r = t.report().unwrap();
        assert_eq!(
            (r.decision, r.decided_by),
            (Verdict::Finished, Signal::Words)
        );
        assert!(r.why.contains("choices"), "{}", r.why);
        // whisper's "It is..." answers the question as "It is." does.
        let mut short = turn().asking("Is the test green?");
        short.judged(2000, 2300, words("It is..."));
        assert_eq!(short.step(Some(2000), 2450), Step::Stop);
        assert_eq!(short.report().unwrap().decision, Verdict::Finished);
        // A configured finished wait shorter than the closed one bounds it.
        let mut hasty = Turn::new(
            TurnConfig {
                min_end_silence_ms: 300,
                ..TurnConfig::default()
            },
            &EndpointConfig::default(),
        )
        .asking("Port 80 or 8080?");
        hasty.judged(2000, 2300, words("8080."));
        assert_eq!(hasty.step(Some(2000), 2300), Step::Stop);
    }

    #[test]
    fn a_bare_yes_then_more_after_a_breath_is_not_cut() {
        let mut t = turn().asking("Should I merge it?");
        // "Yes." ends at 2000 ms; "And add a test for it." follows after 800 ms.
        t.begun(2000);
        t.judged(2000, 2300, words("Yes."));
        assert_eq!(t.step(Some(2000), 2790), Step::Listen, "the breath");
        assert_eq!(
            t.step(Some(4500), 4550),
            Step::Listen,
            "the second sentence"
        );
        t.begun(4500);
        // A closed answer now, but at the second pause: the speaker may go on again.
        t.judged(4500, 4800, words("Yes. And add a test for it."));
        assert_eq!(t.step(Some(4500), 5690), Step::Listen);
        assert_eq!(t.step(Some(4500), 5700), Step::Stop);
        assert!(t.answer(Some(4500)).unwrap().text.ends_with("for it."));
    }

    #[test]
    fn the_question_changes_nothing_for_an_open_question_or_an_unfinished_answer() {
        let mut open = turn().asking("What should we do about the flaky test?");
        open.judged(2000, 2300, words("Quarantine it."));
        assert_eq!(open.step(Some(2000), 2450), Step::Listen);
        assert_eq!(open.step(Some(2000), 3200), Step::Stop);
        let mut pause = turn().asking("Is the test green?");
        pause.judged(2000, 2300, words("It is, but the"));
        assert_eq!(pause.step(Some(2000), 4990), Step::Listen);
        // The voice heard mid-turn leaves a closed answer to the acoustic end silence.
        let mut vetoed = turn().asking("Is the test green?");
        vetoed.judged(2000, 2300, words("It is.").with_prosody(0.02, COMPLETE));
        assert_eq!(vetoed.step(Some(2000), 3190), Step::Listen);
    }

    #[test]
    fn an_unsure_check_falls_back_to_the_acoustic_end_silence() {
        let mut t = turn();
        t.judged(2000, 2300, Judgement::unsure("no transcriber"));
        assert_eq!(t.step(Some(2000), 3190), Step::Listen);
        assert_eq!(t.step(Some(2000), 3200), Step::Stop);
        let r = t.report().unwrap();
        assert_eq!(
            (r.decision, r.decided_by),
            (Verdict::Unsure, Signal::Silence)
        );
        assert!(t.answer(Some(2000)).is_none(), "no transcript to reuse");
    }
}
