//! The dongle boards: which pin does what (modules `pico` and `xiao_nrf52840_sense`, behind
//! their features), the push-to-talk button and status LED logic ([`ptt`]), written
//! against `embedded-hal` traits and `embassy-time` so it runs unchanged on the host in
//! tests, with fake pins and a clock the test moves, and the whole dongle's behaviour
//! (USB suspend and resume, the host's port, captures) as a pure state machine
//! ([`device`]) that both boards' firmware drives.
#![no_std]

pub mod device;
#[cfg(feature = "pico")]
pub mod pico;
pub mod ptt;
#[cfg(feature = "xiao-nrf52840-sense")]
pub mod xiao_nrf52840_sense;
