//! The dongle firmware's board-independent part.
//!
//! One [`Device`] (the dongle's whole behaviour, a pure state machine in `yazses-boards`)
//! is shared by the tasks a board app spawns:
//!
//! - the microphone loop (board-specific) waits on [`CAPTURE`], then feeds frames to
//!   [`on_frame`] while [`mic_on`], and turns the microphone off after;
//! - [`usb_writer`] drains the outgoing frames into CDC-ACM packets, [`usb_reader`]
//!   decodes the host's messages, and the USB device's handler reports the bus being
//!   suspended and resumed;
//! - [`button_loop`] turns debounced presses into captures, [`led_loop`] shows the
//!   status, [`heartbeat_loop`] tells the host the dongle is alive while idle.
//!
//! Every task runs on one thread-mode executor, which sleeps (WFE) when no task is ready.
//! While the bus is suspended no timer runs (the LED and the heartbeat wait for a change),
//! so only the bus's resume, a button edge or a reset wakes the chip.
#![no_std]

use core::cell::{Cell, RefCell};

use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::pipe::Pipe;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Instant, Ticker, Timer};
use embassy_usb::class::cdc_acm::{CdcAcmClass, Receiver, Sender, State};
use embassy_usb::driver::Driver;
use embassy_usb::{Handler, UsbDevice};
use embedded_hal::digital::{InputPin, OutputPin};
use embedded_hal_async::digital::Wait;
use static_cell::StaticCell;
use yazses_boards::device::{Device, Event, Outputs};
use yazses_boards::ptt::{Button, Edge, Led, Status, led_lit};
use yazses_core::dongle::Identity;
use yazses_core::frame::Frame;
use yazses_core::wire::{self, DeviceMessage, FrameReader, HostMessage, MAX_FRAME};

/// Set when the microphone must start: the microphone loop turns it on.
pub static CAPTURE: Signal<CriticalSectionRawMutex, ()> = Signal::new();

static DEVICE: Mutex<CriticalSectionRawMutex, RefCell<Option<Device>>> =
    Mutex::new(RefCell::new(None));
/// Encoded frames waiting for USB: about 12 audio frames (120 ms) of slack.
static OUTBOX: Pipe<CriticalSectionRawMutex, 4096> = Pipe::new();
/// Messages dropped because the host was not keeping up.
static DROPPED: Mutex<CriticalSectionRawMutex, Cell<u32>> = Mutex::new(Cell::new(0));
static LED_WAKE: Signal<CriticalSectionRawMutex, ()> = Signal::new();
static HEARTBEAT_WAKE: Signal<CriticalSectionRawMutex, ()> = Signal::new();

/// Sets the dongle up; call once, before spawning the tasks.
pub fn init(identity: Identity) {
    DEVICE.lock(|d| *d.borrow_mut() = Some(Device::new(identity)));
}

/// What the hardware should be doing now.
fn outputs() -> Outputs {
    DEVICE.lock(|d| {
        d.borrow().as_ref().map_or(
            Outputs {
                mic: false,
                led: None,
                heartbeat: false,
            },
            Device::outputs,
        )
    })
}

/// Feeds `event` to the device, queues what it sends, and wakes whatever its new outputs
/// concern.
fn on_event(event: Event<'_>) {
    let changed = DEVICE.lock(|d| {
        let mut d = d.borrow_mut();
        let d = d.as_mut()?;
        let before = d.outputs();
        Some((before, d.on(event, send)))
    });
    let Some((before, after)) = changed else {
        return;
    };
    if after.mic && !before.mic {
        CAPTURE.signal(());
    }
    if after.led != before.led {
        LED_WAKE.signal(());
    }
    if after.heartbeat != before.heartbeat {
        HEARTBEAT_WAKE.signal(());
    }
}

/// Whether the microphone must run (a capture is on and the bus is awake).
pub fn mic_on() -> bool {
    outputs().mic
}

/// One frame from the microphone.
pub fn on_frame(frame: &Frame) {
    on_event(Event::Frame(frame));
}

/// Tells the device when the host suspends and resumes the bus.
struct PowerHandler;

impl Handler for PowerHandler {
    fn suspended(&mut self, suspended: bool) {
        on_event(if suspended {
            Event::Suspend
        } else {
            Event::Resume
        });
    }
}

/// The USB device configuration: yazses' VID:PID, names the host's `yazses devices` shows.
pub fn usb_config(board: &'static str) -> embassy_usb::Config<'static> {
    let mut config = embassy_usb::Config::new(wire::USB_VID, wire::USB_PID);
    config.manufacturer = Some("yazses");
    config.product = Some("yazses dongle");
    config.serial_number = Some(board);
    config.max_power = 100;
    config.max_packet_size_0 = 64;
    config
}

/// The USB device with its one CDC-ACM function, split into the device (to run), the
/// sender and the receiver. Call once: the descriptors and the class state are statics.
pub fn usb_link<D: Driver<'static>>(
    driver: D,
    board: &'static str,
) -> (
    UsbDevice<'static, D>,
    Sender<'static, D>,
    Receiver<'static, D>,
) {
    static CONFIG_DESCRIPTOR: StaticCell<[u8; 256]> = StaticCell::new();
    static BOS_DESCRIPTOR: StaticCell<[u8; 64]> = StaticCell::new();
    static CONTROL: StaticCell<[u8; 64]> = StaticCell::new();
    static CDC: StaticCell<State<'static>> = StaticCell::new();
    static POWER: StaticCell<PowerHandler> = StaticCell::new();
    let mut builder = embassy_usb::Builder::new(
        driver,
        usb_config(board),
        CONFIG_DESCRIPTOR.init([0; 256]),
        BOS_DESCRIPTOR.init([0; 64]),
        &mut [],
        CONTROL.init([0; 64]),
    );
    builder.handler(POWER.init(PowerHandler));
    let class = CdcAcmClass::new(&mut builder, CDC.init(State::new()), 64);
    let (tx, rx) = class.split();
    (builder.build(), tx, rx)
}

/// Defines the board app's tasks (embassy tasks cannot be generic) and spawns them:
/// the USB device, the link's writer and reader, the button, the LED and the heartbeat.
///
/// `spawn_dongle_tasks!(spawner, BOARD, DriverType, driver, ButtonPinType, button_pin,
/// LedPinType, led)`: the USB driver, a pin that implements `InputPin + Wait` for the
/// button, and a `Led` on a pin that implements `OutputPin`, each with its type.
#[macro_export]
macro_rules! spawn_dongle_tasks {
    ($spawner:expr, $board:expr, $driver_ty:ty, $driver:expr, $button_ty:ty, $button:expr, $led_ty:ty, $led:expr) => {{
        #[embassy_executor::task]
        async fn usb_device(mut device: embassy_usb::UsbDevice<'static, $driver_ty>) -> ! {
            device.run().await
        }
        #[embassy_executor::task]
        async fn usb_writer(tx: embassy_usb::class::cdc_acm::Sender<'static, $driver_ty>) -> ! {
            $crate::usb_writer(tx).await
        }
        #[embassy_executor::task]
        async fn usb_reader(rx: embassy_usb::class::cdc_acm::Receiver<'static, $driver_ty>) -> ! {
            $crate::usb_reader(rx).await
        }
        #[embassy_executor::task]
        async fn button(button: yazses_boards::ptt::Button<$button_ty>) -> ! {
            $crate::button_loop(button).await
        }
        #[embassy_executor::task]
        async fn led(led: yazses_boards::ptt::Led<$led_ty>) -> ! {
            $crate::led_loop(led).await
        }
        #[embassy_executor::task]
        async fn heartbeat() -> ! {
            $crate::heartbeat_loop().await
        }
        let (device, tx, rx) = $crate::usb_link($driver, $board);
        $spawner.spawn(usb_device(device).expect("one USB device task"));
        $spawner.spawn(usb_writer(tx).expect("one writer task"));
        $spawner.spawn(usb_reader(rx).expect("one reader task"));
        $spawner.spawn(button(yazses_boards::ptt::Button::new($button)).expect("one button task"));
        $spawner.spawn(led($led).expect("one LED task"));
        $spawner.spawn(heartbeat().expect("one heartbeat task"));
    }};
}

/// Queues one message for the host; drops it (and counts it) when the host is not
/// keeping up, so the microphone never waits on USB. A dropped `Audio` frame shows up on
/// the host as a gap in the sequence numbers.
fn send(message: DeviceMessage<'_>) {
    let mut frame = [0u8; MAX_FRAME];
    let Ok(n) = wire::encode(&message, &mut frame) else {
        return;
    };
    if OUTBOX.free_capacity() < n {
        DROPPED.lock(|d| d.set(d.get().wrapping_add(1)));
        return;
    }
    // One executor thread writes; the capacity checked above is still there.
    let mut rest = &frame[..n];
    while !rest.is_empty() {
        match OUTBOX.try_write(rest) {
            Ok(written) => rest = &rest[written..],
            Err(_) => break,
        }
    }
}

/// What the LED shows now; `None` while the bus sleeps.
pub fn status() -> Option<Status> {
    outputs().led
}

/// Moves queued frames to the host, a packet at a time; ends a transfer on a short
/// packet, as CDC-ACM hosts expect.
pub async fn usb_writer<'d, D: Driver<'d>>(mut tx: Sender<'d, D>) -> ! {
    let mut buf = [0u8; 64];
    loop {
        tx.wait_connection().await;
        OUTBOX.clear();
        on_event(Event::Host(true));
        let max = (tx.max_packet_size() as usize).min(buf.len());
        loop {
            let n = OUTBOX.read(&mut buf[..max]).await;
            if tx.write_packet(&buf[..n]).await.is_err() {
                break;
            }
            if n == max && OUTBOX.is_empty() && tx.write_packet(&[]).await.is_err() {
                break;
            }
        }
        // The host is gone: the device ends any capture, so the microphone goes off.
        on_event(Event::Host(false));
    }
}

/// Reads the host's messages and hands them to the dongle.
pub async fn usb_reader<'d, D: Driver<'d>>(mut rx: Receiver<'d, D>) -> ! {
    let mut reader = FrameReader::new();
    let mut buf = [0u8; 64];
    loop {
        rx.wait_connection().await;
        reader.resync();
        while let Ok(n) = rx.read_packet(&mut buf).await {
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                let (used, message) = reader.read::<HostMessage>(rest);
                rest = &rest[used..];
                if let Some(Ok(message)) = message {
                    on_event(Event::Command(message));
                }
            }
        }
    }
}

/// Push-to-talk: a press starts a capture, a release ends it.
pub async fn button_loop<P: InputPin + Wait>(mut button: Button<P>) -> ! {
    loop {
        let edge = button.changed().await;
        on_event(Event::Button(edge == Edge::Pressed));
    }
}

/// Draws the status on the LED; while idle or asleep it stays dark and waits for a change.
pub async fn led_loop<P: OutputPin>(mut led: Led<P>) -> ! {
    let mut ticker = Ticker::every(Duration::from_millis(50));
    loop {
        match status() {
            Some(Status::Idle) | None => {
                led.set(false);
                LED_WAKE.wait().await;
                ticker.reset();
            }
            Some(status) => {
                led.set(led_lit(status, Instant::now()));
                ticker.next().await;
            }
        }
    }
}

/// A heartbeat every second while a host is connected, the bus awake and nothing being
/// captured; otherwise no timer at all.
pub async fn heartbeat_loop() -> ! {
    loop {
        if !outputs().heartbeat {
            HEARTBEAT_WAKE.wait().await;
            continue;
        }
        Timer::after(Duration::from_secs(1)).await;
        if outputs().heartbeat {
            send(DeviceMessage::Heartbeat {
                uptime_ms: Instant::now().as_millis() as u32,
            });
        }
    }
}
