//! The QEMU test image: see the crate docs. `harness = false`, so this is the whole program.
#![no_std]
#![no_main]

use panic_semihosting as _;

#[cortex_m_rt::entry]
fn main() -> ! {
    yazses_qemu_core::run()
}
