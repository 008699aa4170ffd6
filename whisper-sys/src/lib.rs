//! whisper.cpp's C API (`whisper.h`, `ggml.h`), as bindgen reads it from the 1.8.5 headers.
//!
//! This crate stands in for the registry's `whisper-rs-sys` (see the workspace's
//! `[patch.crates-io]`): `whisper-rs` 0.16 is written against whisper.cpp 1.8.3, whose C API
//! 1.8.5 keeps, adding two VAD functions. `build.rs` says where the sources come from.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    missing_docs,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
