#!/usr/bin/env python3
"""Transcription speed and memory: `yazses transcribe` against pywhispercpp (the same
whisper.cpp engine from Python) and faster-whisper (CTranslate2, int8), side by side.

Every engine runs the same model weights (the ggml file `yazses model import` made from
the same CTranslate2 directory faster-whisper loads), on the same 16 kHz WAV files, with
the same thread count, greedy decoding and the language fixed to English. Each engine
runs in its own child process, so its peak RSS (ru_maxrss from wait4) is its own; each
loads the model once and transcribes every file --repeat times. Reported: model load
time, speed as a multiple of real time (audio seconds / processing seconds), peak RSS,
and yazses' speed as a ratio to each peer.

yazses' time per file is the whole `transcribe_file` path (decode, VAD, whisper) as it
logs it; the peers get audio already decoded into NumPy arrays (their best case).

    python3 -m venv ~/.cache/yazses-ci/benchvenv
    ~/.cache/yazses-ci/benchvenv/bin/pip install pywhispercpp==1.5.1 faster-whisper==1.2.1
    ./ci.sh assets && cargo build --release -p yazses
    ~/.cache/yazses-ci/benchvenv/bin/python bench/transcribe/run.py \\
        --model tiny.en=GGML_FILE:CT2_DIR [--model base=GGML_FILE:CT2_DIR] --threads 2
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_wav(path):
    import numpy as np

    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    return pcm.astype(np.float32) / 32768.0


def child(args):
    """Runs in the child process: load once, transcribe each file --repeat times."""
    audio = [(f, load_wav(f)) for f in args.files]
    t0 = time.perf_counter()
    if args.child == "pywhispercpp":
        from pywhispercpp.model import Model

        model = Model(args.ggml, n_threads=args.threads, print_realtime=False,
                      print_progress=False, language="en", redirect_whispercpp_logs_to=None)
        run = lambda a: " ".join(s.text for s in model.transcribe(a))
    else:
        from faster_whisper import WhisperModel

        model = WhisperModel(args.ct2, device="cpu", compute_type="int8", cpu_threads=args.threads)
        run = lambda a: " ".join(s.text for s in model.transcribe(
            a, beam_size=1, language="en", vad_filter=False, condition_on_previous_text=True)[0])
    load_s = time.perf_counter() - t0
    files = []
    for f, a in audio:
        for _ in range(args.repeat):
            t = time.perf_counter()
            text = run(a)
            files.append({"file": f, "seconds": time.perf_counter() - t, "text": text})
    print(json.dumps({"load_s": load_s, "files": files}))


def run_child(cmd, env=None):
    """Runs a child, returns (stdout, stderr, peak RSS in MB)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if status != 0:
        sys.exit(f"{cmd[0]} failed ({status}):\n{stderr}")
    return out.decode(), stderr, usage.ru_maxrss / 1024


def yazses_child(args, ggml):
    files = [f for f in args.files for _ in range(args.repeat)]
    env = dict(os.environ, YAZSES_LOG="yazses=info")
    out, err, rss = run_child([args.yazses, "transcribe", "--model", ggml, "--language", "en",
                               "--beam-size", "1", "--threads", str(args.threads),
                               "--format", "json", *files], env)
    load_ms = int(re.search(r"model loaded.*load_ms=(\d+)", err).group(1))
    totals = [int(m) for m in re.findall(r"file done.*total_ms=(\d+)", err)]
    texts = [json.loads(line)["text"] for line in out.splitlines()]
    assert len(totals) == len(files) == len(texts), err
    rows = [{"file": f, "seconds": ms / 1000, "text": t} for f, ms, t in zip(files, totals, texts)]
    return {"load_s": load_ms / 1000, "files": rows}, rss


def duration(path):
    with wave.open(path) as w:
        return w.getnframes() / w.getframerate()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", choices=["pywhispercpp", "faster-whisper"])
    ap.add_argument("--ggml")
    ap.add_argument("--ct2")
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--model", action="append", default=[], help="NAME=GGML_FILE:CT2_DIR")
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--jfk", default=os.path.expanduser("~/.cache/yazses-ci/jfk.wav"))
    args = ap.parse_args()
    if args.child:
        return child(args)

    tmp = tempfile.mkdtemp()
    sentences = os.path.join(tmp, "sentences.wav")
    subprocess.run(["sox", os.path.join(ROOT, "fixtures/speech/sentences.flac"), sentences], check=True)
    long = os.path.join(tmp, "long.wav")
    subprocess.run(["sox", args.jfk, sentences, args.jfk, sentences, args.jfk, sentences, long], check=True)
    args.files = [args.jfk, sentences, long]
    audio_s = {f: duration(f) for f in args.files}
    print(f"audio: " + ", ".join(f"{os.path.basename(f)} {s:.1f} s" for f, s in audio_s.items())
          + f"; {args.threads} threads; {args.repeat} runs each; greedy; language en")

    for spec in args.model:
        name, paths = spec.split("=", 1)
        ggml, ct2 = paths.split(":", 1)
        results = {}
        results["yazses"] = yazses_child(args, ggml)
        for peer in ["pywhispercpp", "faster-whisper"]:
            out, _, rss = run_child([sys.executable, __file__, "--child", peer, "--ggml", ggml, "--ct2", ct2,
                                     "--threads", str(args.threads), "--repeat", str(args.repeat),
                                     "--files", *args.files])
            results[peer] = (json.loads(out), rss)
        print(f"\n## {name}\n")
        print("| engine | load s | " + " | ".join(f"{os.path.basename(f)} x RT" for f in args.files)
              + " | all x RT | peak RSS MB |")
        print("|---|---|" + "---|" * len(args.files) + "---|---|")
        speed = {}
        for engine, (r, rss) in results.items():
            per_file = []
            for f in args.files:
                secs = [row["seconds"] for row in r["files"] if row["file"] == f]
                per_file.append(audio_s[f] / (sum(secs) / len(secs)))
            total_audio = sum(audio_s[row["file"]] for row in r["files"])
            speed[engine] = total_audio / sum(row["seconds"] for row in r["files"])
            print(f"| {engine} | {r['load_s']:.2f} | " + " | ".join(f"{x:.1f}" for x in per_file)
                  + f" | {speed[engine]:.1f} | {rss:.0f} |")
        for peer in ["pywhispercpp", "faster-whisper"]:
            print(f"\nyazses / {peer} speed ratio: {speed['yazses'] / speed[peer]:.3f}", end="")
        print()
        for engine, (r, _) in results.items():
            row = next(row for row in r["files"] if row["file"] == args.jfk)
            print(f"  {engine} on jfk.wav: {row['text'].strip()}")


if __name__ == "__main__":
    main()
