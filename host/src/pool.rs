//! How the worker pools wait for work, chosen in one place. A desktop is never idle: a
//! thread that spins while it waits takes the core another thread of the same job needs.
//!
//! - whisper.cpp's threads come from OpenMP on Linux (libgomp), whose threads spin at
//!   each of ggml's many barriers before they sleep: by default 300,000 turns, long enough
//!   to hold a core the other thread is waiting for whenever a program beside it keeps
//!   one busy (3.6x slower), while sleeping at once (`OMP_WAIT_POLICY=passive`) costs a
//!   quiet machine up to half again. yazses runs them under [`OPENMP_WAIT`], a short spin
//!   then sleep, unless the user set a wait setting of their own (`OMP_WAIT_POLICY`,
//!   `GOMP_SPINCOUNT`) or asked for OpenMP's defaults (`YAZSES_OPENMP_WAIT=keep`).
//!   libgomp reads its settings once, as it is loaded, before `main` runs, so the setting
//!   is put in the environment and the program started again with it ([`restart_with`]),
//!   or handed to the faster build it hands over to ([`crate::cpu`]).
//! - The Smart Turn model's ONNX Runtime session runs on one thread that does not spin
//!   (`turn::prosody`).
//! - Windows and macOS builds of whisper.cpp use ggml's own thread pool, not OpenMP.
//!
//! The measurements behind the choice: docs/decisions/2026-12-07-threads-that-give-way.md.

/// The OpenMP wait setting yazses runs whisper.cpp's threads under: 1,000 turns of
/// spinning (a few microseconds) before a waiting thread sleeps.
pub const OPENMP_WAIT: (&str, &str) = ("GOMP_SPINCOUNT", "1000");

/// The variables that say how OpenMP's threads wait; one set by the user is kept.
const USER_SETTINGS: [&str; 2] = ["OMP_WAIT_POLICY", "GOMP_SPINCOUNT"];

/// What to add to the environment before whisper.cpp's OpenMP runtime is loaded: nothing
/// when the build has no OpenMP, when the user made a wait setting, or when
/// `YAZSES_OPENMP_WAIT=keep` asks for OpenMP's own defaults.
pub fn openmp_env() -> Vec<(&'static str, &'static str)> {
    let keep = std::env::var("YAZSES_OPENMP_WAIT").is_ok_and(|v| v == "keep");
    let set_by_user = USER_SETTINGS.iter().any(|v| std::env::var_os(v).is_some());
    if !crate::platform::WHISPER_USES_OPENMP || keep || set_by_user {
        return Vec::new();
    }
    vec![OPENMP_WAIT]
}

/// Starts this program again, same arguments, with `env` added, when `env` holds
/// anything; returns only when it holds nothing or the start failed (then this process
/// goes on under OpenMP's defaults, and says so in the debug log).
pub fn restart_with(env: &[(&str, &str)]) {
    if env.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let err = crate::cpu::run_in_place(&exe, env);
    tracing::debug!("could not restart with {env:?} ({err}); OpenMP's defaults apply");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_setting_is_added_only_where_openmp_runs_and_the_user_made_none() {
        // The test process itself: whatever the environment says, the answer follows it.
        let env = openmp_env();
        let user_set = USER_SETTINGS.iter().any(|v| std::env::var_os(v).is_some())
            || std::env::var("YAZSES_OPENMP_WAIT").is_ok_and(|v| v == "keep");
        if crate::platform::WHISPER_USES_OPENMP && !user_set {
            assert_eq!(env, [OPENMP_WAIT]);
        } else {
            assert!(env.is_empty());
        }
    }
}
