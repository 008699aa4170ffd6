#!/usr/bin/env python3
"""Writes the Smart Turn probabilities turn/prosody.rs is checked against.

Runs Pipecat's own Smart Turn v3 path, as shipped in the pipecat-ai 1.14.0 wheel: the last
8 s zero-padded at the front, `compute_whisper_log_mel_features(do_normalize=True)`, and the
bundled smart-turn-v3.2-cpu.onnx on onnxruntime (one thread, every graph optimisation), on
cuts of our fixtures as an end-of-turn check sees them (speech, then 300 ms of silence).

    pip download --no-deps pipecat-ai==1.14.0 -d /tmp/pc
    unzip -o /tmp/pc/pipecat_ai-1.14.0-py3-none-any.whl 'pipecat/audio/turn/smart_turn/*' -d /tmp/pc/x
    python3 -m venv /tmp/np && /tmp/np/bin/pip install numpy==2.4.6 onnxruntime==1.32.0
    /tmp/np/bin/python bench/turns/smart_turn_reference.py /tmp/pc/x/pipecat/audio/turn/smart_turn

Writes fixtures/turn/smart_turn.txt (or the file --out names): one line per cut,
"<file> <samples> <probability>", where the cut is the file's first <samples> samples (sox
decodes the FLAC files). With --features DIR it also writes each cut's model input there, as
"<file>.<samples>.f32" (80 x 800 little-endian float32): tests/tests/smart_turn.rs runs yazses'
model on exactly that input.

The int8 model's probability moves with the CPU's integer kernels, so the committed file is
one machine's reading; `./ci.sh test` runs this script on the machine under test (with the
same ONNX Runtime version yazses loads) and the test compares against that.
"""
import argparse
import os
import subprocess

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
    parser = argparse.ArgumentParser()
    parser.add_argument("smart_turn_dir", help="the wheel's pipecat/audio/turn/smart_turn")
    parser.add_argument("--out", default=os.path.join(ROOT, "fixtures/turn/smart_turn.txt"))
    parser.add_argument("--features", help="a directory for each cut's model input")
    args = parser.parse_args()
    model = SmartTurn(args.smart_turn_dir)

    lines = []
    for name in ["hello.wav", "answer.wav", "finished.flac", "thinking.flac"]:
        samples = read(name)
        for end in speech_ends(samples):
            cut = min(len(samples), end + CHECK_MS * RATE // 1000)
            features = model.features(samples[:cut])
            p = model.probability_of_features(features)
            if args.features:
                features.astype("<f4").tofile(os.path.join(args.features, f"{name}.{cut}.f32"))
            lines.append(f"{name} {cut} {p:.4f}")
            print(lines[-1])
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
