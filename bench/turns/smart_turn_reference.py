#!/usr/bin/env python3
"""Writes the Smart Turn probabilities turn/prosody.rs is checked against.

Runs Pipecat's own Smart Turn v3 path, as shipped in the pipecat-ai 1.14.0 wheel: the last
8 s zero-padded at the front, `compute_whisper_log_mel_features(do_normalize=True)`, and the
bundled smart-turn-v3.2-cpu.onnx on onnxruntime (one thread, every graph optimisation), on
cuts of our fixtures as an end-of-turn check sees them (speech, then 300 ms of silence).

    pip download --no-deps pipecat-ai==1.14.0 -d /tmp/pc
    unzip -o /tmp/pc/pipecat_ai-1.14.0-py3-none-any.whl 'pipecat/audio/turn/smart_turn/*' -d /tmp/pc/x
    python3 -m venv /tmp/np && /tmp/np/bin/pip install numpy onnxruntime
    /tmp/np/bin/python bench/turns/smart_turn_reference.py /tmp/pc/x/pipecat/audio/turn/smart_turn

Writes fixtures/turn/smart_turn.txt: one line per cut, "<file> <samples> <probability>",
where the cut is the file's first <samples> samples (sox decodes the FLAC files).
"""
import os
import subprocess
import sys

import numpy as np

from pipecat_smart_turn import SmartTurn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RATE = 16000
CHECK_MS = 300


def read(name):
    raw = subprocess.run(
        ["sox", os.path.join(ROOT, "fixtures/speech", name), "-t", "raw", "-e", "signed",
         "-b", "16", "-c", "1", "-r", str(RATE), "-"],
        check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype="<i2")


def speech_ends(samples, quiet_ms=500):
    """Where each stretch of speech ends: 10 ms frames louder than -40 dBFS, then at least
    `quiet_ms` without one."""
    frame = RATE // 100
    loud = [np.sqrt(np.mean((samples[i:i + frame] / 32768.0) ** 2)) > 0.01
            for i in range(0, len(samples) - frame, frame)]
    ends, last = [], None
    for i, l in enumerate(loud):
        if l:
            last = i
        elif last is not None and i - last >= quiet_ms // 10:
            ends.append((last + 1) * frame)
            last = None
    if last is not None:
        ends.append((last + 1) * frame)
    return ends


def main():
    model = SmartTurn(sys.argv[1])

    lines = []
    for name in ["hello.wav", "answer.wav", "finished.flac", "thinking.flac"]:
        samples = read(name)
        for end in speech_ends(samples):
            cut = min(len(samples), end + CHECK_MS * RATE // 1000)
            p = model.probability(samples[:cut])
            lines.append(f"{name} {cut} {p:.4f}")
            print(lines[-1])
    with open(os.path.join(ROOT, "fixtures/turn/smart_turn.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
