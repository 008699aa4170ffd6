#!/usr/bin/env python3
"""Word error rate of one or more `yazses` binaries on the project's own long files, greedy
and beam 5, so a change under transcription (a whisper.cpp version, the windows) is judged
on the same audio before and after.

Files (from bench/transcribe/longset.sh): lecture.wav, also with 0.3, 0.7 and 1.1 s of
silence in front (a shift alone moves whisper's output, so the mean of the four is the
steadier number), one.wav, and fixtures/speech/sentences.flac. WER uses run.py's
normalisation (that of tests/src/wer.rs). Needs sox for the shifted copies.

    bash bench/transcribe/longset.sh ~/.cache/yazses-ci/jfk.wav /tmp/lset
    python3 bench/transcribe/accuracy.py --set /tmp/lset --model MODEL.bin \\
        before=/path/to/old/yazses after=target/release/yazses
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run import wer  # noqa: E402

SHIFTS = [0.3, 0.7, 1.1]


def files(set_dir):
    """(label, audio path, script text) for every file, making the shifted lectures once."""
    def text(path):
        with open(path) as f:
            return f.read()

    lecture = text(os.path.join(set_dir, "lecture.txt"))
    out = [("lecture.wav", os.path.join(set_dir, "lecture.wav"), lecture)]
    for s in SHIFTS:
        shifted = os.path.join(set_dir, f"lecture-pad{s}.wav")
        if not os.path.exists(shifted):
            subprocess.run(["sox", os.path.join(set_dir, "lecture.wav"), shifted, "pad", str(s), "0"],
                           check=True)
        out.append((f"lecture.wav, {s} s in front", shifted, lecture))
    out.append(("one.wav", os.path.join(set_dir, "one.wav"), text(os.path.join(set_dir, "one.txt"))))
    speech = os.path.join(ROOT, "fixtures/speech")
    out.append(("sentences.flac", os.path.join(speech, "sentences.flac"),
                text(os.path.join(speech, "sentences.txt"))))
    return out


def transcribe(binary, model, beam, threads, path):
    cmd = [binary, "transcribe", "--model", model, "--language", "en", "--beam-size", str(beam),
           "--threads", str(threads), path]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="NAME=PATH of a yazses binary")
    ap.add_argument("--set", required=True, help="a directory longset.sh made")
    ap.add_argument("--model", required=True, help="the ggml model file every binary loads")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    named = [b.split("=", 1) for b in args.binaries]
    cols = [(name, beam) for beam in (1, 5) for name, _ in named]
    print("| file | " + " | ".join(f"{n}, {'greedy' if b == 1 else 'beam 5'}" for n, b in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    lecture = {c: [] for c in cols}
    for label, path, truth in files(args.set):
        row = []
        for name, beam in cols:
            binary = dict(named)[name]
            score = wer(truth, transcribe(binary, args.model, beam, args.threads, path))
            if label.startswith("lecture"):
                lecture[(name, beam)].append(score)
            row.append(f"{score:.3f}")
        print(f"| {label} | " + " | ".join(row) + " |", flush=True)
    print("| lecture.wav, mean of the four | "
          + " | ".join(f"{sum(v) / len(v):.3f}" for v in lecture.values()) + " |")


if __name__ == "__main__":
    main()
