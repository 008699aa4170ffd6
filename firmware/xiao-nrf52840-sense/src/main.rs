//! yazses dongle firmware for the Seeed XIAO nRF52840 Sense: the on-board PDM microphone
//! at 16 kHz (1.28 MHz clock, ratio 80), yazses-core's detector and policy on the chip,
//! the wire protocol over USB CDC-ACM. Pins and flashing: docs/firmware.md.
#![no_std]
#![no_main]

#[cfg(feature = "defmt")]
use defmt_rtt as _;
use embassy_executor::Spawner;
use embassy_nrf::config::HfclkSource;
use embassy_nrf::gpio::{Input, Level, Output, OutputDrive, Pull};
use embassy_nrf::pdm::{self, Frequency, Pdm, Ratio, SamplerState};
use embassy_nrf::peripherals::{PDM, USBD};
use embassy_nrf::usb::vbus_detect::HardwareVbusDetect;
use embassy_nrf::{bind_interrupts, usb};
use panic_halt as _;
use yazses_boards::ptt::Led;
use yazses_boards::xiao_nrf52840_sense::{self as board_map, BOARD};
use yazses_core::dongle::Identity;
use yazses_core::frame::FRAME_SAMPLES;

bind_interrupts!(struct Irqs {
    USBD => usb::InterruptHandler<USBD>;
    CLOCK_POWER => usb::vbus_detect::InterruptHandler;
    PDM => pdm::InterruptHandler<PDM>;
});

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let mut config = embassy_nrf::config::Config::default();
    // USB needs the crystal.
    config.hfclk_source = HfclkSource::ExternalXtal;
    let board = board_map::split(embassy_nrf::init(config));
    #[cfg(feature = "defmt")]
    defmt::info!("yazses dongle {} on {}", env!("CARGO_PKG_VERSION"), BOARD);
    yazses_fw::init(Identity {
        board: BOARD,
        fw_version: env!("CARGO_PKG_VERSION"),
    });

    yazses_fw::spawn_dongle_tasks!(
        spawner,
        BOARD,
        usb::Driver<'static, HardwareVbusDetect>,
        usb::Driver::new(board.usb, Irqs, HardwareVbusDetect::new(Irqs)),
        Input<'static>,
        Input::new(board.button, Pull::Up),
        Output<'static>,
        Led::new(
            Output::new(board.led, Level::High, OutputDrive::Standard),
            true
        )
    );

    let mut mic_power = Output::new(board.mic.power, Level::Low, OutputDrive::HighDrive);
    let pdm_config = pdm::Config {
        frequency: Frequency::_1280k, // 1.28 MHz / 80 = 16 kHz
        ratio: Ratio::Ratio80,
        ..Default::default()
    };
    let mut mic = Pdm::new(
        board.mic.pdm,
        Irqs,
        board.mic.clk,
        board.mic.din,
        pdm_config,
    );
    let mut buffers = [[0i16; FRAME_SAMPLES]; 2];
    loop {
        yazses_fw::CAPTURE.wait().await;
        mic_power.set_high();
        // Double-buffered: the chip fills one frame while the core classifies the other.
        let _ = mic
            .run_task_sampler(&mut buffers, |frame| {
                yazses_fw::on_frame(frame);
                if yazses_fw::mic_on() {
                    SamplerState::Sampled
                } else {
                    SamplerState::Stopped
                }
            })
            .await;
        mic_power.set_low();
    }
}
