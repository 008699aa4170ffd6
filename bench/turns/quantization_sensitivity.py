#!/usr/bin/env python3
"""How much Smart Turn v3.2's probability depends on rounding, on onnxruntime alone.

The published model (smart-turn-v3.2-cpu.onnx) is int8 in QDQ form: every activation
goes through a QuantizeLinear/DequantizeLinear pair (78 of them) that rounds it to one of
256 levels. This script shows, on the same input features, what that does:

1. the graph optimisation level: onnxruntime's "extended" level fuses the pairs into
   integer kernels ("basic" does not), and the probability moves;
2. one division rewritten as a multiplication: `x / 1.4142135` in the second
   convolution's GELU (node_Div_9) as `x * (1 / 1.4142135)`, a difference of at most one
   float32 ulp, which is what tract's declutter pass does
   (docs/decisions/2026-12-04-end-of-turn.md);
3. noise of a given standard deviation added to every feature (the features span about
   -0.2 to 1.9; our own log-mel front end is within 6e-6 of Pipecat's), 20 draws each;
4. the same graph with the activation pairs removed (weights still int8-rounded): the
   "float activations" variant, under the same noise, and its CPU per run.

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install numpy onnx onnxruntime soundfile
    # Pipecat's front end, as in smart_turn_reference.py:
    pip download --no-deps pipecat-ai==1.14.0 -d /tmp/pc
    unzip -o /tmp/pc/pipecat_ai-1.14.0-py3-none-any.whl 'pipecat/audio/turn/smart_turn/*' -d /tmp/pc/x
    /tmp/tv/bin/python bench/turns/quantization_sensitivity.py \\
        ~/.local/share/yazses/models/smart-turn-v3.2-cpu.onnx /tmp/pc/x/pipecat/audio/turn/smart_turn

With `--write-float FILE` it also saves the float-activation model.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import soundfile
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLIPS = ["hello.wav", "answer.wav", "finished.flac", "thinking.flac", "sentences.flac"]
WINDOW = 8 * 16000


def session(model, level):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    options.log_severity_level = 3
    return ort.InferenceSession(model, sess_options=options)


def probability(s, x):
    return float(s.run(None, {"input_features": x})[0].ravel()[0])


def features(front_end):
    sys.path.insert(0, front_end)
    from _whisper_features import compute_whisper_log_mel_features

    out = {}
    for name in CLIPS:
        audio, rate = soundfile.read(os.path.join(ROOT, "fixtures/speech", name), dtype="float32")
        assert rate == 16000
        if audio.ndim > 1:
            audio = audio[:, 0]
        audio = audio[-WINDOW:] if len(audio) > WINDOW else np.pad(audio, (WINDOW - len(audio), 0))
        mel = compute_whisper_log_mel_features(audio, do_normalize=True)
        out[name] = mel[None].astype(np.float32)
    return out


def one_division_as_multiplication(model):
    m = onnx.load(model)
    for node in m.graph.node:
        if node.name == "node_Div_9":
            node.op_type = "Mul"
            node.input[1] = "inverse_sqrt2"
    inverse = np.float32(1) / np.float32(1.4142135)
    m.graph.initializer.append(numpy_helper.from_array(np.array(inverse, dtype=np.float32), "inverse_sqrt2"))
    return m.SerializeToString()


def float_activations(model):
    """The graph without the QuantizeLinear -> DequantizeLinear pairs on activations: each
    pair's output is replaced by the float value that went in. Pairs on constants (the
    weights) stay, so the weights keep their int8 rounding."""
    m = onnx.load(model)
    graph = m.graph
    constants = {i.name for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    replaced, dropped = {}, set()
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in producer:
            continue
        quantize = producer[node.input[0]]
        if quantize.op_type == "QuantizeLinear" and quantize.input[0] not in constants:
            replaced[node.output[0]] = quantize.input[0]
            dropped.update((id(node), id(quantize)))
    kept = [n for n in graph.node if id(n) not in dropped]
    for node in kept:
        for k, name in enumerate(node.input):
            node.input[k] = replaced.get(name, name)
    assert not any(o.name in replaced for o in graph.output)
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in graph.node for i in n.input}
    unused = [i for i in graph.initializer if i.name not in used]
    for i in unused:
        graph.initializer.remove(i)
    return m.SerializeToString(), len(replaced)


def spread(s, x, sigma, rng, draws=20):
    ps = [probability(s, (x + rng.normal(0, sigma, x.shape)).astype(np.float32)) for _ in range(draws)]
    return min(ps), max(ps)


def cpu_ms(s, x, runs=10):
    probability(s, x)
    start = time.process_time()
    for _ in range(runs):
        probability(s, x)
    return (time.process_time() - start) * 1000 / runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="smart-turn-v3.2-cpu.onnx")
    ap.add_argument("front_end", help="the pipecat-ai 1.14.0 wheel's smart_turn directory")
    ap.add_argument("--write-float", help="also save the float-activation model here")
    args = ap.parse_args()
    xs = features(args.front_end)
    level = ort.GraphOptimizationLevel
    levels = {
        "disabled": session(args.model, level.ORT_DISABLE_ALL),
        "basic": session(args.model, level.ORT_ENABLE_BASIC),
        "extended": session(args.model, level.ORT_ENABLE_EXTENDED),
        "all": session(args.model, level.ORT_ENABLE_ALL),
    }
    edited = one_division_as_multiplication(args.model)
    edited_all = session(edited, level.ORT_ENABLE_ALL)
    edited_disabled = session(edited, level.ORT_DISABLE_ALL)
    floats, pairs = float_activations(args.model)
    if args.write_float:
        with open(args.write_float, "wb") as f:
            f.write(floats)
    float_all = session(floats, level.ORT_ENABLE_ALL)

    print("1-2. probability by optimisation level, and with node_Div_9 as a multiplication")
    print("| clip | disabled | basic | extended | all (Pipecat's) | x*(1/sqrt2), disabled | x*(1/sqrt2), all |")
    print("|---|---|---|---|---|---|---|")
    for name, x in xs.items():
        row = [f"{probability(s, x):.4f}" for s in levels.values()]
        row += [f"{probability(edited_disabled, x):.4f}", f"{probability(edited_all, x):.4f}"]
        print(f"| {name} | " + " | ".join(row) + " |")

    rng = np.random.default_rng(1)
    sigmas = [1e-7, 1e-6, 1e-5, 1e-4]
    print(f"\n3-4. range of the probability over 20 draws of noise on every feature "
          f"(level all; float activations: {pairs} pairs removed)")
    print("| clip | model | no noise | " + " | ".join(f"sigma {s:g}" for s in sigmas) + " |")
    print("|---|---|---|" + "---|" * len(sigmas))
    for name, x in xs.items():
        for label, s in [("int8 (published)", levels["all"]), ("float activations", float_all)]:
            ranges = [spread(s, x, sigma, rng) for sigma in sigmas]
            cells = " | ".join(f"{lo:.3f}-{hi:.3f}" for lo, hi in ranges)
            print(f"| {name} | {label} | {probability(s, x):.4f} | {cells} |")

    x = xs["answer.wav"]
    print(f"\nCPU per run, one thread, answer.wav: int8 {cpu_ms(levels['all'], x):.1f} ms, "
          f"float activations {cpu_ms(float_all, x):.1f} ms")


if __name__ == "__main__":
    main()
