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
use embassy_usb::UsbDevice;
use embassy_usb::class::cdc_acm::{CdcAcmClass, State};
use panic_halt as _;
use static_cell::StaticCell;
use yazses_boards::ptt::{Button, Led};
use yazses_boards::xiao_nrf52840_sense::{self as board_map, BOARD};
use yazses_core::dongle::Identity;
use yazses_core::frame::FRAME_SAMPLES;

bind_interrupts!(struct Irqs {
    USBD => usb::InterruptHandler<USBD>;
    CLOCK_POWER => usb::vbus_detect::InterruptHandler;
    PDM => pdm::InterruptHandler<PDM>;
});

type UsbDriver = usb::Driver<'static, HardwareVbusDetect>;

#[embassy_executor::task]
async fn usb_device(mut device: UsbDevice<'static, UsbDriver>) -> ! {
    device.run().await
}

#[embassy_executor::task]
async fn usb_writer(tx: embassy_usb::class::cdc_acm::Sender<'static, UsbDriver>) -> ! {
    yazses_fw::usb_writer(tx).await
}

#[embassy_executor::task]
async fn usb_reader(rx: embassy_usb::class::cdc_acm::Receiver<'static, UsbDriver>) -> ! {
    yazses_fw::usb_reader(rx).await
}

#[embassy_executor::task]
async fn button(button: Button<Input<'static>>) -> ! {
    yazses_fw::button_loop(button).await
}

#[embassy_executor::task]
async fn led(led: Led<Output<'static>>) -> ! {
    yazses_fw::led_loop(led).await
}

#[embassy_executor::task]
async fn heartbeat() -> ! {
    yazses_fw::heartbeat_loop().await
}

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

    static CONFIG_DESCRIPTOR: StaticCell<[u8; 256]> = StaticCell::new();
    static BOS_DESCRIPTOR: StaticCell<[u8; 64]> = StaticCell::new();
    static CONTROL: StaticCell<[u8; 64]> = StaticCell::new();
    static CDC: StaticCell<State> = StaticCell::new();
    let mut builder = embassy_usb::Builder::new(
        usb::Driver::new(board.usb, Irqs, HardwareVbusDetect::new(Irqs)),
        yazses_fw::usb_config(BOARD),
        CONFIG_DESCRIPTOR.init([0; 256]),
        BOS_DESCRIPTOR.init([0; 64]),
        &mut [],
        CONTROL.init([0; 64]),
    );
    let class = CdcAcmClass::new(&mut builder, CDC.init(State::new()), 64);
    let (tx, rx) = class.split();
    spawner.spawn(usb_device(builder.build()).expect("one USB device task"));
    spawner.spawn(usb_writer(tx).expect("one writer task"));
    spawner.spawn(usb_reader(rx).expect("one reader task"));
    spawner
        .spawn(button(Button::new(Input::new(board.button, Pull::Up))).expect("one button task"));
    spawner.spawn(
        led(Led::new(
            Output::new(board.led, Level::High, OutputDrive::Standard),
            true,
        ))
        .expect("one LED task"),
    );
    spawner.spawn(heartbeat().expect("one heartbeat task"));

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
                if yazses_fw::is_capturing() {
                    SamplerState::Sampled
                } else {
                    SamplerState::Stopped
                }
            })
            .await;
        mic_power.set_low();
    }
}
