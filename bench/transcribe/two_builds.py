#!/usr/bin/env python3
"""Two or more `yazses` builds on the same files, quiet and with cores kept busy: whole-process
wall seconds of `transcribe` (English, 2 threads, the defaults otherwise), the builds
alternating file by file, and the slowest file as a share of its own length.

    python3 bench/transcribe/two_builds.py before=OLD/yazses after=target/release/yazses \\
        --busy 0 1 --files FILE.wav ...
"""
import argparse
import subprocess
import time
import wave


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", help="NAME=PATH of a yazses binary")
    ap.add_argument("--busy", type=int, nargs="+", default=[0, 1], help="cores kept busy")
    ap.add_argument("--files", nargs="+", required=True, help="16-bit WAV files")
    args = ap.parse_args()
    builds = dict(b.split("=", 1) for b in args.builds)
    for busy in args.busy:
        spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(busy)]
        total = {name: 0.0 for name in builds}
        slowest = {name: 0.0 for name in builds}
        try:
            for path in args.files:
                with wave.open(path) as w:
                    length = w.getnframes() / w.getframerate()
                for name, binary in builds.items():
                    t = time.perf_counter()
                    subprocess.run(
                        [binary, "transcribe", path, "--language", "en", "--threads", "2"],
                        capture_output=True,
                        check=True,
                    )
                    wall = time.perf_counter() - t
                    total[name] += wall
                    slowest[name] = max(slowest[name], wall / length)
        finally:
            for s in spinners:
                s.kill()
        cells = ", ".join(f"{n} {total[n]:.1f} s (slowest {slowest[n]:.2f} of its length)" for n in builds)
        print(f"{busy} busy: {cells}", flush=True)


if __name__ == "__main__":
    main()
