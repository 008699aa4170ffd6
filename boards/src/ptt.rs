//! The push-to-talk button (debounced) and what the status LED shows.
//!
//! LED meanings (also in docs/firmware.md):
//! - off: idle (the microphone is off, the chip sleeps between presses);
//! - on: capturing, nobody speaking yet;
//! - blinking at 5 Hz: capturing, speech heard;
//! - two short flashes every 2 s: no host (USB not configured or the port closed).

use embassy_time::{Duration, Instant, Timer};
use embedded_hal::digital::{InputPin, OutputPin};
use embedded_hal_async::digital::Wait;

/// A change of the button, after debouncing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// Pressed down.
    Pressed,
    /// Let go.
    Released,
}

/// How long a level must hold before it counts.
pub const DEBOUNCE: Duration = Duration::from_millis(20);

/// A push-button that pulls its pin to ground when pressed (the board's pull-up keeps it
/// high otherwise).
pub struct Button<P> {
    pin: P,
    pressed: bool,
}

impl<P: InputPin + Wait> Button<P> {
    /// Starts released.
    pub fn new(pin: P) -> Button<P> {
        Button {
            pin,
            pressed: false,
        }
    }

    /// Waits for the next press or release: [`DEBOUNCE`] after an edge it reads the
    /// level, and reports it if it differs from the last one reported. Contact bounce
    /// within that window is absorbed; a glitch shorter than it is not a press.
    pub async fn changed(&mut self) -> Edge {
        loop {
            // A pin error is treated as no change: the next edge tries again.
            let _ = self.pin.wait_for_any_edge().await;
            Timer::after(DEBOUNCE).await;
            let down = self.pin.is_low().unwrap_or(self.pressed);
            if down != self.pressed {
                self.pressed = down;
                return if down { Edge::Pressed } else { Edge::Released };
            }
        }
    }
}

/// What the dongle is doing, for the LED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No host on USB.
    NoHost,
    /// Waiting for a press or a host `Start`.
    Idle,
    /// Capturing; nobody speaking yet.
    Listening,
    /// Capturing; speech heard.
    Speech,
}

/// Whether the LED is lit at `now` in `status`. A pure function of the time, so a task
/// that calls it on a ticker draws every pattern.
pub fn led_lit(status: Status, now: Instant) -> bool {
    let ms = now.as_millis();
    match status {
        Status::Idle => false,
        Status::Listening => true,
        Status::Speech => (ms / 100).is_multiple_of(2),
        Status::NoHost => matches!(ms % 2000, 0..100 | 200..300),
    }
}

/// The status LED, lit high or low depending on the board.
pub struct Led<P> {
    pin: P,
    active_low: bool,
}

impl<P: OutputPin> Led<P> {
    /// An LED on `pin`; `active_low` when the pin sinks the LED's current.
    pub fn new(pin: P, active_low: bool) -> Led<P> {
        let mut led = Led { pin, active_low };
        led.set(false);
        led
    }

    /// Lights it or not.
    pub fn set(&mut self, lit: bool) {
        // An LED that cannot be driven is not worth stopping the dongle for.
        let _ = if lit != self.active_low {
            self.pin.set_high()
        } else {
            self.pin.set_low()
        };
    }
}
