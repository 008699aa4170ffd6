#!/usr/bin/env python3
"""Questions and spoken answers through `ask_human` over MCP: how soon after the end of
speech the answer comes back, which answers are cut, and the word errors.

Kinds of answer, each to its own question:
- closed: a whole closed answer to a closed question ("Port 80 or 8080?" / "8080.");
- bare, then more: a bare yes or no, a 0.75 s breath, then more ("Yes." ... "And add a
  test for it."): must not be cut;
- closed, then more: a whole closed answer, a 0.75 s breath, then more ("It is." ... "But
  the lint job failed."): the trade the question-aware stop makes, counted apart;
- open: an answer to an open question;
- pause: a thinking pause of 1.6 s mid-sentence ("I think we should use" ... "8080."):
  must not be cut.
Each said by three espeak-ng voices, clean (a -60 dBFS white floor, a quiet microphone's own
noise) and under babble at 10 dB SNR, after 1 s of silence and followed by 4 s more. Each
recording is the microphone (`[audio] source = "file"`, `file_realtime = true`) of a real
`yazses mcp-server`, asked the question with plain JSON-RPC over stdio.

Latency = from sending `tools/call` to the result, minus where the speech ends in the clean
clip (the last 10 ms frame within 40 dB of its loudest, gaps under 200 ms closed). An
answer is cut when listening stopped before its last part began (`listen_ms`). Word errors
are against everything said.

Policies, each in its own server with the same model:
- `closed 450 ms` (the default): a whole closed answer to a closed question stops at
  `closed_end_silence_ms` (450 ms); everything else as before;
- `as before`: `closed_end_silence_ms = 1200`, i.e. every finished answer waits 1.2 s.

    cargo build --release -p yazses
    python3 bench/ask_human/qa.py --model ~/.cache/yazses-ci/models/ggml-tiny.en.bin

Standard library only; needs espeak-ng and sox.
"""
import argparse
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "vad"))
sys.path.insert(0, os.path.join(ROOT, "bench", "transcribe"))
import speechset as ss  # noqa: E402
from latency import Server  # noqa: E402
from shortset import errors  # noqa: E402

BREATH_S = 0.75
PAUSE_S = 1.6
LEAD_S = 1.0
TAIL_S = 4.0

SET = [
    ("closed", "Should the server listen on port 80 or 8080?", ["8080."]),
    ("closed", "Do you want it today or tomorrow?", ["Tomorrow, after lunch."]),
    ("closed", "Is the staging cluster ready for the deployment?", ["Yes, the staging cluster is ready."]),
    ("closed", "Should the cache live in Redis or in Memcached?", ["Put it in Redis."]),
    ("closed", "Is the test green?", ["It is."]),
    ("closed", "Should I squash the commits before merging?", ["No, keep the commits."]),
    ("bare, then more", "Should I merge the pull request?", ["Yes.", "And add a test for it."]),
    ("bare, then more", "Can I delete the old branch?", ["No.", "Keep it until Friday."]),
    ("closed, then more", "Is the build green?", ["It is.", "But the lint job failed."]),
    ("open", "What should we do about the flaky test?", ["Quarantine it and open an issue."]),
    ("open", "Why did the deploy fail?", ["The database migration timed out."]),
    ("pause", "Which port should the server use, 80 or 8080?", ["I think we should use", "8080."]),
    ("pause", "Should I send the report to Dana?", ["Send it to", "the whole recipient group."]),
]

VOICES = [("en-us", 160, 50), ("en+m3", 150, 40), ("en-us+f3", 170, 60)]

POLICIES = [("closed 450 ms", ""), ("as before", "closed_end_silence_ms = 1200\n")]


def said(parts, kind, voice):
    """The clean recording of `parts`, and where its last part begins and ends (s)."""
    gap = PAUSE_S if kind == "pause" else BREATH_S
    out = [0.0] * int(LEAD_S * ss.RATE)
    last_start = 0.0
    for k, text in enumerate(parts):
        if k:
            out += [0.0] * int(gap * ss.RATE)
        last_start = len(out) / ss.RATE
        out += ss.trim(ss.espeak(text, *voice))
    out += [0.0] * int(TAIL_S * ss.RATE)
    out += [0.0] * ((-len(out)) % ss.FRAME)
    lab = ss.labels(out)
    end = (max(i for i, x in enumerate(lab) if x) + 1) * ss.FRAME / ss.RATE
    return out, lab, last_start, end


def make(out_dir, seed):
    rng = random.Random(seed)
    items = []
    for i, (kind, question, parts) in enumerate(SET):
        for v, voice in enumerate(VOICES):
            clean, lab, last_start, end = said(parts, kind, voice)
            level = ss.scaled(clean, 10 ** (-25.0 / 10) * ss.power(clean) / ss.active_power(clean, lab))
            floor = ss.scaled(ss.white(len(level), rng), 10 ** (-60.0 / 10))
            for cond, mixed in [("clean", [a + b for a, b in zip(level, floor)]),
                                ("babble 10 dB", babble(level, lab, rng))]:
                name = f"q{i:02d}v{v}_{cond.split()[0]}.wav"
                ss.write_wav(os.path.join(out_dir, name), mixed)
                items.append({"file": name, "kind": kind, "question": question, "text": " ".join(parts), "parts": len(parts),
                              "condition": cond, "last_start": last_start, "end": end})
    return items


def babble(clean, lab, rng):
    sp = ss.active_power(clean, lab)
    nz = ss.scaled(ss.babble(len(clean), rng), sp / 10)
    out = [c + z for c, z in zip(clean, nz)]
    peak = max(abs(s) for s in out)
    return [s * 0.99 / peak for s in out] if peak > 0.99 else out


def ask(yazses, model, more, path, question):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write(f'[mcp]\nask_human = true\nask_human_per_hour = 60\n'
                  f'[audio]\nsource = "file"\nfile = "{path}"\nfile_realtime = true\n'
                  f'[transcribe]\nmodel = "{model}"\n[speak]\ncommand = ["true"]\n'
                  f'[turn]\nmode = "smart"\n{more}')
    server = Server(yazses, cfg.name)
    try:
        # The model loads at the server's first transcription: a warm-up, not measured.
        server.call("tools/call", {"name": "transcribe",
                                   "arguments": {"path": os.path.join(ROOT, "fixtures/speech/hello.wav")}})
        t0 = time.perf_counter()
        r = server.call("tools/call", {"name": "ask_human", "arguments": {"question": question, "timeout_s": 30}})
        wall = time.perf_counter() - t0
    finally:
        server.close()
        os.unlink(cfg.name)
    return wall, r["result"]["structuredContent"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--voices", type=int, default=len(VOICES), help="the first N voices only")
    ap.add_argument("--show", action="store_true", help="print every answer")
    ap.add_argument("--only", help="the recordings whose name starts with this only")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    items = [it for it in make(tmp, 42) if int(it["file"][4]) < args.voices
             and it["file"].startswith(args.only or "")]
    rows = {}
    for name, more in POLICIES:
        for it in items:
            wall, sc = ask(args.yazses, args.model, more, os.path.join(tmp, it["file"]), it["question"])
            cut = it["parts"] > 1 and sc["listen_ms"] / 1000 < it["last_start"]
            key = (name, it["kind"], it["condition"])
            r = rows.setdefault(key, {"lat": [], "cuts": 0, "err": 0, "words": 0, "n": 0})
            r["lat"].append(wall - it["end"])
            r["cuts"] += cut
            r["err"] += errors(it["text"], sc["answer"])
            r["words"] += len(it["text"].split())
            r["n"] += 1
            if args.show:
                turn = sc.get("turn") or {}
                print(f"{name} | {it['file']} | {wall - it['end']:.2f} s | cut={cut} | {sc['answer']!r} | "
                      f"speech ends {it['end']:.2f} s, listened {sc['listen_ms']} ms, checks {turn.get('checks')}, "
                      f"last at {turn.get('at_ms')} ms after {turn.get('silence_ms')} ms: {turn.get('why')}",
                      file=sys.stderr, flush=True)
    print("| policy | kind | condition | answers | end of speech -> result, median (max) | cut | word errors |")
    print("|---|---|---|---|---|---|---|")
    for (name, kind, cond), r in rows.items():
        print(f"| {name} | {kind} | {cond} | {r['n']} | {statistics.median(r['lat']):.2f} s "
              f"({max(r['lat']):.2f} s) | {r['cuts']} | {r['err']} / {r['words']} |")


if __name__ == "__main__":
    main()
