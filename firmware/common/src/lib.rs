//! The dongle firmware's board-independent part.
//!
//! One [`Dongle`] (yazses-core's capture-and-signal state machine) is shared by the
//! tasks a board app spawns:
//!
//! - the microphone loop (board-specific) waits on [`CAPTURE`], then feeds frames to
//!   [`on_frame`] while [`is_capturing`], and turns the microphone off after;
//! - [`usb_writer`] drains the outgoing frames into CDC-ACM packets, [`usb_reader`]
//!   decodes the host's messages;
//! - [`button_loop`] turns debounced presses into captures, [`led_loop`] shows the
//!   status, [`heartbeat_loop`] tells the host the dongle is alive while idle.
//!
//! Every task runs on one thread-mode executor, which sleeps (WFE) when no task is ready:
//! between presses the chip waits for the button, USB or the heartbeat timer.
#![no_std]

use core::cell::{Cell, RefCell};

use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::pipe::Pipe;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Instant, Ticker, Timer};
use embassy_usb::UsbDevice;
use embassy_usb::class::cdc_acm::{CdcAcmClass, Receiver, Sender, State};
use embassy_usb::driver::Driver;
use embedded_hal::digital::{InputPin, OutputPin};
use embedded_hal_async::digital::Wait;
use static_cell::StaticCell;
use yazses_boards::ptt::{Button, Edge, Led, Status, led_lit};
use yazses_core::dongle::{Dongle, Identity};
use yazses_core::frame::Frame;
use yazses_core::wire::{self, DeviceMessage, FrameReader, HostMessage, MAX_FRAME};

/// Set when a capture starts: the microphone loop turns the microphone on.
pub static CAPTURE: Signal<CriticalSectionRawMutex, ()> = Signal::new();

static DONGLE: Mutex<CriticalSectionRawMutex, RefCell<Option<Dongle>>> =
    Mutex::new(RefCell::new(None));
/// Encoded frames waiting for USB: about 12 audio frames (120 ms) of slack.
static OUTBOX: Pipe<CriticalSectionRawMutex, 4096> = Pipe::new();
static STATE: Mutex<CriticalSectionRawMutex, Cell<Flags>> = Mutex::new(Cell::new(Flags {
    host: false,
    speech: false,
    dropped: 0,
}));
static STATUS_CHANGED: Signal<CriticalSectionRawMutex, ()> = Signal::new();

#[derive(Clone, Copy)]
struct Flags {
    host: bool,
    speech: bool,
    dropped: u32,
}

fn update(f: impl FnOnce(&mut Flags)) {
    STATE.lock(|s| {
        let mut flags = s.get();
        f(&mut flags);
        s.set(flags);
    });
    STATUS_CHANGED.signal(());
}

/// Sets the dongle up; call once, before spawning the tasks.
pub fn init(identity: Identity) {
    DONGLE.lock(|d| *d.borrow_mut() = Some(Dongle::new(identity)));
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
    let mut builder = embassy_usb::Builder::new(
        driver,
        usb_config(board),
        CONFIG_DESCRIPTOR.init([0; 256]),
        BOS_DESCRIPTOR.init([0; 64]),
        &mut [],
        CONTROL.init([0; 64]),
    );
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
    match message {
        DeviceMessage::SpeechStart { .. } => update(|f| f.speech = true),
        DeviceMessage::EndOfSpeech { .. } => update(|f| f.speech = false),
        _ => {}
    }
    let mut frame = [0u8; MAX_FRAME];
    let Ok(n) = wire::encode(&message, &mut frame) else {
        return;
    };
    if OUTBOX.free_capacity() < n {
        update(|f| f.dropped = f.dropped.wrapping_add(1));
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

fn with_dongle(f: impl FnOnce(&mut Dongle)) {
    DONGLE.lock(|d| {
        if let Some(dongle) = d.borrow_mut().as_mut() {
            f(dongle);
        }
    });
}

/// Whether a capture is running.
pub fn is_capturing() -> bool {
    DONGLE.lock(|d| d.borrow().as_ref().is_some_and(Dongle::is_capturing))
}

fn after_change(was_capturing: bool) {
    let now = is_capturing();
    if now && !was_capturing {
        CAPTURE.signal(());
    }
    if now != was_capturing {
        STATUS_CHANGED.signal(());
    }
}

/// One frame from the microphone.
pub fn on_frame(frame: &Frame) {
    with_dongle(|d| d.on_frame(frame, send));
    if !is_capturing() {
        STATUS_CHANGED.signal(());
    }
}

/// A message from the host.
pub fn on_host(message: HostMessage) {
    let was = is_capturing();
    with_dongle(|d| d.on_host(message, send));
    after_change(was);
}

/// The button changed.
pub fn on_button(pressed: bool) {
    let was = is_capturing();
    with_dongle(|d| d.on_button(pressed, send));
    after_change(was);
}

/// What the LED shows now.
pub fn status() -> Status {
    let flags = STATE.lock(Cell::get);
    if !flags.host {
        Status::NoHost
    } else if !is_capturing() {
        Status::Idle
    } else if flags.speech {
        Status::Speech
    } else {
        Status::Listening
    }
}

/// Moves queued frames to the host, a packet at a time; ends a transfer on a short
/// packet, as CDC-ACM hosts expect.
pub async fn usb_writer<'d, D: Driver<'d>>(mut tx: Sender<'d, D>) -> ! {
    let mut buf = [0u8; 64];
    loop {
        tx.wait_connection().await;
        OUTBOX.clear();
        update(|f| f.host = true);
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
        update(|f| f.host = false);
        // The host is gone: end any capture so the microphone goes off.
        on_host(HostMessage::Stop);
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
                    on_host(message);
                }
            }
        }
    }
}

/// Push-to-talk: a press starts a capture, a release ends it.
pub async fn button_loop<P: InputPin + Wait>(mut button: Button<P>) -> ! {
    loop {
        let edge = button.changed().await;
        on_button(edge == Edge::Pressed);
    }
}

/// Draws the status on the LED; while idle it stays dark and waits for a change.
pub async fn led_loop<P: OutputPin>(mut led: Led<P>) -> ! {
    let mut ticker = Ticker::every(Duration::from_millis(50));
    loop {
        let status = status();
        led.set(led_lit(status, Instant::now()));
        if status == Status::Idle {
            STATUS_CHANGED.wait().await;
            ticker.reset();
        } else {
            ticker.next().await;
        }
    }
}

/// A heartbeat every second while a host is connected and nothing is being captured.
pub async fn heartbeat_loop() -> ! {
    loop {
        Timer::after(Duration::from_secs(1)).await;
        let host = STATE.lock(|s| s.get().host);
        if host && !is_capturing() {
            send(DeviceMessage::Heartbeat {
                uptime_ms: Instant::now().as_millis() as u32,
            });
        }
    }
}
