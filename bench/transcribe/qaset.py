#!/usr/bin/env python3
"""Questions and their spoken answers: does reading an answer with its question as whisper's
prompt (what `ask_human` does) cost or win words?

The set: 24 questions an agent asks, each with a closed answer that uses a word or name the
question names (a tool, a place, a person, a term whisper mishears alone: "recipient group",
"billing code", "Grafana", "Tomasz"), each answer said by two espeak-ng voices as
bench/transcribe/shortset.py says its answers (0.5-1 s of lead, 3 s of the same sound after),
clean and under white, pink, brown, hum or babble noise at 20, 10 and 5 dB; plus ten
recordings of noise alone, each read with two of the questions as its prompt (does a prompt
make whisper write words over noise?). Standard library only; seeded.

    python3 bench/transcribe/qaset.py make OUT_DIR
    python3 bench/transcribe/qaset.py score OUT_DIR --model MODEL.bin --yazses target/release/yazses \\
        [--beam 1] [--beam 5]
    python3 bench/transcribe/qaset.py control SHORTSET_DIR --model MODEL.bin --yazses ... \\
        [--question "What should we do?"] [--beam 5]

`score` reads every file with and without the question as `--prompt` (`transcribe --format
json`, English, 2 threads) and prints word errors against the script by condition, the
words written over noise alone, the answers whose transcript repeats the question, and the
seconds spent (whole processes). `control` reads bench/transcribe/shortset.py's set, whose
answers do not take their words from any question, without a prompt and with one open
question as the prompt: what a prompt costs where it names none of the answer's words.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shortset as sh  # noqa: E402
from run import words  # noqa: E402

PAIRS = [
    ("Should I send the report to the recipient group or only to Dana?", "Send it to the recipient group."),
    ("Which billing code goes on the invoice for this client?", "Use the consulting billing code."),
    ("Is the staging cluster ready for the new deployment?", "Yes, the staging cluster is ready."),
    ("Should the cache live in Redis or in Memcached?", "Put it in Redis."),
    ("Do you want the changelog in the README or in a separate file?", "In a separate changelog file."),
    ("Which branch should I rebase onto, main or develop?", "Rebase onto develop."),
    ("Should the webhook retry when the request times out?", "Yes, retry the webhook."),
    ("Is Priya or Tomasz reviewing the database migration?", "Tomasz is reviewing the migration."),
    ("Should I bump the Postgres version in the Dockerfile?", "Yes, bump Postgres in the Dockerfile."),
    ("Do you want the Grafana dashboard or the Prometheus alerts first?", "The Grafana dashboard first."),
    ("Which region should the bucket live in, Frankfurt or Dublin?", "Put the bucket in Frankfurt."),
    ("Should I squash the commits before merging the pull request?", "No, keep the commits as they are."),
    ("Should the linter run in the pre-commit hook?", "Yes, run the linter in the pre-commit hook."),
    ("Should the tooltip open on hover or on click?", "On hover."),
    ("Is the OAuth callback URL set in the staging environment?", "Not yet, set the callback URL first."),
    ("Should I archive the Jira tickets from the old sprint?", "Archive them, except the onboarding ticket."),
    ("Which font should the slides use, Inter or Helvetica?", "Use Inter for the slides."),
    ("Is Kofi presenting at the retrospective on Friday?", "Yes, Kofi is presenting."),
    ("Do we deprecate the legacy endpoint this quarter?", "Deprecate the legacy endpoint next quarter."),
    ("Should the nightly build publish to the artifact registry?", "Yes, publish it to the artifact registry."),
    ("Should I call the Stripe API directly or use the SDK?", "Use the Stripe SDK."),
    ("Tabs or spaces in the Makefile?", "Tabs in the Makefile."),
    ("Should the cron job run before or after the backup?", "After the backup."),
    ("Do you want the Kubernetes manifests in Helm or Kustomize?", "Use Kustomize for the manifests."),
]


def make(out_dir, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    entries, turn = [], 0
    for a, (question, text) in enumerate(PAIRS):
        for v in range(2):
            clean, lab = sh.answer(text, sh.VOICES[(2 * a + v) % len(sh.VOICES)], rng)
            base = f"q{a:02d}v{v}"
            sh.ss.write_wav(os.path.join(out_dir, f"{base}_clean.wav"), clean)
            entries.append({"file": f"{base}_clean.wav", "question": question, "text": text, "condition": "clean"})
            for snr in sh.SNRS:
                kind = sh.KINDS[turn % len(sh.KINDS)]
                turn += 1
                name = f"{base}_{kind}_{snr}db.wav"
                sh.ss.write_wav(os.path.join(out_dir, name), sh.mix(clean, lab, kind, snr, rng))
                entries.append({"file": name, "question": question, "text": text, "condition": f"{snr} dB",
                                "noise": kind})
    for k, kind in enumerate(sh.KINDS * 2):
        n = int((6.0 + 2.0 * rng.random()) * sh.ss.RATE)
        nz = sh.ss.scaled(sh.NOISES[kind](n, rng), 10 ** ((-25.0 - 10) / 10))
        name = f"noise{k}_{kind}.wav"
        sh.ss.write_wav(os.path.join(out_dir, name), nz)
        for question, _ in rng.sample(PAIRS, 2):
            entries.append({"file": name, "question": question, "text": "", "condition": "noise alone",
                            "noise": kind})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"seed": seed, "files": entries}, f, indent=1)
    print(f"wrote {len(entries)} readings of {len(os.listdir(out_dir)) - 1} files to {out_dir}")


def transcribe(binary, model, beam, path, prompt):
    cmd = [binary, "transcribe", "--model", model, "--language", "en", "--beam-size", str(beam),
           "--threads", "2", "--format", "json", path] + (["--prompt", prompt] if prompt else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout)["text"] or ""


def repeats_question(question, answer, heard):
    """Whether the transcript carries four of the question's words in their order that the
    answer's script does not (the prompt written out as if it were said)."""
    q, a, h = words(question), words(answer), words(heard)
    grams = lambda w: {tuple(w[i:i + 4]) for i in range(len(w) - 3)}  # noqa: E731
    return bool((grams(q) - grams(a)) & grams(h))


def score(set_dir, model, binary, beams, show):
    with open(os.path.join(set_dir, "manifest.json")) as f:
        entries = json.load(f)["files"]
    conditions = ["clean"] + [f"{s} dB" for s in sh.SNRS] + ["noise alone"]
    n_words = sum(len(words(e["text"])) for e in entries)
    print(f"{len(entries)} readings, {n_words} words\n")
    print("| beam | prompt | " + " | ".join(conditions) + " | all answers | repeats the question | seconds |")
    print("|---" * (len(conditions) + 5) + "|")
    for beam in beams:
        for prompted in (False, True):
            totals = {c: 0 for c in conditions}
            echoes, started = 0, time.monotonic()
            for e in entries:
                heard = transcribe(binary, model, beam, os.path.join(set_dir, e["file"]),
                                   e["question"] if prompted else None)
                n = sh.errors(e["text"], heard) if e["text"] else len(words(heard))
                totals[e["condition"]] += n
                echo = repeats_question(e["question"], e["text"], heard)
                echoes += echo
                if show and (n or echo):
                    print(f"  {beam} {'prompt' if prompted else 'none'} {e['file']}: {heard!r}", file=sys.stderr)
            answers = sum(v for c, v in totals.items() if c != "noise alone")
            cells = " | ".join(str(totals[c]) for c in conditions)
            print(f"| {beam} | {'question' if prompted else 'none'} | {cells} | {answers} | {echoes} | "
                  f"{time.monotonic() - started:.0f} |", flush=True)


def control(set_dir, model, binary, beam, question):
    with open(os.path.join(set_dir, "manifest.json")) as f:
        entries = json.load(f)["files"]
    conditions = ["clean"] + [f"{s} dB" for s in sh.SNRS] + ["noise alone"]
    print(f"{len(entries)} files of {set_dir}, beam {beam}, the prompt {question!r}\n")
    print("| prompt | group | " + " | ".join(conditions) + " | repeats the question |")
    print("|---" * (len(conditions) + 3) + "|")
    for prompted in (False, True):
        totals, echoes = {}, 0
        for e in entries:
            heard = transcribe(binary, model, beam, os.path.join(set_dir, e["file"]), question if prompted else None)
            n = sh.errors(e["text"], heard) if e["text"] else len(words(heard))
            group = totals.setdefault(e.get("group", "short"), {c: 0 for c in conditions})
            group[e["condition"]] += n
            echoes += repeats_question(question, e["text"], heard)
        for g, t in totals.items():
            cells = " | ".join(str(t[c]) for c in conditions)
            print(f"| {'question' if prompted else 'none'} | {g} | {cells} | {echoes} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("out_dir")
    m.add_argument("--seed", type=int, default=42)
    s = sub.add_parser("score")
    s.add_argument("set_dir")
    s.add_argument("--model", required=True)
    s.add_argument("--yazses", required=True)
    s.add_argument("--beam", type=int, action="append")
    s.add_argument("--show", action="store_true", help="print each reading with errors on stderr")
    c = sub.add_parser("control")
    c.add_argument("set_dir")
    c.add_argument("--model", required=True)
    c.add_argument("--yazses", required=True)
    c.add_argument("--beam", type=int, default=5)
    c.add_argument("--question", default="What should we do?")
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.out_dir, a.seed)
    elif a.cmd == "control":
        control(a.set_dir, a.model, a.yazses, a.beam, a.question)
    else:
        score(a.set_dir, a.model, a.yazses, a.beam or [1, 5], a.show)


if __name__ == "__main__":
    main()
