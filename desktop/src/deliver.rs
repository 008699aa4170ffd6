//! What every output of a dictation is: something that delivers one utterance's text, or
//! says why it cannot; and the plainest one, stdout.

use std::io::Write;

/// Why text could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    /// Nothing to type with: no display, no typer installed.
    #[error("{0}")]
    Unavailable(String),
    /// The typer failed mid-way (the display went away, the command failed).
    #[error("{0}")]
    Failed(String),
    /// The window that had the focus when the dictation began was closed before the text
    /// was ready; nothing was typed, so nothing went into whatever has the focus now.
    #[error("the window that had the focus when the dictation began was closed; nothing was typed")]
    TargetGone,
}

/// Delivers one utterance's text.
pub trait Deliver: Send {
    /// Delivers `text` (never empty).
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError>;

    /// Notes where the next text is meant to go (the window focused as the dictation
    /// begins), so that [`Deliver::deliver`] can refuse with [`DeliverError::TargetGone`]
    /// when that window is closed meanwhile. Outputs that cannot know do nothing.
    fn aim(&mut self) {}
}

/// One line per utterance on stdout (scripts and tests).
#[derive(Debug, Default)]
pub struct Stdout;

impl Deliver for Stdout {
    fn deliver(&mut self, text: &str) -> Result<(), DeliverError> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(|e| DeliverError::Failed(format!("writing to stdout: {e}")))
    }
}
