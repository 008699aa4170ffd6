#!/usr/bin/env python3
"""End-of-turn benchmark: when does each policy stop, on the set make_set.py writes?

Policies, each over every file of the set, on the recording's own clock:
- fixed: yazses `[turn] mode = "fixed"`, 1.2 s of silence (what ask_human did before);
- smart: yazses `[turn] mode = "smart"` (the words so far, then the acoustics);
- webrtc: WebRTC VAD, aggressiveness 3, 30 ms frames, stop after 1 s of non-speech once
  speech began (VoiceMode's policy); only when the `webrtcvad` module imports (the PyPI
  package webrtcvad-wheels; run this script with a Python that has it).
Not compared: Smart Turn alone, whose model yazses does not run yet.

Reported per condition: for finished and short answers, the median and p90 of stop time
minus the true end of speech, and how many stopped before the end; for mid-clause and
clause-boundary thinking pauses and for two sentences with a breath between them, how
many were cut (stopped before the end of the turn);
for smart, the checks per turn and the CPU time it costs over fixed on the same file
(whole process, all threads; a check whose transcript is reused saves the final
transcription, so this can be below zero).

    cargo build --release -p yazses
    python3 bench/turns/make_set.py target/turns
    python3 bench/turns/run.py target/turns --model ~/.local/share/yazses/models/ggml-tiny.en.bin
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
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


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set_dir")
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    index = json.load(open(os.path.join(args.set_dir, "index.json")))
    try:
        import webrtcvad
        vad = webrtcvad.Vad(3)
    except ImportError:
        vad = None
    runtime = tempfile.mkdtemp()
    os.chmod(runtime, 0o700)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write('[audio]\nfile_realtime = false\n')
    stops = {"fixed": {}, "smart": {}, "webrtc": {}}
    checks, extra_cpu = [], []
    for item in index:
        path = os.path.join(args.set_dir, item["name"] + ".wav")
        fixed = yazses_listen(args.yazses, cfg.name, runtime, path, "fixed", args.model)
        smart = yazses_listen(args.yazses, cfg.name, runtime, path, "smart", args.model)
        stops["fixed"][item["name"]] = fixed["listen_ms"]
        stops["smart"][item["name"]] = smart["listen_ms"]
        turn = smart.get("turn") or {}
        if turn.get("checks"):
            checks.append(turn["checks"])
            extra_cpu.append(smart["cpu_s"] - fixed["cpu_s"])
        if vad is not None:
            stops["webrtc"][item["name"]] = webrtc_stop_ms(path, vad)
        print(f"{item['name']}: end {item['end_ms']} fixed {fixed['listen_ms']} {fixed['text']!r} "
              f"smart {smart['listen_ms']} ({turn.get('decision')}, {turn.get('why')}) {smart['text']!r}",
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
    if extra_cpu:
        print(f"\nsmart: {statistics.mean(checks):.2f} checks per turn; CPU time over fixed's per turn "
              f"(whole process, all threads): median {statistics.median(extra_cpu) * 1000:.0f} ms, "
              f"p90 {pct(extra_cpu, 0.9) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
