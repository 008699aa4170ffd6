//! Raspberry Pi Pico (RP2040) with an INMP441 I2S microphone module.
//!
//! | INMP441 | Pico            | why                                             |
//! |---------|-----------------|-------------------------------------------------|
//! | SD      | GP9             | data in (PIO in pin)                            |
//! | SCK     | GP10            | bit clock (PIO side-set, base)                  |
//! | WS      | GP11            | word select (PIO side-set, base + 1: adjacent)  |
//! | L/R     | GND             | the left slot carries the samples               |
//! | VDD/GND | 3V3(OUT) / GND  |                                                 |
//!
//! Push-to-talk button between GP15 and GND (internal pull-up); the on-board LED (GP25)
//! is the status LED, lit high.

use embassy_rp::Peri;
use embassy_rp::peripherals::{DMA_CH0, PIN_9, PIN_10, PIN_11, PIN_15, PIN_25, PIO0, USB};

/// The board's name in `Hello`.
pub const BOARD: &str = "rp2040-pico";

/// The I2S microphone's PIO block, DMA channel and pins.
pub struct Mic {
    /// PIO block 0 runs the I2S receiver.
    pub pio: Peri<'static, PIO0>,
    /// Moves samples from the PIO FIFO to RAM.
    pub dma: Peri<'static, DMA_CH0>,
    /// SD.
    pub sd: Peri<'static, PIN_9>,
    /// SCK.
    pub sck: Peri<'static, PIN_10>,
    /// WS.
    pub ws: Peri<'static, PIN_11>,
}

/// Everything the dongle uses on this board.
pub struct Board {
    /// The microphone.
    pub mic: Mic,
    /// The push-to-talk button (to GND).
    pub button: Peri<'static, PIN_15>,
    /// The status LED.
    pub led: Peri<'static, PIN_25>,
    /// USB, for CDC-ACM.
    pub usb: Peri<'static, USB>,
}

/// Splits the chip's peripherals into the dongle's.
pub fn split(p: embassy_rp::Peripherals) -> Board {
    Board {
        mic: Mic {
            pio: p.PIO0,
            dma: p.DMA_CH0,
            sd: p.PIN_9,
            sck: p.PIN_10,
            ws: p.PIN_11,
        },
        button: p.PIN_15,
        led: p.PIN_25,
        usb: p.USB,
    }
}
