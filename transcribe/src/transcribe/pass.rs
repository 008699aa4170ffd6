//! One transcription, window by window: audio goes in as it decodes, the [`Windower`]
//! cuts it at pauses into pieces of at most 30 s, and each piece with speech goes through
//! one whisper state, prompted with the previous piece's words so a sentence that runs
//! over a cut reads on. Segment times are moved onto the recording's own clock. What a
//! transcription holds at any moment is one window and the text so far, whatever the
//! recording's length.
//!
//! Each whisper call is one encoder run (`one_step.rs`): where whisper stops before a
//! window's end, the rest goes again in front of the audio that follows it, as whisper.cpp
//! itself goes through a long file, instead of a second encoder run over 30 s for the few
//! seconds left. A window cut only because it was full is read with the audio after its
//! cut, to 30 s, and taken as far as whisper's segments reach there, short of words that
//! may be cut at the 30 s edge ([`drop_edge`]): zeros after a cut made whisper end early
//! (base ended a 28 s window after its first sentence and skipped the rest), which cost an
//! extra encoder run for the rest each time.

use std::os::raw::c_int;
use whisper_rs::WhisperState;
use yazses_core::frame::{FRAME_SAMPLES, SAMPLE_RATE_HZ};

use super::clean::without_annotations;
use super::fallback::{self, Bound};
use super::guard::{self, Evidence, Verdict};
use super::one_step::OneStep;
use super::params::{self, cancelled, params};
use super::progress::Reporter;
use super::window::{Taken, Window, Windower};
use super::{Dropped, Model, Options, Progress, Segment, TranscribeError, Transcript};

/// A transcription in progress.
pub(crate) struct Pass<'m> {
    windows: Windower,
    run: Run<'m>,
}

/// What the windows share: the model, the state, the words so far.
struct Run<'m> {
    model: &'m Model,
    options: &'m Options,
    /// The language to ask for: a code, or `auto` until the first window detected one.
    language: String,
    /// Made at the first window with speech; reused for the rest of the recording.
    state: Option<WhisperState>,
    segments: Vec<Segment>,
    /// What the hallucination guard left out.
    dropped: Vec<Dropped>,
    /// Where the window whose left-out tail is being read again ended (ms): segments
    /// starting before it were read from that tail alone.
    rest_until_ms: Option<u64>,
    /// The previous window's text tokens, the next window's prompt.
    prompt: Vec<c_int>,
    /// 16 kHz samples fed so far.
    fed: u64,
    /// The recording's length by its header, in 16 kHz samples.
    expected: Option<u64>,
    reporter: Reporter,
    heard: bool,
    whisper_ms: u64,
    windows: usize,
    failed: Option<TranscribeError>,
}

impl<'m> Pass<'m> {
    /// A transcription with `model`; fails at once on a language the model cannot give.
    pub(crate) fn new(
        model: &'m Model,
        options: &'m Options,
        progress: Box<dyn FnMut(Progress) + Send>,
    ) -> Result<Pass<'m>, TranscribeError> {
        let language = model.language(options.language.as_deref())?.to_owned();
        let prompt = match options.prompt.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => prompt_tokens(model, text)?,
            _ => Vec::new(),
        };
        Ok(Pass {
            windows: Windower::new(),
            run: Run {
                model,
                options,
                language,
                state: None,
                segments: Vec::new(),
                dropped: Vec::new(),
                rest_until_ms: None,
                prompt,
                fed: 0,
                expected: None,
                reporter: Reporter::new(progress),
                heard: false,
                whisper_ms: 0,
                windows: 0,
                failed: None,
            },
        })
    }

    /// Takes more 16 kHz audio (and the recording's expected length in samples, when
    /// known); `false` once a window failed or was cancelled, and the rest is not wanted.
    pub(crate) fn feed(&mut self, samples: &[i16], expected: Option<u64>) -> bool {
        self.run.fed += samples.len() as u64;
        self.run.expected = expected;
        let run = &mut self.run;
        self.windows.push(samples, &mut |w| run.window(w))
    }

    /// Why feeding stopped, when a window failed.
    pub(crate) fn take_error(&mut self) -> Option<TranscribeError> {
        self.run.failed.take()
    }

    /// Transcribes what is left and puts the transcript together.
    pub(crate) fn finish(self, cut_short_ms: Option<u64>) -> Result<Transcript, TranscribeError> {
        let mut run = self.run;
        self.windows.finish(&mut |w| run.window(w));
        if let Some(e) = run.failed.take() {
            return Err(e);
        }
        let audio_ms = run.fed * 1000 / u64::from(SAMPLE_RATE_HZ);
        if run.heard {
            tracing::info!(
                audio_ms,
                whisper_ms = run.whisper_ms,
                windows = run.windows,
                "transcribed"
            );
        } else {
            tracing::info!(audio_ms, "no speech detected; whisper not run");
        }
        let text = run
            .segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let language =
            (run.heard && run.model.multilingual && run.language != "auto").then_some(run.language);
        Ok(Transcript {
            text,
            segments: run.segments,
            dropped: run.dropped,
            model: run.model.name.clone(),
            audio_ms,
            heard: run.heard,
            language,
            cut_short_ms,
        })
    }
}

impl Run<'_> {
    fn total_ms(&self) -> Option<u64> {
        self.expected
            .map(|n| n.max(self.fed) * 1000 / u64::from(SAMPLE_RATE_HZ))
    }

    /// Transcribes one window, or as much of it as whisper's first 30 s step reaches;
    /// [`Taken::Stop`] (with the reason kept) when it failed.
    fn window(&mut self, w: &Window) -> Taken {
        match self.transcribe(w) {
            Ok(taken) => {
                let done_ms = match taken {
                    Taken::Upto(frame) => w.frame_ms(frame),
                    _ => w.end_ms(),
                };
                self.reporter.report(done_ms, self.total_ms(), w.speech());
                taken
            }
            Err(e) => {
                self.failed = Some(e);
                Taken::Stop
            }
        }
    }

    fn transcribe(&mut self, w: &Window) -> Result<Taken, TranscribeError> {
        if self.cancelled() {
            return Err(TranscribeError::Cancelled);
        }
        if !w.speech() {
            return Ok(Taken::All);
        }
        self.heard = true;
        self.windows += 1;
        let rest_until_ms = self.rest_until_ms.take();
        let mut step = self.whisper(w, true, rest_until_ms)?;
        let frame = step.reached / FRAME_SAMPLES;
        if frame < MIN_STEP_FRAMES && (step.more_steps || step.dropped) {
            // whisper's first step gave no words (it judged them no speech, or wrote only
            // descriptions) yet would go on from a point it does not say: the window goes
            // through again with whisper.cpp's own steps, as it did before one-step calls.
            tracing::debug!(
                at_ms = w.start_ms(),
                "whisper's first step gave nothing; the window goes through in its own steps"
            );
            step = self.whisper(w, false, rest_until_ms)?;
            self.keep(step);
            return Ok(Taken::All);
        }
        if step.reached > w.samples().len() || step.dropped {
            // whisper read on past the cut into the audio after it, or its last words
            // may be cut in two: up to there is done (the next window starts in the
            // pause before the words after it), the rest goes again.
            self.keep(step);
            return Ok(Taken::Upto(w.settle(frame)));
        }
        let tail = w.samples().len().saturating_sub(step.reached);
        let rest_heard = w.speech_from(step.reached);
        self.keep(step);
        // whisper stopped before the window's end: after an early end-of-text token, or
        // where whisper.cpp would have started its next 30 s step at the last timestamp.
        // Where the detector heard speech in what is left, that goes again, with the
        // audio after it when there is more (whisper.cpp's own way through a long file).
        if frame < MIN_STEP_FRAMES || tail < RETRY_TAIL_SAMPLES || !rest_heard {
            return Ok(Taken::All);
        }
        tracing::debug!(
            at_ms = w.frame_ms(frame),
            "whisper stopped before the end of a window with speech; the rest goes again"
        );
        self.rest_until_ms = Some(w.end_ms());
        Ok(Taken::Upto(frame))
    }

    fn cancelled(&self) -> bool {
        cancelled(self.options)
    }

    /// Adds a step's words to the transcript and makes them the next prompt.
    fn keep(&mut self, step: Step) {
        append_in_order(&mut self.segments, step.segments);
        self.dropped.extend(step.left_out);
        self.prompt = step.prompt;
    }

    /// Runs whisper over window `w`, prompted with the words so far: its first 30 s step
    /// only when `one_step` (reading on into the audio after the window's cut), else every
    /// step whisper.cpp takes over the window alone. Segments starting before
    /// `rest_until_ms` are read from a left-out tail alone. A poor reading is read once more
    /// from a higher temperature when the window's [`Bound`] leaves time (fallback.rs).
    fn whisper(
        &mut self,
        w: &Window,
        one_step: bool,
        rest_until_ms: Option<u64>,
    ) -> Result<Step, TranscribeError> {
        let rate = u64::from(SAMPLE_RATE_HZ);
        let ahead: &[i16] = if one_step && !self.options.fit_context {
            w.ahead()
        } else {
            &[]
        };
        let samples: Vec<f32> = w
            .samples()
            .iter()
            .chain(ahead)
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
        let fed = samples.len();
        let start_ms = w.start_ms();
        let end_ms = start_ms + fed as u64 * 1000 / rate;
        let heard = (w, &samples[..], (start_ms, end_ms), rest_until_ms);
        let kept = self.read_best(heard, one_step)?;
        let Read {
            mut pieces,
            more_steps,
            language,
            ..
        } = kept;
        if self.language == "auto"
            && let Some(lang) = language
        {
            // Asked once, on the first window with speech; the rest are read in it.
            self.language = lang.to_owned();
        }
        let dropped = !ahead.is_empty() && drop_edge(&mut pieces, end_ms);
        // whisper's next step would start at its last segment's end, words or not.
        let reached_ms = pieces.iter().map(|p| p.end_ms).max().unwrap_or(start_ms);
        let reached = ((reached_ms * rate / 1000).saturating_sub(w.start)) as usize;
        let mut step = Step {
            segments: Vec::new(),
            left_out: Vec::new(),
            prompt: Vec::new(),
            reached: reached.min(fed),
            more_steps,
            dropped,
        };
        let before = self.segments.last().map(|s| s.text.as_str());
        for p in pieces {
            step.take(p, before);
        }
        Ok(step)
    }

    /// Reads a window once and, when the reading is poor and the window's [`Bound`] leaves
    /// time, once more from a higher temperature: the better reading of the two.
    fn read_best(&mut self, heard: Heard<'_>, one_step: bool) -> Result<Read, TranscribeError> {
        let (start_ms, end_ms) = heard.2;
        let started = std::time::Instant::now();
        let bound = Bound::new(started, end_ms - start_ms);
        let first = params::Reading {
            temperatures: fallback::FIRST,
            until: None,
        };
        let mut kept = self
            .read(heard, one_step, first)?
            .expect("a reading without a time limit is not stopped by one");
        let Some(poor) = kept.judged.poor() else {
            return Ok(kept);
        };
        let now = std::time::Instant::now();
        if !bound.allows_again(now, now - started) {
            tracing::debug!(
                start_ms,
                ?poor,
                "a poor reading of a window is kept: the bound leaves no time to read it again"
            );
            return Ok(kept);
        }
        tracing::debug!(start_ms, ?poor, "a poor reading of a window is read again");
        let again = params::Reading {
            temperatures: fallback::AGAIN,
            until: Some(bound.until),
        };
        match self.read(heard, one_step, again)? {
            Some(read) if read.judged.keep_over(&kept.judged) => kept = read,
            Some(_) => tracing::debug!(start_ms, "the first reading was the better"),
            None => tracing::debug!(
                start_ms,
                "the bound stopped reading a window again; the first reading is kept"
            ),
        }
        Ok(kept)
    }

    /// One whisper call over a window's audio (`samples`, from `start_ms` to `end_ms`) at
    /// the reading's temperatures; `None` when its time limit stopped it.
    fn read(
        &mut self,
        (w, samples, (start_ms, end_ms), rest_until_ms): Heard<'_>,
        one_step: bool,
        reading: params::Reading,
    ) -> Result<Option<Read>, TranscribeError> {
        let started = std::time::Instant::now();
        if self.state.is_none() {
            self.state = Some(
                self.model
                    .ctx
                    .create_state()
                    .map_err(|e| TranscribeError::Whisper(e.to_string()))?,
            );
        }
        let total_ms = self.total_ms();
        let mut params = params(
            self.options,
            &self.language,
            &self.reporter,
            total_ms,
            (start_ms, end_ms),
            &self.prompt,
            reading,
        );
        let limit = OneStep::default();
        if one_step {
            limit.arm(&mut params);
        }
        let options = self.options;
        let state = self.state.as_mut().expect("made above");
        let done = state.full(params, samples);
        let more_steps = limit.asked() > 1;
        drop(limit);
        let spent = started.elapsed().as_millis() as u64;
        self.whisper_ms += spent;
        if cancelled(options) {
            return Err(TranscribeError::Cancelled);
        }
        if let Err(e) = done {
            if reading
                .until
                .is_some_and(|t| std::time::Instant::now() >= t)
            {
                return Ok(None);
            }
            return Err(TranscribeError::Whisper(e.to_string()));
        }
        tracing::debug!(
            start_ms,
            end_ms,
            cut_ms = w.end_ms(),
            whisper_ms = spent,
            one_step,
            more_steps,
            temperature = reading.temperatures.from,
            "window transcribed"
        );
        let (eot, beg) = (self.model.ctx.token_eot(), self.model.ctx.token_beg());
        let mut pieces = Vec::new();
        let mut all_tokens = Vec::new();
        let mut no_speech = 1.0;
        for seg in state.as_iter() {
            let data: Vec<_> = (0..seg.n_tokens())
                .filter_map(|t| seg.get_token(t))
                .map(|t| (t.token_id(), t.token_data().plog))
                .filter(|&(id, _)| id < eot || id >= beg)
                .collect();
            // The prompt is what whisper.cpp itself carries between its own 30 s steps:
            // the words and their timestamp tokens (without the timestamps, the next
            // window comes back as one long segment), not the task's special tokens.
            let tokens = data.iter().map(|&(id, _)| id).collect();
            let plogs: Vec<f32> = data
                .iter()
                .filter(|&&(id, _)| id < eot)
                .map(|&(_, p)| p)
                .collect();
            all_tokens.extend(data);
            // whisper's timestamps are in 10 ms units from the window's start.
            let at = |t: i64| (start_ms + t.max(0) as u64 * 10).clamp(start_ms, end_ms);
            let start = at(seg.start_timestamp());
            let text = seg
                .to_str_lossy()
                .map_err(|e| TranscribeError::Whisper(e.to_string()))?;
            let end = at(seg.end_timestamp()).max(start);
            no_speech = seg.no_speech_probability();
            let evidence = Evidence {
                no_speech,
                avg_logprob: plogs.iter().sum::<f32>() / plogs.len().max(1) as f32,
                heard: w.speech_share(start, end),
                tail: rest_until_ms.is_some_and(|until| start < until),
            };
            // What whisper made of the segment, for judging hallucinations; never its words
            // (logs keep content out).
            tracing::debug!(
                start_ms = start,
                end_ms = end,
                no_speech = evidence.no_speech,
                mean_logprob = evidence.avg_logprob,
                min_logprob = plogs.iter().copied().fold(0.0f32, f32::min),
                heard = evidence.heard,
                tail = evidence.tail,
                "segment"
            );
            // whisper starts a segment where its read starts, often in the silence
            // before the words: a subtitle shows from just before the detector's onset.
            let shown_from = w.first_speech_ms(start, end).map_or(start, |onset| {
                start.max(onset.saturating_sub(ONSET_LEAD_MS))
            });
            pieces.push(Piece {
                start_ms: shown_from,
                end_ms: end,
                text: without_annotations(&text),
                tokens,
                evidence,
            });
        }
        let words = pieces.iter().any(|p| !p.text.is_empty());
        Ok(Some(Read {
            judged: fallback::Judgement::of(&all_tokens, no_speech, words),
            language: whisper_rs::get_lang_str(state.full_lang_id_from_state()),
            pieces,
            more_steps,
        }))
    }
}

/// The audio of one reading: its window, its samples (the window's and any read on past
/// its cut), where they start and end (ms), and where a left-out tail read again ends.
type Heard<'a> = (&'a Window, &'a [f32], (u64, u64), Option<u64>);

/// One reading of a window.
struct Read {
    pieces: Vec<Piece>,
    /// Whether whisper.cpp wanted another 30 s step (refused under one step).
    more_steps: bool,
    /// The language whisper heard, when it was asked to find it.
    language: Option<&'static str>,
    /// What the fallback judges it by.
    judged: fallback::Judgement,
}

/// The most prompt tokens whisper reads: half its text context (whisper.cpp keeps the last
/// 224 of what it is given).
const PROMPT_TOKENS: usize = 224;

/// `text` as whisper's tokens, its last [`PROMPT_TOKENS`] when longer.
fn prompt_tokens(model: &Model, text: &str) -> Result<Vec<c_int>, TranscribeError> {
    // A token is at least one byte: the text's length in bytes always has room.
    let mut tokens = model
        .ctx
        .tokenize(text, text.len() + 1)
        .map_err(|e| TranscribeError::Whisper(format!("reading the prompt: {e}")))?;
    let extra = tokens.len().saturating_sub(PROMPT_TOKENS);
    tokens.drain(..extra);
    Ok(tokens)
}

/// How long before the detector's onset a segment that whisper starts in silence is shown:
/// the detector calls speech a little after its first sound.
const ONSET_LEAD_MS: u64 = 100;

/// Adds a window's segments after those kept so far, none starting before the last one
/// ends: a window that starts back in a pause ([`Window::settle`]) gets its first
/// timestamp there, while whisper had ended the segment before later in the same pause.
fn append_in_order(kept: &mut Vec<Segment>, new: Vec<Segment>) {
    for mut s in new {
        if let Some(last) = kept.last() {
            s.start_ms = s.start_ms.max(last.end_ms);
            s.end_ms = s.end_ms.max(s.start_ms);
        }
        kept.push(s);
    }
}

/// One of whisper's segments, before it is kept.
struct Piece {
    start_ms: u64,
    end_ms: u64,
    /// Its words, descriptions of the audio taken out.
    text: String,
    /// Its words and timestamp tokens, for the next prompt.
    tokens: Vec<c_int>,
    /// What the hallucination guard judges it by.
    evidence: Evidence,
}

/// How close to the end of the audio whisper read (ms) a segment may end and still be
/// trusted where more audio follows: whisper writes what it heard up to the edge of its
/// 30 s, words cut in two included.
const EDGE_MS: u64 = 1000;

/// Drops the segments that may hold a word cut at the end of the audio whisper read
/// (`end_ms`), where the audio goes on: a segment ending within [`EDGE_MS`] of it, and
/// text whisper wrote after its last timestamp (a segment of no length at the end). Its
/// audio is read again with what follows it. Whether any was dropped.
fn drop_edge(pieces: &mut Vec<Piece>, end_ms: u64) -> bool {
    let before = pieces.len();
    while let Some(last) = pieces.last() {
        // The first segment stays whatever it is: without it the step gave nothing.
        let cut_at_edge = last.end_ms + EDGE_MS >= end_ms;
        let unfinished = last.end_ms == last.start_ms;
        if pieces.len() == 1 || !(cut_at_edge || unfinished) {
            break;
        }
        pieces.pop();
    }
    pieces.len() < before
}

/// What one whisper call over a window gave.
struct Step {
    /// Its segments with words, on the recording's clock.
    segments: Vec<Segment>,
    /// What the hallucination guard left out of them.
    left_out: Vec<Dropped>,
    /// Its words and timestamp tokens: the next window's prompt.
    prompt: Vec<c_int>,
    /// How far (samples of the window) its segments reach, descriptions of the audio too.
    reached: usize,
    /// Whether whisper.cpp wanted another 30 s step (refused under one step).
    more_steps: bool,
    /// Whether segments at the end of the audio read were dropped ([`drop_edge`]).
    dropped: bool,
}

impl Step {
    /// Takes a segment as the hallucination guard judges it, after the step's segments so
    /// far or, for its first, `before_step` (the transcript's last segment): kept whole
    /// (its tokens prompting the next window), shortened, or left out. A segment that was not kept
    /// whole does not prompt the next window: a loop or invented sentence carried on as
    /// context invites another.
    fn take(&mut self, p: Piece, before_step: guard::Before<'_>) {
        if p.text.is_empty() {
            self.prompt.extend(p.tokens);
            return;
        }
        let before = self.segments.last().map(|s| s.text.as_str());
        let verdict = guard::judge(&p.text, &p.evidence, before.or(before_step));
        let segment = |text: String| Segment {
            start_ms: p.start_ms,
            end_ms: p.end_ms,
            text,
            no_speech_prob: p.evidence.no_speech,
            speech_share: p.evidence.heard,
            avg_logprob: p.evidence.avg_logprob,
        };
        let dropped = |text: String, reason| Dropped {
            start_ms: p.start_ms,
            end_ms: p.end_ms,
            text,
            reason,
            no_speech_prob: p.evidence.no_speech,
            speech_share: p.evidence.heard,
            avg_logprob: p.evidence.avg_logprob,
        };
        match verdict {
            Verdict::Keep => {
                self.prompt.extend(p.tokens);
                self.segments.push(segment(p.text));
            }
            Verdict::Shorten { kept, left_out } => {
                tracing::debug!(start_ms = p.start_ms, "the guard said a loop once");
                self.left_out.push(dropped(left_out, guard::Reason::Repeat));
                self.segments.push(segment(kept));
            }
            Verdict::Drop(reason) => {
                tracing::debug!(
                    start_ms = p.start_ms,
                    ?reason,
                    "the guard left a segment out"
                );
                self.left_out.push(dropped(p.text.clone(), reason));
            }
        }
    }
}

/// A step that reached less far than this (frames: 1 s) is taken as all whisper will
/// give, so a window cannot come back again and again for a word at a time.
const MIN_STEP_FRAMES: usize = 100;
/// A left-out tail shorter than this (2 s) is not worth another whisper run.
const RETRY_TAIL_SAMPLES: usize = 2 * SAMPLE_RATE_HZ as usize;

#[cfg(test)]
mod tests {
    use super::{Evidence, Piece, Segment, append_in_order, drop_edge};

    #[test]
    fn a_window_that_starts_back_in_a_pause_does_not_overlap_the_words_before() {
        let seg = |start_ms, end_ms| Segment {
            start_ms,
            end_ms,
            text: "x".into(),
            no_speech_prob: 0.0,
            speech_share: None,
            avg_logprob: 0.0,
        };
        let mut kept = vec![seg(0, 4_000), seg(4_000, 28_500)];
        // The next window starts at 27.66 s, whisper's first timestamp 0.00.
        append_in_order(&mut kept, vec![seg(27_660, 28_200), seg(28_200, 31_000)]);
        let spans: Vec<_> = kept.iter().map(|s| (s.start_ms, s.end_ms)).collect();
        assert_eq!(
            spans,
            [
                (0, 4_000),
                (4_000, 28_500),
                (28_500, 28_500),
                (28_500, 31_000)
            ]
        );
    }

    fn pieces(spans: &[(u64, u64)]) -> Vec<Piece> {
        spans
            .iter()
            .map(|&(start_ms, end_ms)| Piece {
                start_ms,
                end_ms,
                text: format!("{start_ms}"),
                tokens: vec![start_ms as i32],
                evidence: Evidence {
                    no_speech: 0.0,
                    avg_logprob: 0.0,
                    heard: None,
                    tail: false,
                },
            })
            .collect()
    }

    fn spans(pieces: &[Piece]) -> Vec<(u64, u64)> {
        pieces.iter().map(|p| (p.start_ms, p.end_ms)).collect()
    }

    #[test]
    fn segments_that_may_hold_a_word_cut_at_the_edge_are_read_again() {
        // Audio read: 10 s to 40 s on the recording's clock.
        let mut ps = pieces(&[(10_000, 14_000), (14_000, 25_000), (25_000, 39_200)]);
        assert!(drop_edge(&mut ps, 40_000));
        assert_eq!(spans(&ps), [(10_000, 14_000), (14_000, 25_000)]);
        // Text after whisper's last timestamp comes as a segment of no length.
        let mut ps = pieces(&[(10_000, 14_000), (31_000, 31_000)]);
        assert!(drop_edge(&mut ps, 40_000));
        assert_eq!(spans(&ps), [(10_000, 14_000)]);
        // Segments clear of the edge stay, and so does a first one, whatever it is.
        let mut ps = pieces(&[(10_000, 14_000), (14_000, 38_900)]);
        assert!(!drop_edge(&mut ps, 40_000));
        assert_eq!(ps.len(), 2);
        let mut ps = pieces(&[(10_000, 40_000)]);
        assert!(!drop_edge(&mut ps, 40_000));
        assert_eq!(ps.len(), 1);
    }
}
