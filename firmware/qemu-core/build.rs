//! Picks the memory map of the QEMU machine the test image runs on, and passes the
//! cortex-m-rt linker script, so a plain `cargo test --target ...` links a real image.

use std::path::PathBuf;

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    // mps2-an386: 4 MB of SSRAM at 0x0 for code, 4 MB at 0x2000_0000 for data.
    // microbit (nRF51822): 256 KB of flash at 0x0, 16 KB of RAM at 0x2000_0000.
    let memory = if target.starts_with("thumbv6m") {
        "MEMORY\n{\n  FLASH : ORIGIN = 0x00000000, LENGTH = 256K\n  RAM : ORIGIN = 0x20000000, LENGTH = 16K\n}\n"
    } else {
        "MEMORY\n{\n  FLASH : ORIGIN = 0x00000000, LENGTH = 4M\n  RAM : ORIGIN = 0x20000000, LENGTH = 4M\n}\n"
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("memory.x"), memory).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg=-Tlink.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../fixtures/qemu/speech.raw");
    println!("cargo:rerun-if-changed=../../fixtures/qemu/decisions.txt");
}
