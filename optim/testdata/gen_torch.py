#!/usr/bin/python3
"""Generates testdata/torch_reference.json: PyTorch 1.13 trajectories of
each optimizer, learning-rate schedule and L-BFGS on small problems, for
optim's tests to replay in Go (the tests never run Python).

Run from this directory:  /usr/bin/python3 gen_torch.py

Optimizer problem (the Go test computes the same gradient):
  parameters a (shape 3x4) and b (shape 5), a third parameter c (shape 2)
  that never gets a gradient; loss = sum_i w_i (x_i - t_i)^2 + 0.05 x_i^4
  over a and b with x the flat concatenation, w_i = 1 + (i mod 3),
  t_i = sin(i); gradient 2 w_i (x_i - t_i) + 0.2 x_i^3, computed in float64
  from the current values and rounded to the parameter dtype. On step 3
  (0-based) b has no gradient (grad set to None) to exercise skipping.
"""
import json
import math

import torch

torch.set_num_threads(1)

STEPS = 6
NA, NB = 12, 5


def init_values():
    a = [0.5 * math.cos(1.3 * i) for i in range(NA)]
    b = [0.3 * i - 0.6 for i in range(NB)]
    return a, b


def grad_of(x):
    g = []
    for i, xi in enumerate(x):
        w = 1 + (i % 3)
        g.append(2 * w * (xi - math.sin(i)) + 0.2 * xi ** 3)
    return g


def run_optimizer(kind, opts, dtype, groups=None):
    a0, b0 = init_values()
    a = torch.tensor(a0, dtype=dtype).reshape(3, 4).requires_grad_()
    b = torch.tensor(b0, dtype=dtype).requires_grad_()
    c = torch.tensor([1.0, -1.0], dtype=dtype).requires_grad_()
    if groups is None:
        params = [a, b, c]
    else:
        params = []
        for names, extra in groups:
            d = {"params": [dict(a=a, b=b, c=c)[n] for n in names]}
            d.update(extra)
            params.append(d)
    cls = dict(sgd=torch.optim.SGD, adam=torch.optim.Adam, adamw=torch.optim.AdamW,
               rmsprop=torch.optim.RMSprop, adagrad=torch.optim.Adagrad)[kind]
    opt = cls(params, **opts)
    traj = []
    for step in range(STEPS):
        x = [float(v) for v in a.detach().reshape(-1).tolist() + b.detach().tolist()]
        g = grad_of(x)
        a.grad = torch.tensor(g[:NA], dtype=torch.float64).to(dtype).reshape(3, 4)
        b.grad = None if step == 3 else torch.tensor(g[NA:], dtype=torch.float64).to(dtype)
        opt.step()
        traj.append(a.detach().reshape(-1).tolist() + b.detach().tolist() + c.detach().tolist())
    return traj


OPT_CASES = [
    ("sgd", dict(lr=0.05)),
    ("sgd", dict(lr=0.05, weight_decay=0.1)),
    ("sgd", dict(lr=0.05, momentum=0.9)),
    ("sgd", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("sgd", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02)),
    ("sgd", dict(lr=0.05, momentum=0.9, maximize=True)),
    ("sgd", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("adam", dict(lr=0.1)),
    ("adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("adam", dict(lr=0.05, amsgrad=True)),
    ("adam", dict(lr=0.05, maximize=True, weight_decay=0.05)),
    ("adamw", dict(lr=0.1)),
    ("adamw", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("rmsprop", dict(lr=0.01)),
    ("rmsprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("rmsprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("rmsprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("adagrad", dict(lr=0.1)),
    ("adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("adagrad", dict(lr=0.1, maximize=True)),
]

GROUP_CASES = [
    ("sgd", dict(lr=0.05, momentum=0.9, weight_decay=0.1),
     [(["a"], {}), (["b", "c"], dict(lr=0.2, weight_decay=0.0))]),
    ("adamw", dict(lr=0.05, weight_decay=0.1),
     [(["a", "c"], dict(weight_decay=0.0)), (["b"], dict(lr=0.2))]),
]


def optimizer_cases():
    out = []
    for kind, opts in OPT_CASES:
        for name, dtype in (("float64", torch.float64), ("float32", torch.float32)):
            out.append(dict(kind=kind, opts=opts, dtype=name, traj=run_optimizer(kind, opts, dtype)))
    for kind, opts, groups in GROUP_CASES:
        out.append(dict(kind=kind, opts=opts, dtype="float64",
                        groups=[dict(params=n, opts=e) for n, e in groups],
                        traj=run_optimizer(kind, opts, torch.float64, groups)))
    return out


def scheduler_cases():
    out = []

    def lrs(make, n, base=(0.1, 0.02), metrics=None):
        p1 = torch.zeros(1, requires_grad=True)
        p2 = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([{"params": [p1], "lr": base[0]}, {"params": [p2], "lr": base[1]}], lr=base[0])
        sch = make(opt)
        seq = [[g["lr"] for g in opt.param_groups]]
        for e in range(n):
            opt.step()
            if metrics is None:
                sch.step()
            else:
                sch.step(metrics[e])
            seq.append([g["lr"] for g in opt.param_groups])
        return seq

    S = torch.optim.lr_scheduler
    out.append(dict(kind="step", opts=dict(step_size=3, gamma=0.5), lrs=lrs(lambda o: S.StepLR(o, 3, 0.5), 20)))
    out.append(dict(kind="multistep", opts=dict(milestones=[2, 5, 9], gamma=0.1),
                    lrs=lrs(lambda o: S.MultiStepLR(o, [2, 5, 9], 0.1), 15)))
    out.append(dict(kind="exponential", opts=dict(gamma=0.9), lrs=lrs(lambda o: S.ExponentialLR(o, 0.9), 40)))
    out.append(dict(kind="cosine", opts=dict(t_max=10, eta_min=0.001),
                    lrs=lrs(lambda o: S.CosineAnnealingLR(o, 10, 0.001), 35)))
    metrics = [1.0, 0.9, 0.95, 0.95, 0.91, 0.9, 0.9, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.79, 0.79,
               0.79, 0.79, 0.79, 0.79, 0.79, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]
    out.append(dict(kind="plateau", opts=dict(mode="min", factor=0.5, patience=2, threshold=0.01,
                                              threshold_mode="rel", cooldown=1, min_lr=[0.01, 0.004]),
                    metrics=metrics,
                    lrs=lrs(lambda o: S.ReduceLROnPlateau(o, "min", 0.5, 2, 0.01, "rel", 1, [0.01, 0.004]),
                            len(metrics), metrics=metrics)))
    acc = [0.5, 0.6, 0.6, 0.6, 0.65, 0.66, 0.66, 0.66, 0.66, 0.7, 0.7, 0.7, 0.7, 0.7]
    out.append(dict(kind="plateau", opts=dict(mode="max", factor=0.1, patience=1, threshold=0.02,
                                              threshold_mode="abs", cooldown=0, min_lr=[0.0, 0.0]),
                    metrics=acc,
                    lrs=lrs(lambda o: S.ReduceLROnPlateau(o, "max", 0.1, 1, 0.02, "abs", 0, 0.0),
                            len(acc), metrics=acc)))
    return out


def rosenbrock(x):
    """Value and gradient in Python floats, with the expressions (and so
    the rounding) of rosenbrock in lbfgs_test.go."""
    a, b = x
    g = [-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)]
    return (1 - a) * (1 - a) + 100 * (b - a * a) * (b - a * a), g


def lbfgs_cases():
    out = []
    for ls in (None, "strong_wolfe"):
        for hist in (100, 3):
            x = torch.tensor([-1.2, 1.0], dtype=torch.float64, requires_grad=True)
            lr = 1.0 if ls else 0.05
            opt = torch.optim.LBFGS([x], lr=lr, max_iter=7, history_size=hist, line_search_fn=ls)
            evals = [0]

            def closure():
                f, g = rosenbrock(x.detach().tolist())
                x.grad = torch.tensor(g, dtype=torch.float64)
                evals[0] += 1
                return torch.tensor(f, dtype=torch.float64)

            traj = []
            for _ in range(8):
                loss = opt.step(closure)
                traj.append(dict(x=x.detach().tolist(), loss=float(loss), evals=evals[0],
                                 n_iter=opt.state[x]["n_iter"]))
            out.append(dict(line_search=ls or "", lr=lr, max_iter=7, history_size=hist, traj=traj))
    return out


def main():
    ref = dict(torch_version=torch.__version__, optimizers=optimizer_cases(),
               schedulers=scheduler_cases(), lbfgs=lbfgs_cases())
    with open("torch_reference.json", "w") as f:
        json.dump(ref, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
