//! The signals a smart turn reads at each check, each started on a thread of its own at
//! [`PREFETCH_MS`](super::PREFETCH_MS) of silence and waited for at the check: the words ([`Words`]), the
//! voice ([`Prosody`]), both together ([`Smart`]), or none ([`NoSignals`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{CHECK_PAD_SAMPLES, Judgement, Signals, mel, prosody};
use crate::transcribe::{ModelError, Options, Said, TranscribeError, Transcriber};

/// A transcriber, or why none could be loaded.
pub type Loaded = Result<Arc<dyn Transcriber>, Unloaded>;

/// Why a model loaded at its first use is not there. `Clone`, as a [`Loader`] keeps a
/// failed load and gives it to every later ask; the cause is shared, not flattened, so its
/// chain still reaches the log and `main`'s report.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Unloaded {
    /// The path this loader serves never needs the model.
    #[error("{0}")]
    NotNeeded(&'static str),
    /// The transcription model could not be found or loaded.
    #[error(transparent)]
    Transcriber(Arc<ModelError>),
    /// The Smart Turn model or its ONNX Runtime could not be loaded.
    #[error(transparent)]
    Voice(Arc<prosody::ProsodyError>),
    /// The thread loading it stopped before it gave a result.
    #[error("loading the model stopped unexpectedly")]
    Stopped,
}

impl From<ModelError> for Unloaded {
    fn from(e: ModelError) -> Unloaded {
        Unloaded::Transcriber(Arc::new(e))
    }
}

impl From<prosody::ProsodyError> for Unloaded {
    fn from(e: prosody::ProsodyError) -> Unloaded {
        Unloaded::Voice(Arc::new(e))
    }
}

/// Something loaded at its first use and kept (a transcriber, the prosody model); a
/// failed load is kept too.
pub struct Loader<'a, T = Arc<dyn Transcriber>> {
    load: Option<Box<dyn FnOnce() -> Result<T, Unloaded> + 'a>>,
    got: Option<Result<T, Unloaded>>,
}

impl<'a, T: Clone> Loader<'a, T> {
    /// A loader that calls `load` once, when first asked.
    pub fn new(load: impl FnOnce() -> Result<T, Unloaded> + 'a) -> Loader<'a, T> {
        Loader {
            load: Some(Box::new(load)),
            got: None,
        }
    }

    /// A loader with nothing to give, for `why` (a path that never needs it).
    pub fn unavailable(why: &'static str) -> Loader<'a, T> {
        Loader::new(move || Err(Unloaded::NotNeeded(why)))
    }

    /// What was loaded, loading it now if this is the first ask.
    pub fn get(&mut self) -> Result<T, Unloaded> {
        match (&self.got, self.load.take()) {
            (Some(got), _) => got.clone(),
            (None, Some(load)) => self.got.insert(load()).clone(),
            // `got` is filled whenever `load` is taken.
            (None, None) => Err(Unloaded::Stopped),
        }
    }
}

/// The words signal: each pause's partial transcript, started at [`PREFETCH_MS`](super::PREFETCH_MS) of
/// silence on a thread of its own so that most of it is done by the check.
///
/// Checks decode greedily: they are on the path to the decision, and a greedy read is
/// done by the check. From a check on, the same audio is read again with a beam of
/// [`ANSWER_BEAM`] while the turn waits out its silence: [`Words::settle`] gives that
/// read as the answer, so the beam costs no time after the stop.
pub struct Words<'a> {
    model: Loader<'a>,
    /// The checks' options: the caller's, greedy.
    options: Options,
    /// The answer's options: the caller's, with a beam of [`ANSWER_BEAM`].
    answer: Options,
    /// The audio of the read last begun, kept for the answer's read.
    audio: Vec<i16>,
    pending: Option<Pending>,
    /// The answer's read of the audio last judged, begun at its check.
    second: Option<Pending>,
}

/// The beam the answer is read with while the turn waits, as files are read: greedy loses
/// words on longer answers in noise (docs/decisions/2026-12-05-short-answers-in-noise.md).
pub const ANSWER_BEAM: usize = 5;

/// Why a read gave no words.
#[derive(Debug, thiserror::Error)]
enum ReadFailed {
    #[error(transparent)]
    Unloaded(#[from] Unloaded),
    #[error(transparent)]
    Transcribe(#[from] TranscribeError),
    #[error("the partial transcription stopped unexpectedly")]
    Stopped,
    #[error("no partial transcription was begun")]
    NotBegun,
}

/// A partial transcription under way, and the flag that stops it.
struct Pending {
    read: std::thread::JoinHandle<Result<Said, ReadFailed>>,
    stop: Arc<AtomicBool>,
}

impl Pending {
    /// Reads `audio` with `options` on a thread of its own.
    fn start(model: Loaded, audio: Vec<i16>, options: &Options) -> Pending {
        let stop = Arc::new(AtomicBool::new(false));
        let options = Options {
            cancel: Some(stop.clone()),
            ..options.clone()
        };
        let read = std::thread::spawn(move || Ok(model?.said(audio, &options)?));
        Pending { read, stop }
    }

    /// Stops the read and waits it out.
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.read.join();
    }
}

impl<'a> Words<'a> {
    /// The signal over the transcriber `model` loads, transcribing with `options`.
    pub fn new(model: Loader<'a>, options: Options) -> Words<'a> {
        let checks = Options {
            beam_size: 1,
            ..options.clone()
        };
        Words {
            model,
            answer: Options {
                beam_size: ANSWER_BEAM,
                ..options
            },
            options: checks,
            audio: Vec::new(),
            pending: None,
            second: None,
        }
    }

    /// The transcriber, for the whole answer after the capture.
    pub fn transcriber(&mut self) -> Loaded {
        self.model.get()
    }

    /// The answer, for a turn that ended after the last check (whose transcript was
    /// `checked`): the beam read of the same audio, waited for; `checked` when that read
    /// failed.
    pub fn settle(&mut self, checked: Said) -> Said {
        let Some(second) = self.second.take() else {
            return checked;
        };
        match second.read.join() {
            Ok(Ok(said)) => said,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the answer's own read failed; the check's transcript is the answer");
                checked
            }
            Err(_) => checked,
        }
    }
}

impl Drop for Words<'_> {
    /// A capture that failed or was cancelled leaves no read running on.
    fn drop(&mut self) {
        self.abandon();
    }
}

impl Signals for Words<'_> {
    fn begin(&mut self, kept: &[i16]) {
        // A read for an earlier pause is stopped and waited out: two at once would halve
        // each, and the speaker has gone on since.
        // So is the answer's read of an earlier pause: the answer goes on.
        self.abandon();
        if let Some(old) = self.pending.take() {
            let _ = old.read.join();
        }
        if let Some(old) = self.second.take() {
            old.stop();
        }
        let mut kept = kept.to_vec();
        kept.resize(kept.len() + CHECK_PAD_SAMPLES, 0);
        self.audio.clone_from(&kept);
        self.pending = Some(Pending::start(self.model.get(), kept, &self.options));
    }

    fn abandon(&mut self) {
        for pending in [&self.pending, &self.second].into_iter().flatten() {
            pending.stop.store(true, Ordering::Relaxed);
        }
    }

    fn resumed(&mut self) {
        // Stopped now, not at the next pause: it would take the cores the next check needs.
        if let Some(second) = &self.second {
            second.stop.store(true, Ordering::Relaxed);
        }
    }

    fn judge(&mut self) -> Judgement {
        let result = match self.pending.take().map(|p| p.read.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(ReadFailed::Stopped),
            None => Err(ReadFailed::NotBegun),
        };
        match result {
            Ok(said) => {
                let audio = std::mem::take(&mut self.audio);
                self.second = Some(Pending::start(self.model.get(), audio, &self.answer));
                Judgement::of_words(said)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the partial transcript for the end-of-turn check failed");
                Judgement::unsure("the partial transcript failed")
            }
        }
    }
}

/// The prosody signal: the Smart Turn model's probability that the turn is complete,
/// over the audio so far, on a thread of its own. Without the model (not fetched, or a
/// bad file) it gives nothing, and the words decide alone; the log says so once.
pub struct Prosody<'a> {
    model: Loader<'a, prosody::Shared>,
    threshold: f32,
    pending: Option<std::thread::JoinHandle<Result<f32, prosody::ProsodyError>>>,
}

impl<'a> Prosody<'a> {
    /// The signal over the model `model` loads, complete at and above `threshold`.
    pub fn new(model: Loader<'a, prosody::Shared>, threshold: f32) -> Prosody<'a> {
        Prosody {
            model,
            threshold,
            pending: None,
        }
    }

    /// Starts reading `kept`; see [`Signals::begin`].
    pub fn begin(&mut self, kept: &[i16]) {
        if let Some(old) = self.pending.take() {
            let _ = old.join();
        }
        let model = match self.model.get() {
            Ok(model) => model,
            Err(e) => {
                announce_without_prosody(&e);
                return;
            }
        };
        announce_with_prosody();
        let audio = kept[kept.len().saturating_sub(mel::WINDOW_SAMPLES)..].to_vec();
        self.pending = Some(std::thread::spawn(move || {
            prosody::probability_of(&model, &audio)
        }));
    }

    /// The probability over what [`Prosody::begin`] was last given, if the model ran.
    pub fn probability(&mut self) -> Option<f32> {
        match self.pending.take()?.join() {
            Ok(Ok(p)) => Some(p),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the prosody model failed at an end-of-turn check");
                None
            }
            Err(_) => {
                tracing::warn!("the prosody model stopped unexpectedly at an end-of-turn check");
                None
            }
        }
    }
}

/// What `[turn] mode = "smart"` reads at each check: the words, and the voice when its
/// model loads ([`Judgement::with_prosody`] weighs the two).
pub struct Smart<'a> {
    words: Words<'a>,
    prosody: Prosody<'a>,
}

impl<'a> Smart<'a> {
    /// The two signals.
    pub fn new(words: Words<'a>, prosody: Prosody<'a>) -> Smart<'a> {
        Smart { words, prosody }
    }

    /// The transcriber, for the whole answer after the capture.
    pub fn transcriber(&mut self) -> Loaded {
        self.words.transcriber()
    }

    /// The answer for a turn that ended after its last check: [`Words::settle`].
    pub fn settle(&mut self, checked: Said) -> Said {
        self.words.settle(checked)
    }
}

impl Signals for Smart<'_> {
    fn begin(&mut self, kept: &[i16]) {
        // The model first: it is the shorter of the two, and both run at once.
        self.prosody.begin(kept);
        self.words.begin(kept);
    }

    fn abandon(&mut self) {
        // The voice's read is short; only the transcript is worth stopping.
        self.words.abandon();
    }

    fn resumed(&mut self) {
        self.words.resumed();
    }

    fn judge(&mut self) -> Judgement {
        let words = self.words.judge();
        match self.prosody.probability() {
            Some(p) => words.with_prosody(p, self.prosody.threshold),
            None => words,
        }
    }
}

/// No signal at all: every check is unsure, and the acoustic end silence decides.
pub struct NoSignals;

impl Signals for NoSignals {
    fn begin(&mut self, _: &[i16]) {}

    fn judge(&mut self) -> Judgement {
        Judgement::unsure("no end-of-turn signal")
    }
}

/// Says once per process that `smart` hears the voice too.
fn announce_with_prosody() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing::info!(
            "[turn] mode = smart decides from the words so far, the voice (Smart Turn v3.2) and the acoustics"
        );
    });
}

/// Says once per process that `smart` runs without the prosody model, and why.
fn announce_without_prosody(why: &Unloaded) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing::warn!(
            "[turn] mode = smart decides from the words so far and the acoustics alone: {why}"
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::{COMPLETE, Signal, Verdict};

    /// A transcriber that fails, or says `text` (with "!" for "." when it decodes with a
    /// beam, so that a test sees which read an answer came from).
    struct Says(Option<&'static str>);

    impl Transcriber for Says {
        fn said(
            &self,
            samples: Vec<i16>,
            options: &Options,
        ) -> Result<Said, crate::transcribe::TranscribeError> {
            assert_eq!(
                samples.len(),
                1600 + CHECK_PAD_SAMPLES,
                "a second of silence after"
            );
            match self.0 {
                Some(text) if options.beam_size > 1 => Ok(Said {
                    text: text.replace('.', "!"),
                    heard: true,
                }),
                Some(text) => Ok(Said {
                    text: text.into(),
                    heard: true,
                }),
                None => Err(crate::transcribe::TranscribeError::Whisper(
                    "out of memory".into(),
                )),
            }
        }
    }

    /// The words signal over `says`, for a caller that decodes greedily.
    fn words(says: Says) -> Words<'static> {
        let model: Arc<dyn Transcriber> = Arc::new(says);
        Words::new(Loader::new(move || Ok(model)), Options::spoken(2))
    }

    fn words_over(says: Says) -> Judgement {
        let mut words = words(says);
        words.begin(&[0; 1600]);
        words.judge()
    }

    #[test]
    fn the_words_signal_reads_a_greedy_padded_transcript_and_a_failure_is_unsure() {
        let j = words_over(Says(Some("Ship it.")));
        assert_eq!((j.verdict, j.signal), (Verdict::Finished, Signal::Words));
        assert_eq!(j.said.unwrap().text, "Ship it.");
        let j = words_over(Says(None));
        assert_eq!((j.verdict, j.signal), (Verdict::Unsure, Signal::Silence));
        let mut never = Words::new(
            Loader::new(|| {
                Err(ModelError::NotFound(crate::model::ResolveError::NoFile(
                    "ggml-tiny.en.bin".into(),
                ))
                .into())
            }),
            Options::default(),
        );
        never.begin(&[0; 160]);
        assert_eq!(never.judge().verdict, Verdict::Unsure);
        assert!(matches!(
            never.transcriber(),
            Err(Unloaded::Transcriber(e)) if matches!(*e, ModelError::NotFound(_))
        ));
    }

    #[test]
    fn the_answer_is_the_beam_read_of_the_checked_audio_or_the_checks_when_that_fails() {
        let mut signal = words(Says(Some("Ship it.")));
        signal.begin(&[0; 1600]);
        let checked = signal.judge().said.unwrap();
        assert_eq!(
            checked.text, "Ship it.",
            "the check decides on the greedy read"
        );
        assert_eq!(signal.settle(checked).text, "Ship it!");
        // When the beam read fails, the check's transcript stands.
        let mut failing = words(Says(None));
        failing.second = Some(Pending::start(
            failing.model.get(),
            vec![0; 1600 + CHECK_PAD_SAMPLES],
            &failing.answer.clone(),
        ));
        let said = Said {
            text: "Ship it.".into(),
            heard: true,
        };
        assert_eq!(failing.settle(said).text, "Ship it.");
    }

    #[test]
    fn the_next_pause_stops_the_answers_read_of_the_one_before() {
        let stopped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let model: Arc<dyn Transcriber> = Arc::new(UntilStopped(stopped.clone()));
        let mut words = Words::new(Loader::new(move || Ok(model)), Options::spoken(2));
        words.begin(&[0; 1600]);
        words.abandon();
        let _ = words.judge();
        assert_eq!(stopped.load(Ordering::SeqCst), 1);
        // No answer's read was begun for a check without words; one begun for a check
        // is stopped when the speaker goes on.
        assert!(words.second.is_none());
        words.second = Some(Pending::start(
            words.model.get(),
            vec![0; 1600],
            &words.answer.clone(),
        ));
        words.begin(&[0; 1600]);
        assert_eq!(stopped.load(Ordering::SeqCst), 2);
        assert!(words.second.is_none());
        words.abandon();
        let _ = words.judge();
        assert_eq!(stopped.load(Ordering::SeqCst), 3);
        // Speech after a check stops the answer's read at once.
        words.second = Some(Pending::start(
            words.model.get(),
            vec![0; 1600],
            &words.answer.clone(),
        ));
        words.resumed();
        let read = words.second.take().unwrap().read.join().unwrap();
        assert!(read.is_err(), "{read:?}");
        assert_eq!(stopped.load(Ordering::SeqCst), 4);
    }

    /// A prosody model that is not there.
    fn no_voice() -> Prosody<'static> {
        Prosody::new(
            Loader::new(|| Err(prosody::ProsodyError::NoRuntime.into())),
            COMPLETE,
        )
    }

    #[test]
    fn without_the_prosody_model_the_words_decide_alone() {
        let model: Arc<dyn Transcriber> = Arc::new(Says(Some("Ship it.")));
        let words = Words::new(Loader::new(move || Ok(model)), Options::default());
        let mut smart = Smart::new(words, no_voice());
        smart.begin(&[0; 1600]);
        let j = smart.judge();
        assert_eq!(
            (j.verdict, j.signal, j.probability),
            (Verdict::Finished, Signal::Words, None)
        );
    }

    /// A transcriber that works until it is told to stop, and counts the reads stopped.
    struct UntilStopped(Arc<std::sync::atomic::AtomicUsize>);

    impl Transcriber for UntilStopped {
        fn said(
            &self,
            _: Vec<i16>,
            options: &Options,
        ) -> Result<Said, crate::transcribe::TranscribeError> {
            let stop = options
                .cancel
                .clone()
                .expect("a check's read can be stopped");
            let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !stop.load(Ordering::Relaxed) {
                assert!(
                    std::time::Instant::now() < until,
                    "the read was never stopped"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            self.0.fetch_add(1, Ordering::SeqCst);
            Err(crate::transcribe::TranscribeError::Cancelled)
        }
    }

    #[test]
    fn an_abandoned_read_is_stopped_and_the_next_pause_does_not_wait_for_it_to_finish() {
        let stopped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let model: Arc<dyn Transcriber> = Arc::new(UntilStopped(stopped.clone()));
        let mut words = Words::new(Loader::new(move || Ok(model)), Options::default());
        words.begin(&[0; 1600]);
        words.abandon();
        // A second pause stops the read before it, even unabandoned, and waits it out.
        words.begin(&[0; 1600]);
        assert_eq!(stopped.load(Ordering::SeqCst), 1);
        words.begin(&[0; 1600]);
        assert_eq!(stopped.load(Ordering::SeqCst), 2);
        words.abandon();
        assert_eq!(
            words.judge().verdict,
            Verdict::Unsure,
            "a stopped read decides nothing"
        );
        assert_eq!(stopped.load(Ordering::SeqCst), 3);
    }
}
