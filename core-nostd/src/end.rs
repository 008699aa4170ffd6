//! Why a capture ended: one reason type from the policy through the wire to a JSON result.
//!
//! The policy ([`endpoint`](crate::endpoint)) decides four of these ([`StopReason`]);
//! the others come from whoever else can end a capture: the user letting go of
//! push-to-talk, the host stopping the dongle or sleeping, or a file running out. The
//! dongle sends an [`End`] in its `EndOfSpeech` message, and the host reports the very
//! same value, so nothing is lost or renamed on the way.
//!
//! On the wire (postcard) a variant is its index, so new variants go at the end. In JSON
//! it is its snake_case name ([`End::as_str`]); its `Display` says it in words.

use core::fmt;

use serde::{Deserialize, Serialize};

use crate::endpoint::StopReason;

/// Why a capture ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The user stopped talking (`end_silence` of trailing silence, or the end-of-turn
    /// policy above it found the turn finished).
    EndOfSpeech,
    /// Nobody spoke within `no_speech`.
    NoSpeech,
    /// The caller's time limit passed.
    Timeout,
    /// The hard cap (120 s) passed.
    Cap,
    /// The user let go of push-to-talk (a key or the dongle's button).
    Released,
    /// The host stopped the capture, started another one, or went away.
    Stopped,
    /// The host suspended the USB bus (the computer went to sleep).
    Suspended,
    /// The audio ran out before anything else ended the capture (a file analysed as it
    /// is, not played as a microphone).
    EndOfInput,
}

impl End {
    /// The snake_case name used in JSON and MCP results.
    pub const fn as_str(self) -> &'static str {
        match self {
            End::EndOfSpeech => "end_of_speech",
            End::NoSpeech => "no_speech",
            End::Timeout => "timeout",
            End::Cap => "cap",
            End::Released => "released",
            End::Stopped => "stopped",
            End::Suspended => "suspended",
            End::EndOfInput => "end_of_input",
        }
    }

    /// What the policy decided, when the policy decided it.
    pub const fn policy(self) -> Option<StopReason> {
        match self {
            End::EndOfSpeech => Some(StopReason::EndOfSpeech),
            End::NoSpeech => Some(StopReason::NoSpeech),
            End::Timeout => Some(StopReason::Timeout),
            End::Cap => Some(StopReason::Cap),
            End::Released | End::Stopped | End::Suspended | End::EndOfInput => None,
        }
    }
}

impl From<StopReason> for End {
    fn from(reason: StopReason) -> Self {
        match reason {
            StopReason::EndOfSpeech => End::EndOfSpeech,
            StopReason::NoSpeech => End::NoSpeech,
            StopReason::Timeout => End::Timeout,
            StopReason::Cap => End::Cap,
        }
    }
}

/// In words, for people ("the speaker stopped talking"), to follow "stopped because".
impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            End::EndOfSpeech => "the speaker stopped talking",
            End::NoSpeech => "nobody started talking in time",
            End::Timeout => "the time limit was reached",
            End::Cap => "the 120 s limit on one capture was reached",
            End::Released => "push-to-talk was released",
            End::Stopped => "the capture was stopped",
            End::Suspended => "the computer went to sleep",
            End::EndOfInput => "the audio ended",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [End; 8] = [
        End::EndOfSpeech,
        End::NoSpeech,
        End::Timeout,
        End::Cap,
        End::Released,
        End::Stopped,
        End::Suspended,
        End::EndOfInput,
    ];

    #[test]
    fn every_policy_reason_comes_back_unchanged_through_end() {
        for reason in [
            StopReason::EndOfSpeech,
            StopReason::NoSpeech,
            StopReason::Timeout,
            StopReason::Cap,
        ] {
            assert_eq!(End::from(reason).policy(), Some(reason));
            assert_eq!(End::from(reason).as_str(), reason.as_str());
        }
    }

    #[test]
    fn the_wire_keeps_each_variant_at_its_index() {
        // Dongles in the field send these indices: reordering would rename their ends.
        for (index, end) in ALL.into_iter().enumerate() {
            let mut buf = [0u8; 4];
            let bytes = postcard::to_slice(&end, &mut buf).unwrap();
            assert_eq!(bytes, [index as u8], "{end:?}");
            assert_eq!(postcard::from_bytes::<End>(bytes).unwrap(), end);
        }
    }
}
