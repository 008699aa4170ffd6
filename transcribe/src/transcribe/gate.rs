//! How many transcriptions run at once: a first-come, first-served gate with a fixed
//! number of numbered places. Each place is one whisper state (KV caches and compute
//! buffers, tens to hundreds of MB) on one worker thread of its own, so the gate is what
//! bounds the memory of calls made at the same time; the rest wait their turn,
//! cancellably, and are told how many are ahead.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A call waiting for a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Transcriptions running now.
    pub running: usize,
    /// Calls waiting ahead of this one.
    pub ahead: usize,
}

#[derive(Debug, Default)]
struct Queue {
    /// The places no call holds; the gate's places less these are running.
    free: Vec<usize>,
    waiting: VecDeque<u64>,
    next_ticket: u64,
}

/// At most `places` holders at once, served in arrival order.
#[derive(Debug)]
pub(crate) struct Gate {
    places: usize,
    queue: Mutex<Queue>,
    freed: Condvar,
}

/// A place in the gate, given back when dropped.
#[derive(Debug)]
pub(crate) struct Place<'a> {
    gate: &'a Gate,
    /// Which place: `0..places`.
    pub(crate) index: usize,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut q = self.gate.lock();
        q.free.push(self.index);
        drop(q);
        self.gate.freed.notify_all();
    }
}

impl Gate {
    pub(crate) fn new(places: usize) -> Gate {
        let places = places.max(1);
        Gate {
            places,
            queue: Mutex::new(Queue {
                free: (0..places).rev().collect(),
                ..Queue::default()
            }),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // The queue's counters stay consistent across a panic elsewhere; keep serving.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for a place. `on_wait` hears where the call stands whenever that changes
    /// (called without the gate's lock held); `None` comes back if `cancel` is set while
    /// waiting.
    pub(crate) fn enter(
        &self,
        cancel: Option<&AtomicBool>,
        mut on_wait: impl FnMut(Waiting),
    ) -> Option<Place<'_>> {
        let mut q = self.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.waiting.push_back(ticket);
        // However this call leaves the line (cancelled, or `on_wait` panicking), its ticket
        // goes with it: a ticket left at the head would stop everyone behind it.
        let mut leave = Leave {
            gate: self,
            ticket,
            entered: false,
        };
        let mut told: Option<Waiting> = None;
        loop {
            let ahead = q.waiting.iter().position(|&t| t == ticket).unwrap_or(0);
            if ahead == 0
                && let Some(index) = q.free.pop()
            {
                q.waiting.pop_front();
                leave.entered = true;
                drop(q);
                // The next in line may also fit.
                self.freed.notify_all();
                return Some(Place { gate: self, index });
            }
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                // `leave` takes the ticket out, under the lock: let go of it first.
                drop(q);
                return None;
            }
            let running = self.places - q.free.len();
            let now = Waiting { running, ahead };
            // A place that just freed is about to be taken by the head of the line: not
            // a state worth reporting.
            if told != Some(now) && q.free.is_empty() {
                told = Some(now);
                drop(q);
                on_wait(now);
                q = self.lock();
                continue;
            }
            // Woken when a place frees; the timeout is for noticing a cancel.
            q = self
                .freed
                .wait_timeout(q, Duration::from_millis(100))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

/// Takes a waiting call's ticket out of the line unless it entered.
struct Leave<'a> {
    gate: &'a Gate,
    ticket: u64,
    entered: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        if self.entered {
            return;
        }
        let mut q = self.gate.lock();
        q.waiting.retain(|&t| t != self.ticket);
        drop(q);
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn never_more_than_its_places_at_once_and_every_call_gets_one() {
        let gate = Arc::new(Gate::new(2));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    let place = gate.enter(None, |_| {}).expect("no cancel");
                    assert!(place.index < 2);
                    let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(n, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_waiting_call_hears_what_is_ahead_and_leaves_when_cancelled() {
        let gate = Gate::new(1);
        let _held = gate.enter(None, |_| {}).unwrap();
        let cancel = AtomicBool::new(false);
        let mut heard = Vec::new();
        let place = gate.enter(Some(&cancel), |w| {
            heard.push(w);
            cancel.store(true, Ordering::Relaxed);
        });
        assert!(place.is_none());
        assert_eq!(
            heard,
            [Waiting {
                running: 1,
                ahead: 0
            }]
        );
        drop(_held);
        assert!(
            gate.enter(None, |_| {}).is_some(),
            "the cancelled call left no ticket"
        );
    }

    #[test]
    fn a_waiting_call_that_panics_leaves_the_line() {
        let gate = Arc::new(Gate::new(1));
        let held = gate.enter(None, |_| {}).unwrap();
        let panicking = gate.clone();
        let joined = std::thread::spawn(move || {
            let _ = panicking.enter(None, |_| panic!("a progress callback that fails"));
        })
        .join();
        assert!(joined.is_err());
        drop(held);
        assert!(
            gate.enter(None, |_| {}).is_some(),
            "a dead ticket blocks the line"
        );
    }

    #[test]
    fn calls_are_served_in_arrival_order() {
        let gate = Arc::new(Gate::new(1));
        let first = gate.enter(None, |_| {}).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for i in 0..4 {
            let (entering, order) = (gate.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                let _p = entering.enter(None, |_| {}).unwrap();
                order.lock().unwrap().push(i);
            }));
            // Let each one queue before the next arrives.
            while gate.lock().waiting.len() < i + 1 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        drop(first);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    }
}
