#!/usr/bin/env python3
"""Writes the macOS link stubs: TAPI text files (.tbd) naming, for each system library
yazses links, its real install name and the symbols yazses takes from it.

No package registry ships Apple's SDK, so a cross-link from Linux (zig, through
cargo-zigbuild) gets these instead of the SDK's own .tbd files. They let the linker bind
each symbol to its library (two-level namespace), as the SDK's would; whether the binary
then loads is only known on a Mac.

    stubs.py empty DIR          write every stub with no symbols (the first link's way to
                                learn what is missing)
    stubs.py write DIR < LOG    read a failed link's "undefined symbol: _X" lines and add
                                each symbol to the stub of the library that exports it;
                                a library given a rule below gets its stub (a link that
                                cannot find a framework: add its rule, write, link again)
    stubs.py macho FILE ARCH MINOS
                                check a linked Mach-O: its CPU, its minimum macOS, and that
                                it loads system libraries and frameworks only, each once

A symbol no rule below places is an error: a new dependency needs a new rule, made from
Apple's documentation, not a guess.
"""

import re
import struct
import sys
from pathlib import Path

# Where each library lives on macOS, and the symbol prefixes it exports (Apple's headers
# name each function's framework; the prefixes follow them).
LIBRARIES = {
    "CoreFoundation": ("framework", ["_CF", "_kCF"]),
    # CGEvent.h: dictation's typing and its permission checks.
    "CoreGraphics": ("framework", ["_CG", "_kCG"]),
    "IOKit": ("framework", ["_IO", "_kIO"]),
    "Security": ("framework", ["_Sec", "_kSec"]),
    # AudioToolbox: audio units and components (AudioComponent.h, AUComponent.h,
    # AudioOutputUnit.h); CoreAudio: the hardware abstraction layer (AudioHardware.h).
    "AudioToolbox": ("framework", ["_AudioComponent", "_AudioOutputUnit", "_AudioUnit"]),
    "CoreAudio": ("framework", ["_AudioHardware", "_AudioObject", "_AudioDevice"]),
    # Linked by objc2-foundation; yazses calls nothing in it directly.
    "Foundation": ("framework", ["_NS", "_OBJC_CLASS_$_NS"]),
    # NSPasteboard.h: dictation's paste (the longer prefix wins over Foundation's `_NS`).
    "AppKit": ("framework", ["_NSPasteboard", "_OBJC_CLASS_$_NSPasteboard"]),
    # AVCaptureDevice.h, AVMediaFormat.h: the Microphone permission.
    "AVFoundation": ("framework", ["_AVCapture", "_AVMedia", "_OBJC_CLASS_$_AV"]),
    "objc": ("dylib", ["_objc_", "_class_", "_method_", "_object_", "_sel_", "_protocol_"]),
}
TARGETS = "[ arm64-macos, x86_64-macos ]"


def install_name(lib: str) -> str:
    kind, _ = LIBRARIES[lib]
    if kind == "framework":
        return f"/System/Library/Frameworks/{lib}.framework/Versions/A/{lib}"
    return f"/usr/lib/lib{lib}.A.dylib"


def stub_path(root: Path, lib: str) -> Path:
    kind, _ = LIBRARIES[lib]
    if kind == "framework":
        return root / f"{lib}.framework" / f"{lib}.tbd"
    return root / f"lib{lib}.tbd"


def read_symbols(path: Path) -> list[str]:
    if not path.exists():
        return []
    m = re.search(r"symbols:\s*\[([^\]]*)\]", path.read_text())
    return [s.strip() for s in m.group(1).split(",") if s.strip()] if m else []


def write_stub(root: Path, lib: str, symbols: list[str]) -> None:
    path = stub_path(root, lib)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = [
        "--- !tapi-tbd",
        "tbd-version:     4",
        f"targets:         {TARGETS}",
        f"install-name:    '{install_name(lib)}'",
    ]
    if symbols:
        text += [
            "exports:",
            f"  - targets:         {TARGETS}",
            "    symbols:         [ " + ",\n                       ".join(sorted(set(symbols))) + " ]",
        ]
    path.write_text("\n".join(text + ["...", ""]))


def owner(symbol: str) -> str | None:
    # The longest matching prefix wins (`_AudioObject` before a shorter one).
    best = None
    for lib, (_, prefixes) in LIBRARIES.items():
        for prefix in prefixes:
            if symbol.startswith(prefix) and (best is None or len(prefix) > best[1]):
                best = (lib, len(prefix))
    return best[0] if best else None


def write(root: Path, log: str) -> int:
    missing = sorted(set(re.findall(r"undefined symbol: (\S+)", log)))
    placed: dict[str, list[str]] = {lib: read_symbols(stub_path(root, lib)) for lib in LIBRARIES}
    unplaced = []
    for symbol in missing:
        lib = owner(symbol)
        if lib is None:
            unplaced.append(symbol)
        else:
            placed[lib].append(symbol)
    if unplaced:
        print("no rule says which library exports: " + " ".join(unplaced), file=sys.stderr)
        return 1
    # Every library gets its stub, so a framework just given a rule is there for the next
    # link, which then names the symbols it needs from it.
    for lib, symbols in placed.items():
        write_stub(root, lib, symbols)
    print(f"{len(missing)} symbols placed in {root}")
    return 0


LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_BUILD_VERSION = 0xC, 0x80000018, 0x8000001F, 0x32
CPU = {0x0100000C: "arm64", 0x01000007: "x86_64"}


def macho(path: Path, arch: str, minos: str) -> int:
    data = path.read_bytes()
    magic, cputype, _, _, ncmds, _, _, _ = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != 0xFEEDFACF:
        print(f"{path} is not a 64-bit Mach-O (magic {magic:#x})", file=sys.stderr)
        return 1
    problems, dylibs, found_minos = [], [], None
    if CPU.get(cputype) != arch:
        problems.append(f"its CPU is {CPU.get(cputype, hex(cputype))}, not {arch}")
    offset = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, offset)
        if cmd in (LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB):
            (name_offset,) = struct.unpack_from("<I", data, offset + 8)
            dylibs.append(data[offset + name_offset : offset + size].split(b"\0")[0].decode())
        elif cmd == LC_BUILD_VERSION:
            (packed,) = struct.unpack_from("<I", data, offset + 12)
            found_minos = f"{packed >> 16}.{(packed >> 8) & 0xFF}"
        offset += size
    if found_minos != minos:
        problems.append(f"its minimum macOS is {found_minos}, not {minos}")
    twice = sorted({d for d in dylibs if dylibs.count(d) > 1})
    if twice:
        # dyld on macOS 26 refuses to start a binary that loads a library twice.
        problems.append("it loads a library more than once: " + ", ".join(twice))
    foreign = [d for d in dylibs if not d.startswith(("/System/Library/", "/usr/lib/"))]
    if foreign:
        problems.append("it loads libraries that are not the system's: " + ", ".join(foreign))
    print(f"{path}: {CPU.get(cputype)}, macOS {found_minos} or later, loads:")
    for d in dylibs:
        print(f"  {d}")
    for p in problems:
        print(f"{path}: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "empty":
        for lib in LIBRARIES:
            write_stub(Path(argv[2]), lib, [])
        return 0
    if len(argv) == 3 and argv[1] == "write":
        return write(Path(argv[2]), sys.stdin.read())
    if len(argv) == 5 and argv[1] == "macho":
        return macho(Path(argv[2]), argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
