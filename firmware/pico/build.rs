//! The RP2040's memory map and linker scripts, so `cargo build` from anywhere makes a
//! flashable image: `.boot2` (the flash's second-stage bootloader, 256 bytes) at
//! 0x1000_0000, the program after it.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out.join("memory.x"),
        "MEMORY {\n  BOOT2 : ORIGIN = 0x10000000, LENGTH = 0x100\n  FLASH : ORIGIN = 0x10000100, LENGTH = 2048K - 0x100\n  RAM : ORIGIN = 0x20000000, LENGTH = 256K\n}\n",
    )
    .unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=--nmagic");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rustc-link-arg-bins=-Tlink-rp.x");
    if std::env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
