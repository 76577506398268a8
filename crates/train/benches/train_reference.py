"""PyTorch reference for the xq-train throughput benchmark.

Runs the same network (xq_train::net), loss (xq_train::loss), optimiser (PyTorch's SGD
with Nesterov momentum or AdamW, weight decay on >=2-d weights only), gradient clipping,
EMA update and per-step statistics as the Rust trainer, float32, on synthetic batches of
the same shape, with the same thread count, on the same device ("cpu" or "cuda:N"). Like
the Rust trainer, it copies each step's batch from host memory to the device. Prints one
JSON line:
{"samples_per_sec": ..., "steps": ..., "seconds": ..., "final_loss": ..., "device": ...}

Usage: python train_reference.py SPEC.json   (SPEC is written by xq_train::bench)
"""

import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ILLEGAL_LOGIT = -1e9


class Block(nn.Module):
    def __init__(self, ch, gpool):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.gpool = nn.Linear(2 * ch, ch) if gpool else None
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        if self.gpool is not None:
            pooled = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], 1)
            y = y + self.gpool(pooled)[:, :, None, None]
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class Net(nn.Module):
    def __init__(self, spec):
        super().__init__()
        ch = spec["channels"]
        self.stem = nn.Conv2d(spec["planes"], ch, 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(ch)
        self.blocks = nn.ModuleList(
            [Block(ch, spec["global_pool"] and i % 3 == 2) for i in range(spec["blocks"])]
        )
        self.policy_conv = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.policy_bn = nn.BatchNorm2d(ch)
        self.policy_out = nn.Conv2d(ch, spec["policy_shapes"], 1, bias=True)
        self.register_buffer("gather", torch.tensor(spec["gather"], dtype=torch.long))
        vc = spec["value_channels"]
        self.value_conv = nn.Conv2d(ch, vc, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(vc)
        self.value_fc1 = nn.Linear(vc * 90, spec["value_hidden"])
        self.value_fc2 = nn.Linear(spec["value_hidden"], 3)

    def forward(self, x):
        h = F.relu(self.stem_bn(self.stem(x)))
        for b in self.blocks:
            h = b(h)
        p = F.relu(self.policy_bn(self.policy_conv(h)))
        p = self.policy_out(p).view(x.shape[0], -1).index_select(1, self.gather)
        v = F.relu(self.value_bn(self.value_conv(h))).view(x.shape[0], -1)
        v = self.value_fc2(F.relu(self.value_fc1(v)))
        return p, v


def weighted_mean(x, w):
    return (x * w).sum() / w.sum().clamp_min(1e-12)


def loss_fn(pl, vl, batch, value_weight):
    inputs, policy, legal, value, has_value, weight = batch
    target = policy * legal.float()
    logp = pl.masked_fill(~legal, ILLEGAL_LOGIT).log_softmax(1)
    pce = -(target * logp).sum(1)
    wp = weight * (target.sum(1) > 0).float()
    ploss = weighted_mean(pce, wp)
    vce = -(value * vl.log_softmax(1)).sum(1)
    wv = weight * has_value
    vloss = weighted_mean(vce, wv)
    total = ploss + value_weight * vloss
    with torch.no_grad():
        pacc = weighted_mean((logp.argmax(1) == target.argmax(1)).float(), wp)
        vacc = weighted_mean((vl.argmax(1) == value.argmax(1)).float(), wv)
    return total, ploss.detach(), vloss.detach(), pacc, vacc


def synthetic(n, planes, policy_size, gen):
    inputs = (torch.rand(n, planes, 10, 9, generator=gen) < 0.1).float()
    legal = torch.zeros(n, policy_size, dtype=torch.uint8)
    policy = torch.zeros(n, policy_size)
    for i in range(n):
        k = int(torch.randint(5, 41, (1,), generator=gen))
        idx = torch.randint(0, policy_size, (k,), generator=gen)
        legal[i, idx] = 1
        policy[i, idx] += torch.randint(1, 101, (k,), generator=gen).float()
    policy = policy / policy.sum(1, keepdim=True)
    value = F.one_hot(torch.randint(0, 3, (n,), generator=gen), 3).float()
    return inputs, policy, legal, value, torch.ones(n), torch.ones(n)


def main():
    spec = json.load(open(sys.argv[1]))
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    device = torch.device(spec["device"])
    net = Net(spec).to(device)
    net.train()
    decay = [p for p in net.parameters() if p.dim() >= 2]
    other = [p for p in net.parameters() if p.dim() < 2]
    opt_spec = spec["optimizer"]
    groups = [
        {"params": decay, "weight_decay": opt_spec["weight_decay"]},
        {"params": other, "weight_decay": 0.0},
    ]
    if opt_spec["kind"] == "sgd":
        opt = torch.optim.SGD(
            groups, lr=spec["lr"], momentum=opt_spec["momentum"], nesterov=opt_spec["nesterov"]
        )
    else:
        opt = torch.optim.AdamW(
            groups, lr=spec["lr"], betas=(opt_spec["beta1"], opt_spec["beta2"]), eps=opt_spec["eps"]
        )
    ema = [t.detach().clone() for t in net.state_dict().values() if t.is_floating_point()]
    live = [t for t in net.state_dict().values() if t.is_floating_point()]
    gen = torch.Generator().manual_seed(spec["seed"])
    batches = [
        synthetic(spec["batch_size"], spec["planes"], spec["policy_size"], gen)
        for _ in range(spec["distinct_batches"])
    ]
    # Each step copies its batch to the device (the Rust trainer uploads every step's
    # host batch too) and builds bool masks there from u8, as the Rust side does.
    def run(steps, start):
        last = None
        for s in range(steps):
            host = batches[(start + s) % len(batches)]
            inputs, policy, legal, value, has_value, weight = (t.to(device) for t in host)
            batch = (inputs, policy, legal.bool(), value, has_value, weight)
            opt.zero_grad(set_to_none=False)
            pl, vl = net(inputs)
            total, ploss, vloss, pacc, vacc = loss_fn(pl, vl, batch, spec["value_loss_weight"])
            total.backward()
            gnorm = torch.nn.utils.clip_grad_norm_(net.parameters(), spec["grad_clip"] or float("inf"))
            stats = torch.stack([total.detach(), ploss, vloss, pacc, vacc, gnorm]).double().tolist()
            opt.step()
            with torch.no_grad():
                for e, l in zip(ema, live):
                    e.lerp_(l, 1.0 - spec["ema_decay"])
            last = stats[0]
        return last

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    run(spec["warmup_steps"], 0)
    sync()
    t0 = time.perf_counter()
    final = run(spec["steps"], spec["warmup_steps"])
    sync()
    secs = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "samples_per_sec": spec["steps"] * spec["batch_size"] / secs,
                "steps": spec["steps"],
                "seconds": secs,
                "final_loss": final,
                "torch": torch.__version__,
                "threads": torch.get_num_threads(),
                "device": str(device),
            }
        )
    )


if __name__ == "__main__":
    main()
