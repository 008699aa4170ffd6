//! `yazses status`: what every yazses process of this user shares, right now.

use clap::Args;

use super::print;
use crate::config::Config;
use crate::coord::{BudgetStatus, BudgetView, Coordinator, Holder, unix_ms};

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
            out.push_str(&budget_line(b, now));
            out.push('\n');
        }
        BudgetView::Untrusted { error } => out.push_str(&format!("budget:      {error}\n")),
    }
    print(&out)
}

/// The budget in words. Every process shares one ledger but checks it against its own
/// `ask_human_per_hour`, so the count can be above this config's limit.
fn budget_line(b: &BudgetStatus, now: u64) -> String {
    let minutes = |at: u64| at.saturating_sub(now).div_ceil(60_000).max(1);
    let mut line = if b.spent <= b.limit as usize {
        format!(
            "budget:      {} of {} heard answers used in the past hour",
            b.spent, b.limit
        )
    } else {
        format!(
            "budget:      {} heard answers in the past hour, over this config's {} per hour \
             (a process with a higher ask_human_per_hour charged the shared ledger)",
            b.spent, b.limit
        )
    };
    match b.allowed_again_at {
        Some(at) => line.push_str(&format!("; questions allowed again in {} min", minutes(at))),
        None => {
            if let Some(at) = b.resets_at {
                line.push_str(&format!("; the next frees up in {} min", minutes(at)));
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn status(spent: usize, limit: u32, resets: u64, allowed: Option<u64>) -> BudgetStatus {
        BudgetStatus {
            spent,
            limit,
            resets_at: (spent > 0).then_some(resets),
            allowed_again_at: allowed,
        }
    }

    #[test]
    fn a_budget_within_the_limit_says_how_much_is_used() {
        assert_eq!(
            budget_line(&status(1, 3, 20 * MIN, None), 0),
            "budget:      1 of 3 heard answers used in the past hour; the next frees up in 20 min"
        );
        assert_eq!(
            budget_line(&status(0, 3, 0, None), 0),
            "budget:      0 of 3 heard answers used in the past hour"
        );
    }

    #[test]
    fn a_count_above_this_configs_limit_is_explained_not_shown_as_8_of_3() {
        let line = budget_line(&status(8, 3, 5 * MIN, Some(40 * MIN)), 0);
        assert!(!line.contains("8 of 3"), "{line}");
        assert!(
            line.contains("8 heard answers in the past hour, over this config's 3"),
            "{line}"
        );
        // Six charges must leave the hour, not just the oldest.
        assert!(
            line.ends_with("questions allowed again in 40 min"),
            "{line}"
        );
    }
}
