#!/usr/bin/env python3
"""End-of-turn benchmark: when does each policy stop, on the set make_set.py writes?

Policies, each over every file of the set, on the recording's own clock:
- fixed: yazses `[turn] mode = "fixed"`, 1.2 s of silence (what ask_human did before);
- smart: yazses `[turn] mode = "smart"` (the words so far and the voice, then the
  acoustics; the voice only when `yazses model fetch smart-turn` has installed the model);
- webrtc: WebRTC VAD, aggressiveness 3, 30 ms frames, stop after 1 s of non-speech once
  speech began (VoiceMode's policy); only when the `webrtcvad` module imports (the PyPI
  package webrtcvad-wheels; run this script with a Python that has it);
- smart_turn: Smart Turn v3.2 alone with Pipecat's policy: at 0.2 s of non-speech run the
  model on the turn so far (from 0.5 s before its speech began), stop when it says
  complete (> 0.5), else keep listening, and stop at 3 s of non-speech whatever it said.
  Its VAD is Silero v6 at Pipecat's confidence 0.7 (`--silero FILE`, the
  silero_vad_v6.onnx faster-whisper 1.2 ships; Pipecat's volume gate is not applied), or
  WebRTC VAD as above without it. Pipecat's own code runs the model (`--pipecat DIR`, the
  wheel's smart_turn directory; needs numpy and onnxruntime), and the CPU time of each
  run is reported.

Reported per condition: for finished and short answers, the median and p90 of stop time
minus the true end of speech, and how many stopped before the end; for mid-clause and
clause-boundary thinking pauses and for two sentences with a breath between them, how
many were cut (stopped before the end of the turn);
for smart, the checks per turn and the CPU time it costs over fixed on the same file
(whole process, all threads; a check whose transcript is reused saves the final
transcription, so this can be below zero).

    cargo build --release -p yazses
    python3 bench/turns/make_set.py target/turns
    python3 bench/turns/run.py target/turns --model ~/.local/share/yazses/models/ggml-tiny.en.bin \
        --pipecat /tmp/pc/x/pipecat/audio/turn/smart_turn
(see smart_turn_reference.py for getting that directory and a Python with numpy,
onnxruntime and webrtcvad-wheels)
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def yazses_listen(yazses, config, runtime, path, turn, model):
    before = cpu_of_children()
    out = subprocess.run(
        [yazses, "--config", config, "listen", "--source", "file", "--file", path, "--json",
         "--turn", turn, "--model", model],
        check=True, capture_output=True, text=True,
        env=dict(os.environ, YAZSES_RUNTIME_DIR=runtime, YAZSES_LOG="error"))
    v = json.loads(out.stdout)
    v["cpu_s"] = cpu_of_children() - before
    return v


def webrtc_stop_ms(path, vad):
    with wave.open(path) as w:
        n = w.getnframes()
        pcm = w.readframes(n)
    frame = 480  # 30 ms at 16 kHz
    started, silent = False, 0
    for i in range(0, n - frame + 1, frame):
        speech = vad.is_speech(pcm[2 * i:2 * (i + frame)], 16000)
        if speech:
            started, silent = True, 0
        elif started:
            silent += 30
            if silent >= 1000:
                return (i + frame) * 1000 // 16000
    return n * 1000 // 16000 + 1000


class SmartTurnAlone:
    """Pipecat's Smart Turn policy over WebRTC VAD frames."""

    def __init__(self, directory):
        import numpy as np
        from pipecat_smart_turn import SmartTurn
        self.np, self.model = np, SmartTurn(directory)
        self.cpu_ms = []

    def complete(self, samples):
        start = time.process_time()
        p = self.model.probability(samples)
        self.cpu_ms.append((time.process_time() - start) * 1000)
        return p > 0.5

    def stop_ms(self, path, speech_frames):
        """Pipecat's policy over `speech_frames`: (frame samples, [bool per frame])."""
        with wave.open(path) as w:
            n = w.getnframes()
            samples = self.np.frombuffer(w.readframes(n), dtype="<i2")
        frame, speech = speech_frames
        ms = frame * 1000 // 16000
        start_frames = -(-200 // ms)  # 0.2 s of speech starts a turn (Pipecat's start_secs)
        run, start, silent, asked = 0, None, 0, False
        for k, is_speech in enumerate(speech):
            end = (k + 1) * frame
            if is_speech:
                run += 1
                if run >= start_frames:
                    if start is None:
                        start = max(0, end - run * frame - 8000)  # 0.5 s before
                    silent, asked = 0, False
                continue
            run = 0
            if start is None:
                continue
            silent += ms
            if silent >= 200 and not asked:
                asked = True
                if self.complete(samples[start:end]):
                    return end * 1000 // 16000
            if silent >= 3000:
                return end * 1000 // 16000
        return n * 1000 // 16000 + 3000


def webrtc_frames(path, vad):
    """WebRTC VAD's verdict on each 30 ms frame."""
    with wave.open(path) as w:
        n = w.getnframes()
        pcm = w.readframes(n)
    return 480, [vad.is_speech(pcm[2 * i:2 * (i + 480)], 16000) for i in range(0, n - 479, 480)]


class Silero:
    """Silero VAD v6 (the model faster-whisper ships), as Pipecat's default VAD uses it:
    512-sample frames with 64 samples of context, speech at a confidence of 0.7."""

    def __init__(self, path):
        import numpy as np
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.inter_op_num_threads = 1
        so.intra_op_num_threads = 1
        self.np, self.session = np, ort.InferenceSession(path, so)

    def frames(self, path):
        np = self.np
        with wave.open(path) as w:
            x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
        x = x[: len(x) // 512 * 512].reshape(-1, 512)
        context = np.roll(x[:, -64:].copy(), 1, 0)
        context[0] = 0
        h = np.zeros((1, 1, 128), dtype=np.float32)
        c = np.zeros((1, 1, 128), dtype=np.float32)
        out, _, _ = self.session.run(None, {"input": np.concatenate([context, x], 1), "h": h, "c": c})
        return 512, [float(p) >= 0.7 for p in np.ravel(out)]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set_dir")
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--pipecat", help="the smart_turn directory of the pipecat-ai 1.14.0 wheel")
    ap.add_argument("--turn-config", default="", help="lines added under [turn], such as prosody_threshold = 0.1")
    ap.add_argument("--silero", help="silero_vad_v6.onnx (in the faster-whisper wheel's assets): "
                    "the VAD under Smart Turn alone, as in Pipecat; WebRTC VAD without it")
    ap.add_argument("--only-python", action="store_true", help="only the webrtc and smart_turn rows (no yazses runs)")
    args = ap.parse_args()
    index = json.load(open(os.path.join(args.set_dir, "index.json")))
    try:
        import webrtcvad
        # WebRTC VAD adapts to what it heard: a new one for every file.
        vad = lambda: webrtcvad.Vad(3)
    except ImportError:
        vad = None
    runtime = tempfile.mkdtemp()
    os.chmod(runtime, 0o700)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write('[audio]\nfile_realtime = false\n[turn]\n' + args.turn_config.replace("\\n", "\n") + "\n")
    alone = SmartTurnAlone(args.pipecat) if args.pipecat and vad is not None else None
    silero = Silero(args.silero) if args.silero else None
    stops = {"fixed": {}, "smart": {}, "webrtc": {}, "smart_turn": {}}
    checks, extra_cpu = [], []
    for item in index:
        path = os.path.join(args.set_dir, item["name"] + ".wav")
        if args.only_python:
            fixed = smart = {"listen_ms": None, "text": None}
        else:
            fixed = yazses_listen(args.yazses, cfg.name, runtime, path, "fixed", args.model)
            smart = yazses_listen(args.yazses, cfg.name, runtime, path, "smart", args.model)
            stops["fixed"][item["name"]] = fixed["listen_ms"]
            stops["smart"][item["name"]] = smart["listen_ms"]
        turn = smart.get("turn") or {}
        if turn.get("checks"):
            checks.append(turn["checks"])
            extra_cpu.append(smart["cpu_s"] - fixed["cpu_s"])
        if vad is not None:
            stops["webrtc"][item["name"]] = webrtc_stop_ms(path, vad())
        if alone is not None:
            frames = silero.frames(path) if silero else webrtc_frames(path, vad())
            stops["smart_turn"][item["name"]] = alone.stop_ms(path, frames)
        print(f"{item['name']}: end {item['end_ms']} fixed {fixed['listen_ms']} {fixed['text']!r} "
              f"smart {smart['listen_ms']} ({turn.get('decision')} by {turn.get('decided_by')}, "
              f"p={turn.get('probability')}, {turn.get('why')}) {smart['text']!r} "
              f"smart_turn {stops['smart_turn'].get(item['name'])}",
              flush=True)
    os.unlink(cfg.name)
    print()
    print("| policy | condition | finished: median stop after end | p90 | stopped before the end "
          "| mid-clause pauses cut | clause-boundary pauses cut | cut between two sentences |")
    print("|---|---|---|---|---|---|---|---|")
    for policy, got in stops.items():
        if not got:
            continue
        for cond in ["clean", "pink", "babble"]:
            items = [i for i in index if i["condition"] == cond]
            done = [got[i["name"]] - i["end_ms"] for i in items if i["kind"] in ("finished", "short")]
            early = sum(1 for d in done if d < 0)
            after = [d for d in done if d >= 0]
            cut = lambda kind: [i for i in items if i["kind"] == kind]
            cuts = lambda kind: sum(1 for i in cut(kind) if got[i["name"]] < i["end_ms"])
            med = f"{statistics.median(after):.0f} ms" if after else "-"
            p90 = f"{pct(after, 0.9):.0f} ms" if after else "-"
            print(f"| {policy} | {cond} | {med} | {p90} | {early}/{len(done)} "
                  f"| {cuts('pause')}/{len(cut('pause'))} | {cuts('boundary')}/{len(cut('boundary'))} "
                  f"| {cuts('sentences')}/{len(cut('sentences'))} |")
    if vad is None:
        print("\n(webrtc not run: the webrtcvad module did not import)")
    if alone is not None and alone.cpu_ms:
        print(f"\nSmart Turn (Pipecat's numpy features + onnxruntime, one thread): {len(alone.cpu_ms)} runs, "
              f"CPU per run median {statistics.median(alone.cpu_ms):.0f} ms, p90 {pct(alone.cpu_ms, 0.9):.0f} ms")
    if extra_cpu:
        print(f"\nsmart: {statistics.mean(checks):.2f} checks per turn; CPU time over fixed's per turn "
              f"(whole process, all threads): median {statistics.median(extra_cpu) * 1000:.0f} ms, "
              f"p90 {pct(extra_cpu, 0.9) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
