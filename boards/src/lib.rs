//! The dongle boards: which pin does what (modules `pico` and `xiao_nrf52840_sense`, behind
//! their features), and the push-to-talk button and status LED logic ([`ptt`]), written
//! against `embedded-hal` traits and `embassy-time` so it runs unchanged on the host in
//! tests, with fake pins and a clock the test moves.
#![no_std]

#[cfg(feature = "pico")]
pub mod pico;
pub mod ptt;
#[cfg(feature = "xiao-nrf52840-sense")]
pub mod xiao_nrf52840_sense;
