//! The nRF52840's memory map (the whole flash: flashed with probe-rs, no SoftDevice, no
//! bootloader) and the linker script, so `cargo build` from anywhere makes a real image.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out.join("memory.x"),
        "MEMORY {\n  FLASH : ORIGIN = 0x00000000, LENGTH = 1024K\n  RAM : ORIGIN = 0x20000000, LENGTH = 256K\n}\n",
    )
    .unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=--nmagic");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    if std::env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
