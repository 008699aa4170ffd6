#!/usr/bin/env python3
"""How whisper.cpp's threads wait, quiet and on a busy desktop: `yazses transcribe` under
each thread-wait setting, on each file, with 0..N cores kept busy by plain spinning
processes.

A setting is NAME=ENV (space-separated VAR=VALUE pairs, or `-` for none): the variables are
put in the environment of the yazses process, the way a user would; yazses leaves a wait
setting the user made alone. `YAZSES_OPENMP_WAIT=keep` runs yazses without a setting of its
own (whisper.cpp's OpenMP defaults), for comparing against them.

Every run is a whole process (start, model load, decode, transcribe), greedy, settings
alternating within each repeat (A B C A B C), so drift hurts them alike. Reported per file,
load and setting: the median wall and CPU seconds (user + system, from wait4) of --repeat
runs, and wall as a ratio to the first setting's in the same condition.

    cargo build --release -p yazses && ./ci.sh model
    python3 bench/transcribe/busy.py --model MODEL --files JFK.wav ONE.wav --busy 0 1 \\
        --setting default=- --setting omp-default=YAZSES_OPENMP_WAIT=keep \\
        --setting passive="OMP_WAIT_POLICY=passive"
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, env):
    """One whole process: (wall seconds, CPU seconds, stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if status != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd)} failed ({status}):\n{err.read().decode(errors='replace')}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read().decode().strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--model", required=True, help="a ggml file")
    ap.add_argument("--files", nargs="+", required=True)
    ap.add_argument("--busy", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--setting", action="append", required=True, help="NAME=ENV")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--beam-size", default="1")
    args = ap.parse_args()
    settings = []
    for spec in args.setting:
        name, env = spec.split("=", 1)
        pairs = [] if env.strip() == "-" else [kv.split("=", 1) for kv in env.split()]
        settings.append((name, dict(pairs)))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"machine: {cpu}, {os.cpu_count()} cores; beam {args.beam_size}; median of {args.repeat} "
          "whole-process runs")
    print("\n| file | cores kept busy | setting | wall s | CPU s | wall / first setting's |")
    print("|---|---|---|---|---|---|")
    for path in args.files:
        for busy in args.busy:
            load = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(busy)]
            try:
                results = {name: [] for name, _ in settings}
                texts = {}
                for _ in range(args.repeat):
                    for name, extra in settings:
                        env = {k: v for k, v in os.environ.items()
                               if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "YAZSES_OPENMP_WAIT")}
                        env.update(extra)
                        cmd = [args.yazses, "transcribe", "--model", args.model, "--beam-size",
                               args.beam_size, path]
                        wall, cpu_s, text = run(cmd, env)
                        results[name].append((wall, cpu_s))
                        texts.setdefault(name, text)
            finally:
                for p in load:
                    p.kill()
                    p.wait()
            first = statistics.median(w for w, _ in results[settings[0][0]])
            for name, _ in settings:
                wall = statistics.median(w for w, _ in results[name])
                cpu_s = statistics.median(c for _, c in results[name])
                print(f"| {os.path.basename(path)} | {busy} | {name} | {wall:.2f} | {cpu_s:.2f} | "
                      f"{wall / first:.2f} |")
            if len(set(texts.values())) > 1:
                print(f"(the settings wrote different words for {os.path.basename(path)}: {texts})")


if __name__ == "__main__":
    main()
