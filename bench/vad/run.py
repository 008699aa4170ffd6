#!/usr/bin/env python3
"""The VAD benchmark: yazses against WebRTC VAD (modes 0-3) and Silero VAD on one set.

    python3 bench/vad/speechset.py --set bench --out bench/vad/data
    cargo build --release -p yazses --examples
    /path/to/venv/bin/python bench/vad/run.py bench/vad/data

(the venv: `pip install webrtcvad silero-vad onnxruntime`). Prints one markdown table.

Every detector's 10 ms frame decisions go through the same end-of-speech policy (a port
of yazses-core's `Endpoint`, checked against yazses's own decision on every file), so
the autostop columns compare detectors, not policies.
"""
import json
import math
import os
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
YAZSES = os.path.join(ROOT, "target", "release", "yazses")
SPEED = os.path.join(ROOT, "target", "release", "examples", "vad_speed")
END_SILENCE, NO_SPEECH, MIN_SPEECH = 1200, 8000, int(os.environ.get("MIN_SPEECH", 150))


def load(path):
    with wave.open(path, "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


def endpoint(frames, voiced=None):
    """yazses-core's Endpoint over 10 ms decisions: (reason, stop_at_ms, speech_start_ms).

    `voiced` (default: the decisions themselves) marks the frames speech on their own
    level, not held by a hangover; the end silence is timed from the last of them."""
    voiced = frames if voiced is None else voiced
    run_start = speech_start = last_end = None
    last_now = 0
    for i, sp in enumerate(frames):
        now = (i + 1) * 10
        if sp:
            if run_start is None:
                run_start = last_now
            if voiced[i] or last_end is None:
                last_end = now
            if speech_start is None and now - run_start >= MIN_SPEECH:
                speech_start = run_start
        else:
            run_start = None
        last_now = now
        if speech_start is not None and now - last_end >= END_SILENCE:
            return "end_of_speech", now, speech_start
        if speech_start is None and run_start is None and now >= NO_SPEECH:
            return "no_speech", now, None
        if now >= 120_000:
            return "cap", now, speech_start
    return "end_of_input", len(frames) * 10, speech_start


def truth_frames(entry, n):
    lab = np.zeros(n, dtype=bool)
    for a, b in entry["segments"]:
        lab[a // 10:b // 10] = True
    return lab


# yazses' hangover is 10 frames, of which the first 4 still count as voiced (`tail_frames`):
# every speech segment's last 6 frames are held, not voiced.
HELD = 6


def voiced_of(frames):
    v = list(frames)
    n = len(v)
    for i in range(n):
        if v[i] and (i + 1 == n or not frames[i + 1]):
            for j in range(max(0, i - HELD + 1), i + 1):
                v[j] = False
    return v


def ours(path, samples):
    out = subprocess.run([YAZSES, "vad", "--json", path], check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    n = (samples + 159) // 160
    fr = np.zeros(n, dtype=bool)
    for s in rep["segments"]:
        fr[s["start_ms"] // 10:s["end_ms"] // 10] = True
    a = rep["autostop"]
    return fr, (a["stopped_because"], a["stop_at_ms"], a["speech_start_ms"])


def webrtc(mode):
    import webrtcvad

    def run(pcm):
        v = webrtcvad.Vad(mode)
        n = len(pcm) // 160
        b = pcm[: n * 160].tobytes()
        return np.array([v.is_speech(b[i * 320:(i + 1) * 320], 16000) for i in range(n)], dtype=bool)

    return run


class Silero:
    def __init__(self):
        import onnxruntime as ort
        import silero_vad

        path = os.path.join(os.path.dirname(silero_vad.__file__), "data", "silero_vad.onnx")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])

    def probs(self, pcm):
        x = pcm.astype(np.float32) / 32768.0
        state = np.zeros((2, 1, 128), dtype=np.float32)
        ctx = np.zeros((1, 64), dtype=np.float32)
        sr = np.array(16000, dtype=np.int64)
        out = []
        for i in range(0, len(x) - 511, 512):
            chunk = np.concatenate([ctx, x[None, i:i + 512]], axis=1)
            p, state = self.sess.run(None, {"input": chunk, "state": state, "sr": sr})
            ctx = chunk[:, -64:]
            out.append(float(p[0][0]))
        return out

    def __call__(self, pcm):
        # Silero's own hysteresis (get_speech_timestamps): on at 0.5, off below 0.35.
        probs = self.probs(pcm)
        speech, dec = False, []
        for p in probs:
            speech = p >= 0.5 or (speech and p >= 0.35)
            dec.append(speech)
        n = len(pcm) // 160
        # Each 10 ms frame takes the decision of the 32 ms chunk its centre falls in.
        return np.array([dec[min(len(dec) - 1, (i * 160 + 80) // 512)] if dec else False for i in range(n)], dtype=bool)


def prf(pred, truth):
    n = min(len(pred), len(truth))
    p, t = pred[:n], truth[:n]
    tp = int(np.sum(p & t))
    fp = int(np.sum(p & ~t))
    fn = int(np.sum(~p & t))
    return tp, fp, fn


def f1(tp, fp, fn):
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


def speed_python(fn, pcms):
    total = sum(len(p) for p in pcms) / 16000
    t0 = time.process_time()
    for p in pcms:
        fn(p)
    return total / (time.process_time() - t0)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench", "vad", "data")
    manifest = json.load(open(os.path.join(data, "manifest.json")))
    files = manifest["files"]
    pcms = {e["file"]: load(os.path.join(data, e["file"])) for e in files}
    only = os.environ.get("DETECTORS", "yazses,webrtc-0,webrtc-1,webrtc-2,webrtc-3,silero-v6").split(",")
    detectors = {"yazses": None}
    for m in range(4):
        if f"webrtc-{m}" in only:
            detectors[f"webrtc-{m}"] = webrtc(m)
    if "silero-v6" in only:
        detectors["silero-v6"] = Silero()
    snrs = ["clean", 20, 10, 5]
    rows = {}
    policy_mismatch = 0
    by_noise = {}
    for name, det in detectors.items():
        stats = {s: dict(tp=0, fp=0, fn=0, err=[], premature=0, never=0, missed=0, n=0, false_start=0, n_noise=0) for s in snrs}
        for e in files:
            path = os.path.join(data, e["file"])
            pcm = pcms[e["file"]]
            if det is None:
                fr, ours_stop = ours(path, len(pcm))
                stop = endpoint(list(fr), voiced_of(list(fr)))
                if stop != tuple(ours_stop):
                    policy_mismatch += 1
                    print(f"policy port disagrees on {e['file']}: {stop} vs {ours_stop}", file=sys.stderr)
            else:
                fr = det(pcm)
                stop = endpoint(list(fr))
            key = "clean" if e["snr"] is None else e["snr"]
            st = stats[key]
            if e["kind"] == "speech" and e["snr"] is not None:
                tp_, fp_, fn_ = prf(fr, truth_frames(e, len(fr)))
                acc = by_noise.setdefault((name, e["noise"], e["snr"]), [0, 0, 0])
                acc[0] += tp_
                acc[1] += fp_
                acc[2] += fn_
            if e["kind"] == "noise":
                st["n_noise"] += 1
                st["false_start"] += stop[2] is not None
                continue
            truth = truth_frames(e, len(fr))
            tp, fp, fn = prf(fr, truth)
            st["tp"] += tp
            st["fp"] += fp
            st["fn"] += fn
            st["n"] += 1
            reason, at, start = stop
            if start is None:
                st["missed"] += 1
            elif reason == "end_of_input":
                st["never"] += 1
            elif at < e["true_end_ms"]:
                st["premature"] += 1
            else:
                st["err"].append(at - e["true_end_ms"] - END_SILENCE)
        rows[name] = stats
    # Speed: ours from the Rust example (core only, one thread), peers in-process here.
    all_pcm = [pcms[e["file"]] for e in files]
    speeds = {}
    try:
        out = subprocess.run([SPEED, data], check=True, capture_output=True, text=True).stdout
        speeds["yazses"] = json.loads(out)["x_realtime"]
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"speed of yazses not measured: {err}", file=sys.stderr)
    sub = all_pcm[:: max(1, len(all_pcm) // 40)]
    for name, det in detectors.items():
        if det is not None:
            speeds[name] = speed_python(det, sub)

    print(f"set: {len(files)} files from {data} (seed {manifest['seed']}); end_silence {END_SILENCE} ms, "
          f"no_speech {NO_SPEECH} ms, min_speech {MIN_SPEECH} ms; policy port mismatches: {policy_mismatch}\n")
    print("| detector | SNR | P | R | F1 | EOS err median ms | EOS err p90 ms | premature cuts | never ended | missed starts | false starts (noise only) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, stats in rows.items():
        for s in snrs:
            st = stats[s]
            p, r, f = f1(st["tp"], st["fp"], st["fn"])
            med = f"{statistics.median(st['err']):.0f}" if st["err"] else "-"
            p90 = f"{np.percentile(st['err'], 90):.0f}" if st["err"] else "-"
            fs = f"{st['false_start']}/{st['n_noise']}" if st["n_noise"] else "-"
            label = "clean" if s == "clean" else f"{s} dB"
            print(f"| {name} | {label} | {p:.3f} | {r:.3f} | {f:.3f} | {med} | {p90} | {st['premature']}/{st['n']} | {st['never']}/{st['n']} | {st['missed']}/{st['n']} | {fs} |")
    print("\nFrame F1 by noise type (20 / 10 / 5 dB):\n")
    noises = sorted({k[1] for k in by_noise})
    print("| detector | " + " | ".join(noises) + " |")
    print("|---|" + "---|" * len(noises))
    for name in rows:
        cells = []
        for nz in noises:
            cells.append(" / ".join(f"{f1(*by_noise[(name, nz, s)])[2]:.2f}" for s in (20, 10, 5)))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n| detector | speed (x real time, one core) |")
    print("|---|---|")
    for name, x in speeds.items():
        print(f"| {name} | {x:,.0f} |")
    if "yazses" in speeds and "webrtc-3" in speeds:
        print(f"\nyazses / webrtc-3 speed ratio: {speeds['yazses'] / speeds['webrtc-3']:.1f}")


if __name__ == "__main__":
    main()
