//! The coordinator within one process: threads stand in for processes (each opens its
//! own descriptors, and `flock` excludes descriptors, not processes). The binary-level
//! tests in `yazses-tests` do the same with real processes.

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

fn scratch(name: &str) -> RuntimeDir {
    let p = std::env::temp_dir().join(format!("yazses-coord-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    RuntimeDir::at(&p).unwrap()
}

fn request<'a>(purpose: Purpose, caller: &'a str, cancel: &'a AtomicBool) -> Request<'a> {
    Request {
        purpose,
        caller,
        queue_timeout: Duration::from_secs(10),
        cancel,
    }
}

static NO: AtomicBool = AtomicBool::new(false);

#[test]
fn waiters_are_served_in_arrival_order_and_never_together() {
    let dir = scratch("fifo");
    let first = Coordinator::new(dir.clone())
        .acquire(&request(Purpose::Listen, "first", &NO), |_| {})
        .unwrap();
    let served = Arc::new(Mutex::new(Vec::new()));
    let mut threads = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let (dir, served) = (dir.clone(), served.clone());
        threads.push(std::thread::spawn(move || {
            let coord = Coordinator::new(dir);
            let lease = coord
                .acquire(&request(Purpose::AskHuman, name, &NO), |_| {})
                .unwrap();
            served.lock().unwrap().push((name, "in"));
            assert_eq!(coord.holder().unwrap().unwrap().caller, name);
            std::thread::sleep(Duration::from_millis(60));
            served.lock().unwrap().push((name, "out"));
            drop(lease);
        }));
        // Arrival order, well apart compared with the 20 ms poll.
        std::thread::sleep(Duration::from_millis(80));
    }
    let coord = Coordinator::new(dir.clone());
    let queue: Vec<_> = coord
        .status(3)
        .unwrap()
        .queue
        .into_iter()
        .map(|h| h.caller)
        .collect();
    assert_eq!(queue, ["a", "b", "c", "d"]);
    drop(first);
    for t in threads {
        t.join().unwrap();
    }
    let served = served.lock().unwrap().clone();
    let expected: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .flat_map(|n| [(*n, "in"), (*n, "out")])
        .collect();
    assert_eq!(served, expected, "one at a time, in arrival order");
    assert!(coord.holder().unwrap().is_none());
}

#[test]
fn a_waiter_that_is_cancelled_leaves_the_queue_at_once() {
    let dir = scratch("cancel");
    let coord = Coordinator::new(dir.clone());
    let _held = coord
        .acquire(&request(Purpose::Listen, "holder", &NO), |_| {})
        .unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (dir, cancel) = (dir.clone(), cancel.clone());
        std::thread::spawn(move || {
            Coordinator::new(dir)
                .acquire(&request(Purpose::AskHuman, "waiter", &cancel), |_| {})
                .unwrap_err()
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while coord.status(3).unwrap().queue.is_empty() {
        assert!(Instant::now() < deadline, "never queued");
        std::thread::sleep(Duration::from_millis(5));
    }
    let t = Instant::now();
    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    let err = waiter.join().unwrap();
    assert!(matches!(err, CoordError::Cancelled), "{err}");
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    assert!(coord.status(3).unwrap().queue.is_empty());
}

#[test]
fn the_queue_timeout_names_the_holder() {
    let dir = scratch("timeout");
    let coord = Coordinator::new(dir.clone());
    let _held = coord
        .acquire(&request(Purpose::Listen, "yazses listen", &NO), |_| {})
        .unwrap();
    let mut told = Vec::new();
    let t = Instant::now();
    let err = Coordinator::new(dir)
        .acquire(
            &Request {
                queue_timeout: Duration::from_millis(300),
                ..request(Purpose::AskHuman, "agent", &NO)
            },
            |w| told.push(w.clone()),
        )
        .unwrap_err();
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert!(matches!(err, CoordError::QueueTimeout { .. }), "{err}");
    assert!(
        err.to_string().contains("held by yazses listen, listen"),
        "{err}"
    );
    assert_eq!(told.len(), 1, "told once, not every poll: {told:?}");
    assert_eq!(told[0].holder.as_ref().unwrap().caller, "yazses listen");
    assert!(coord.status(3).unwrap().queue.is_empty());
}

#[test]
fn a_dictation_hold_refuses_ask_human_at_once_but_queues_listen() {
    let dir = scratch("hold");
    let coord = Coordinator::new(dir.clone());
    let hold = coord
        .acquire(&request(Purpose::Dictate, "dictate", &NO), |_| {})
        .unwrap();
    let t = Instant::now();
    let err = Coordinator::new(dir.clone())
        .acquire(&request(Purpose::AskHuman, "agent", &NO), |_| {})
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(200), "refused at once");
    assert!(
        matches!(&err, CoordError::Held(h) if h.purpose == Purpose::Dictate),
        "{err}"
    );
    let listen = std::thread::spawn(move || {
        Coordinator::new(dir)
            .acquire(&request(Purpose::Listen, "listen", &NO), |_| {})
            .map(|l| l.queued())
    });
    std::thread::sleep(Duration::from_millis(200));
    drop(hold);
    let queued = listen.join().unwrap().unwrap();
    assert!(queued >= Duration::from_millis(150), "{queued:?}");
}

// `true` is the dead process.
#[cfg(unix)]
#[test]
fn a_record_left_by_a_dead_process_is_not_trusted_over_the_lock() {
    let dir = scratch("stale");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let record = Holder {
        pid: dead,
        purpose: Purpose::Dictate,
        caller: "ghost".into(),
        since: 1,
    };
    std::fs::write(dir.join("mic.json"), serde_json::to_vec(&record).unwrap()).unwrap();
    let coord = Coordinator::new(dir);
    assert_eq!(coord.holder().unwrap(), None, "the lock is free");
    // The dead dictation does not hold anything: ask_human is served at once.
    let lease = coord
        .acquire(&request(Purpose::AskHuman, "agent", &NO), |_| {})
        .unwrap();
    assert!(lease.queued() < Duration::from_millis(200));
    assert_eq!(coord.holder().unwrap().unwrap().caller, "agent");
}

// procfs is Linux's.
#[cfg(target_os = "linux")]
#[test]
fn a_read_only_runtime_dir_fails_clearly() {
    // procfs refuses new files even to root, and this dir is ours and 0500.
    let dir = RuntimeDir::at(std::path::Path::new("/proc/self/fdinfo")).unwrap();
    let err = Coordinator::new(dir)
        .acquire(&request(Purpose::AskHuman, "agent", &NO), |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/proc/self/fdinfo/mic.lock could not be used"),
        "{err}"
    );
}

#[test]
fn the_budget_is_shared_reserved_first_and_refunded_when_nothing_was_heard() {
    let dir = scratch("budget");
    let a = Coordinator::new(dir.clone());
    let b = Coordinator::new(dir.clone());
    let t0 = unix_ms();
    let r1 = a.ledger().reserve(2, t0).unwrap();
    let r2 = b.ledger().reserve(2, t0 + 1000).unwrap();
    // Both reservations count before either is settled.
    let err = a.ledger().reserve(2, t0 + 2000).unwrap_err();
    assert!(
        matches!(
            err,
            CoordError::Budget {
                used: 2,
                retry_in_min: 60
            }
        ),
        "{err}"
    );
    a.ledger().settle(&r1, true, t0 + 3000).unwrap();
    b.ledger().settle(&r2, false, t0 + 3000).unwrap();
    let s = b.ledger().status(2, t0 + 3000).unwrap();
    assert_eq!(
        (s.spent, s.limit, s.resets_at),
        (1, 2, Some(t0 + WINDOW_MS))
    );
    // A process started afterwards sees the same ledger.
    let c = Coordinator::new(dir);
    let r = c.ledger().reserve(2, t0 + 4000).unwrap();
    c.ledger().settle(&r, true, t0 + 4000).unwrap();
    let err = c.ledger().reserve(2, t0 + 5000).unwrap_err();
    assert!(matches!(err, CoordError::Budget { used: 2, .. }), "{err}");
    // An hour after the first, one is free again.
    let _late = c.ledger().reserve(2, t0 + WINDOW_MS + 1).unwrap();
}

#[test]
fn a_process_with_a_lower_limit_waits_until_enough_charges_leave_the_hour() {
    let dir = scratch("lower-limit");
    let generous = Coordinator::new(dir.clone());
    let strict = Coordinator::new(dir);
    let t0 = unix_ms();
    // A server allowing 5 an hour is answered five times, a minute apart.
    for i in 0..5 {
        let r = generous.ledger().reserve(5, t0 + i * 60_000).unwrap();
        generous.ledger().settle(&r, true, t0 + i * 60_000).unwrap();
    }
    // One allowing 2 must wait until one is left: four must leave, not only the oldest.
    let now = t0 + 5 * 60_000;
    let s = strict.ledger().status(2, now).unwrap();
    assert_eq!(s.spent, 5);
    assert_eq!(s.resets_at, Some(t0 + WINDOW_MS));
    assert_eq!(s.allowed_again_at, Some(t0 + 3 * 60_000 + WINDOW_MS));
    let err = strict.ledger().reserve(2, now).unwrap_err();
    assert!(
        matches!(
            err,
            CoordError::Budget {
                used: 5,
                retry_in_min: 58
            }
        ),
        "{err}"
    );
    // The generous one is still refused only until its own oldest leaves.
    let s = generous.ledger().status(5, now).unwrap();
    assert_eq!(s.allowed_again_at, Some(t0 + WINDOW_MS));
    assert_eq!(
        generous.ledger().status(6, now).unwrap().allowed_again_at,
        None
    );
}

#[test]
fn a_deleted_ledger_is_rebuilt_from_what_live_processes_charged() {
    let dir = scratch("deleted");
    let a = Coordinator::new(dir.clone());
    let t0 = unix_ms();
    let r = a.ledger().reserve(1, t0).unwrap();
    a.ledger().settle(&r, true, t0).unwrap();
    std::fs::remove_file(a.ledger().path()).unwrap();
    let err = a.ledger().reserve(1, t0 + 1000).unwrap_err();
    assert!(matches!(err, CoordError::Budget { used: 1, .. }), "{err}");
    // ... and written back, so another process sees the charge again.
    let b = Coordinator::new(dir);
    assert_eq!(b.ledger().status(1, t0 + 1000).unwrap().spent, 1);
}

#[test]
fn a_damaged_or_future_dated_ledger_refuses_every_question_and_names_the_file() {
    let t0 = unix_ms();
    let cases: [(&str, String); 4] = [
        (
            "truncated",
            r#"{"version":1,"charges":[{"id":"1-1","#.into(),
        ),
        ("garbage", "\u{0}\u{1}not json at all".into()),
        ("empty", String::new()),
        (
            "future",
            format!(
                r#"{{"version":1,"charges":[{{"id":"1-1","at":{}}}]}}"#,
                t0 + 7_200_000
            ),
        ),
    ];
    for (name, content) in cases {
        let dir = scratch(&format!("ledger-{name}"));
        let coord = Coordinator::new(dir);
        std::fs::write(coord.ledger().path(), content).unwrap();
        let err = coord.ledger().reserve(3, t0).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, CoordError::Ledger { .. }), "{name}: {msg}");
        assert!(
            msg.contains("budget.json") && msg.contains("no spoken questions"),
            "{name}: {msg}"
        );
        if name == "future" {
            assert!(msg.contains("in the future"), "{msg}");
        }
        // Status shows why rather than failing.
        let status = serde_json::to_value(coord.status(3).unwrap()).unwrap();
        assert!(
            status["budget"]["error"]
                .as_str()
                .unwrap()
                .contains("budget.json"),
            "{status}"
        );
    }
}

// Owners are the Unix side's check.
#[cfg(unix)]
#[test]
fn a_ledger_of_another_user_is_refused() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let coord = Coordinator::new(scratch("ledger-theirs"));
    std::fs::write(coord.ledger().path(), r#"{"version":1,"charges":[]}"#).unwrap();
    std::os::unix::fs::chown(coord.ledger().path(), Some(65534), None).unwrap();
    let err = coord
        .ledger()
        .reserve(3, unix_ms())
        .unwrap_err()
        .to_string();
    assert!(err.contains("belongs to user id 65534"), "{err}");
}

#[test]
fn the_ledger_file_is_private_json_a_person_can_read() {
    let coord = Coordinator::new(scratch("ledger-json"));
    let r = coord.ledger().reserve(3, 1_000).unwrap();
    coord.ledger().settle(&r, true, 1_000).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(coord.ledger().path()).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["charges"][0]["at"], 1_000);
    assert_eq!(v["charges"][0]["pending"], false);
    #[cfg(unix)]
    {
        let mode = std::fs::metadata(coord.dir().path())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700);
    }
}
