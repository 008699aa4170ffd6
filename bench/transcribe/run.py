#!/usr/bin/env python3
"""Transcription speed, memory and accuracy on long recordings: `yazses transcribe`
against pywhispercpp (whisper.cpp from Python) and faster-whisper (CTranslate2, int8).

One run, same files, same weights, same thread count, greedy decoding, language English.
Every measurement is a whole process, started fresh: start-up, model load, reading the
file, transcribing it. Each engine reads the 16 kHz WAV itself (the peers with Python's
`wave` into a NumPy array, which is their cheapest way in). Reported per engine and file:
the best wall time of --repeat runs, as a multiple of real time (audio seconds / wall
seconds), peak RSS (ru_maxrss of the child, from wait4), and the word error rate against
the script the recording was made from (normalised as tests/src/wer.rs does: case,
punctuation, numbers spelled out). Then yazses' speed as a ratio to each peer's, per file;
above 1.0 means yazses is faster. Runs alternate between engines (A B C A B C), so a
noisy neighbour hurts them alike.

The files come from bench/transcribe/longset.sh: one.wav (about 1 minute: jfk.wav, a
real voice, then espeak-ng sentences), ten.wav (the same ten times), lecture.wav (4
minutes of espeak-ng in three voices); `jfk` names jfk.wav itself (11 s).

A desktop is never idle: `--busy 0 1` runs the whole table twice, quiet and then with one
plain spinning process per count kept busy beside every run (started before the engines,
stopped after), and reports CPU seconds (user + system, from wait4) beside wall seconds.

    python3 -m venv ~/.cache/yazses-ci/benchvenv
    ~/.cache/yazses-ci/benchvenv/bin/pip install pywhispercpp==1.5.1 faster-whisper==1.2.1
    ./ci.sh assets && cargo build --release -p yazses
    ~/.cache/yazses-ci/benchvenv/bin/python bench/transcribe/run.py \\
        --model tiny.en=GGML_FILE:CT2_DIR [--model base=GGML_FILE:CT2_DIR] --threads 2 \\
        [--busy 0 1]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ENGINES = ["yazses", "pywhispercpp", "faster-whisper"]

ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen").split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spell(n):
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        return ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + spell(n % 100))
    return spell(n // 1000) + " thousand" + ("" if n % 1000 == 0 else " " + spell(n % 1000))


def words(text):
    out = []
    for raw in re.sub(r"[-/:]", " ", text.lower()).split():
        w = "".join(c for c in raw if c.isalnum())
        if not w:
            continue
        if w.isdigit() and int(w) < 10000:
            out += spell(int(w)).split()
        else:
            out.append(w)
    return out


def wer(truth, heard):
    r, h = words(truth), words(heard)
    row = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        diag, row[0] = row[0], i
        for j in range(1, len(h) + 1):
            diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + (r[i - 1] != h[j - 1]))
    return row[len(h)] / max(1, len(r))


def peer(args):
    """Runs in a child process: one engine, one file, printed text."""
    import numpy as np

    with wave.open(args.file) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
    if args.peer == "pywhispercpp":
        from pywhispercpp.model import Model

        model = Model(args.ggml, n_threads=args.threads, print_realtime=False,
                      print_progress=False, language="en", redirect_whispercpp_logs_to=None)
        text = " ".join(s.text for s in model.transcribe(audio, greedy={"best_of": 1}))
    else:
        from faster_whisper import WhisperModel

        model = WhisperModel(args.ct2, device="cpu", compute_type="int8", cpu_threads=args.threads)
        segments, _ = model.transcribe(audio, beam_size=1, language="en", vad_filter=False,
                                       condition_on_previous_text=True)
        text = " ".join(s.text for s in segments)
    print(text)


def run(cmd):
    """Runs a child; returns (stdout, wall seconds, peak RSS in MB, CPU seconds)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        if status != 0:
            sys.exit(f"{' '.join(cmd[:3])} failed ({status}):\n{err.read().decode(errors='replace')}")
        return out.read().decode(), wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def spinners(n):
    """N plain processes that keep a core busy each, as a build or a browser tab would."""
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def command(engine, args, ggml, ct2, path):
    if engine == "yazses":
        return [args.yazses, "transcribe", "--model", ggml, "--language", "en", "--beam-size", "1",
                "--threads", str(args.threads), path]
    return [sys.executable, __file__, "--peer", engine, "--ggml", ggml, "--ct2", ct2,
            "--threads", str(args.threads), "--file", path]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", choices=ENGINES[1:], help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--ggml", help=argparse.SUPPRESS)
    ap.add_argument("--ct2", help=argparse.SUPPRESS)
    ap.add_argument("--model", action="append", default=[], help="NAME=GGML_FILE:CT2_DIR")
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="runs per engine and file; the best counts")
    ap.add_argument("--files", nargs="*", default=["one", "ten"], help="names from longset.sh")
    ap.add_argument("--set", help="a directory longset.sh made (default: make one)")
    ap.add_argument("--jfk", default=os.path.expanduser("~/.cache/yazses-ci/jfk.wav"))
    ap.add_argument("--busy", type=int, nargs="*", default=[0],
                    help="cores kept busy by spinning processes, one table per count")
    args = ap.parse_args()
    if args.peer:
        return peer(args)

    if not args.set:
        args.set = tempfile.mkdtemp()
        subprocess.run(["bash", os.path.join(HERE, "longset.sh"), args.jfk, args.set],
                       check=True, stdout=subprocess.DEVNULL)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"machine: {cpu}, {os.cpu_count()} cores; {args.threads} threads; greedy; language en; "
          f"best of {args.repeat} whole-process runs")
    if "jfk" in args.files:
        subprocess.run(["sox", args.jfk, "-r", "16000", "-c", "1", "-b", "16",
                        os.path.join(args.set, "jfk.wav")], check=True)
        with open(os.path.join(args.set, "jfk.txt"), "w") as f:
            f.write("And so my fellow Americans, ask not what your country can do for you, "
                    "ask what you can do for your country.")
    for busy in args.busy:
        for spec in args.model:
            table(args, spec, busy)


def table(args, spec, busy):
    name, paths = spec.split("=", 1)
    ggml, ct2 = paths.split(":", 1)
    print(f"\n### {name}, {'quiet' if busy == 0 else f'{busy} core(s) kept busy'}\n")
    print("| file | audio s | engine | wall s | x real time | CPU s | peak RSS MB | WER |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    load = spinners(busy)
    try:
        for f in args.files:
            path = os.path.join(args.set, f + ".wav")
            truth = open(os.path.join(args.set, f + ".txt")).read()
            with wave.open(path) as w:
                audio_s = w.getnframes() / w.getframerate()
            best = {e: None for e in ENGINES}
            for _ in range(args.repeat):
                for e in ENGINES:
                    text, wall, rss, cpu = run(command(e, args, ggml, ct2, path))
                    if best[e] is None or wall < best[e][1]:
                        best[e] = (text, wall, max(rss, best[e][2] if best[e] else 0), cpu)
            for e in ENGINES:
                text, wall, rss, cpu = best[e]
                print(f"| {f}.wav | {audio_s:.0f} | {e} | {wall:.2f} | {audio_s / wall:.1f} | {cpu:.2f} "
                      f"| {rss:.0f} | {wer(truth, text):.3f} |")
            ratios.append((f, best["pywhispercpp"][1] / best["yazses"][1],
                           best["faster-whisper"][1] / best["yazses"][1],
                           best["faster-whisper"][3] / best["yazses"][3]))
    finally:
        for p in load:
            p.kill()
            p.wait()
    print()
    for f, pwc, fw, fw_cpu in ratios:
        print(f"{name} {f}.wav: yazses speed / pywhispercpp {pwc:.2f}, / faster-whisper {fw:.2f}; "
              f"faster-whisper's CPU seconds / yazses' {fw_cpu:.2f}")


if __name__ == "__main__":
    main()
