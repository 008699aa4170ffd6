#!/usr/bin/env bash
# `cargo run`'s runner in each board's directory: flash.sh BOARD ELF. The UF2 goes onto
# the board's bootloader drive when one is mounted, else probe-rs flashes the ELF
# (yazses-uf2 flash; docs/firmware.md).
set -euo pipefail
board=$1
elf=$(realpath "$2")
cd "$(dirname "$0")"
host=$(rustc -vV | sed -n 's/^host: //p')
exec cargo run -q --release --target "$host" -p yazses-uf2 -- flash --board "$board" "$elf"
