#!/usr/bin/env python3
"""ask_human latency: from the end of the user's speech to the tool result.

A spoken answer of about 2, 5 and 10 s (espeak-ng, after 1 s of silence, followed by 4 s
of silence, all under a -60 dBFS white noise floor: a quiet microphone's own noise) is
played as the microphone in real time (`[audio] source = "file"`, `file_realtime = true`)
to a real `yazses mcp-server`, asked over stdio with plain JSON-RPC. The end of speech is
the end of the last 10 ms of the spoken clip within 40 dB of its loudest, measured on the
clip itself (not by our detector). Latency = time from sending `tools/call` to the
result, minus that end time. Each answer is asked --runs times (the model is loaded by a
warm-up call first) and the median reported.

Until 2026-12-04 the answers had no noise floor and no tail, and the end was the file's
end: espeak's quiet last 0.4 s counted as speech, and the digital silence after it held
our detector's level up for about 0.5 s more (see docs/benchmarks.md).

Three policies, each in its own server, the same microphone and model:
- `smart` (`[turn] mode = "smart"`, the default): the end of turn is judged from the
  partial transcript (and the voice, when `yazses model fetch smart-turn` installed it) at
  300 ms of silence, a finished answer stops at `min_end_silence_ms` (1200 ms), and its
  transcript is returned as it is;
- `smart, 300 ms`: the same with `min_end_silence_ms = 300` (the default until
  2026-12-06): sooner, and a second sentence after a breath is cut off;
- `fixed` (`[turn] mode = "fixed"`): 1.2 s of silence, then the transcription.
The last answer is two sentences with a 0.8 s breath between them (said apart and joined):
its "heard" columns show which policies kept the second.
(docs/decisions/2026-12-02-ask-human-latency.md has the numbers against a fixed 15 s
listening window.)

    cargo build --release -p yazses
    python3 bench/ask_human/latency.py --model ~/.cache/yazses-ci/models/ggml-tiny.en.bin

Standard library only; needs espeak-ng and sox.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import tempfile
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ANSWERS = {
    "2 s": ["Yes, go ahead."],
    "5 s": ["Use the smaller model for now, and ship it on Friday."],
    "10 s": ["Keep the current release, but move the meeting to Thursday afternoon, "
             "and send the report to everyone before the end of the month."],
    "two sentences, 0.8 s breath": ["Yes, use the smaller model.", "And ship it on Friday."],
}

BREATH_S = 0.8

POLICIES = [("smart", "smart", ""), ("smart, 300 ms", "smart", "min_end_silence_ms = 300\n"),
            ("fixed 1.2 s", "fixed", "")]


LEAD_S = 1.0


def make_answer(parts, path):
    """Writes the answer's recording (its parts said apart, BREATH_S between them);
    returns where its speech ends, in seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        sox = lambda *a: subprocess.run(["sox", "-D", *a], check=True)
        silence = ["-r", "16000", "-c", "1", "-b", "16"]
        said = []
        for k, text in enumerate(parts):
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", f"{tmp}/raw{k}.wav", text],
                           check=True)
            # espeak-ng's own silence before and after the words is cut, so that the
            # breath between two parts is BREATH_S (with it, 0.8 s became 1.18 s).
            sox(f"{tmp}/raw{k}.wav", *silence, f"{tmp}/p{k}.wav",
                "silence", "1", "0.01", "-50d", "reverse", "silence", "1", "0.01", "-50d", "reverse")
            if k:
                said.append(f"{tmp}/breath.wav")
            said.append(f"{tmp}/p{k}.wav")
        sox("-n", *silence, f"{tmp}/breath.wav", "trim", "0", str(BREATH_S))
        if len(said) == 1:
            sox(said[0], f"{tmp}/s.wav")
        else:
            sox(*said, f"{tmp}/s.wav")
        sox("-n", *silence, f"{tmp}/lead.wav", "trim", "0", str(LEAD_S))
        sox("-n", *silence, f"{tmp}/tail.wav", "trim", "0", "4")
        sox(f"{tmp}/lead.wav", f"{tmp}/s.wav", f"{tmp}/tail.wav", f"{tmp}/clean.wav")
        length = float(subprocess.run(["soxi", "-D", f"{tmp}/clean.wav"], check=True,
                                      capture_output=True, text=True).stdout)
        sox(*silence, "-n", f"{tmp}/noise.wav", "synth", str(length), "whitenoise", "vol", "0.001")
        sox("-m", f"{tmp}/clean.wav", f"{tmp}/noise.wav", "-b", "16", path)
        return LEAD_S + clip_end_s(f"{tmp}/s.wav")


def clip_end_s(path, frame=160, within_db=40.0):
    """The end of the last 10 ms frame of a clean clip within `within_db` of its loudest."""
    with wave.open(path) as w:
        n = w.getnframes()
        samples = struct.unpack(f"<{n}h", w.readframes(n))
    energies = [sum(x * x for x in samples[i:i + frame]) / frame for i in range(0, n - frame + 1, frame)]
    floor = max(energies) / 10 ** (within_db / 10)
    last = max(i for i, e in enumerate(energies) if e >= floor)
    return (last + 1) * frame / 16000


class Server:
    def __init__(self, yazses, config):
        # A runtime dir of its own: the user's hourly interrupt budget is neither spent by
        # the benchmark nor able to refuse it.
        self.runtime = tempfile.TemporaryDirectory()
        os.chmod(self.runtime.name, 0o700)
        env = dict(os.environ, YAZSES_RUNTIME_DIR=self.runtime.name)
        self.p = subprocess.Popen([yazses, "--config", config, "mcp-server"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "latency-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def run(yazses, model, answer, mode, more, runs, jfk):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write(f'[mcp]\nask_human = true\nask_human_per_hour = 60\n'
                  f'ask_human_end_silence_s = 1.2\n'
                  f'[audio]\nsource = "file"\nfile = "{answer}"\nfile_realtime = true\n'
                  f'[transcribe]\nmodel = "{model}"\n[speak]\ncommand = ["true"]\n'
                  f'[turn]\nmode = "{mode}"\n{more}')
    server = Server(yazses, cfg.name)
    server.call("tools/call", {"name": "transcribe", "arguments": {"path": jfk}})  # load the model
    times, texts = [], []
    for _ in range(runs):
        args = {"question": "Which one?", "timeout_s": 30}
        t0 = time.perf_counter()
        r = server.call("tools/call", {"name": "ask_human", "arguments": args})
        times.append(time.perf_counter() - t0)
        sc = r["result"].get("structuredContent", {})
        texts.append(sc.get("answer", r["result"]))
    server.close()
    os.unlink(cfg.name)
    return times, texts[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--yazses", default=os.path.join(ROOT, "target/release/yazses"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jfk", default=os.path.join(ROOT, "fixtures/speech/hello.wav"))
    ap.add_argument("--policy", action="append", choices=[name for name, _, _ in POLICIES],
                    help="only this policy (repeatable; default: all)")
    args = ap.parse_args()
    policies = [p for p in POLICIES if not args.policy or p[0] in args.policy]
    tmp = tempfile.mkdtemp()
    names = [name for name, _, _ in policies]
    print("| answer | speech ends at | " + " | ".join(f"{n}: end of speech -> result" for n in names)
          + " | " + " | ".join(f"heard ({n})" for n in names) + " |")
    print("|---|---|" + "---|" * (2 * len(names)))
    for name, parts in ANSWERS.items():
        path = os.path.join(tmp, f"answer-{name.split()[0]}.wav")
        end = make_answer(parts, path)
        lat, heard = [], []
        for _, mode, more in policies:
            times, text = run(args.yazses, args.model, path, mode, more, args.runs, args.jfk)
            lat.append(statistics.median(times) - end)
            heard.append(text)
        print(f"| {name} | {end:.2f} s | " + " | ".join(f"{x:.2f} s" for x in lat) + " | "
              + " | ".join(str(h) for h in heard) + " |", flush=True)

if __name__ == "__main__":
    main()
