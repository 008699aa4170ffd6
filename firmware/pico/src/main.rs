//! yazses dongle firmware for the Raspberry Pi Pico: an INMP441 on PIO0 (I2S at 16 kHz),
//! yazses-core's detector and policy on the chip, the wire protocol over USB CDC-ACM.
//! Wiring and flashing: docs/firmware.md.
#![no_std]
#![no_main]

#[cfg(feature = "defmt")]
use defmt_rtt as _;
use embassy_executor::Spawner;
use embassy_rp::gpio::{Input, Level, Output, Pull};
use embassy_rp::peripherals::{DMA_CH0, PIO0, USB};
use embassy_rp::pio::{Pio, PioBatch};
use embassy_rp::pio_programs::i2s::{PioI2sIn, PioI2sInProgram};
use embassy_rp::{bind_interrupts, dma, pio, usb};
use panic_halt as _;
use yazses_boards::pico::{self, BOARD};
use yazses_boards::ptt::Led;
use yazses_core::dongle::Identity;
use yazses_core::frame::{FRAME_SAMPLES, SAMPLE_RATE_HZ};

bind_interrupts!(struct Irqs {
    USBCTRL_IRQ => usb::InterruptHandler<USB>;
    PIO0_IRQ_0 => pio::InterruptHandler<PIO0>;
    DMA_IRQ_0 => dma::InterruptHandler<DMA_CH0>;
});

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let board = pico::split(embassy_rp::init(Default::default()));
    #[cfg(feature = "defmt")]
    defmt::info!("yazses dongle {} on {}", env!("CARGO_PKG_VERSION"), BOARD);
    yazses_fw::init(Identity {
        board: BOARD,
        fw_version: env!("CARGO_PKG_VERSION"),
    });

    yazses_fw::spawn_dongle_tasks!(
        spawner,
        BOARD,
        usb::Driver<'static, USB>,
        usb::Driver::new(board.usb, Irqs),
        Input<'static>,
        Input::new(board.button, Pull::Up),
        Output<'static>,
        Led::new(Output::new(board.led, Level::Low), false)
    );

    let Pio {
        mut common, sm0, ..
    } = Pio::new(board.mic.pio, Irqs);
    let program = PioI2sInProgram::new(&mut common);
    let mut i2s = PioI2sIn::new(
        &mut common,
        sm0,
        board.mic.dma,
        Irqs,
        true,
        board.mic.sd,
        board.mic.sck,
        board.mic.ws,
        SAMPLE_RATE_HZ,
        16,
        2,
        &program,
    );
    // One 32-bit word per stereo sample: left in the high half (the INMP441's L/R is tied
    // low), right (nothing) in the low half.
    let mut words = [0u32; FRAME_SAMPLES];
    let mut frame = [0i16; FRAME_SAMPLES];
    loop {
        yazses_fw::CAPTURE.wait().await;
        i2s.start();
        while yazses_fw::mic_on() {
            i2s.read(&mut words).await;
            for (sample, word) in frame.iter_mut().zip(&words) {
                *sample = (*word >> 16) as i16;
            }
            yazses_fw::on_frame(&frame);
        }
        // `PioI2sIn::stop` in embassy-rp 0.10.0 enables the state machine instead of
        // disabling it; a batch turns it off.
        let mut batch = PioBatch::new();
        i2s.stop_batched(&mut batch);
        batch.execute();
    }
}
