//! Seeed Studio XIAO nRF52840 Sense: the on-board PDM microphone (MSM261D3526H1CPM).
//!
//! | signal          | pin   | notes                                        |
//! |-----------------|-------|----------------------------------------------|
//! | PDM clock       | P1.00 |                                              |
//! | PDM data        | P0.16 |                                              |
//! | mic power       | P1.10 | driven high only while capturing             |
//! | status LED      | P0.26 | the red user LED, lit low                    |
//! | push-to-talk    | P0.03 | pad D1, button to GND (internal pull-up)     |

use embassy_nrf::Peri;
use embassy_nrf::peripherals::{P0_03, P0_16, P0_26, P1_00, P1_10, PDM, USBD};

/// The board's name in `Hello`.
pub const BOARD: &str = "nrf52840-xiao-sense";

/// The PDM microphone.
pub struct Mic {
    /// The PDM peripheral.
    pub pdm: Peri<'static, PDM>,
    /// Clock out.
    pub clk: Peri<'static, P1_00>,
    /// Data in.
    pub din: Peri<'static, P0_16>,
    /// The microphone's power switch.
    pub power: Peri<'static, P1_10>,
}

/// Everything the dongle uses on this board.
pub struct Board {
    /// The microphone.
    pub mic: Mic,
    /// The push-to-talk button (to GND).
    pub button: Peri<'static, P0_03>,
    /// The status LED.
    pub led: Peri<'static, P0_26>,
    /// USB, for CDC-ACM.
    pub usb: Peri<'static, USBD>,
}

/// Splits the chip's peripherals into the dongle's.
pub fn split(p: embassy_nrf::Peripherals) -> Board {
    Board {
        mic: Mic {
            pdm: p.PDM,
            clk: p.P1_00,
            din: p.P0_16,
            power: p.P1_10,
        },
        button: p.P0_03,
        led: p.P0_26,
        usb: p.USBD,
    }
}
