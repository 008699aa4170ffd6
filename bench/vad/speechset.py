#!/usr/bin/env python3
"""Makes noisy-speech test audio with known speech boundaries.

Speech comes from espeak-ng (resampled to 16 kHz by sox, without dither so the output is repeatable); noise (white, pink, babble of
other espeak-ng talkers, mains hum) is mixed in at a chosen SNR, where SNR is the power
of the active speech frames over the power of the noise. The ground truth comes from the
clean speech: a 10 ms frame is speech when its level is within 40 dB of the loudest
frame, with gaps under 200 ms closed (so only real pauses between phrases remain).

Standard library only, so CI can run it with any python3:

    python3 bench/vad/speechset.py --set bench --out bench/vad/data
    python3 bench/vad/speechset.py --set fixtures --out fixtures/vad

Each set is a folder of 16 kHz mono 16-bit WAV files plus manifest.json.
"""
import argparse
import array
import json
import math
import os
import random
import subprocess
import tempfile
import wave

RATE = 16000
FRAME = 160

SENTENCES = [
    "The quick brown fox jumps over the lazy dog",
    "Please move the meeting to Thursday afternoon",
    "I think we should ship the smaller model first",
    "Turn left at the second traffic light",
    "The results look better than last week",
    "Can you send me the report by tonight",
    "We ran out of coffee again this morning",
    "The train to the airport leaves every twenty minutes",
    "Remember to back up the database before the upgrade",
    "She found the missing keys under the sofa",
    "Open the window, it is getting warm in here",
    "The concert was cancelled because of the storm",
    "Add two cups of flour and a pinch of salt",
    "Our flight lands at half past seven",
    "The library closes early on Sundays",
    "Let us try the other approach tomorrow",
]
SECOND_HALVES = [
    "and then we can decide",
    "but only if it is ready",
    "so that everyone can join",
    "unless it rains again",
    "which should be enough for now",
    "before the end of the month",
]
BABBLE_TEXT = [
    "Well I told him that the numbers did not add up at all",
    "You know the place on the corner with the green door",
    "Honestly the second season was much better than the first",
    "They are going to repaint the whole building next spring",
    "If you ask me the bus is faster at this time of day",
    "My sister moved to the coast and loves it there",
    "We should order more paper for the printer upstairs",
    "The game went into overtime and nobody left early",
]
VOICES = ["en-us", "en", "en-us+f3", "en+m3", "en-us+m7", "en+f4"]


def espeak(text, voice="en-us", speed=165, pitch=50):
    """Speech for `text` as floats in -1..1 at 16 kHz."""
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "s.wav")
        out = os.path.join(d, "o.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", raw, text], check=True)
        subprocess.run(["sox", "-D", raw, "-r", str(RATE), "-c", "1", "-b", "16", out], check=True)
        return read_wav(out)


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2 and w.getframerate() == RATE, path
        data = array.array("h", w.readframes(w.getnframes()))
    return [s / 32768.0 for s in data]


def write_wav(path, samples):
    data = array.array("h", (max(-32768, min(32767, int(round(s * 32768.0)))) for s in samples))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(data.tobytes())


def trim(x, rel_db=-45.0):
    """Cuts espeak's own leading and trailing silence."""
    peak = max((abs(s) for s in x), default=0.0) or 1.0
    th = peak * 10 ** (rel_db / 20)
    idx = [i for i, s in enumerate(x) if abs(s) > th]
    return x[idx[0]:idx[-1] + 1] if idx else x


def frame_powers(x):
    return [sum(s * s for s in x[i:i + FRAME]) / FRAME for i in range(0, len(x) - FRAME + 1, FRAME)]


def labels(clean):
    """Per-frame truth from the clean speech (see the module docstring)."""
    p = frame_powers(clean)
    peak = max(p) if p else 0.0
    lab = [q > peak * 1e-4 and q > 1e-9 for q in p]
    # Close gaps shorter than 200 ms.
    i = 0
    n = len(lab)
    while i < n:
        if not lab[i]:
            j = i
            while j < n and not lab[j]:
                j += 1
            if 0 < i and j < n and j - i < 20:
                for k in range(i, j):
                    lab[k] = True
            i = j
        else:
            i += 1
    return lab


def segments(lab):
    out, start = [], None
    for i, v in enumerate(lab + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            out.append([start * 10, i * 10])
            start = None
    return out


def white(n, rng):
    return [rng.gauss(0.0, 1.0) for _ in range(n)]


def pink(n, rng):
    # Paul Kellet's economy pink filter over white noise.
    b0 = b1 = b2 = 0.0
    out = []
    for _ in range(n):
        w = rng.gauss(0.0, 1.0)
        b0 = 0.99765 * b0 + w * 0.0990460
        b1 = 0.96300 * b1 + w * 0.2965164
        b2 = 0.57000 * b2 + w * 1.0526913
        out.append(b0 + b1 + b2 + w * 0.1848)
    return out


def hum(n, rng):
    f0 = rng.choice([50.0, 60.0])
    phases = [rng.uniform(0, 2 * math.pi) for _ in range(6)]
    amps = [1.0, 0.5, 0.35, 0.2, 0.12, 0.08]
    # A little broadband hiss, as a real mains-hummy line has.
    hiss = white(n, rng)
    return [
        sum(a * math.sin(2 * math.pi * f0 * (k + 1) * i / RATE + ph) for k, (a, ph) in enumerate(zip(amps, phases)))
        + 0.02 * hiss[i]
        for i in range(n)
    ]


_BABBLE_CACHE = {}


def babble(n, rng):
    """Sixteen espeak-ng talkers at once, each looped from a random offset: a crowd, as in
    canteen babble, rather than a few voices one could follow."""
    if "talkers" not in _BABBLE_CACHE:
        talkers = []
        for i in range(16):
            text = BABBLE_TEXT[i % len(BABBLE_TEXT)]
            voice = VOICES[(i + i // len(BABBLE_TEXT)) % len(VOICES)]
            t = trim(espeak(text, voice, speed=160 + 5 * i, pitch=30 + 3 * i))
            t = t + [0.0] * 1600
            rms = math.sqrt(sum(s * s for s in t) / len(t))
            talkers.append([s / rms for s in t])
        _BABBLE_CACHE["talkers"] = talkers
    talkers = _BABBLE_CACHE["talkers"]
    out = [0.0] * n
    for t in talkers:
        off = rng.randrange(len(t))
        for i in range(n):
            out[i] += t[(off + i) % len(t)]
    return out


NOISES = {"white": white, "pink": pink, "babble": babble, "hum": hum}


def power(x):
    return sum(s * s for s in x) / max(1, len(x))


def scaled(x, target_power):
    p = power(x)
    g = math.sqrt(target_power / p) if p > 0 else 0.0
    return [s * g for s in x]


def active_power(clean, lab):
    frames = [clean[i * FRAME:(i + 1) * FRAME] for i, v in enumerate(lab) if v]
    return power([s for f in frames for s in f])


def make_utterance(rng, idx, pause_s, lead_s, tail_s, level_dbfs):
    text = SENTENCES[idx % len(SENTENCES)]
    second = SECOND_HALVES[idx % len(SECOND_HALVES)]
    voice = VOICES[idx % len(VOICES)]
    speed = 150 + (idx * 13) % 40
    a = trim(espeak(text, voice, speed))
    b = trim(espeak(second, voice, speed))
    pause = [0.0] * int(pause_s * RATE)
    clean = [0.0] * int(lead_s * RATE) + a + pause + b + [0.0] * int(tail_s * RATE)
    clean += [0.0] * ((-len(clean)) % FRAME)
    lab = labels(clean)
    target = 10 ** (level_dbfs / 10)
    clean = scaled(clean, target * power(clean) / active_power(clean, lab))
    return text + " " + second, clean, lab


def pairs(noises, snrs):
    """(noise, snr) pairs: every combination, or the explicit pairs when `snrs` is None."""
    return [(n, s) for n in noises for s in snrs] if snrs else list(noises)


def build(set_name, out_dir, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    if set_name == "bench":
        n_utt, snrs, noises, noise_only = 10, [20, 10, 5], list(NOISES), 3
        pauses = [0.3, 0.5, 0.8]
    else:
        n_utt, snrs, noises, noise_only = 1, None, [("pink", 10), ("white", 5)], 1
        pauses = [0.6]
    entries = []
    for u in range(n_utt):
        pause = pauses[u % len(pauses)]
        lead = 1.0 + rng.random()
        level = -20.0 - 12.0 * rng.random()
        text, clean, lab = make_utterance(rng, u, pause, lead, 3.0, level)
        segs = segments(lab)
        truth = {"text": text, "level_dbfs": round(level, 1), "pause_s": pause,
                 "true_start_ms": segs[0][0], "true_end_ms": segs[-1][1], "segments": segs}
        name = f"utt{u:02d}_clean.wav"
        write_wav(os.path.join(out_dir, name), clean)
        entries.append(dict(file=name, kind="speech", noise="clean", snr=None, **truth))
        sp = active_power(clean, lab)
        for noise, snr in pairs(noises, snrs):
            nz = scaled(NOISES[noise](len(clean), rng), sp / 10 ** (snr / 10))
            mix = [c + z for c, z in zip(clean, nz)]
            peak = max(abs(s) for s in mix)
            if peak > 0.99:
                mix = [s * 0.99 / peak for s in mix]
            name = f"utt{u:02d}_{noise}_{snr}db.wav"
            write_wav(os.path.join(out_dir, name), mix)
            entries.append(dict(file=name, kind="speech", noise=noise, snr=snr, **truth))
    only = noises if snrs else [("babble", 10)]
    for noise, snr in pairs(only, snrs):
        for k in range(noise_only):
            # Noise as loud as it would be under speech at -26 dBFS with this SNR,
            # long enough for the no-speech deadline (8 s).
            n = (10 if snrs else 9) * RATE
            nz = scaled(NOISES[noise](n, rng), 10 ** ((-26.0 - snr) / 10))
            name = f"noise{k}_{noise}_{snr}db.wav"
            write_wav(os.path.join(out_dir, name), nz)
            entries.append(dict(file=name, kind="noise", noise=noise, snr=snr, segments=[]))
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"set": set_name, "seed": seed, "frame_ms": 10, "files": entries}, f, indent=1)
    print(f"wrote {len(entries)} files to {out_dir}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=["bench", "fixtures"], default="bench")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    build(args.set, args.out, args.seed)


if __name__ == "__main__":
    main()
