"""PyTorch peer of scripts/compare-precision.sh: the Fashion-MNIST MLP or CNN
of examples/ trained with Adam (lr 1e-3, batch 64) in float32 or under
torch.autocast(device_type="cpu", dtype=torch.bfloat16), on 2 threads.

As in the anchors' job2_mlp.py / job3_cnn.py: the data set is in memory as
float32 (pixels/255), each epoch draws a seeded permutation and slices
mini-batches; epoch time covers permutation, forward, backward and step.
Prints one JSON line: {"model", "precision", "sec_per_epoch" (median),
"epoch_secs", "test_acc"}. With --max-batches N only N batches are timed,
after 10 untimed ones, and sec_per_epoch is their mean time times the
batches of an epoch ("extrapolated": true, no accuracy): on a loaded
machine a full PyTorch epoch can take many minutes.

Usage: /usr/bin/python3 scripts/precision_torch.py --model mlp|cnn --precision fp32|bf16 [--epochs N] [--max-batches N]
"""
import argparse
import contextlib
import gzip
import json
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
nn, F = torch.nn, torch.nn.functional
FMNIST = os.environ.get("FATHOM_DATA", "/usr/share/datasets/fashion-mnist")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(prefix):
    x = read_idx(f"{FMNIST}/{prefix}-images-idx3-ubyte.gz").astype(np.float32) / np.float32(255)
    y = read_idx(f"{FMNIST}/{prefix}-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x.reshape(-1, 1, 28, 28).copy()), torch.from_numpy(y.copy())


def make(model):
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                             nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "cnn"], required=True)
    p.add_argument("--precision", choices=["fp32", "bf16"], required=True)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-batches", type=int, default=0)
    a = p.parse_args()
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    torch.manual_seed(a.seed)
    model = make(a.model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(a.seed)

    def cast():
        if a.precision == "bf16":
            return torch.autocast(device_type="cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    secs = []
    n = xtr.shape[0]
    if a.max_batches > 0:
        perm = torch.randperm(n, generator=gen)
        model.train()
        starts = list(range(0, n, 64))
        t0 = None
        for b, i in enumerate(starts[:10 + a.max_batches]):
            if b == 10:
                t0 = time.perf_counter()
            idx = perm[i:i + 64]
            opt.zero_grad(set_to_none=True)
            with cast():
                loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        per = (time.perf_counter() - t0) / a.max_batches
        print(json.dumps({"model": a.model, "precision": a.precision, "sec_per_epoch": per * len(starts),
                          "extrapolated": True, "batches_timed": a.max_batches, "test_acc": None,
                          "torch": torch.__version__}))
        return
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, 64):
            idx = perm[i:i + 64]
            opt.zero_grad(set_to_none=True)
            with cast():
                loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        secs.append(time.perf_counter() - t0)
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print(json.dumps({"model": a.model, "precision": a.precision, "sec_per_epoch": statistics.median(secs),
                      "epoch_secs": secs, "test_acc": acc, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
