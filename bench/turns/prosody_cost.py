#!/usr/bin/env python3
"""CPU per end-of-turn prosody check: yazses (turn::prosody, host/examples/prosody_cost.rs)
against Pipecat's own path (numpy features + onnxruntime from Python), same model file,
same recording, one thread each, median of N runs after a warm-up.

    cargo build --release -p yazses --example prosody_cost
    yazses model fetch smart-turn
    /tmp/np/bin/python bench/turns/prosody_cost.py /tmp/pc/x/pipecat/audio/turn/smart_turn \\
        fixtures/speech/answer.wav 20

(see smart_turn_reference.py for the Pipecat directory and a Python with numpy and
onnxruntime). Prints both medians and yazses' cost as a fraction of Pipecat's.
"""
import os
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

from pipecat_smart_turn import SmartTurn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pipecat_ms(directory, path, runs):
    model = SmartTurn(directory)
    with wave.open(path) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    p = model.probability(samples)
    costs = []
    for _ in range(runs):
        start = time.process_time()
        p = model.probability(samples)
        costs.append((time.process_time() - start) * 1000)
    return statistics.median(costs), p


def main():
    directory, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    example = os.path.join(ROOT, "target/release/examples/prosody_cost")
    out = subprocess.run([example, path, str(runs)], check=True, capture_output=True, text=True).stdout
    fields = dict(kv.split("=") for kv in out.split())
    ours = float(fields["cpu_ms_median"])
    theirs, p = pipecat_ms(directory, path, runs)
    print(f"yazses: {ours:.1f} ms CPU per check (probability {fields['probability']}); "
          f"{fields['load_cpu_ms']} ms CPU to load, once per process")
    print(f"Pipecat: {theirs:.1f} ms CPU per check (probability {p:.4f})")
    print(f"yazses / Pipecat: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
