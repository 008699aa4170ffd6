"""Pipecat's own Smart Turn v3 path, as the pipecat-ai 1.14.0 wheel ships it, for the
scripts that compare yazses against it: the bundled smart-turn-v3.2-cpu.onnx on
onnxruntime (sequential, one thread, every graph optimisation, as
`local_smart_turn_v3.py` sets it up), fed the last 8 s zero-padded at the front through
`compute_whisper_log_mel_features(do_normalize=True)`.

`directory` is the wheel's pipecat/audio/turn/smart_turn (see smart_turn_reference.py).
"""
import os
import sys

import numpy as np

WINDOW = 8 * 16000


class SmartTurn:
    def __init__(self, directory):
        sys.path.insert(0, directory)
        import onnxruntime as ort
        from _whisper_features import compute_whisper_log_mel_features
        so = ort.SessionOptions()
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.inter_op_num_threads = 1
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.features_of = compute_whisper_log_mel_features
        self.session = ort.InferenceSession(os.path.join(directory, "data/smart-turn-v3.2-cpu.onnx"), so)

    def features(self, samples):
        """The model's input for `samples` (16 kHz int16): 80 rows of 800 float32 values."""
        audio = samples[-WINDOW:].astype(np.float32) / 32768.0
        if audio.size < WINDOW:
            audio = np.pad(audio, (WINDOW - audio.size, 0))
        return self.features_of(audio, do_normalize=True).astype(np.float32)

    def probability_of_features(self, f):
        """The model alone, on input made by `features`."""
        return float(np.ravel(self.session.run(None, {"input_features": f[None]})[0])[0])

    def probability(self, samples):
        """The probability that the turn in `samples` (16 kHz int16) is complete."""
        return self.probability_of_features(self.features(samples))
