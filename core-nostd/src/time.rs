//! Time as the caller tells it: nothing in this crate reads a clock.
//!
//! Both types count whole microseconds in a `u64`, which covers half a million years and
//! keeps arithmetic exact on 32-bit cores (no floats, no division on the frame path).

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A point in time, in microseconds since an epoch the caller chooses (usually the start
/// of a capture).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Instant {
    micros: u64,
}

/// A span of time in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Duration {
    micros: u64,
}

impl Instant {
    /// The epoch itself.
    pub const ZERO: Instant = Instant { micros: 0 };

    /// An instant `micros` microseconds after the epoch.
    pub const fn from_micros(micros: u64) -> Self {
        Instant { micros }
    }

    /// An instant `millis` milliseconds after the epoch.
    pub const fn from_millis(millis: u64) -> Self {
        Instant {
            micros: millis * 1000,
        }
    }

    /// Microseconds since the epoch.
    pub const fn total_micros(self) -> u64 {
        self.micros
    }

    /// Whole milliseconds since the epoch, rounded down.
    pub const fn total_millis(self) -> u64 {
        self.micros / 1000
    }

    /// The time from `earlier` to `self`, or zero when `earlier` is later.
    pub const fn saturating_since(self, earlier: Instant) -> Duration {
        Duration {
            micros: self.micros.saturating_sub(earlier.micros),
        }
    }

    /// The instant `epoch` stood for, measured on the standard clock.
    #[cfg(feature = "std")]
    pub fn from_std(epoch: std::time::Instant, now: std::time::Instant) -> Self {
        let micros = now.saturating_duration_since(epoch).as_micros();
        Instant {
            micros: u64::try_from(micros).unwrap_or(u64::MAX),
        }
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration { micros: 0 };

    /// A span of `micros` microseconds.
    pub const fn from_micros(micros: u64) -> Self {
        Duration { micros }
    }

    /// A span of `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Duration {
            micros: millis * 1000,
        }
    }

    /// A span of `secs` seconds.
    pub const fn from_secs(secs: u64) -> Self {
        Duration {
            micros: secs * 1_000_000,
        }
    }

    /// The span in microseconds.
    pub const fn total_micros(self) -> u64 {
        self.micros
    }

    /// The span in whole milliseconds, rounded down.
    pub const fn total_millis(self) -> u64 {
        self.micros / 1000
    }

    /// `self * n`, saturating at the largest span.
    pub const fn saturating_mul(self, n: u64) -> Duration {
        Duration {
            micros: self.micros.saturating_mul(n),
        }
    }

    /// The shorter of two spans.
    pub const fn min(self, other: Duration) -> Duration {
        if self.micros <= other.micros {
            self
        } else {
            other
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant {
            micros: self.micros.saturating_add(rhs.micros),
        }
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturates at zero: a clock the caller steps backwards never yields a huge span.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_since(rhs)
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration {
            micros: self.micros.saturating_add(rhs.micros),
        }
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration {
            micros: self.micros.saturating_sub(rhs.micros),
        }
    }
}

impl From<Duration> for core::time::Duration {
    fn from(d: Duration) -> Self {
        core::time::Duration::from_micros(d.micros)
    }
}

impl From<core::time::Duration> for Duration {
    /// Rounds down to whole microseconds and saturates at `u64::MAX` microseconds.
    fn from(d: core::time::Duration) -> Self {
        Duration {
            micros: u64::try_from(d.as_micros()).unwrap_or(u64::MAX),
        }
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:03}s",
            self.micros / 1_000_000,
            (self.micros / 1000) % 1000
        )
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.micros / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Instant::from_millis(5);
        assert_eq!(Instant::from_millis(3) - t, Duration::ZERO);
        assert_eq!(
            Instant::from_micros(u64::MAX) + Duration::from_secs(1),
            Instant::from_micros(u64::MAX)
        );
        assert_eq!(t + Duration::from_millis(10) - t, Duration::from_millis(10));
    }

    #[test]
    fn converts_to_and_from_core_durations() {
        let d = Duration::from_millis(1200);
        let c: core::time::Duration = d.into();
        assert_eq!(c.as_millis(), 1200);
        assert_eq!(Duration::from(c), d);
        assert_eq!(
            Duration::from(core::time::Duration::from_nanos(1999)),
            Duration::from_micros(1)
        );
    }
}
