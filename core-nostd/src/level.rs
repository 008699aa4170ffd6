//! Frame levels as fixed-point logarithms.
//!
//! A [`Level`] is `log2` of a frame's energy (the sum of its 160 squared, filtered
//! samples) in Q8: 256 units per doubling of energy, so 1 dB is 85.04 units and the
//! resolution is 0.012 dB. Working in the log domain turns every threshold into an
//! addition and keeps all per-frame arithmetic in integers.

use core::fmt;
use core::ops::{Add, Sub};

/// `log2` of a frame's energy, Q8 (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Level(pub i32);

/// Q8 units per decibel of energy: 256 / (10 log10 2) = 85.04, rounded.
pub const Q8_PER_DB: i32 = 85;

/// The level of a full-scale sine, `log2(160 * 32767^2 / 2)` = 36.32 in Q8: 0 dBFS.
pub const FULL_SCALE: Level = Level(9298);

impl Level {
    /// The lowest level: a frame of digital silence.
    pub const SILENCE: Level = Level(0);

    /// A level `db` decibels relative to a full-scale sine (negative below it).
    pub const fn from_dbfs(db: i32) -> Level {
        Level(FULL_SCALE.0 + db * Q8_PER_DB)
    }

    /// Decibels relative to a full-scale sine, for people and plots (not the frame path).
    pub fn to_dbfs(self) -> f32 {
        (self.0 - FULL_SCALE.0) as f32 / 85.041_36
    }

    /// The raw Q8 value.
    pub const fn q8(self) -> i32 {
        self.0
    }

    /// The larger of two levels.
    pub const fn max(self, other: Level) -> Level {
        if self.0 >= other.0 { self } else { other }
    }

    /// The smaller of two levels.
    pub const fn min(self, other: Level) -> Level {
        if self.0 <= other.0 { self } else { other }
    }
}

/// A difference of levels, in Q8 (85 units per dB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Margin(pub i32);

impl Margin {
    /// A margin of `tenths` tenths of a decibel.
    pub const fn from_tenth_db(tenths: i32) -> Margin {
        Margin(tenths * Q8_PER_DB / 10)
    }
}

impl Add<Margin> for Level {
    type Output = Level;
    fn add(self, rhs: Margin) -> Level {
        Level(self.0.saturating_add(rhs.0))
    }
}

impl Sub<Level> for Level {
    type Output = Margin;
    fn sub(self, rhs: Level) -> Margin {
        Margin(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 - FULL_SCALE.0) * 10 / Q8_PER_DB;
        let sign = if tenths < 0 { "-" } else { "" };
        write!(f, "{sign}{}.{} dBFS", tenths.abs() / 10, tenths.abs() % 10)
    }
}

/// `round(256 * log2(1 + i/32))` for `i` in 0..=32: the fraction of a log2 in Q8 at
/// 33 evenly spaced mantissas, interpolated linearly in between (error under 0.5 units).
const LOG2_FRACTION_Q8: [u16; 33] = [
    0, 11, 22, 33, 44, 54, 63, 73, 82, 92, 100, 109, 118, 126, 134, 142, 150, 157, 165, 172, 179,
    186, 193, 200, 207, 213, 220, 226, 232, 238, 244, 250, 256,
];

/// `log2(x)` in Q8 for `x >= 1`; 0 for `x == 0` (silence gets the lowest level).
pub fn log2_q8(x: u64) -> Level {
    if x == 0 {
        return Level::SILENCE;
    }
    let msb = 63 - x.leading_zeros();
    // Put the leading one at bit 31 so the next 5 bits index the table and the 8 after
    // interpolate between two entries.
    let norm = if msb >= 31 {
        (x >> (msb - 31)) as u32
    } else {
        (x as u32) << (31 - msb)
    };
    let idx = ((norm >> 26) & 0x1f) as usize;
    let frac = ((norm >> 18) & 0xff) as i32;
    let lo = LOG2_FRACTION_Q8[idx] as i32;
    let hi = LOG2_FRACTION_Q8[idx + 1] as i32;
    Level(msb as i32 * 256 + lo + (((hi - lo) * frac) >> 8))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn log2_is_exact_on_powers_of_two_and_close_elsewhere() {
        assert_eq!(log2_q8(0), Level(0));
        assert_eq!(log2_q8(1), Level(0));
        assert_eq!(log2_q8(1 << 40), Level(40 * 256));
        for x in [3u64, 7, 1000, 123_456_789, u64::MAX, 85_899_345_920] {
            let exact = (x as f64).log2() * 256.0;
            let got = log2_q8(x).0 as f64;
            assert!((exact - got).abs() <= 1.0, "log2({x}): {got} vs {exact}");
        }
    }

    #[test]
    fn full_scale_sine_is_zero_dbfs() {
        let energy: u64 = (0..160)
            .map(|i| {
                let s = (32767.0 * (i as f64 * 2.0 * std::f64::consts::PI / 16.0).sin()) as i64;
                (s * s) as u64
            })
            .sum();
        let level = log2_q8(energy);
        assert!((level.0 - FULL_SCALE.0).abs() <= 2, "{level:?}");
        assert!(level.to_dbfs().abs() < 0.05);
    }

    #[test]
    fn margins_convert_from_decibels() {
        assert_eq!(Margin::from_tenth_db(60), Margin(510));
        assert_eq!(Level::from_dbfs(-6) - Level::from_dbfs(0), Margin(-510));
    }
}
