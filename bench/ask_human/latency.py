#!/usr/bin/env python3
"""ask_human latency: from the end of the user's speech to the tool result.

A spoken answer of about 2, 5 and 10 s (espeak-ng, after 1 s of silence) is played as the
microphone in real time (`[audio] source = "file"`, `file_realtime = true`) to a real
`yazses mcp-server`, asked over stdio with plain JSON-RPC. The end of speech is where
`yazses vad --json` puts the last speech segment of the clean recording. Latency = time
from sending `tools/call` to the result, minus that end time. Each answer is asked --runs
times (the model is loaded by a warm-up call first) and the median reported.

The peer is the fixed-window listener ADR-032 replaces: the same server and microphone
with listening stopped only by a fixed window (end_silence raised to 10 s, timeout_s 15),
then the same transcription; its latency is the window's remainder plus transcription.

    cargo build --release -p yazses
    python3 bench/ask_human/latency.py --model ~/.cache/yazses-ci/models/ggml-tiny.en.bin

Standard library only; needs espeak-ng and sox.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ANSWERS = {
    "2 s": "Yes, go ahead.",
    "5 s": "Use the smaller model for now, and ship it on Friday.",
    "10 s": "Keep the current release, but move the meeting to Thursday afternoon, "
            "and send the report to everyone before the end of the month.",
}


def make_answer(text, path):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", f"{tmp}/raw.wav", text], check=True)
        subprocess.run(["sox", "-D", f"{tmp}/raw.wav", "-r", "16000", "-c", "1", "-b", "16", f"{tmp}/s.wav"], check=True)
        subprocess.run(["sox", "-D", "-n", "-r", "16000", "-c", "1", "-b", "16", f"{tmp}/lead.wav", "trim", "0", "1"], check=True)
        subprocess.run(["sox", "-D", f"{tmp}/lead.wav", f"{tmp}/s.wav", path], check=True)


def speech_end_s(yazses, path):
    out = subprocess.run([yazses, "vad", "--json", path], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["segments"][-1]["end_ms"] / 1000


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


def run(yazses, model, answer, fixed, runs, jfk):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write(f'[mcp]\nask_human = true\nask_human_per_hour = 60\n'
                  f'ask_human_end_silence_s = {10.0 if fixed else 1.2}\n'
                  f'[audio]\nsource = "file"\nfile = "{answer}"\nfile_realtime = true\n'
                  f'[transcribe]\nmodel = "{model}"\n[speak]\ncommand = ["true"]\n')
    server = Server(yazses, cfg.name)
    server.call("tools/call", {"name": "transcribe", "arguments": {"path": jfk}})  # load the model
    times, texts = [], []
    for _ in range(runs):
        args = {"question": "Which one?", "timeout_s": 15 if fixed else 30}
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
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    print("| answer | speech ends at | yazses: end of speech -> result | fixed 15 s window: same | ratio | heard |")
    print("|---|---|---|---|---|---|")
    for name, text in ANSWERS.items():
        path = os.path.join(tmp, f"answer-{name.split()[0]}.wav")
        make_answer(text, path)
        end = speech_end_s(args.yazses, path)
        ours, heard = run(args.yazses, args.model, path, False, args.runs, args.jfk)
        fixed, _ = run(args.yazses, args.model, path, True, args.runs, args.jfk)
        lat = statistics.median(ours) - end
        lat_fixed = statistics.median(fixed) - end
        print(f"| {name} | {end:.2f} s | {lat:.2f} s | {lat_fixed:.2f} s | {lat_fixed / lat:.1f}x | {heard} |")


if __name__ == "__main__":
    main()
