#!/usr/bin/env python3
"""Writes the reference log-mel features our turn/mel.rs is checked against.

Smart Turn v3's own front end is `compute_whisper_log_mel_features` in Pipecat's
`pipecat/audio/turn/smart_turn/_whisper_features.py` (numpy only), fed the last 8 s of the
audio, zero-padded at the front (`local_smart_turn_v3.py`). This script runs that code, as
shipped in the pipecat-ai 1.14.0 wheel, on our fixtures and keeps every 4th frame of the
(80, 800) result as little-endian float32, frame-major (frame 0's 80 bins, then frame 4's).

    pip download --no-deps pipecat-ai==1.14.0 -d /tmp/pc
    unzip -o /tmp/pc/pipecat_ai-1.14.0-py3-none-any.whl 'pipecat/audio/turn/smart_turn/*' -d /tmp/pc/x
    python3 -m venv /tmp/np && /tmp/np/bin/pip install numpy
    /tmp/np/bin/python bench/turns/mel_reference.py /tmp/pc/x/pipecat/audio/turn/smart_turn

Writes fixtures/turn/<name>.mel.f32 for fixtures/speech/answer.wav and hello.wav (both
under 8 s: padded), and for "joined", the two one after the other (over 8 s: cut).
"""
import os
import struct
import sys
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVERY = 4


def read(name):
    with wave.open(os.path.join(ROOT, "fixtures/speech", name + ".wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        n = w.getnframes()
        return np.array(struct.unpack(f"<{n}h", w.readframes(n)), dtype=np.float32) / 32768.0


def main():
    sys.path.insert(0, sys.argv[1])
    from _whisper_features import compute_whisper_log_mel_features

    clips = {name: read(name) for name in ["answer", "hello"]}
    # Over 8 s: only its last 8 s count.
    clips["joined"] = np.concatenate([clips["answer"], clips["hello"]])
    for name, samples in clips.items():
        window = 8 * 16000
        audio = samples[-window:]
        if audio.size < window:
            audio = np.pad(audio, (window - audio.size, 0))
        features = compute_whisper_log_mel_features(audio, do_normalize=True)
        assert features.shape == (80, 800)
        kept = features[:, ::EVERY].T.astype("<f4")
        out = os.path.join(ROOT, "fixtures/turn", name + ".mel.f32")
        kept.tofile(out)
        print(out, kept.shape, float(features.min()), float(features.max()))


if __name__ == "__main__":
    main()
