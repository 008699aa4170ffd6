//! The end-of-speech policy as timelines: each step feeds frames up to an explicit time
//! and checks the decision and the next deadline.

use yazses_core::endpoint::{Decision, Endpoint, EndpointConfig, HARD_CAP, Stop, StopReason};
use yazses_core::time::{Duration, Instant};

const FRAME: Duration = Duration::from_millis(10);

/// Drives an [`Endpoint`] with 10 ms frames, remembering the time.
struct Timeline {
    ep: Endpoint,
    now: Instant,
}

impl Timeline {
    fn new(config: EndpointConfig) -> Self {
        Timeline {
            ep: Endpoint::new(config, Instant::ZERO),
            now: Instant::ZERO,
        }
    }

    /// Frames of `speech` until `until_ms`; returns the last decision.
    fn until(&mut self, until_ms: u64, speech: bool) -> Decision {
        let until = Instant::from_millis(until_ms);
        let mut last = None;
        while self.now < until {
            self.now += FRAME;
            let d = self.ep.update(speech, self.now);
            if d.stop().is_some() {
                return d;
            }
            last = Some(d);
        }
        last.expect("at least one frame")
    }

    fn expect_continue(&mut self, until_ms: u64, speech: bool, poll_at_ms: u64) {
        assert_eq!(
            self.until(until_ms, speech),
            Decision::Continue {
                poll_at: Instant::from_millis(poll_at_ms)
            },
            "at {until_ms} ms"
        );
    }

    fn expect_stop(&mut self, until_ms: u64, speech: bool) -> Stop {
        match self.until(until_ms, speech) {
            Decision::Stop(s) => s,
            d => panic!("expected a stop by {until_ms} ms, got {d:?}"),
        }
    }
}

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

#[test]
fn an_answer_with_a_pause_stops_1_2_s_after_its_last_word() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(1000, false, 8000); // waiting; the no-speech deadline is next
    t.expect_continue(2500, true, 3700); // 1.5 s of speech from 1.0 s
    t.expect_continue(3100, false, 3700); // a 0.6 s pause: not the end
    t.expect_continue(4000, true, 5200); // more speech; the deadline moves
    t.expect_continue(5190, false, 5200); // 1.19 s of silence: still listening
    let stop = t.expect_stop(5200, false);
    assert_eq!(
        stop,
        Stop {
            reason: StopReason::EndOfSpeech,
            at: ms(5200),
            speech_start: Some(ms(1000)),
            speech_end: Some(ms(4000)),
        }
    );
    // After a stop the answer does not change.
    assert_eq!(t.ep.update(true, ms(5210)), Decision::Stop(stop));
}

#[test]
fn pauses_just_shorter_than_end_silence_never_stop_it() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(500, true, 1700);
    let mut at = 500;
    for _ in 0..20 {
        t.expect_continue(at + 1190, false, at + 1200);
        at += 1190 + 200;
        t.expect_continue(at, true, at + 1200);
    }
    assert_eq!(
        t.expect_stop(at + 1200, false).reason,
        StopReason::EndOfSpeech
    );
}

#[test]
fn no_speech_within_8_s_ends_with_no_answer() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(7990, false, 8000);
    let stop = t.expect_stop(8000, false);
    assert_eq!(
        stop,
        Stop {
            reason: StopReason::NoSpeech,
            at: ms(8000),
            speech_start: None,
            speech_end: None
        }
    );
}

#[test]
fn a_click_shorter_than_min_speech_does_not_start_speech() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(2000, false, 8000);
    t.expect_continue(2140, true, 8000); // 140 ms: below the 150 ms minimum
    t.expect_continue(7990, false, 8000);
    assert_eq!(t.expect_stop(8000, false).reason, StopReason::NoSpeech);
}

#[test]
fn speech_that_reaches_min_speech_counts_from_where_it_began() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(2000, false, 8000);
    t.expect_continue(2140, true, 8000);
    t.expect_continue(2150, true, 3350); // 150 ms: counted, from 2.0 s
    assert_eq!(t.ep.speech_start(), Some(ms(2000)));
}

#[test]
fn speech_in_progress_at_the_no_speech_deadline_is_not_cut_off() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(7950, false, 8000);
    t.expect_continue(8050, true, 8000); // started at 7.95 s, not yet 150 ms long
    t.expect_continue(8100, true, 9300); // now it counts
    assert_eq!(t.expect_stop(9300, false).reason, StopReason::EndOfSpeech);
}

#[test]
fn the_callers_timeout_stops_a_long_answer() {
    let config = EndpointConfig {
        timeout: Some(Duration::from_secs(5)),
        ..EndpointConfig::default()
    };
    let mut t = Timeline::new(config);
    t.expect_continue(1000, false, 5000);
    t.expect_continue(4990, true, 5000);
    let stop = t.expect_stop(5000, true);
    assert_eq!(
        (stop.reason, stop.at, stop.speech_start),
        (StopReason::Timeout, ms(5000), Some(ms(1000)))
    );
}

#[test]
fn a_timeout_shorter_than_no_speech_wins() {
    let config = EndpointConfig {
        timeout: Some(Duration::from_secs(3)),
        ..EndpointConfig::default()
    };
    let mut t = Timeline::new(config);
    t.expect_continue(2990, false, 3000);
    assert_eq!(t.expect_stop(3000, false).reason, StopReason::Timeout);
}

#[test]
fn nonstop_speech_hits_the_hard_cap_at_120_s() {
    let mut t = Timeline::new(EndpointConfig::default());
    t.expect_continue(119_990, true, 120_000);
    let stop = t.expect_stop(120_000, true);
    assert_eq!((stop.reason, stop.at), (StopReason::Cap, ms(120_000)));
    assert_eq!(HARD_CAP, Duration::from_secs(120));
}

#[test]
fn a_timeout_beyond_the_cap_is_the_cap() {
    let config = EndpointConfig {
        timeout: Some(Duration::from_secs(600)),
        ..EndpointConfig::default()
    };
    let mut t = Timeline::new(config);
    t.expect_continue(119_990, true, 120_000);
    assert_eq!(t.expect_stop(120_000, true).reason, StopReason::Cap);
}

#[test]
fn end_of_speech_wins_over_a_timeout_at_the_same_instant() {
    let config = EndpointConfig {
        timeout: Some(Duration::from_millis(2200)),
        ..EndpointConfig::default()
    };
    let mut t = Timeline::new(config);
    t.expect_continue(1000, true, 2200);
    assert_eq!(t.expect_stop(2200, false).reason, StopReason::EndOfSpeech);
}

#[test]
fn polling_without_frames_counts_the_gap_as_silence() {
    let mut ep = Endpoint::new(EndpointConfig::default(), Instant::ZERO);
    for i in 1..=50 {
        ep.update(true, ms(i * 10));
    }
    assert_eq!(ep.poll_at(), ms(1700));
    assert_eq!(ep.poll(ms(1690)), Decision::Continue { poll_at: ms(1700) });
    assert_eq!(
        ep.poll(ms(1700)).stop().map(|s| s.reason),
        Some(StopReason::EndOfSpeech)
    );
}

#[test]
fn configs_that_cannot_work_are_refused_by_validate() {
    use yazses_core::endpoint::EndpointConfigError as E;
    let ok = EndpointConfig::default();
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(
        EndpointConfig {
            end_silence: Duration::ZERO,
            ..ok
        }
        .validate(),
        Err(E::ZeroEndSilence)
    );
    assert_eq!(
        EndpointConfig {
            timeout: Some(Duration::ZERO),
            ..ok
        }
        .validate(),
        Err(E::ZeroTimeout)
    );
    assert_eq!(
        EndpointConfig {
            min_speech: Duration::from_secs(9),
            ..ok
        }
        .validate(),
        Err(E::MinSpeechTooLong)
    );
}

#[test]
fn a_hangover_after_the_last_voiced_frame_does_not_delay_the_stop() {
    // What the detector reports: speech voiced from 1.0 s to 2.0 s, then 100 ms that only
    // its hangover holds, then silence.
    let mut ep = Endpoint::new(EndpointConfig::default(), Instant::ZERO);
    let mut last = None;
    for i in 1..=400u64 {
        let now = ms(i * 10);
        let (speech, voiced) = match now.total_millis() {
            1010..=2000 => (true, true),
            2010..=2100 => (true, false),
            _ => (false, false),
        };
        let d = ep.update_voiced(speech, voiced, now);
        if let Decision::Continue { poll_at } = d
            && now == ms(2100)
        {
            // The deadline already runs from the last voiced frame.
            assert_eq!(poll_at, ms(3200));
        }
        if let Decision::Stop(stop) = d {
            last = Some(stop);
            break;
        }
    }
    assert_eq!(
        last,
        Some(Stop {
            reason: StopReason::EndOfSpeech,
            at: ms(3200),
            speech_start: Some(ms(1000)),
            speech_end: Some(ms(2000)),
        })
    );
}

#[test]
fn a_dip_the_hangover_bridges_keeps_the_run_going_for_the_start() {
    // 80 ms voiced, 30 ms held by the hangover, 80 ms voiced: one run of 190 ms, so speech
    // counts as started (150 ms) from its beginning.
    let mut ep = Endpoint::new(EndpointConfig::default(), Instant::ZERO);
    for i in 1..=19u64 {
        let voiced = !(9..=11).contains(&i);
        ep.update_voiced(true, voiced, ms(i * 10));
    }
    assert_eq!(ep.speech_start(), Some(Instant::ZERO));
    assert_eq!(ep.speech_end(), Some(ms(190)));
}
