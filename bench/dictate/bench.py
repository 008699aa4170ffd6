#!/usr/bin/env python3
"""Dictation latency: from the release (`yazses dictate stop`) to the last character
delivered, for a spoken answer of about 6 s (fixtures/speech/answer.wav played in real
time as the microphone), with the given model.

Two outputs, in one run, alternating: `stdout` (the line on the dictation process's
stdout) and `type` (XTEST into an xterm on Xvfb, timed to the last character landing in
the file the xterm's shell writes). Prints each one's median and p90 and the ratio
type/stdout (what typing adds).

    python3 bench/dictate/bench.py --yazses target/release/yazses --model MODEL [--runs 10]

Needs Xvfb, xterm (apt) and a model (`./ci.sh model` installs tiny.en).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPECT = "friday"


def start_xvfb():
    x = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return x, ":" + x.stdout.readline().strip()


def wait_ready(yazses, env):
    for _ in range(600):
        if subprocess.run([yazses, "dictate", "status"], env=env, capture_output=True).returncode == 0:
            return
        time.sleep(0.05)
    raise SystemExit("the dictation process never answered")


def one(yazses, env, stop_then):
    ok = subprocess.run([yazses, "dictate", "start"], env=env, capture_output=True, text=True)
    assert ok.stdout.strip() == "listening", ok
    time.sleep(6.5)  # the answer is 6 s long
    t0 = time.monotonic()
    stop = subprocess.Popen([yazses, "dictate", "stop"], env=env, stdout=subprocess.DEVNULL)
    stop_then()
    took = time.monotonic() - t0
    stop.wait()
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yazses", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    work = tempfile.mkdtemp()
    cfg = os.path.join(work, "config.toml")
    with open(cfg, "w") as f:
        f.write(f'[audio]\nsource = "file"\nfile = "{ROOT}/fixtures/speech/answer.wav"\nfile_realtime = true\n'
                f'[transcribe]\nmodel = "{args.model}"\n')
    xvfb, display = start_xvfb()
    typed = os.path.join(work, "typed.txt")
    xterm = subprocess.Popen(["xterm", "-geometry", "400x200+0+0", "-u8", "-e", "sh", "-c",
                              f"stty -icanon -echo; exec cat > '{typed}'"],
                             env=dict(os.environ, DISPLAY=display, LC_ALL="C.UTF-8"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(typed):
        time.sleep(0.05)
    time.sleep(0.3)
    results = {"stdout": [], "type": []}
    procs = {}
    for output in results:
        env = dict(os.environ, YAZSES_CONFIG=cfg, YAZSES_RUNTIME_DIR=os.path.join(work, "rt-" + output),
                   DISPLAY=display)
        env.pop("WAYLAND_DISPLAY", None)
        p = subprocess.Popen([args.yazses, "dictate", "--output", output], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        wait_ready(args.yazses, env)
        procs[output] = (p, env)
    for i in range(args.runs):
        for output, (p, env) in procs.items():
            if output == "stdout":
                def then():
                    line = p.stdout.readline()
                    assert EXPECT in line.lower(), line
            else:
                before = open(typed).read().count(EXPECT[1:])

                def then():
                    while open(typed).read().count(EXPECT[1:]) <= before:
                        time.sleep(0.002)
            results[output].append(one(args.yazses, env, then))
    for p, _ in procs.values():
        p.kill()
    xterm.kill()
    xvfb.kill()

    def show(name, xs):
        xs = sorted(xs)
        p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
        print(f"{name:<8} release -> last character: median {statistics.median(xs) * 1000:6.0f} ms, "
              f"p90 {p90 * 1000:6.0f} ms, min {xs[0] * 1000:6.0f} ms ({len(xs)} runs)")
    for name, xs in results.items():
        show(name, xs)
    print(f"type / stdout (what XTEST typing adds): {statistics.median(results['type']) / statistics.median(results['stdout']):.2f}")


if __name__ == "__main__":
    main()
