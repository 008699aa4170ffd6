#!/usr/bin/env python3
"""The published int8 Smart Turn model against its float-activation variant, on model inputs
written by smart_turn_reference.py --features DIR: one line per input with both
probabilities. Run it natively and under `qemu-x86_64 -cpu Haswell` to see which of the two
depends on the CPU's integer kernels (docs/decisions/2026-12-04-end-of-turn.md).

    python3 bench/turns/float_activations_cpu.py DIR [MODEL]

MODEL defaults to the smart-turn-v3.2-cpu.onnx that ./ci.sh assets unpacks from Pipecat's
wheel. Needs numpy, onnx and onnxruntime (the float variant is made by
quantization_sensitivity.py's float_activations).
"""
import glob
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization_sensitivity import float_activations  # noqa: E402

DEFAULT_MODEL = "~/.cache/yazses-ci/pipecat_smart_turn/data/smart-turn-v3.2-cpu.onnx"


def session(model):
    """As Pipecat runs it: sequential, one thread, every graph optimisation."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so)


def main():
    model = os.path.expanduser(sys.argv[2] if len(sys.argv) > 2 else DEFAULT_MODEL)
    floats, _ = float_activations(model)
    int8, flt = session(model), session(floats)
    for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.f32"))):
        x = np.fromfile(f, dtype="<f4").reshape(1, 80, 800)
        p8 = float(int8.run(None, {"input_features": x})[0].ravel()[0])
        pf = float(flt.run(None, {"input_features": x})[0].ravel()[0])
        print(f"{os.path.basename(f)} int8 {p8:.4f} float {pf:.4f}", flush=True)


if __name__ == "__main__":
    main()
