#!/usr/bin/env python3
"""Flash and static RAM of a firmware image, from its ELF section headers (readelf).

flash: every allocated section with contents (code, read-only data, the initial values
of .data, the RP2040's .boot2); static RAM: every allocated section placed in RAM
(.data, .bss, .uninit), which holds the executor's task arena and so the audio buffers.
With --boot2 ADDR it also checks that .boot2 sits at ADDR. Fails when over the limits.
"""
import argparse
import subprocess
import sys

RAM_BASE = 0x2000_0000

p = argparse.ArgumentParser()
p.add_argument("elf")
p.add_argument("--max-flash-kib", type=float, default=48)
p.add_argument("--max-ram-kib", type=float, default=16)
p.add_argument("--boot2", type=lambda s: int(s, 0))
args = p.parse_args()

out = subprocess.run(["readelf", "-S", "-W", args.elf], check=True, capture_output=True, text=True).stdout
flash = ram = 0
boot2 = None
for line in out.splitlines():
    line = line.strip()
    if not line.startswith("["):
        continue
    fields = line.split("]", 1)[1].split()
    if len(fields) < 7 or fields[0] == "Name":
        continue
    name, kind, addr, size, flags = fields[0], fields[1], int(fields[2], 16), int(fields[4], 16), fields[6]
    if "A" not in flags:
        continue
    if kind == "PROGBITS":
        flash += size
    if addr >= RAM_BASE:
        ram += size
    if name == ".boot2":
        boot2 = addr

name = args.elf.rsplit("/", 1)[-1]
print(f"{name}: flash {flash} B ({flash / 1024:.1f} KiB), static RAM {ram} B ({ram / 1024:.1f} KiB)")
ok = True
if flash > args.max_flash_kib * 1024:
    print(f"  over the {args.max_flash_kib} KiB flash budget", file=sys.stderr)
    ok = False
if ram > args.max_ram_kib * 1024:
    print(f"  over the {args.max_ram_kib} KiB static RAM budget", file=sys.stderr)
    ok = False
if args.boot2 is not None:
    if boot2 != args.boot2:
        print(f"  .boot2 is at {boot2 if boot2 is None else hex(boot2)}, not {hex(args.boot2)}", file=sys.stderr)
        ok = False
    else:
        print(f"  .boot2 at {hex(boot2)}")
sys.exit(0 if ok else 1)
