#!/usr/bin/env python3
"""Short answers in noise: the set, and the word errors of one or more `yazses` binaries on it.

What people and agents hear most is a short answer (2-10 s) with noise after it. The set:
twelve answers of 3-14 words, each said by two espeak-ng voices, 0.5-1 s after the start
and followed by 3 s more of the same sound; each answer clean and under one noise at 20,
10 and 5 dB SNR (active speech power over noise power), the noise kind turning through
white, pink, brown, mains hum and babble (sixteen other espeak-ng talkers), so every kind
meets every SNR; plus ten recordings of noise alone (two of each kind, 6-8 s). 96 answers,
856 words. Then a second group: six longer answers of two sentences (14-20 words, 8-10 s
with the noise after them), each by two voices, clean and at 20, 10 and 5 dB of babble,
pink and brown noise (48 answers). Standard library only (noise from bench/vad/speechset.py, seeded: the same
seed gives the same files).

    python3 bench/transcribe/shortset.py make OUT_DIR
    python3 bench/transcribe/shortset.py score OUT_DIR --model MODEL.bin \\
        [--beam 5 | --listen [--turn fixed|smart]] NAME=path/to/yazses [NAME=...]

`score` prints, per binary and group: the word errors (substitutions, deletions and insertions
against the script, counted with run.py's normalisation) by condition, the words written
over noise alone, and the answers whose transcript says a phrase of two or more words
three times in a row (a repetition loop). Every binary runs every file in turn, with the
same arguments (`transcribe --format json`, English, 2 threads; with `--listen`, `listen
--source file --json`, the file played as the microphone as fast as it decodes).
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "vad"))
sys.path.insert(0, HERE)
import speechset as ss  # noqa: E402
from run import wer, words  # noqa: E402

ANSWERS = [
    "Yes, go ahead.",
    "No, keep the current version for now.",
    "Use the smaller model and ship it on Friday.",
    "Move the meeting to Thursday afternoon, please.",
    "I would rather wait until the tests pass on every machine.",
    "The blue one looks better to me.",
    "Put it in the shared folder and tell the whole team.",
    "Not yet, I still need to check the numbers in the second table.",
    "Call it version two and write down what changed.",
    "Twenty minutes should be enough.",
    "Ask Maria, she knows the build server better than I do.",
    "Delete the old branch but keep a copy of the logs from last week.",
]
VOICES = [("en-us", 160, 50), ("en+m3", 150, 40), ("en-us+f3", 170, 60), ("en+f4", 155, 55)]
# Longer answers, two sentences each (6-10 s said): where whisper ends its segment before the
# noise after the answer ends, the rest is read again on its own, and babble read alone is
# where whisper invents a sentence ("I'll see you in the middle, and see you in the middle").
LONG_ANSWERS = [
    "Yes, merge it today. The reviewers already signed off and the tests are green.",
    "I think the second option is safer, because it keeps the old files until we know the new ones work.",
    "Not this week. We have the release on Thursday and nobody has time to look at it properly.",
    "Send the report to the whole team and ask them to reply before the meeting on Monday morning.",
    "Use the quiet room on the third floor. The big one downstairs is booked all afternoon.",
    "Keep the default settings for now, and we can tune the numbers once we have real data from users.",
]
LONG_KINDS = ["babble", "pink", "babble", "brown"]
KINDS = ["white", "pink", "brown", "hum", "babble"]
SNRS = [20, 10, 5]
TAIL_S = 3.0


def brown(n, rng):
    """White noise integrated with a slow leak: the rumble of traffic or a fan."""
    out, y = [], 0.0
    for _ in range(n):
        y = 0.998 * y + rng.gauss(0.0, 1.0)
        out.append(y)
    return out


NOISES = {"white": ss.white, "pink": ss.pink, "brown": brown, "hum": ss.hum, "babble": ss.babble}


def mix(clean, lab, kind, snr, rng):
    """`clean` with `kind` noise at `snr` dB over its whole length, kept under full scale."""
    sp = ss.active_power(clean, lab)
    nz = ss.scaled(NOISES[kind](len(clean), rng), sp / 10 ** (snr / 10))
    out = [c + z for c, z in zip(clean, nz)]
    peak = max(abs(s) for s in out)
    return [s * 0.99 / peak for s in out] if peak > 0.99 else out


def answer(text, voice, rng):
    """`text` said by `voice` after 0.5-1 s of silence and followed by [`TAIL_S`] more, at an
    active speech level of -20 to -30 dBFS, with its speech labels."""
    voice, speed, pitch = voice
    speech = ss.trim(ss.espeak(text, voice, speed, pitch))
    lead = [0.0] * int((0.5 + 0.5 * rng.random()) * ss.RATE)
    clean = lead + speech + [0.0] * int(TAIL_S * ss.RATE)
    clean += [0.0] * ((-len(clean)) % ss.FRAME)
    lab = ss.labels(clean)
    level = -20.0 - 10.0 * rng.random()
    return ss.scaled(clean, 10 ** (level / 10) * ss.power(clean) / ss.active_power(clean, lab)), lab


def make(out_dir, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    entries = []
    turn = 0
    for a, text in enumerate(ANSWERS):
        for v in range(2):
            clean, lab = answer(text, VOICES[(2 * a + v) % len(VOICES)], rng)
            base = f"a{a:02d}v{v}"
            ss.write_wav(os.path.join(out_dir, f"{base}_clean.wav"), clean)
            entries.append({"file": f"{base}_clean.wav", "text": text, "condition": "clean"})
            for snr in SNRS:
                kind = KINDS[turn % len(KINDS)]
                turn += 1
                name = f"{base}_{kind}_{snr}db.wav"
                ss.write_wav(os.path.join(out_dir, name), mix(clean, lab, kind, snr, rng))
                entries.append({"file": name, "text": text, "condition": f"{snr} dB", "noise": kind})
    for k, kind in enumerate(KINDS * 2):
        n = int((6.0 + 2.0 * rng.random()) * ss.RATE)
        # As loud as the noise under -25 dBFS speech at 10 dB SNR.
        nz = ss.scaled(NOISES[kind](n, rng), 10 ** ((-25.0 - 10) / 10))
        name = f"noise{k}_{kind}.wav"
        ss.write_wav(os.path.join(out_dir, name), nz)
        entries.append({"file": name, "text": "", "condition": "noise alone", "noise": kind})
    # Made after the rest, so the files above stay what they were before this group existed.
    turn = 0
    for a, text in enumerate(LONG_ANSWERS):
        for v in range(2):
            clean, lab = answer(text, VOICES[(2 * a + v + 1) % len(VOICES)], rng)
            base = f"l{a:02d}v{v}"
            ss.write_wav(os.path.join(out_dir, f"{base}_clean.wav"), clean)
            entries.append({"file": f"{base}_clean.wav", "text": text, "condition": "clean", "group": "long"})
            for snr in SNRS:
                kind = LONG_KINDS[turn % len(LONG_KINDS)]
                turn += 1
                name = f"{base}_{kind}_{snr}db.wav"
                ss.write_wav(os.path.join(out_dir, name), mix(clean, lab, kind, snr, rng))
                entries.append({"file": name, "text": text, "condition": f"{snr} dB", "noise": kind,
                                "group": "long"})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"seed": seed, "files": entries}, f, indent=1)
    print(f"wrote {len(entries)} files to {out_dir}")


def errors(truth, heard):
    """Word edits from the script to the transcript (substitutions, deletions, insertions)."""
    return round(wer(truth, heard) * max(1, len(words(truth))))


def looped(text):
    """Whether a phrase of two or more words comes three times in a row."""
    w = words(text)
    for n in range(2, len(w) // 3 + 1):
        for i in range(len(w) - 3 * n + 1):
            if w[i:i + n] == w[i + n:i + 2 * n] == w[i + 2 * n:i + 3 * n]:
                return True
    return False


def transcribe(binary, model, beam, path, listen, turn=None):
    """What `binary` heard in `path`: as a file (`transcribe`), or with `listen`, played as
    the microphone through the live path (end of speech, then the spoken transcription
    `ask_human` and dictation use), as fast as it decodes."""
    if listen:
        config = os.path.join(os.path.dirname(path), "listen.toml")
        if not os.path.exists(config):
            with open(config, "w") as f:
                f.write("[audio]\nfile_realtime = false\n")
        cmd = [binary, "--config", config, "listen", "--source", "file", "--file", path,
               "--model", model, "--json"] + (["--turn", turn] if turn else [])
    else:
        cmd = [binary, "transcribe", "--model", model, "--language", "en", "--beam-size", str(beam),
               "--threads", "2", "--format", "json", path]
    runtime = os.path.join(os.path.dirname(path), f"runtime-{os.getpid()}")
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, YAZSES_RUNTIME_DIR=runtime))
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout)["text"] or ""


def score(set_dir, model, beam, binaries, show, listen, turn=None):
    with open(os.path.join(set_dir, "manifest.json")) as f:
        entries = json.load(f)["files"]
    conditions = ["clean"] + [f"{s} dB" for s in SNRS]
    groups = sorted({e.get("group", "short") for e in entries}, key=lambda g: g != "short")
    totals = {(name, g): {c: 0 for c in conditions + ["noise alone"]} for name, _ in binaries for g in groups}
    loops = {name: [] for name, _ in binaries}
    for e in entries:
        path = os.path.join(set_dir, e["file"])
        for name, binary in binaries:
            heard = transcribe(binary, model, beam, path, listen, turn)
            n = errors(e["text"], heard) if e["text"] else len(words(heard))
            totals[(name, e.get("group", "short"))][e["condition"]] += n
            if looped(heard):
                loops[name].append(e["file"])
            if show and n:
                print(f"  {name} {e['file']}: {n}: {heard!r}", file=sys.stderr, flush=True)
    how = "listen (the live path, the window fit to the capture)" if listen else f"transcribe, beam {beam}"
    for g in groups:
        mine = [e for e in entries if e.get("group", "short") == g]
        words_total = {c: sum(len(words(e["text"])) for e in mine if e["condition"] == c) for c in conditions}
        title = "short answers" if g == "short" else "longer answers (two sentences)"
        print(f"{how}; {title}: word errors of {sum(words_total.values())} words "
              f"({', '.join(f'{c} {words_total[c]}' for c in conditions)})")
        alone = any(e["condition"] == "noise alone" for e in mine)
        print("| binary | " + " | ".join(conditions) + " | all answers |"
              + (" words over noise alone |" if alone else ""))
        print("|---" * (len(conditions) + 2 + alone) + "|")
        for name, _ in binaries:
            t = totals[(name, g)]
            print(f"| {name} | " + " | ".join(str(t[c]) for c in conditions)
                  + f" | {sum(t[c] for c in conditions)} |" + (f" {t['noise alone']} |" if alone else ""))
    print("answers with a phrase of two or more words three times in a row (a loop): "
          + ", ".join(f"{name} {len(files)}" for name, files in loops.items()))
    for name, files in loops.items():
        if files:
            print(f"{name} looped on: {', '.join(files)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("out")
    mk.add_argument("--seed", type=int, default=20261205)
    sc = sub.add_parser("score")
    sc.add_argument("set")
    sc.add_argument("binaries", nargs="+", help="NAME=PATH of a yazses binary")
    sc.add_argument("--model", required=True)
    sc.add_argument("--beam", type=int, default=5)
    sc.add_argument("--show", action="store_true", help="print every transcript with errors on stderr")
    sc.add_argument("--listen", action="store_true",
                    help="play each file as the microphone through `yazses listen` instead")
    sc.add_argument("--turn", choices=["fixed", "smart"],
                    help="with --listen, the end of turn (default: the binary's own default)")
    args = ap.parse_args()
    if args.what == "make":
        make(args.out, args.seed)
    else:
        score(args.set, args.model, args.beam, [b.split("=", 1) for b in args.binaries], args.show,
              args.listen, args.turn)


if __name__ == "__main__":
    main()
