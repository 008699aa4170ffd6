//! Long audio in whisper-sized pieces. whisper reads at most 30 s at a time; a file handed
//! to it whole is held whole (its samples, their log-mel spectrogram, twice over), so what
//! it costs grows with the recording. [`Windower`] takes 16 kHz audio as it decodes, runs
//! the core's detector over it, and hands out windows of at most 30 s, each cut in the
//! quietest stretch it can find in its last third (the middle of the longest pause the
//! detector heard, or the quietest frame when the speaker never paused), so no word is cut
//! in two. Each window says whether it holds speech, so silence is never transcribed.
//!
//! The caller may take only the front of a window ([`Taken::Upto`]), as whisper.cpp's own
//! 30 s steps go on from the last timestamp whisper wrote rather than from the step's end:
//! the rest of a full window goes in front of the next one, and the rest of a window cut
//! at a long silence (or the last) is handed out again on its own. A full window also
//! carries the audio after its cut, up to 30 s from its start ([`Window::ahead`]): whisper
//! reads on into it as it would in one 30 s step of the whole file, and the caller may take
//! past the cut, up to where whisper's last trusted segment ends.

use yazses_core::endpoint::EndpointConfig;
use yazses_core::frame::{FRAME_SAMPLES, SAMPLE_RATE_HZ};
use yazses_core::level::Level;
use yazses_core::vad::Vad;

/// The longest window, in 10 ms frames: whisper's 30 s.
pub(crate) const MAX_FRAMES: usize = 3000;
/// The earliest a window is cut when it must be cut, in frames: 20 s, so windows stay
/// long enough for whisper to see context.
pub(crate) const MIN_FRAMES: usize = 2000;
/// How often the rest of a window that cannot wait for more audio is handed out again,
/// at most.
const MAX_REST_TRIES: usize = 2;
/// Silence this long (frames) ends a window early, and is split off before a window's
/// first speech: whisper fed seconds of silence writes things like "[no audio]", and
/// skipped silence costs nothing.
const LEAD_SILENCE_FRAMES: usize = 200;
/// How much of such a silence (frames) stays next to the words: the detector calls
/// speech a little after it starts.
const LEAD_MARGIN_FRAMES: usize = 50;
/// A pause at least this long (frames) is a clear place to cut: the detector's hangover
/// already ran out inside it, so its middle is well clear of the words on either side.
const CLEAR_PAUSE_FRAMES: usize = 20;
/// How far before a reading's end (frames) [`Window::settle`] looks for the pause it fell
/// short of: whisper's timestamps run up to a tenth of a second into the next word.
const SETTLE_BACK_FRAMES: usize = 10;
/// Where the quietest frame is looked for when a window holds no pause at all: its last
/// 5 s.
const QUIET_SEARCH_FRAMES: usize = 500;

/// A stretch of audio for whisper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// Where it starts, in 16 kHz samples from the start of the audio.
    pub start: u64,
    /// Its audio, at most 30 s, with the verdicts kept for a rest that goes back.
    audio: Track,
    /// Where in the window (in 10 ms frames) each run of speech the detector heard lies.
    pub runs: Vec<std::ops::Range<usize>>,
    /// The audio that follows it in the stream, up to 30 s from its start, where the
    /// window was cut only because it was full: whisper reads on into it rather than into
    /// zeros (a window padded with a second of zeros made base end after its first
    /// sentence and skip the rest), and may take more than the window ([`Taken::Upto`]
    /// past its end). Empty where the window ends at a long silence or the stream's end.
    ahead: Track,
}

/// Audio and the detector's verdict on each of its whole frames, kept together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Track {
    /// 16 kHz samples: whole frames, then at most one partial frame.
    samples: Vec<i16>,
    /// The verdict on each whole frame of `samples`.
    heard: Vec<Heard>,
}

impl Track {
    /// Its whole frames.
    fn frames(&self) -> usize {
        self.heard.len()
    }

    /// Its first `frames` whole frames, taken out of it.
    fn take_front(&mut self, frames: usize) -> Track {
        Track {
            samples: self.samples.drain(..frames * FRAME_SAMPLES).collect(),
            heard: self.heard.drain(..frames).collect(),
        }
    }

    /// A copy of what follows its first `frame` whole frames, a partial frame included.
    fn rest_after(&self, frame: usize) -> Track {
        Track {
            samples: self.samples[frame * FRAME_SAMPLES..].to_vec(),
            heard: self.heard[frame..].to_vec(),
        }
    }

    /// A copy of its whole frames.
    fn whole_frames(&self) -> Track {
        Track {
            samples: self.samples[..self.frames() * FRAME_SAMPLES].to_vec(),
            heard: self.heard.clone(),
        }
    }

    /// `front` put before it.
    fn prepend(&mut self, front: Track) {
        self.samples.splice(0..0, front.samples);
        self.heard.splice(0..0, front.heard);
    }

    /// Whether any whole frame is speech.
    fn any_speech(&self) -> bool {
        self.heard.iter().any(|f| f.speech)
    }
}

/// What the caller made of a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// All of it: go on with the next.
    All,
    /// The frames before this one; the rest is wanted again, with what follows it. Past
    /// the window's end (into [`Window::ahead`]), the audio up to there is taken too.
    Upto(usize),
    /// No more windows are wanted.
    Stop,
}

impl Window {
    fn new(start: u64, audio: Track) -> Window {
        Window {
            start,
            runs: speech_runs(&audio.heard),
            audio,
            ahead: Track::default(),
        }
    }

    /// Its samples, at most 30 s.
    pub fn samples(&self) -> &[i16] {
        &self.audio.samples
    }

    /// The audio read ahead of its cut (see the field); empty for most windows.
    pub fn ahead(&self) -> &[i16] {
        &self.ahead.samples
    }

    /// What a caller that took it up to `frame` left: its whole frames from there on (and
    /// a partial frame at its end, if any). None when that is nothing or everything (a
    /// caller that took no frame took all there was to take).
    fn rest_from(&self, frame: usize) -> Option<Window> {
        (frame > 0 && frame < self.frames()).then(|| {
            Window::new(
                self.start + (frame * FRAME_SAMPLES) as u64,
                self.audio.rest_after(frame),
            )
        })
    }

    /// Where a caller whose reading ended at `frame` (from the window's start, on into
    /// [`Window::ahead`]) had best take up to, so the audio after it starts in a pause, as
    /// a window cut by the windower does: whisper's last timestamp often falls right on
    /// the next word's first sound, and a window that starts there reads it worse (base
    /// heard "make up the database" for "back up"). Inside a pause the detector heard at
    /// `frame`, or ending in the [`SETTLE_BACK_FRAMES`] before it: where the windower
    /// would cut in that pause ([`in_pause`]), if not after `frame`. In speech: `frame`.
    pub fn settle(&self, frame: usize) -> usize {
        let at = |i: usize| {
            self.audio
                .heard
                .get(i)
                .or_else(|| self.ahead.heard.get(i.checked_sub(self.frames())?))
        };
        let quiet = |i: usize| at(i).is_some_and(|h| !h.speech);
        let level = |i: usize| at(i).map_or(Level(0), |h| h.level);
        let Some(inside) = (frame.saturating_sub(SETTLE_BACK_FRAMES)..=frame)
            .rev()
            .find(|&i| quiet(i))
        else {
            return frame;
        };
        let mut start = inside;
        while start > 0 && quiet(start - 1) {
            start -= 1;
        }
        let mut end = inside + 1;
        while quiet(end) {
            end += 1;
        }
        in_pause(start, end - start, level).min(frame)
    }

    /// Its length in whole frames.
    pub fn frames(&self) -> usize {
        self.audio.frames()
    }

    /// Its start in milliseconds of the audio's own clock.
    pub fn start_ms(&self) -> u64 {
        self.start * 1000 / u64::from(SAMPLE_RATE_HZ)
    }

    /// Where its 10 ms frame `frame` starts, in milliseconds of the audio's own clock
    /// (past its end for a frame of the audio read ahead).
    pub fn frame_ms(&self, frame: usize) -> u64 {
        self.start_ms() + frame as u64 * 10
    }

    /// Its end in milliseconds of the audio's own clock.
    pub fn end_ms(&self) -> u64 {
        (self.start + self.audio.samples.len() as u64) * 1000 / u64::from(SAMPLE_RATE_HZ)
    }

    /// The share of the 10 ms frames from `start_ms` to `end_ms` (on the audio's own
    /// clock) that the detector called speech; `None` for a span of no length, or one in
    /// the audio read ahead of the window, whose verdicts it does not keep.
    pub fn speech_share(&self, start_ms: u64, end_ms: u64) -> Option<f32> {
        let frame = |ms: u64| (ms.saturating_sub(self.start_ms()) / 10) as usize;
        let (from, to) = (frame(start_ms), frame(end_ms).min(self.frames()));
        if to <= from {
            return None;
        }
        let speech: usize = self
            .runs
            .iter()
            .map(|r| r.end.min(to).saturating_sub(r.start.max(from)))
            .sum();
        Some(speech as f32 / (to - from) as f32)
    }

    /// Where the detector first heard speech from `start_ms` on, before `end_ms` (on the
    /// audio's own clock); `None` when it heard none there, or the span lies in the audio
    /// read ahead of the window.
    pub fn first_speech_ms(&self, start_ms: u64, end_ms: u64) -> Option<u64> {
        let frame = |ms: u64| (ms.saturating_sub(self.start_ms()) / 10) as usize;
        let (from, to) = (frame(start_ms), frame(end_ms).min(self.frames()));
        self.runs
            .iter()
            .find(|r| r.end > from && r.start < to)
            .map(|r| self.frame_ms(r.start.max(from)))
    }

    /// Whether the detector heard at least the endpoint policy's minimum run of speech.
    pub fn speech(&self) -> bool {
        self.speech_from(0)
    }

    /// Whether the detector heard speech (a run of the policy's minimum) after sample `at`
    /// of the window.
    pub fn speech_from(&self, at: usize) -> bool {
        let frame = at / FRAME_SAMPLES;
        let min = min_speech_frames();
        self.runs
            .iter()
            .any(|r| r.end > frame && r.end - r.start.max(frame) >= min)
    }
}

/// What the detector made of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Heard {
    speech: bool,
    level: Level,
}

/// Cuts a stream of 16 kHz audio into [`Window`]s.
pub(crate) struct Windower {
    vad: Vad,
    /// The current window's audio so far.
    buffer: Track,
    /// Where `buffer` starts in the stream.
    start: u64,
    /// Whether any frame of the current window is speech.
    heard_any: bool,
    /// Frames since the detector last heard speech.
    quiet_run: usize,
}

impl Default for Windower {
    fn default() -> Self {
        Windower::new()
    }
}

impl Windower {
    /// A windower at the start of a stream.
    pub fn new() -> Windower {
        Windower {
            vad: Vad::new(Vad::DEFAULT),
            buffer: Track {
                samples: Vec::with_capacity(MAX_FRAMES * FRAME_SAMPLES + 8192),
                heard: Vec::with_capacity(MAX_FRAMES),
            },
            start: 0,
            heard_any: false,
            quiet_run: 0,
        }
    }

    /// Takes more audio; each window it completes goes to `emit`, which says how much of
    /// it it took. Returns `false` once `emit` has said stop.
    pub fn push(&mut self, mut samples: &[i16], emit: &mut impl FnMut(&Window) -> Taken) -> bool {
        while !samples.is_empty() {
            // Take no more than fills the window, so the buffer never outgrows 30 s.
            let room = (MAX_FRAMES * FRAME_SAMPLES).saturating_sub(self.buffer.samples.len());
            let (now, later) = samples.split_at(room.min(samples.len()));
            self.buffer.samples.extend_from_slice(now);
            samples = later;
            while (self.buffer.frames() + 1) * FRAME_SAMPLES <= self.buffer.samples.len() {
                let at = self.buffer.frames() * FRAME_SAMPLES;
                let frame: &[i16; FRAME_SAMPLES] = self.buffer.samples[at..at + FRAME_SAMPLES]
                    .try_into()
                    .expect("a whole frame");
                let v = self.vad.process(frame);
                self.buffer.heard.push(Heard {
                    speech: v.speech,
                    level: v.level,
                });
                self.quiet_run = if v.speech { 0 } else { self.quiet_run + 1 };
                if self.heard_any && self.quiet_run == LEAD_SILENCE_FRAMES {
                    // The speaker stopped for a while: the words so far make a window of
                    // their own, ending a little into the silence.
                    let cut = self.buffer.frames() - LEAD_SILENCE_FRAMES + LEAD_MARGIN_FRAMES;
                    if !self.hand_out(cut, false, emit) {
                        return false;
                    }
                }
                if v.speech && !self.heard_any {
                    self.heard_any = true;
                    // A long silence before the first speech goes out on its own (and is
                    // skipped), so the window starts just before the words.
                    let first = self.buffer.frames() - 1;
                    if first > LEAD_SILENCE_FRAMES
                        && !self.hand_out(first - LEAD_MARGIN_FRAMES, false, emit)
                    {
                        return false;
                    }
                }
            }
            // A rest put back in front can make the buffer longer than a window.
            while self.buffer.frames() >= MAX_FRAMES {
                let cut = cut_at(&self.buffer.heard[..MAX_FRAMES]);
                if !self.hand_out(cut, true, emit) {
                    return false;
                }
            }
        }
        true
    }

    /// The rest of the stream as the last windows, if any audio is left; `false` if `emit`
    /// said stop.
    pub fn finish(mut self, emit: &mut impl FnMut(&Window) -> Taken) -> bool {
        if self.buffer.samples.is_empty() {
            return true;
        }
        let frames = self.buffer.frames();
        // A partial frame the detector never saw rides along with the last window.
        let mut w = self.take(frames);
        w.audio.samples.append(&mut self.buffer.samples);
        hand_out_alone(w, emit)
    }

    /// Hands out the first `frames` frames. What `emit` leaves of a `full` window (cut
    /// because the speaker went on) goes in front of the audio still to come; what it
    /// leaves of a window cut at a long silence is handed out again on its own.
    fn hand_out(
        &mut self,
        frames: usize,
        full: bool,
        emit: &mut impl FnMut(&Window) -> Taken,
    ) -> bool {
        let mut w = self.take(frames);
        if !full {
            return hand_out_alone(w, emit);
        }
        w.ahead = self.buffer.whole_frames();
        match emit(&w) {
            Taken::All => true,
            Taken::Stop => false,
            Taken::Upto(frame) if frame > w.frames() => {
                self.skip(frame - w.frames());
                true
            }
            Taken::Upto(frame) => {
                self.put_back(&w, frame);
                true
            }
        }
    }

    /// Drops the buffer's first `frames` frames (taken as a window's read-ahead).
    fn skip(&mut self, frames: usize) {
        self.take(frames.min(self.buffer.frames()));
    }

    /// Puts `w`'s frames from `frame` on back in front of the buffer.
    fn put_back(&mut self, w: &Window, frame: usize) {
        let Some(rest) = w.rest_from(frame) else {
            return;
        };
        self.start = rest.start;
        self.buffer.prepend(rest.audio);
        self.heard_any = self.buffer.any_speech();
    }

    /// The first `frames` frames as a window; the rest stays for the next one.
    fn take(&mut self, frames: usize) -> Window {
        let w = Window::new(self.start, self.buffer.take_front(frames));
        self.start += w.audio.samples.len() as u64;
        self.heard_any = self.buffer.any_speech();
        w
    }
}

/// Hands out `w`, then what `emit` leaves of it, up to [`MAX_REST_TRIES`] times; `false`
/// if `emit` said stop.
fn hand_out_alone(mut w: Window, emit: &mut impl FnMut(&Window) -> Taken) -> bool {
    for _ in 0..=MAX_REST_TRIES {
        match emit(&w) {
            Taken::All => return true,
            Taken::Stop => return false,
            Taken::Upto(frame) => match w.rest_from(frame) {
                Some(rest) => w = rest,
                None => return true,
            },
        }
    }
    true
}

/// Where to cut a full window, in frames from its start: in the latest pause of at least
/// [`CLEAR_PAUSE_FRAMES`] after [`MIN_FRAMES`] (late cuts make fewer, fuller windows, each
/// one whisper encoder run), else in the longest shorter pause there, else just after the
/// quietest frame of the last [`QUIET_SEARCH_FRAMES`].
///
/// Within a pause the cut goes where [`in_pause`] says.
fn cut_at(frames: &[Heard]) -> usize {
    let mut latest_clear = None;
    let mut longest: Option<(usize, usize)> = None; // (length, start)
    let mut run_start = None;
    for i in MIN_FRAMES..=frames.len() {
        let quiet = frames.get(i).is_some_and(|f| !f.speech);
        match (quiet, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(s)) => {
                let len = i - s;
                if len >= CLEAR_PAUSE_FRAMES {
                    latest_clear = Some((len, s));
                }
                if longest.is_none_or(|(l, _)| len >= l) {
                    longest = Some((len, s));
                }
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some((len, start)) = latest_clear.or(longest) {
        return in_pause(start, len, |i| frames[i].level).max(1);
    }
    let from = frames.len() - QUIET_SEARCH_FRAMES;
    let quietest = (from..frames.len())
        .rev()
        .min_by_key(|&i| frames[i].level)
        .unwrap_or(frames.len() - 1);
    // Cut after the quietest frame, so it ends this window.
    quietest + 1
}

/// Where to cut in the pause of `len` frames from frame `start`: at its quietest frame in
/// its first half. The detector calls speech over late (its hangover) and starts it late
/// (its onset), so the end of a pause it reports runs into the next word, while its first
/// half is silence.
fn in_pause(start: usize, len: usize, level: impl Fn(usize) -> Level) -> usize {
    (start..start + len.div_ceil(2))
        .min_by_key(|&i| level(i))
        .unwrap_or(start)
}

/// The runs of speech frames in `frames`.
fn speech_runs(frames: &[Heard]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, f) in frames.iter().enumerate() {
        match (f.speech, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    runs.extend(start.map(|s| s..frames.len()));
    runs
}

/// The shortest run of speech frames that counts as speech: the endpoint policy's.
fn min_speech_frames() -> usize {
    (EndpointConfig::default().min_speech.total_millis() / 10).max(1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: usize = SAMPLE_RATE_HZ as usize;

    /// A voice-like tone (a 220 Hz carrier swelling at 4 Hz), as in the gate's own test.
    fn voice(secs: f32) -> Vec<i16> {
        let n = (secs * SECOND as f32) as usize;
        (0..n)
            .map(|i| {
                let t = i as f32 / SECOND as f32;
                (6000.0
                    * (t * 2.0 * std::f32::consts::PI * 220.0).sin()
                    * (1.2 + (t * 2.0 * std::f32::consts::PI * 4.0).sin())) as i16
            })
            .collect()
    }

    fn silence(secs: f32) -> Vec<i16> {
        vec![0; (secs * SECOND as f32) as usize]
    }

    /// Runs `audio` through a windower in pieces of `piece` samples, taking all of every
    /// window.
    fn windows(audio: &[i16], piece: usize) -> Vec<Window> {
        taking(audio, piece, |_, _| Taken::All)
    }

    /// Runs `audio` through a windower in pieces of `piece` samples; `take` says how much
    /// of the n-th window handed out is taken.
    fn taking(
        audio: &[i16],
        piece: usize,
        mut take: impl FnMut(usize, &Window) -> Taken,
    ) -> Vec<Window> {
        let mut w = Windower::new();
        let mut out = Vec::new();
        let mut emit = |win: &Window| {
            let taken = take(out.len(), win);
            out.push(win.clone());
            taken
        };
        for chunk in audio.chunks(piece) {
            assert!(w.push(chunk, &mut emit));
        }
        assert!(w.finish(&mut emit));
        out
    }

    fn bounds_s(ws: &[Window]) -> Vec<(f32, f32, bool)> {
        ws.iter()
            .map(|w| {
                (
                    w.start_ms() as f32 / 1000.0,
                    w.end_ms() as f32 / 1000.0,
                    w.speech(),
                )
            })
            .collect()
    }

    #[test]
    fn a_short_recording_is_one_window_with_every_sample() {
        let mut audio = silence(1.0);
        audio.extend(voice(3.0));
        audio.extend(silence(1.0));
        audio.push(123); // a partial frame at the end
        let ws = windows(&audio, 1000);
        assert_eq!(ws.len(), 1);
        assert_eq!(ws[0].samples(), audio);
        assert!(ws[0].speech());
    }

    #[test]
    fn windows_are_cut_in_the_latest_clear_pause_after_twenty_seconds() {
        // Speech with pauses of 1 s at 15 s (before 20 s: too early), 0.6 s at 22 s and
        // 1 s at 25 s: the one at 25 s is the latest clear one.
        let mut audio = voice(15.0);
        audio.extend(silence(1.0));
        audio.extend(voice(6.0));
        audio.extend(silence(0.6));
        audio.extend(voice(2.4));
        audio.extend(silence(1.0));
        audio.extend(voice(10.0));
        let ws = windows(&audio, 4410);
        assert_eq!(ws.len(), 2, "{:?}", bounds_s(&ws));
        let cut = ws[0].end_ms();
        // Where the detector's pause starts and ends differs from the silence's own edges
        // (hangover, onset); the cut must fall inside the silence.
        assert!((25_000..=26_000).contains(&cut), "cut at {cut} ms");
        assert_eq!(ws[1].start_ms(), cut);
        let joined: Vec<i16> = ws.iter().flat_map(|w| w.samples().to_vec()).collect();
        assert_eq!(joined, audio);
    }

    /// Frames for `cut_at`: speech everywhere except the `(from, to)` frame ranges,
    /// with the frame at `quiet` the quietest.
    fn heard(pauses: &[(usize, usize)], quiet: usize) -> Vec<Heard> {
        (0..MAX_FRAMES)
            .map(|i| Heard {
                speech: !pauses.iter().any(|&(a, b)| (a..b).contains(&i)),
                level: Level(if i == quiet { 100 } else { 1000 }),
            })
            .collect()
    }

    #[test]
    fn the_cut_is_the_latest_clear_pause_then_the_longest_short_one_then_the_quietest_frame() {
        // Clear pauses at 21 s and 26 s, a longer one at 14 s (too early): 26 s wins, at
        // its first frame when the pause is equally quiet throughout.
        assert_eq!(
            cut_at(&heard(&[(1400, 1500), (2100, 2140), (2600, 2630)], 0)),
            2600
        );
        // At the pause's quietest frame in its first half...
        assert_eq!(cut_at(&heard(&[(2600, 2630)], 2610)), 2610);
        // ...not in its second half, where the next word may already have begun.
        assert_eq!(cut_at(&heard(&[(2600, 2630)], 2620)), 2600);
        // Only short pauses after 20 s: the longest of them.
        assert_eq!(
            cut_at(&heard(&[(2200, 2210), (2500, 2515), (2900, 2905)], 2503)),
            2503
        );
        // A pause still going when the window is full counts up to the window's end.
        assert_eq!(cut_at(&heard(&[(2900, 3000)], 2940)), 2940);
        // No pause at all: just after the quietest frame of the last 5 s.
        assert_eq!(cut_at(&heard(&[], 2700)), 2701);
        // A quieter frame before the last 5 s is not looked at.
        assert!(cut_at(&heard(&[], 2400)) > 2500);
    }

    #[test]
    fn silence_makes_windows_without_speech_and_no_window_passes_thirty_seconds() {
        let mut audio = silence(65.0);
        audio.extend(voice(5.0));
        audio.extend(silence(65.0));
        let ws = windows(&audio, 16_000);
        assert!(ws.iter().all(|w| w.samples().len() <= 30 * SECOND));
        let speech: Vec<_> = ws
            .iter()
            .filter(|w| w.speech())
            .map(|w| w.start_ms())
            .collect();
        assert_eq!(speech.len(), 1, "{:?}", bounds_s(&ws));
        let total: usize = ws.iter().map(|w| w.samples().len()).sum();
        assert_eq!(total, audio.len());
    }

    #[test]
    fn a_caller_that_says_stop_gets_no_more_windows() {
        let audio = silence(100.0);
        let mut w = Windower::new();
        let mut seen = 0;
        let went_on = w.push(&audio, &mut |_| {
            seen += 1;
            Taken::Stop
        });
        assert!(!went_on);
        assert_eq!(seen, 1);
    }

    #[test]
    fn silence_and_a_click_hold_no_speech_but_a_voice_does() {
        assert!(!windows(&silence(3.0), 1600)[0].speech());
        let mut click = silence(2.0);
        click[16_000..16_040].fill(20_000);
        assert!(!windows(&click, 1600)[0].speech());
        let mut burst = silence(1.0);
        burst.extend(voice(1.0));
        burst.extend(silence(1.0));
        assert!(windows(&burst, 1600)[0].speech());
    }

    #[test]
    fn a_long_silence_ends_a_window_and_the_next_starts_just_before_the_words() {
        let mut audio = voice(5.0);
        audio.extend(silence(12.0));
        audio.extend(voice(5.0));
        audio.extend(silence(1.0));
        let ws = windows(&audio, 16_000);
        let speech: Vec<_> = ws.iter().filter(|w| w.speech()).collect();
        assert_eq!(speech.len(), 2, "{:?}", bounds_s(&ws));
        // The first ends about half a second into the silence...
        assert!(
            (5_200..6_000).contains(&speech[0].end_ms()),
            "{:?}",
            bounds_s(&ws)
        );
        // ...and the second starts about half a second before its words.
        assert!(
            (16_000..17_000).contains(&speech[1].start_ms()),
            "{:?}",
            bounds_s(&ws)
        );
        let total: usize = ws.iter().map(|w| w.samples().len()).sum();
        assert_eq!(total, audio.len());
    }

    #[test]
    fn a_window_says_where_after_a_point_it_heard_speech() {
        let mut audio = voice(3.0);
        audio.extend(silence(4.0));
        audio.extend(voice(2.0));
        audio.extend(silence(1.0));
        let ws = windows(&audio, 16_000);
        let second = ws.iter().rfind(|w| w.speech()).unwrap();
        assert!(second.speech_from(0));
        assert!(!second.speech_from(second.samples().len() - 8000));
        let first = &ws[0];
        assert!(first.speech_from(0));
        assert!(
            !first.speech_from(first.samples().len()),
            "{:?}",
            first.runs
        );
    }

    /// The samples each window's taker took, in order, for `takes` answers.
    fn taken_parts(ws: &[Window], takes: &[Taken]) -> Vec<(u64, Vec<i16>)> {
        ws.iter()
            .zip(takes)
            .map(|(w, t)| match *t {
                Taken::Upto(f) if f > 0 && f < w.frames() => {
                    (w.start, w.samples()[..f * FRAME_SAMPLES].to_vec())
                }
                Taken::Upto(f) if f > w.frames() => {
                    let ahead = ((f - w.frames()) * FRAME_SAMPLES).min(w.ahead().len());
                    (w.start, [w.samples(), &w.ahead()[..ahead]].concat())
                }
                _ => (w.start, w.samples().to_vec()),
            })
            .collect()
    }

    /// The windows of `audio` when the first is taken up to frame `upto` and every other
    /// whole, and the samples taken, joined in order.
    fn first_taken_upto(audio: &[i16], piece: usize, upto: usize) -> (Vec<Window>, Vec<i16>) {
        let mut takes = Vec::new();
        let ws = taking(audio, piece, |n, _| {
            let t = if n == 0 {
                Taken::Upto(upto)
            } else {
                Taken::All
            };
            takes.push(t);
            t
        });
        let joined = taken_parts(&ws, &takes)
            .into_iter()
            .flat_map(|(_, s)| s)
            .collect();
        (ws, joined)
    }

    /// Speech for `secs` seconds with a pause of 1 s every 15 s: the speaker never stops
    /// long enough to end a window early.
    fn talk(secs: usize) -> Vec<i16> {
        let mut audio = Vec::new();
        while audio.len() < secs * SECOND {
            audio.extend(voice(14.0));
            audio.extend(silence(1.0));
        }
        audio.truncate(secs * SECOND);
        audio
    }

    #[test]
    fn the_rest_of_a_full_window_goes_in_front_of_the_next() {
        let audio = talk(64);
        // The first window is taken up to 12 s, as whisper does when it stops early.
        let (ws, joined) = first_taken_upto(&audio, 3000, 1200);
        assert!(ws[0].end_ms() > 20_000, "{:?}", bounds_s(&ws));
        assert_eq!(ws[1].start_ms(), 12_000, "{:?}", bounds_s(&ws));
        // The rest and what followed it make a full window again, cut in a breath.
        assert!(ws[1].end_ms() > 32_000, "{:?}", bounds_s(&ws));
        assert!(ws.iter().all(|w| w.samples().len() <= 30 * SECOND));
        assert_eq!(joined, audio);
    }

    /// 45 s of speech with one pause, of 1 s at 21 s: the first window is cut there.
    fn one_breath_at_21_s() -> Vec<i16> {
        let mut audio = voice(21.0);
        audio.extend(silence(1.0));
        audio.extend(voice(23.0));
        audio
    }

    #[test]
    fn a_full_window_reads_ahead_to_thirty_seconds_and_one_cut_at_a_silence_does_not() {
        let audio = one_breath_at_21_s();
        let ws = windows(&audio, 3000);
        let first = &ws[0];
        assert!(first.end_ms() < 22_000, "{:?}", bounds_s(&ws));
        assert_eq!(first.samples().len() + first.ahead().len(), 30 * SECOND);
        assert_eq!(first.ahead()[..], audio[first.samples().len()..30 * SECOND]);
        let mut paused = voice(8.0);
        paused.extend(silence(12.0));
        paused.extend(voice(5.0));
        assert!(
            windows(&paused, 16_000)
                .iter()
                .all(|w| w.ahead().is_empty())
        );
    }

    #[test]
    fn a_reading_that_ends_at_or_just_after_a_pause_settles_where_the_windower_would_cut() {
        // 25 s of window and 5 s read ahead; pauses at 21-22 s (quietest at 21.1 s) and,
        // read ahead, at 27-27.6 s (quietest at 27.1 s).
        let verdict = |i: usize| Heard {
            speech: !((2100..2200).contains(&i) || (2700..2760).contains(&i)),
            level: Level(match i {
                2110 | 2710 => 40,
                _ => 1000,
            }),
        };
        let mut w = Window::new(
            0,
            Track {
                samples: vec![0; 2500 * FRAME_SAMPLES],
                heard: (0..2500).map(verdict).collect(),
            },
        );
        w.ahead = Track {
            samples: vec![0; 500 * FRAME_SAMPLES],
            heard: (2500..3000).map(verdict).collect(),
        };
        assert_eq!(w.settle(2180), 2110, "inside the pause");
        assert_eq!(w.settle(2205), 2110, "just into the next word");
        assert_eq!(w.settle(2300), 2300, "in speech, far from a pause");
        assert_eq!(w.settle(2750), 2710, "in a pause read ahead");
        assert_eq!(w.settle(2705), 2705, "never later than the reading's end");
    }

    #[test]
    fn a_window_taken_past_its_cut_takes_the_audio_read_ahead_too() {
        let audio = one_breath_at_21_s();
        // whisper read on to 29 s, past the cut in the pause at 21 s.
        let (ws, joined) = first_taken_upto(&audio, 3000, 2900);
        assert!(ws[0].end_ms() < 22_000, "{:?}", bounds_s(&ws));
        assert_eq!(ws[1].start_ms(), 29_000, "{:?}", bounds_s(&ws));
        assert_eq!(joined, audio);
    }

    #[test]
    fn the_rest_of_a_window_before_a_long_silence_is_handed_out_again_on_its_own() {
        let mut audio = voice(8.0);
        audio.extend(silence(12.0));
        audio.extend(voice(5.0));
        let (ws, joined) = first_taken_upto(&audio, 16_000, 300);
        // The rest (3 s to the window's end, half a second into the silence) comes again
        // before the silence's own window.
        assert_eq!(ws[1].start_ms(), 3_000);
        assert_eq!(ws[1].end_ms(), ws[0].end_ms());
        assert!(!ws[2].speech(), "{:?}", bounds_s(&ws));
        assert_eq!(joined, audio);
    }

    #[test]
    fn a_rest_that_is_never_taken_is_handed_out_again_at_most_twice() {
        let mut audio = voice(8.0);
        audio.extend(silence(1.0));
        let ws = taking(&audio, 16_000, |_, _| Taken::Upto(100));
        assert_eq!(
            ws.iter().map(Window::start_ms).collect::<Vec<_>>(),
            [0, 1_000, 2_000]
        );
        // Nothing taken and everything taken end a window at once.
        assert_eq!(taking(&audio, 16_000, |_, _| Taken::Upto(0)).len(), 1);
        assert_eq!(
            taking(&audio, 16_000, |_, w| Taken::Upto(w.frames())).len(),
            1
        );
    }

    #[test]
    fn whatever_the_taker_leaves_every_sample_is_taken_once_in_order() {
        let mut audio = talk(40);
        audio.extend(silence(3.0));
        audio.extend(talk(70));
        audio.extend(silence(0.4));
        audio.push(7);
        for seed in 1..=20u64 {
            let mut rng = seed;
            let mut takes = Vec::new();
            let ws = taking(&audio, 1 + (seed as usize * 997) % 20_000, |_, w| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = if (rng >> 60) < 6 {
                    let ahead = w.ahead().len() / FRAME_SAMPLES;
                    Taken::Upto((rng >> 20) as usize % (w.frames() + ahead + 1))
                } else {
                    Taken::All
                };
                assert!(w.samples().len() <= 30 * SECOND + FRAME_SAMPLES);
                takes.push(t);
                t
            });
            // A rest handed out again on its own and not taken after MAX_REST_TRIES is
            // dropped; otherwise the parts follow each other without gap or overlap.
            let parts = taken_parts(&ws, &takes);
            let mut at = 0u64;
            let mut dropped = 0;
            for (i, (start, samples)) in parts.iter().enumerate() {
                assert!(*start >= at, "seed {seed}: {start} before {at}");
                if *start > at {
                    let left = ws[i - 1].frames() * FRAME_SAMPLES;
                    assert!(
                        matches!(takes[i - 1], Taken::Upto(f) if f > 0 && f * FRAME_SAMPLES < left),
                        "seed {seed}: a gap at {at} after a window taken whole"
                    );
                    dropped += 1;
                }
                assert_eq!(audio[*start as usize..][..samples.len()], samples[..]);
                at = *start + samples.len() as u64;
            }
            assert!(dropped <= 3, "seed {seed}: {dropped} rests dropped");
            assert!(at <= audio.len() as u64);
        }
    }
}
