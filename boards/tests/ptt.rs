//! The push-to-talk logic on the host: a fake pin the test moves, and embassy-time's mock
//! driver as the clock, stepping the button's future by hand.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use embassy_time::{Duration, Instant, MockDriver};
use embedded_hal::digital::{ErrorType, InputPin, OutputPin};
use embedded_hal_async::digital::Wait;
use yazses_boards::ptt::{Button, DEBOUNCE, Edge, Led, Status, led_lit};

/// A pin with a level the test sets; any change counts as an edge.
#[derive(Clone, Default)]
struct FakePin {
    high: Rc<Cell<bool>>,
    edges: Rc<Cell<u32>>,
}

impl FakePin {
    fn set(&self, high: bool) {
        if self.high.get() != high {
            self.high.set(high);
            self.edges.set(self.edges.get() + 1);
        }
    }
}

impl ErrorType for FakePin {
    type Error = core::convert::Infallible;
}

impl InputPin for FakePin {
    fn is_high(&mut self) -> Result<bool, Self::Error> {
        Ok(self.high.get())
    }
    fn is_low(&mut self) -> Result<bool, Self::Error> {
        Ok(!self.high.get())
    }
}

impl OutputPin for FakePin {
    fn set_low(&mut self) -> Result<(), Self::Error> {
        self.high.set(false);
        Ok(())
    }
    fn set_high(&mut self) -> Result<(), Self::Error> {
        self.high.set(true);
        Ok(())
    }
}

/// Resolves once an edge happened since it was made.
struct EdgeFuture {
    edges: Rc<Cell<u32>>,
    seen: u32,
}

impl Future for EdgeFuture {
    type Output = Result<(), core::convert::Infallible>;
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        if self.edges.get() != self.seen {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }
}

impl Wait for FakePin {
    async fn wait_for_high(&mut self) -> Result<(), Self::Error> {
        unimplemented!("the button waits for any edge")
    }
    async fn wait_for_low(&mut self) -> Result<(), Self::Error> {
        unimplemented!("the button waits for any edge")
    }
    async fn wait_for_rising_edge(&mut self) -> Result<(), Self::Error> {
        unimplemented!("the button waits for any edge")
    }
    async fn wait_for_falling_edge(&mut self) -> Result<(), Self::Error> {
        unimplemented!("the button waits for any edge")
    }
    async fn wait_for_any_edge(&mut self) -> Result<(), Self::Error> {
        EdgeFuture {
            edges: self.edges.clone(),
            seen: self.edges.get(),
        }
        .await
    }
}

/// A timeline: `(at_ms, level_high)` changes of the pin; returns the edges the button
/// reported and when (ms), polling every millisecond of mock time.
fn run(timeline: &[(u64, bool)], until_ms: u64) -> Vec<(u64, Edge)> {
    MockDriver::get().reset();
    let pin = FakePin::default();
    pin.set(true); // released: pulled up
    let mut button = Button::new(pin.clone());
    let mut events = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    let mut t = 0;
    while t <= until_ms {
        let mut edge = pin!(button.changed());
        loop {
            for &(at, high) in timeline {
                if at == t {
                    pin.set(high);
                }
            }
            if let Poll::Ready(e) = edge.as_mut().poll(&mut cx) {
                events.push((Instant::now().as_millis(), e));
                break;
            }
            if t >= until_ms {
                return events;
            }
            MockDriver::get().advance(Duration::from_millis(1));
            t += 1;
        }
    }
    events
}

// The mock clock is global: one test function runs every timeline in turn.
#[test]
fn push_to_talk_timelines() {
    // A clean press at 100 ms, release at 1000 ms.
    assert_eq!(
        run(&[(100, false), (1000, true)], 1500),
        vec![(120, Edge::Pressed), (1020, Edge::Released)]
    );
    // Contact bounce for up to 9 ms on both edges: one press and one release, each
    // reported 20 ms after its first edge with the level that holds by then.
    assert_eq!(
        run(
            &[
                (100, false),
                (102, true),
                (104, false),
                (108, true),
                (109, false),
                (1000, true),
                (1003, false),
                (1005, true),
            ],
            1500
        ),
        vec![(120, Edge::Pressed), (1020, Edge::Released)]
    );
    // A 5 ms glitch is not a press.
    assert_eq!(run(&[(100, false), (105, true)], 500), vec![]);
    assert_eq!(DEBOUNCE, Duration::from_millis(20));
}

#[test]
fn the_led_says_what_the_dongle_does() {
    let at = |ms| Instant::from_millis(ms);
    assert!(!led_lit(Status::Idle, at(0)));
    assert!(led_lit(Status::Listening, at(12_345)));
    // Speech: 5 Hz.
    let lit: Vec<bool> = (0..4)
        .map(|i| led_lit(Status::Speech, at(i * 100)))
        .collect();
    assert_eq!(lit, [true, false, true, false]);
    // No host: two 100 ms flashes every 2 s.
    let flashes = (0..2000)
        .filter(|&ms| led_lit(Status::NoHost, at(ms)))
        .count();
    assert_eq!(flashes, 200);
    assert!(led_lit(Status::NoHost, at(2050)) && !led_lit(Status::NoHost, at(2150)));

    let pin = FakePin::default();
    let mut led = Led::new(pin.clone(), true);
    assert!(pin.high.get(), "an active-low LED starts dark: pin high");
    led.set(true);
    assert!(!pin.high.get());
}
