#!/usr/bin/env python3
"""Does Smart Turn tell a finished answer from a thinking pause better after more silence?

For every turn of the set make_set.py writes, runs Pipecat's own Smart Turn path (its
numpy features, onnxruntime, one thread) on the audio up to 300, 600, 900, 1200 and
1500 ms after the end of speech (finished and short answers) or after the start of the
pause (thinking pauses and clause boundaries; their pauses last at least 1.4 s), and
counts per kind how many sound complete at 0.1 (yazses' `prosody_threshold`) and at 0.5
(Pipecat's). A later second check of the voice would help if finished answers rose
above the threshold with more silence while pauses stayed below it.

    python3 bench/turns/make_set.py target/turns
    /tmp/tv/bin/python bench/turns/prosody_by_silence.py target/turns \\
        ~/.local/share/yazses/models/smart-turn-v3.2-cpu.onnx /tmp/pc/x/pipecat/audio/turn/smart_turn

(a Python with numpy, onnxruntime and soundfile; the Pipecat directory as in
smart_turn_reference.py)
"""
import json
import os
import statistics
import sys

import numpy as np
import onnxruntime as ort
import soundfile

SILENCE_MS = [300, 600, 900, 1200, 1500]
KINDS = ["finished", "short", "pause", "boundary"]
WINDOW = 8 * 16000


def main():
    set_dir, model, front_end = sys.argv[1:4]
    sys.path.insert(0, front_end)
    from _whisper_features import compute_whisper_log_mel_features

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model, sess_options=options)

    def probability(audio):
        audio = audio[-WINDOW:] if len(audio) > WINDOW else np.pad(audio, (WINDOW - len(audio), 0))
        mel = compute_whisper_log_mel_features(audio, do_normalize=True)[None].astype(np.float32)
        return float(session.run(None, {"input_features": mel})[0].ravel()[0])

    by_kind = {kind: [] for kind in KINDS}
    for item in json.load(open(os.path.join(set_dir, "index.json"))):
        if item["kind"] not in by_kind:
            continue
        audio, rate = soundfile.read(os.path.join(set_dir, item["name"] + ".wav"), dtype="float32")
        assert rate == 16000
        at = item["end_ms"] if item["kind"] in ("finished", "short") else item["pause_start_ms"]
        by_kind[item["kind"]].append([probability(audio[: (at + ms) * 16]) for ms in SILENCE_MS])

    print("| kind | silence | turns | at or above 0.1 | at or above 0.5 | median |")
    print("|---|---|---|---|---|---|")
    for kind, rows in by_kind.items():
        for i, ms in enumerate(SILENCE_MS):
            ps = [r[i] for r in rows]
            print(f"| {kind} | {ms} ms | {len(ps)} | {sum(p >= 0.1 for p in ps)} | "
                  f"{sum(p >= 0.5 for p in ps)} | {statistics.median(ps):.2f} |")


if __name__ == "__main__":
    main()
