//! Builds whisper.cpp 1.8.5 as static libraries for the CPU and generates its bindings.
//!
//! Why not the registry's whisper-rs-sys: 0.15.0, the newest, bundles whisper.cpp 1.8.3, whose
//! encoder is 1.5-1.8x slower on two threads than 1.8.5's
//! (docs/decisions/2026-12-04-whisper-cpp-1-8-5.md, `bench/transcribe/whisper_versions/compare.sh`).
//!
//! Where the sources come from, first match wins:
//! - `YAZSES_WHISPER_CPP_SRC` naming a directory: an unpacked whisper.cpp tree, used as it is
//!   (a version other than 1.8.5 builds with a warning);
//! - `YAZSES_WHISPER_CPP_SRC` naming a file: pywhispercpp 1.5.1's source archive, checked by size
//!   and SHA-256 like a download (for machines without network access);
//! - otherwise that archive is downloaded from PyPI into `OUT_DIR`, once per build directory.
//!   It carries whisper.cpp 1.8.5 (ggml 0.13.1) as pywhispercpp builds its wheels from it.
//!
//! `GGML_*`, `WHISPER_*` and `CMAKE_*` variables in the environment reach whisper.cpp's CMake as
//! definitions: `./ci.sh release` builds the portable binaries with `GGML_NATIVE=OFF` this way.

#[path = "build/archive.rs"]
mod archive;

use std::env;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use archive::{Published, check, unpack, version_of};

const SOURCE_ENV: &str = "YAZSES_WHISPER_CPP_SRC";
const WANTED_VERSION: &str = "1.8.5";
const ARCHIVE: Published = Published {
    name: "pywhispercpp-1.5.1.tar.gz",
    bytes: 9_756_087,
    sha256: "5df897e5dd9d9f16804fc937bd85b9f5880a0b29a55f8843585e0e03d76195e5",
};
const ARCHIVE_URL: &str = "https://files.pythonhosted.org/packages/9f/35/610787a277e177e6b7983277a35a2969c0876b46c0d889bc6a0c4b4ac4a7/pywhispercpp-1.5.1.tar.gz";
/// The whisper.cpp tree inside the archive.
const ARCHIVE_ROOT: &str = "pywhispercpp-1.5.1/whisper.cpp";
/// Parts of the tree the library build never reads; skipping them halves what is unpacked.
const NOT_NEEDED: &[&str] = &["examples", "models", "samples", "tests", "media"];
/// Written last when unpacking, so an interrupted unpack is redone rather than built.
const UNPACKED_MARK: &str = ".yazses-unpacked";

/// The switches `./ci.sh release` sets; a change to any of them must rebuild whisper.cpp.
const WATCHED_FLAGS: &[&str] = &[
    "GGML_NATIVE",
    "GGML_SSE42",
    "GGML_AVX",
    "GGML_AVX2",
    "GGML_AVX512",
    "GGML_AVX_VNNI",
    "GGML_AMX_TILE",
    "GGML_AMX_INT8",
    "GGML_AMX_BF16",
    "GGML_BMI2",
    "GGML_FMA",
    "GGML_F16C",
];

fn main() -> ExitCode {
    match build() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: building whisper.cpp {WANTED_VERSION} for yazses: {message}");
            ExitCode::FAILURE
        }
    }
}

fn build() -> Result<(), String> {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/archive.rs");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-env-changed={SOURCE_ENV}");
    let out = PathBuf::from(env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?);
    let tree = sources(&out)?;
    let version = version_of(&tree)?;
    if version != WANTED_VERSION {
        println!(
            "cargo:warning=whisper.cpp {version} from {SOURCE_ENV}; yazses is measured and tested with {WANTED_VERSION}"
        );
    }
    bindings(&tree, &out)?;
    compile(&tree);
    // whisper-rs' build script reads this as DEP_WHISPER_WHISPER_CPP_VERSION.
    println!("cargo:WHISPER_CPP_VERSION={version}");
    Ok(())
}

/// The whisper.cpp tree to build, unpacked into `out` unless the environment names a tree.
fn sources(out: &Path) -> Result<PathBuf, String> {
    let archive = match env::var_os(SOURCE_ENV).map(PathBuf::from) {
        Some(tree) if tree.is_dir() => return Ok(tree),
        Some(archive) => {
            check(&archive, &ARCHIVE)
                .map_err(|why| format!("{SOURCE_ENV}={}: {why}", archive.display()))?;
            archive
        }
        None => {
            let archive = out.join(ARCHIVE.name);
            if check(&archive, &ARCHIVE).is_err() {
                download(&archive).map_err(|why| {
                    format!(
                        "could not download {ARCHIVE_URL}: {why}\n\
                         Without network access, download that file elsewhere (SHA-256 \
                         {}) and set {SOURCE_ENV} to its path, or to an unpacked \
                         whisper.cpp {WANTED_VERSION} directory.",
                        ARCHIVE.sha256
                    )
                })?;
            }
            archive
        }
    };
    let tree = out.join("whisper.cpp");
    let stamp = unpack_stamp();
    if fs::read_to_string(tree.join(UNPACKED_MARK)).unwrap_or_default() != stamp {
        unpack(
            &archive,
            ARCHIVE_ROOT,
            NOT_NEEDED,
            &tree,
            (UNPACKED_MARK, &stamp),
        )
        .map_err(|e| format!("unpacking {}: {e}", archive.display()))?;
    }
    Ok(tree)
}

/// Downloads the archive beside `archive` and renames it into place once it checks out.
fn download(archive: &Path) -> Result<(), String> {
    let partial = archive.with_extension("part");
    // A stalled connection fails the build with a reason instead of holding it forever.
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(60))
        .build();
    let response = agent.get(ARCHIVE_URL).call().map_err(|e| e.to_string())?;
    let mut body = response.into_reader().take(ARCHIVE.bytes + 1);
    let mut file = File::create(&partial).map_err(|e| e.to_string())?;
    io::copy(&mut body, &mut file).map_err(|e| e.to_string())?;
    file.flush().map_err(|e| e.to_string())?;
    drop(file);
    if let Err(why) = check(&partial, &ARCHIVE) {
        let _ = fs::remove_file(&partial);
        return Err(format!("the download is not the published file: {why}"));
    }
    fs::rename(&partial, archive).map_err(|e| e.to_string())
}

/// What an unpacked tree was made from, so a change to the archive or the filter unpacks again.
fn unpack_stamp() -> String {
    format!("{} without {}", ARCHIVE.sha256, NOT_NEEDED.join(","))
}

/// When cross-compiling with GCC (mingw-w64 for Windows), libclang knows the target's
/// headers but not GCC's own (`stdbool.h`, `stddef.h`): the target compiler says where
/// they are.
fn cross_compiler_headers() -> Option<PathBuf> {
    let (target, host) = (env::var("TARGET").ok()?, env::var("HOST").ok()?);
    if target == host || target.contains("msvc") || target.contains("apple") {
        return None;
    }
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .try_get_compiler()
        .ok()?;
    let out = std::process::Command::new(compiler.path())
        .arg("-print-file-name=include")
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    dir.is_dir().then_some(dir)
}

fn bindings(tree: &Path, out: &Path) -> Result<(), String> {
    let mut builder = bindgen::Builder::default();
    if let Some(dir) = cross_compiler_headers() {
        builder = builder.clang_arg(format!("-isystem{}", dir.display()));
    }
    builder
        .header("wrapper.h")
        .clang_arg(format!("-I{}", tree.join("include").display()))
        .clang_arg(format!("-I{}", tree.join("ggml/include").display()))
        .rust_edition(bindgen::RustEdition::Edition2024)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .map_err(|e| format!("bindgen on whisper.h and ggml.h: {e} (is libclang-dev installed?)"))?
        .write_to_file(out.join("bindings.rs"))
        .map_err(|e| format!("writing the bindings: {e}"))
}

/// Whether ggml's CPU threads come from OpenMP: with the `openmp` feature, except on Apple
/// and Windows targets, where no OpenMP library is there by default (whisper.cpp's own Apple
/// builds leave it off; a mingw-w64 libgomp would be one more DLL to ship); `GGML_OPENMP=ON`
/// in the environment asks for it there too, `GGML_OPENMP=OFF` leaves it off everywhere.
fn wants_openmp(target: &str) -> bool {
    // `GGML_OPENMP=OFF` turns it off anywhere: ggml's own thread pool instead (measured in
    // docs/decisions/2026-12-07-threads-that-give-way.md).
    if env::var_os("CARGO_FEATURE_OPENMP").is_none()
        || env::var("GGML_OPENMP").is_ok_and(|v| v.eq_ignore_ascii_case("off"))
    {
        return false;
    }
    if target.contains("apple") || target.contains("windows") {
        let asked = env::var("GGML_OPENMP").is_ok_and(|v| v.eq_ignore_ascii_case("on"));
        if !asked {
            println!(
                "cargo:warning=OpenMP is off for {target} (none there by default); set GGML_OPENMP=ON to use an installed one"
            );
        }
        return asked;
    }
    true
}

/// Whether ggml's CPU backend uses Apple's Accelerate on an Apple target: as
/// `GGML_ACCELERATE` says, else when building on a Mac.
fn accelerate(target: &str) -> bool {
    target.contains("apple")
        && match env::var("GGML_ACCELERATE") {
            Ok(v) => !v.eq_ignore_ascii_case("off"),
            Err(_) => env::var("HOST").is_ok_and(|host| host.contains("apple")),
        }
}

fn compile(tree: &Path) {
    let target = env::var("TARGET").unwrap_or_default();
    let openmp = wants_openmp(&target);
    let mut config = cmake::Config::new(tree);
    // An unoptimised whisper.cpp is about ten times slower: too slow even for a debug build's tests.
    config
        .profile("Release")
        .define("BUILD_SHARED_LIBS", "OFF")
        .define("WHISPER_BUILD_TESTS", "OFF")
        .define("WHISPER_BUILD_EXAMPLES", "OFF")
        .define("WHISPER_BUILD_SERVER", "OFF")
        .define("GGML_METAL", "OFF")
        .define("GGML_OPENMP", if openmp { "ON" } else { "OFF" })
        .pic(true);
    // A native build on a CPU with AMX (Sapphire Rapids and later) would compile ggml's AMX
    // kernels for q8_0 and other quantised weights, and they die with SIGILL wherever the
    // kernel or a VM does not hand the process the tile state (seen here: `tileloadd` in
    // `tinygemm_kernel_amx` though `arch_prctl` said yes). The AVX-512 kernels serve instead.
    if target.starts_with("x86_64")
        && !target.contains("msvc")
        && !env::var("GGML_NATIVE").is_ok_and(|v| v.eq_ignore_ascii_case("off"))
    {
        for flag in ["-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16"] {
            config.cflag(flag).cxxflag(flag);
        }
    }
    // On Apple targets ggml turns BLAS on by default, which is a backend of its own (ggml-blas)
    // that is neither linked below nor measured: the CPU backend, as everywhere else.
    // Accelerate's vDSP inside the CPU backend needs the SDK's headers, so it is used when
    // building on a Mac and left out of a cross-build (no SDK there).
    if target.contains("apple") {
        config.define("GGML_BLAS", "OFF").define(
            "GGML_ACCELERATE",
            if accelerate(&target) { "ON" } else { "OFF" },
        );
    }
    // Debian 12's mingw-w64 headers lack THREAD_POWER_THROTTLING_STATE, which ggml-cpu uses
    // for Windows 8 and later; built for Windows 7's API, ggml leaves it out.
    if target.ends_with("windows-gnu") {
        config
            .cflag("-D_WIN32_WINNT=0x0601")
            .cxxflag("-D_WIN32_WINNT=0x0601");
    }
    // The tree sits inside our repository's target directory: without a ceiling, whisper.cpp's
    // CMake asks git and records yazses' commit as whisper.cpp's own.
    if let Some(above) = tree.parent() {
        config.env("GIT_CEILING_DIRECTORIES", above);
    }
    for flag in WATCHED_FLAGS {
        println!("cargo:rerun-if-env-changed={flag}");
    }
    let mut defined: Vec<(String, String)> = env::vars()
        .filter(|(key, _)| {
            ["GGML_", "WHISPER_", "CMAKE_"]
                .iter()
                .any(|p| key.starts_with(p))
        })
        .collect();
    defined.sort();
    for (key, value) in &defined {
        println!("cargo:rerun-if-env-changed={key}");
        config.define(key, value);
    }
    // A CMake build directory per set of definitions: CMake keeps in its cache what it was
    // once given, so a native build after a portable one in the same directory would stay
    // portable. Apart, builds for several CPU levels share one target directory (and its
    // Rust dependencies), and going back to one rebuilds nothing of whisper.cpp.
    if let Some(out) = env::var_os("OUT_DIR") {
        let key = format!("{target} {openmp} {defined:?}");
        config.out_dir(PathBuf::from(out).join(format!("cmake-{:016x}", fnv1a(key.as_bytes()))));
    }
    let installed = config.build();
    for lib in ["lib", "lib64"] {
        let dir = installed.join(lib);
        if dir.is_dir() {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
    }
    // Each library before the ones it calls: GNU ld resolves static archives in one pass.
    for lib in ["whisper", "ggml", "ggml-cpu", "ggml-base"] {
        // ggml names its archives without the `lib` prefix on Windows (`ggml.a`), where
        // rustc would look for `libggml.a`: those are named whole.
        let bare = format!("{lib}.a");
        if ["lib", "lib64"]
            .iter()
            .any(|dir| installed.join(dir).join(&bare).is_file())
        {
            println!("cargo:rustc-link-lib=static:+verbatim={bare}");
        } else {
            println!("cargo:rustc-link-lib=static={lib}");
        }
    }
    if target.contains("apple") {
        println!("cargo:rustc-link-lib=dylib=c++");
        if accelerate(&target) {
            println!("cargo:rustc-link-lib=framework=Accelerate");
        }
    } else if target.ends_with("windows-gnu") {
        // Linked in, so that yazses.exe needs no libstdc++-6.dll beside it (the linker
        // finds the archive in its own directories; rustc is not asked to bundle it).
        println!("cargo:rustc-link-lib=static:-bundle=stdc++");
    } else if !target.contains("msvc") {
        // MSVC links its C++ runtime by itself.
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    if openmp {
        println!(
            "cargo:rustc-link-lib=dylib={}",
            if target.contains("apple") {
                "omp"
            } else {
                "gomp"
            }
        );
    }
}

/// The 64-bit FNV-1a hash of `bytes`: the same on every toolchain, for a directory's name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
