//! macOS's Microphone permission, asked before a capture opens. Built, never run.
//!
//! Without the permission CoreAudio does not fail: it records silence. A dictation or an
//! `ask_human` would then hear nobody and say so, while the user spoke. So the capture asks
//! first and refuses in words that name the setting.
#![allow(unsafe_code)]

use std::sync::mpsc::sync_channel;
use std::time::Duration;

use block2::RcBlock;
use objc2::runtime::Bool;
use objc2_av_foundation::{AVAuthorizationStatus, AVCaptureDevice, AVMediaTypeAudio};

use crate::platform::Denied;

/// How long macOS's own prompt may wait for the user before the capture gives up.
const PROMPT_WAIT: Duration = Duration::from_secs(120);

/// Where the permission is granted.
const WHERE: &str = "allow yazses (or the app that started it: the terminal, the MCP \
    client) in System Settings > Privacy & Security > Microphone, then try again";

/// `Ok` once macOS lets this process record. The first time, macOS shows its prompt and the
/// capture waits for the user's answer; a refusal, a policy that forbids it, or a prompt
/// left unanswered is an error that says where to allow it.
pub fn allowed() -> Result<(), Denied> {
    // SAFETY: a constant of AVFoundation, present on every macOS yazses starts on.
    let Some(audio) = (unsafe { AVMediaTypeAudio }) else {
        return Err(Denied(
            "macOS has no audio media type: AVFoundation is missing".into(),
        ));
    };
    // SAFETY: the audio media type is one of the two this method accepts.
    let status = unsafe { AVCaptureDevice::authorizationStatusForMediaType(audio) };
    match status {
        AVAuthorizationStatus::Authorized => Ok(()),
        AVAuthorizationStatus::Denied => Err(Denied(format!(
            "macOS has refused yazses the microphone: {WHERE}"
        ))),
        AVAuthorizationStatus::Restricted => Err(Denied(format!(
            "a policy on this Mac forbids the microphone to yazses (a profile or Screen Time): \
             {WHERE}, if the policy lets you"
        ))),
        _ => ask(audio),
    }
}

/// Shows macOS's prompt and waits for the answer.
fn ask(audio: &objc2_av_foundation::AVMediaType) -> Result<(), Denied> {
    let (tx, rx) = sync_channel(1);
    // The handler runs on a queue of macOS's choosing, once.
    let handler = RcBlock::new(move |granted: Bool| {
        let _ = tx.try_send(granted.as_bool());
    });
    tracing::info!("macOS asks the user for the microphone; waiting for the answer");
    // SAFETY: the audio media type, and a block that lives as long as macOS needs it
    // (the call copies it).
    unsafe { AVCaptureDevice::requestAccessForMediaType_completionHandler(audio, &handler) };
    match rx.recv_timeout(PROMPT_WAIT) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Denied(format!("the microphone was not allowed: {WHERE}"))),
        Err(_) => Err(Denied(format!(
            "macOS's microphone prompt was not answered within {} s: {WHERE}",
            PROMPT_WAIT.as_secs()
        ))),
    }
}
