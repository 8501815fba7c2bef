"""Generates cnn_reference.json for train/job/cnn_reference_test.go.

The model is examples/fashion-cnn.yaml (conv 1->32 3x3 p1, ReLU, maxpool 2,
conv 32->64 3x3 p1, ReLU, maxpool 2, flatten, linear 3136->128, ReLU,
linear 128->10). Weights, one batch of 64 images in [0, 1] (bytes / 255)
and labels come from splitmix64 streams the Go test rebuilds bit for bit,
so no weights need storing. PyTorch computes in float64: the logits, the
cross-entropy loss and every parameter's gradient at that point, then the
losses of three Adam steps (lr 1e-3) on the same batch.

Small gradients are stored whole; for the two large weights (3.weight,
7.weight) the L2 norm and every 97th element.

Run with: /usr/bin/python3 gen_cnn_reference.py  (PyTorch 1.13 was used)
"""
import json

import numpy as np
import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1
STRIDE = 97  # sampling stride for the large gradients


def splitmix64(seed, n):
    """n outputs of splitmix64 started at seed (Steele, Lea, Flood 2014)."""
    out = np.empty(n, dtype=np.uint64)
    s = seed & MASK
    for i in range(n):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out[i] = z ^ (z >> 31)
    return out


def uniform_pm(seed, n, bound):
    """U(-bound, bound) as float32: (2u - 1)·bound in float64, u = top 24 bits / 2^24."""
    u = (splitmix64(seed, n) >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return ((2 * u - 1) * bound).astype(np.float32)


def main():
    torch.set_default_dtype(torch.float64)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10))
    sd = model.state_dict()
    fan_in = {"0": 9, "3": 288, "7": 3136, "9": 128}
    for i, (name, t) in enumerate(sd.items()):
        w = uniform_pm(1000 + i, t.numel(), 1 / np.sqrt(fan_in[name.split(".")[0]]))
        sd[name] = torch.from_numpy(w.astype(np.float64)).reshape(t.shape)
    model.load_state_dict(sd)

    n = 64
    px = splitmix64(7, n * 784) >> np.uint64(56)
    x = torch.from_numpy((px.astype(np.float32) / np.float32(255)).astype(np.float64)).reshape(n, 1, 28, 28)
    y = torch.from_numpy((splitmix64(8, n) % np.uint64(10)).astype(np.int64))

    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    grads = {}
    for name, p in model.named_parameters():
        g = p.grad.detach().flatten()
        if g.numel() > 10000:
            grads[name] = {"norm": g.norm().item(), "stride": STRIDE, "sample": g[::STRIDE].tolist()}
        else:
            grads[name] = {"norm": g.norm().item(), "stride": 1, "sample": g.tolist()}

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        l = F.cross_entropy(model(x), y)
        l.backward()
        opt.step()
        losses.append(l.item())
    losses.append(F.cross_entropy(model(x), y).item())

    out = {"torch": torch.__version__, "logits": logits.detach().flatten().tolist(),
           "loss": loss.item(), "grads": grads, "adam_losses": losses}
    with open("cnn_reference.json", "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
