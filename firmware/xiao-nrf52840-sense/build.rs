//! The nRF52840's memory map under the XIAO's factory bootloader, and the linker script,
//! so `cargo build` from anywhere makes an image the board's UF2 drive takes.
//!
//! The board ships with Nordic's MBR and SoftDevice S140 7.x in the first 156 KiB of
//! flash (0x0-0x27000) and the Adafruit nRF52 bootloader from 0xF4000 up; the
//! application goes between them. The SoftDevice stays disabled, so the application
//! has all of RAM but the MBR's first 8 bytes. Sources: docs/firmware.md.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out.join("memory.x"),
        "MEMORY {\n  FLASH : ORIGIN = 0x00027000, LENGTH = 0xF4000 - 0x27000\n  RAM : ORIGIN = 0x20000008, LENGTH = 256K - 8\n}\n",
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
