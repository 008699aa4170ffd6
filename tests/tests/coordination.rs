//! Several real `yazses mcp-server` processes of one user, one microphone: questions asked
//! at the same moment are all answered, one at a time, in arrival order; the interrupt
//! budget is one for all of them and for processes started later; a holder killed with
//! `kill -9` hands the microphone on within a second; `yazses status --json` names the
//! holder. The microphone is `answer.wav` played in real time; the speech command logs
//! when each question was spoken (under the lease, right before listening).
//! Needs the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use yazses_tests::stdio_client::StdioClient;
use yazses_tests::{imported_model, repo_root, runtime_dir, scratch, yazses_bin};

/// A config whose speech command appends "<unix ns> <text>" to `said`.
fn config(name: &str, per_hour: u32, said: &Path) -> PathBuf {
    let path = scratch().join(format!("coord-{name}-{}.toml", std::process::id()));
    let answer = repo_root().join("fixtures/speech/answer.wav");
    std::fs::write(
        &path,
        format!(
            "[mcp]\nask_human = true\nask_human_per_hour = {per_hour}\nask_human_queue_s = 60\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = true\n\
             [speak]\ncommand = [\"sh\", \"-c\", \"echo $(date +%s%N) \\\"$1\\\" >> {}\", \"speak\"]\n\
             [transcribe]\nmodel = {:?}\n",
            answer.display().to_string(),
            said.display(),
            imported_model().display().to_string()
        ),
    )
    .unwrap();
    let _ = std::fs::remove_file(said);
    path
}

/// (when, who) for each spoken question, in the order spoken.
fn spoken(said: &Path) -> Vec<(u128, String)> {
    std::fs::read_to_string(said)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (t, text) = l.split_once(' ').unwrap();
            let who = text.split(" asks:").next().unwrap().to_owned();
            (t.parse().unwrap(), who)
        })
        .collect()
}

fn status(runtime: &Path) -> Value {
    let out = Command::new(yazses_bin())
        .args(["status", "--json"])
        .env("YAZSES_RUNTIME_DIR", runtime)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ask(client: &mut StdioClient, id: u64) {
    client.call(
        id,
        "ask_human",
        json!({"question": "Which model should I ship?"}),
    );
}

#[test]
fn three_servers_asking_at_once_are_served_one_at_a_time_in_arrival_order_within_one_budget() {
    let runtime = runtime_dir("three");
    let said = scratch().join(format!("coord-three-said-{}.txt", std::process::id()));
    let cfg = config("three", 3, &said);
    let mut clients: Vec<StdioClient> = ["agent-a", "agent-b", "agent-c"]
        .iter()
        .map(|name| StdioClient::start(&cfg, &runtime, name))
        .collect();
    // The same moment, give or take the 100 ms that fixes the arrival order.
    for (i, c) in clients.iter_mut().enumerate() {
        ask(c, 10);
        if i < 2 {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // While the first listens, status names it, and the other two queue behind it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        let st = status(&runtime);
        if st["mic"]["caller"] == "agent-a" && st["queue"].as_array().unwrap().len() == 2 {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "never saw a holder and two waiters: {st}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["mic"]["purpose"], "ask_human", "{st}");
    assert_eq!(st["mic"]["pid"], clients[0].child.id(), "{st}");
    let queue: Vec<_> = st["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["caller"].clone())
        .collect();
    assert_eq!(queue, [json!("agent-b"), json!("agent-c")]);

    let mut results = Vec::new();
    for c in clients.iter_mut() {
        let (r, notes) = c.response_with_notes(10);
        results.push((r["result"]["structuredContent"].clone(), notes));
    }
    for (i, (r, _)) in results.iter().enumerate() {
        assert_eq!(r["heard"], true, "answer {i}: {r}");
        assert!(
            r["answer"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("smaller model"),
            "{r}"
        );
        assert!(r["queued_ms"].is_u64(), "{r}");
    }
    let q: Vec<u64> = results
        .iter()
        .map(|(r, _)| r["queued_ms"].as_u64().unwrap())
        .collect();
    let listen: Vec<u64> = results
        .iter()
        .map(|(r, _)| r["listen_ms"].as_u64().unwrap())
        .collect();
    eprintln!("queued_ms {q:?}, listen_ms {listen:?}");
    // Each waited out the listening of those before it (less the 100 ms it came later).
    assert!(q[0] < 1000, "{q:?}");
    assert!(q[1] + 500 >= listen[0], "{q:?} {listen:?}");
    assert!(q[2] + 500 >= q[1] + listen[1], "{q:?} {listen:?}");
    // The waiters were told who held the microphone.
    let told = serde_json::to_string(&results[2].1).unwrap();
    assert!(
        told.contains("waiting for the microphone (held by agent-a, ask_human)"),
        "{told}"
    );
    // Spoken in arrival order, and no listening overlapped the next question.
    let times = spoken(&said);
    let order: Vec<_> = times.iter().map(|(_, who)| who.as_str()).collect();
    assert_eq!(order, ["agent-a", "agent-b", "agent-c"]);
    for i in 0..2 {
        let listen_end = times[i].0 + u128::from(listen[i]) * 1_000_000;
        assert!(
            times[i + 1].0 >= listen_end,
            "question {} began while {} was listening",
            i + 1,
            i
        );
    }

    // A fourth heard answer in the hour is refused, in any of them ...
    ask(&mut clients[1], 11);
    let r = clients[1].response(11);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("past hour"), "{r}");
    // ... and in a server started afterwards.
    drop(clients);
    let mut late = StdioClient::start(&cfg, &runtime, "agent-late");
    ask(&mut late, 12);
    let r = late.response(12);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("past hour"), "{r}");
    let st = status(&runtime);
    assert_eq!(
        (
            st["budget"]["spent"].as_u64(),
            st["budget"]["limit"].as_u64()
        ),
        (Some(3), Some(3)),
        "{st}"
    );
    assert_eq!(
        spoken(&said).len(),
        3,
        "the refused questions were not spoken"
    );
}

#[test]
fn a_holder_killed_with_sigkill_hands_the_microphone_to_the_next_within_a_second() {
    let runtime = runtime_dir("kill");
    let said = scratch().join(format!("coord-kill-said-{}.txt", std::process::id()));
    let cfg = config("kill", 3, &said);
    let mut a = StdioClient::start(&cfg, &runtime, "agent-a");
    let mut b = StdioClient::start(&cfg, &runtime, "agent-b");
    ask(&mut a, 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    while status(&runtime)["mic"]["pid"] != a.child.id() {
        assert!(Instant::now() < deadline, "a never held the microphone");
        std::thread::sleep(Duration::from_millis(20));
    }
    // a checks its microphone before it speaks: killed once its question was said.
    while spoken(&said).is_empty() {
        assert!(Instant::now() < deadline, "a never said its question");
        std::thread::sleep(Duration::from_millis(20));
    }
    ask(&mut b, 1);
    while status(&runtime)["queue"].as_array().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "b never queued");
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    a.child.kill().unwrap(); // SIGKILL
    let r = b.response(1);
    assert_eq!(r["result"]["structuredContent"]["heard"], true, "{r}");
    let spoken = spoken(&said);
    assert_eq!(spoken.len(), 2, "{spoken:?}");
    assert_eq!(spoken[1].1, "agent-b");
    let handover_ms = (spoken[1].0 - killed_at) / 1_000_000;
    eprintln!("the next question was spoken {handover_ms} ms after kill -9");
    assert!(handover_ms < 1000, "{handover_ms} ms");
    // The dead holder's record is not shown as the holder.
    assert_eq!(status(&runtime)["mic"], Value::Null);
}
