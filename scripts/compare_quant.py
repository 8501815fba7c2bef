"""fathom int8 inference against fathom float32 and PyTorch's dynamic int8
quantization (torch.ao.quantization.quantize_dynamic), in the same run.

Rounds interleave every contender so machine noise hits them alike; each
figure is the median over rounds of rows/s on the 10k Fashion-MNIST test
set fed in batches (as anchors/python/job4_infer.py and `fathom bench infer`
do). PyTorch runs with torch.set_num_threads(--threads), fathom with
GOMAXPROCS=--threads.

Usage (scripts/compare-quant.sh runs it):
  /usr/bin/python3 scripts/compare_quant.py --fathom BIN --float MLP.safetensors \
      --int8 MLP-int8.safetensors [--cnn CNN.safetensors --cnn-int8 CNN-int8.safetensors]
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np
import torch


def read_safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    out = {}
    for k, v in h.items():
        lo, hi = v["data_offsets"]
        assert v["dtype"] == "F32", (k, v["dtype"])
        out[k] = torch.from_numpy(np.frombuffer(b[8 + n + lo:8 + n + hi], dtype=np.float32).reshape(v["shape"]).copy())
    return out


def fashion_test():
    d = os.environ.get("FATHOM_DATA", "/usr/share/datasets/fashion-mnist")

    def idx(name):
        with gzip.open(os.path.join(d, name), "rb") as f:
            raw = f.read()
        ndim = raw[3]
        dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
        return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)

    x = idx("t10k-images-idx3-ubyte.gz").reshape(10000, -1).astype(np.float32) / np.float32(255)
    y = idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def torch_rows_per_s(model, x, bs, passes=3):
    chunks = [x[i:i + bs] for i in range(0, x.shape[0], bs)]
    with torch.no_grad():
        for c in chunks:  # warm-up pass
            model(c)
        times = []
        for _ in range(passes):
            t0 = time.perf_counter()
            for c in chunks:
                model(c)
            times.append(time.perf_counter() - t0)
    return x.shape[0] / statistics.median(times)


def fathom_rows_per_s(binary, model, batches, threads):
    env = dict(os.environ, GOMAXPROCS=str(threads))
    out = subprocess.run([binary, "bench", "infer", model, "--batches", ",".join(map(str, batches)), "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {r["batch"]: r["rows_per_s"] for r in rows}, rows[0]["test_accuracy"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fathom", required=True)
    p.add_argument("--float", required=True, help="fathom float32 MLP model file")
    p.add_argument("--int8", required=True, help="its fathom int8 version")
    p.add_argument("--cnn", help="fathom float32 CNN model file")
    p.add_argument("--cnn-int8", help="its fathom int8 version")
    p.add_argument("--int8-static", help="the MLP quantized statically (optional)")
    p.add_argument("--cnn-int8-static", help="the CNN quantized statically (optional)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batches", default="64,10000")
    a = p.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    torch.set_num_threads(a.threads)
    # fbgemm (x86 in newer releases) is PyTorch's x86 int8 backend; Debian's
    # build has onednn and qnnpack instead. Every one available is timed.
    engines = [e for e in ("fbgemm", "x86", "onednn", "qnnpack") if e in torch.backends.quantized.supported_engines]

    sd = read_safetensors(a.float)
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10))
    mlp.load_state_dict(sd)
    mlp.eval()
    x, y = fashion_test()
    torch_models = {"torch float32": (mlp, None)}
    for e in engines:
        torch.backends.quantized.engine = e
        torch_models[f"torch int8 ({e})"] = (torch.ao.quantization.quantize_dynamic(mlp, {torch.nn.Linear}, dtype=torch.qint8), e)
    acc = {}
    with torch.no_grad():
        for name, (model, e) in torch_models.items():
            if e:
                torch.backends.quantized.engine = e
            acc[name] = (model(x).argmax(1) == y).float().mean().item()

    contenders = {"fathom float32": a.float, "fathom int8": a.int8}
    if a.int8_static:
        contenders["fathom int8 static"] = a.int8_static
    if a.cnn and a.cnn_int8:
        contenders.update({"fathom CNN float32": a.cnn, "fathom CNN int8": a.cnn_int8})
        if a.cnn_int8_static:
            contenders["fathom CNN int8 static"] = a.cnn_int8_static
    res = {}
    for r in range(a.rounds):
        for name, path in contenders.items():
            rps, acc[name] = fathom_rows_per_s(a.fathom, path, batches, a.threads)
            for b, v in rps.items():
                res.setdefault((name, b), []).append(v)
        for name, (model, e) in torch_models.items():
            if e:
                torch.backends.quantized.engine = e
            for b in batches:
                res.setdefault((name, b), []).append(torch_rows_per_s(model, x, b))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)

    med = {k: statistics.median(v) for k, v in res.items()}
    print(f"threads {a.threads}, torch {torch.__version__}, median of {a.rounds} rounds (rows/s)")
    names = list(dict.fromkeys(k[0] for k in med))
    print(f"{'':28s}" + "".join(f"{'batch ' + str(b):>16s}" for b in batches) + f"{'accuracy':>12s}")
    for n in names:
        print(f"{n:28s}" + "".join(f"{med[(n, b)]:16.0f}" for b in batches) + f"{acc.get(n, float('nan')):12.4f}")
    for b in batches:
        best = max((n for n in names if n.startswith("torch int8")), key=lambda n: med[(n, b)])
        line = (f"batch {b}: fathom int8 / fathom float32 = {med[('fathom int8', b)] / med[('fathom float32', b)]:.2f}x, "
                f"fathom int8 / fastest {best} = {med[('fathom int8', b)] / med[(best, b)]:.2f}x")
        if ("fathom int8 static", b) in med:
            line += f", static int8 / float32 = {med[('fathom int8 static', b)] / med[('fathom float32', b)]:.2f}x"
        if ("fathom CNN int8", b) in med:
            line += f", CNN int8 / float32 = {med[('fathom CNN int8', b)] / med[('fathom CNN float32', b)]:.2f}x"
        if ("fathom CNN int8 static", b) in med:
            line += f", CNN static int8 / float32 = {med[('fathom CNN int8 static', b)] / med[('fathom CNN float32', b)]:.2f}x"
        print(line)
    print(json.dumps({"engines": engines, "threads": a.threads, "accuracy": acc,
                      "rows_per_s": {f"{n}@{b}": v for (n, b), v in med.items()}}))


if __name__ == "__main__":
    main()
