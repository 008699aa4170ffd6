//! `yazses status`: what every yazses process of this user shares, right now.

use clap::Args;

use super::print;
use crate::config::Config;
use crate::coord::{BudgetView, Coordinator, Holder, unix_ms};

/// `yazses status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object (`mic`, `queue`, `budget`, `runtime_dir`; see docs/coordination.md).
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: StatusArgs, config: &Config) -> anyhow::Result<()> {
    let coord = Coordinator::from_env()?;
    let status = coord.status(config.mcp.ask_human_per_hour)?;
    if args.json {
        return print(&format!("{}\n", serde_json::to_string(&status)?));
    }
    let now = unix_ms();
    let who = |h: &Holder| {
        format!(
            "{} for {} (pid {}, {} s)",
            h.caller,
            h.purpose.as_str(),
            h.pid,
            now.saturating_sub(h.since) / 1000
        )
    };
    let mut out = format!("runtime dir: {}\n", status.runtime_dir.display());
    match &status.mic {
        Some(h) => out.push_str(&format!("microphone:  held by {}\n", who(h))),
        None => out.push_str("microphone:  free\n"),
    }
    if status.queue.is_empty() {
        out.push_str("queue:       empty\n");
    }
    for (i, h) in status.queue.iter().enumerate() {
        out.push_str(&format!("queue {:>2}:    {}\n", i + 1, who(h)));
    }
    match &status.budget {
        BudgetView::Known(b) => {
            out.push_str(&format!(
                "budget:      {} of {} spoken answers in the past hour",
                b.spent, b.limit
            ));
            if let Some(at) = b.resets_at {
                out.push_str(&format!(
                    "; the next frees up in {} min",
                    at.saturating_sub(now).div_ceil(60_000)
                ));
            }
            out.push('\n');
        }
        BudgetView::Untrusted { error } => out.push_str(&format!("budget:      {error}\n")),
    }
    print(&out)
}
