//! Which x86-64 level this binary's whisper.cpp was built for, and the hand-over from the
//! portable release binary to its faster sibling.
//!
//! whisper.cpp (ggml) picks its SIMD instructions when it is compiled, and by default
//! compiles for the building machine's CPU (`-march=native`): such a binary dies with
//! SIGILL on an older CPU. A local build (`cargo build`, `cargo install`) stays native.
//! The release build (`./ci.sh release`, docs/release.md) is two binaries: `yazses`, built
//! for x86-64-v2 (SSE4.2: every x86-64 CPU since 2009), and `yazses-x86-64-v3` beside it
//! (AVX2, FMA, F16C, BMI2: since 2013-2015). The first thing `yazses` does is hand over to
//! the v3 binary when the CPU has what it needs, so each machine runs the fastest build it
//! can, from one entry point.

/// The CPU level this binary was built for: `native` for a local build, else the level
/// `./ci.sh release` or `./ci.sh aarch64` set at build time (`YAZSES_BUILD_CPU_LEVEL`:
/// `x86-64-v2`, `x86-64-v3`, `armv8-a`).
pub const BUILT_FOR: &str = match option_env!("YAZSES_BUILD_CPU_LEVEL") {
    Some(level) => level,
    None => "native",
};

/// The file name of the v3 build beside the v2 one (plus `.exe` on Windows).
pub const V3_BINARY: &str = "yazses-x86-64-v3";

/// Whether this CPU runs x86-64-v3 code (what ggml's AVX2 build uses).
pub fn has_v3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
            && std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// At start-up. In the x86-64-v2 release binary: replaces this process with the v3
/// binary beside it when the CPU can run it (and `YAZSES_CPU_LEVEL=x86-64-v2` in the
/// environment does not ask for v2); an `exec` that fails is logged and this binary
/// carries on. In the v3 binary on a CPU without v3: exits with a message that names the
/// binary to run instead, before whisper.cpp could die on an illegal instruction. `env` is
/// added to the v3 binary's environment ([`crate::pool::openmp_env`]).
pub fn hand_over_to_a_faster_build(env: &[(&str, &str)]) {
    if BUILT_FOR == "x86-64-v3" && !has_v3() {
        eprintln!(
            "yazses: error: this is the x86-64-v3 build of yazses, and this CPU lacks AVX2, \
             FMA, F16C or BMI2; run the `yazses` beside it, which works on any x86-64 CPU"
        );
        std::process::exit(1);
    }
    if BUILT_FOR != "x86-64-v2" || !has_v3() {
        return;
    }
    if std::env::var("YAZSES_CPU_LEVEL").is_ok_and(|l| l == "x86-64-v2") {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let sibling = exe.with_file_name(format!("{V3_BINARY}{}", std::env::consts::EXE_SUFFIX));
    if !sibling.is_file() {
        return;
    }
    let err = run_in_place(&sibling, env);
    tracing::warn!(
        "could not start {} ({err}); running the x86-64-v2 build",
        sibling.display()
    );
}

/// Runs `exe` in place of this process, with this process's arguments (its `argv[0]`
/// too) and `env` added to its environment; returns only when that failed.
pub(crate) fn run_in_place(exe: &std::path::Path, env: &[(&str, &str)]) -> std::io::Error {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let mut command = std::process::Command::new(exe);
    crate::platform::set_argv0(&mut command, argv0);
    crate::platform::replace_process(command.args(args).envs(env.iter().copied()))
}
