//! The microphone lease around one capture: take the lease, open the source, capture
//! until the user stops, close the source, let the lease go. Every way this user reaches
//! a microphone (cpal, the dongle's port, a file played as the microphone) comes through
//! here, so it is covered by the lease and never open twice; [`crate::hear`] builds the
//! callers' one path on it.
//!
//! The steps are types: [`Session::begin`] waits for the lease and returns a [`Session`]
//! that holds it; whatever must happen under the lease before listening happens then;
//! [`Session::capture`] consumes it and returns the utterance with the source closed and
//! the lease released.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use yazses_core::endpoint::EndpointConfig;
use yazses_core::vad::VadConfig;

use crate::capture::{self, Capture, CaptureError, Utterance};
use crate::coord::{CoordError, Coordinator, Lease, Purpose, Request, Waiting};
use crate::source::{FrameSource, SourceError};
use crate::turn::{Turn, TurnConfig, TurnMode};

/// Opens the capture source; called once per session, under the lease.
pub type OpenSource<'a> =
    &'a (dyn Fn(EndpointConfig) -> Result<Box<dyn FrameSource + Send>, SourceError> + Sync);

/// The end-of-turn policy of a capture on the acoustic `endpoint` under `config`: none
/// with `mode = "fixed"` (the endpoint decides alone), else the smart turn, answering
/// `question` when there is one.
pub fn smart_turn(
    config: &TurnConfig,
    endpoint: &EndpointConfig,
    question: Option<&str>,
) -> Option<Turn> {
    let turn = match config.mode {
        TurnMode::Fixed => return None,
        TurnMode::Smart => Turn::new(*config, endpoint),
    };
    Some(match question {
        Some(question) => turn.asking(question),
        None => turn,
    })
}

/// Who wants to hear the user, and for how long they wait for the microphone.
#[derive(Clone, Copy, Debug)]
pub struct Want<'a> {
    /// What for.
    pub purpose: Purpose,
    /// Who (an MCP client's name, or the command).
    pub caller: &'a str,
    /// The longest to wait in the queue.
    pub queue_timeout: Duration,
}

/// The microphone, held; capture with it or drop it.
#[derive(Debug)]
pub struct Session {
    lease: Lease,
}

impl Session {
    /// Waits for the microphone; `on_wait` hears who holds it while this one waits.
    pub fn begin(
        coord: &Coordinator,
        want: Want<'_>,
        cancel: &AtomicBool,
        on_wait: impl FnMut(&Waiting),
    ) -> Result<Session, CoordError> {
        let lease = coord.acquire(
            &Request {
                purpose: want.purpose,
                caller: want.caller,
                queue_timeout: want.queue_timeout,
                cancel,
            },
            on_wait,
        )?;
        Ok(Session { lease })
    }

    /// How long the session waited for the microphone, in milliseconds.
    pub fn queued_ms(&self) -> u64 {
        self.lease.queued().as_millis() as u64
    }

    /// Opens the source, captures until the policy (or the source) stops, and closes the
    /// source; the lease is let go on return, whatever happened.
    pub fn capture(
        self,
        open: OpenSource<'_>,
        vad: VadConfig,
        endpoint: EndpointConfig,
        cancel: &AtomicBool,
    ) -> Result<Utterance, CaptureError> {
        self.capture_with(
            open,
            endpoint,
            |decides| Capture::new(vad, endpoint, decides),
            cancel,
            None,
            None,
        )
    }

    /// Like [`Session::capture`], under the end-of-turn policy `turn` (made by
    /// [`smart_turn`]): without one the acoustic endpoint decides alone, with one `judge`
    /// reads the signals at each check (see [`crate::turn`]).
    pub fn capture_turn(
        self,
        open: OpenSource<'_>,
        vad: VadConfig,
        endpoint: EndpointConfig,
        turn: Option<Turn>,
        cancel: &AtomicBool,
        judge: capture::Judge<'_>,
    ) -> Result<Utterance, CaptureError> {
        let Some(turn) = turn else {
            return self.capture(open, vad, endpoint, cancel);
        };
        let core = turn.core_endpoint(&endpoint);
        let make = |decides| match decides {
            // The source's own end decides; the core keeps the acoustic endpoint.
            true => Capture::new(vad, endpoint, true),
            false => Capture::new(vad, core, false).with_turn(turn),
        };
        self.capture_with(open, endpoint, make, cancel, None, Some(judge))
    }

    /// Like [`Session::capture`], with the capture machine made by `make` (told whether
    /// the source decides the end itself), `release` to end it when the user lets go, and
    /// `judge` to read the end-of-turn signals when the machine has a turn policy.
    pub fn capture_with(
        self,
        open: OpenSource<'_>,
        endpoint: EndpointConfig,
        make: impl FnOnce(bool) -> Capture,
        cancel: &AtomicBool,
        release: Option<&AtomicBool>,
        judge: Option<capture::Judge<'_>>,
    ) -> Result<Utterance, CaptureError> {
        let mut source = open(endpoint)?;
        let capture = make(source.decides_end());
        let utterance = capture::listen_with(source.as_mut(), capture, cancel, release, judge);
        // The source first (the microphone, the dongle's port), then the lease.
        drop(source);
        drop(self.lease);
        utterance
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::RuntimeDir;
    use crate::source::FileSource;

    fn coordinator(name: &str) -> Coordinator {
        let p = std::env::temp_dir().join(format!("yazses-session-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Coordinator::new(RuntimeDir::at(&p).unwrap())
    }

    fn want(caller: &str) -> Want<'_> {
        Want {
            purpose: Purpose::Listen,
            caller,
            queue_timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn the_lease_is_held_while_the_source_is_open_and_released_after() {
        let coord = coordinator("held");
        let no = AtomicBool::new(false);
        let session = Session::begin(&coord, want("test"), &no, |_| {}).unwrap();
        let seen = std::sync::Mutex::new(None);
        let open = |_e: EndpointConfig| -> Result<Box<dyn FrameSource + Send>, SourceError> {
            *seen.lock().unwrap() = Some(coord.holder().unwrap());
            Ok(Box::new(FileSource::from_samples(vec![0; 1600], false)))
        };
        let u = session
            .capture(
                &open,
                yazses_core::vad::Vad::DEFAULT,
                EndpointConfig::default(),
                &no,
            )
            .unwrap();
        assert!(u.samples.is_empty());
        let during = seen.lock().unwrap().clone().flatten().unwrap();
        assert_eq!(
            (during.caller.as_str(), during.purpose),
            ("test", Purpose::Listen)
        );
        assert_eq!(coord.holder().unwrap(), None, "released after the capture");
    }

    #[test]
    fn a_source_that_fails_to_open_still_releases_the_lease() {
        let coord = coordinator("fails");
        let no = AtomicBool::new(false);
        let session = Session::begin(&coord, want("test"), &no, |_| {}).unwrap();
        let open = |_e: EndpointConfig| -> Result<Box<dyn FrameSource + Send>, SourceError> {
            Err(SourceError::Busy("the device is busy".into()))
        };
        let err = session
            .capture(
                &open,
                yazses_core::vad::Vad::DEFAULT,
                EndpointConfig::default(),
                &no,
            )
            .unwrap_err();
        assert!(
            matches!(err, CaptureError::Source(SourceError::Busy(_))),
            "{err}"
        );
        assert_eq!(coord.holder().unwrap(), None);
    }
}
