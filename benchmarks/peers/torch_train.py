#!/usr/bin/env python3
#===- torch_train.py - PyTorch peer: whole training steps -----------------===#
#
# Times one training step of each case in models.py in PyTorch (CPU, f32):
#
#   --mode eager     plain PyTorch: model(x), loss, backward(), Adam.step()
#   --mode compile   torch.compile (default inductor backend, default mode)
#                    of the forward + loss (AOTAutograd compiles the
#                    backward too) and of the optimizer's step, as in
#                    PyTorch's "compiling the optimizer" recipe
#
# A step: zero_grad, forward, sparse categorical crossentropy (from logits
# or from the softmax output, clipped to [1e-7, 1 - 1e-7] like Keras),
# accuracy, backward, torch.optim.Adam(lr=1e-3, betas=(0.9, 0.999),
# eps=1e-7), loss.item(). Weights: xavier_uniform_ (= Keras glorot_uniform,
# fan_in/fan_out include the kernel window for Conv2d) and zero biases. The
# CNN runs NCHW, PyTorch's native layout (kcc and Keras: NHWC).
#
# Usage: torch_train.py --mode eager|compile [harness options]; prints JSON.
#
#===----------------------------------------------------------------------===#

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import harness  # noqa: E402
import models  # noqa: E402


def build(model):
    m = models.MODELS[model]
    shape = m["input"]
    # torch's layout: (C, H, W) for images.
    channels = shape[2] if len(shape) == 3 else None
    flat = shape[0] if len(shape) == 1 else None
    layers = []
    for layer in m["layers"]:
        kind = layer[0]
        if kind == "conv":
            layers.append(nn.Conv2d(channels, layer[1], layer[2]))
            channels = layer[1]
            if layer[3] == "relu":
                layers.append(nn.ReLU())
        elif kind == "pool":
            layers.append(nn.MaxPool2d(layer[1]))
        elif kind == "flatten":
            layers.append(nn.Flatten())
        elif kind == "dense":
            layers.append(nn.LazyLinear(layer[1]) if flat is None
                          else nn.Linear(flat, layer[1]))
            flat = layer[1]
            if layer[2] == "relu":
                layers.append(nn.ReLU())
            elif layer[2] == "softmax":
                layers.append(nn.Softmax(dim=1))
    net = nn.Sequential(*layers)
    example = torch.zeros((1,) + image_shape(model))
    net(example)  # materializes LazyLinear
    for mod in net.modules():
        if isinstance(mod, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(mod.weight)
            nn.init.zeros_(mod.bias)
    return net


def image_shape(model):
    shape = models.MODELS[model]["input"]
    return (shape[2], shape[0], shape[1]) if len(shape) == 3 else tuple(shape)


def make_step_factory(mode):
    def make_step(model, batch):
        torch.manual_seed(0)
        net = build(model)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999),
                               eps=1e-7)
        x_np, y_np = harness.synthetic_batch(model, batch)
        x = torch.from_numpy(x_np)
        if x.dim() == 4:
            x = x.permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
        y = torch.from_numpy(y_np).long()
        logits = models.MODELS[model]["from_logits"]

        def forward_loss(x, y):
            out = net(x)
            if logits:
                loss = F.cross_entropy(out, y)
            else:
                loss = F.nll_loss(torch.log(out.clamp(1e-7, 1 - 1e-7)), y)
            acc = (out.detach().argmax(dim=1) == y).float().mean()
            return loss, acc

        opt_step = opt.step
        if mode == "compile":
            forward_loss = torch.compile(forward_loss)
            opt_step = torch.compile(opt.step)

        def step():
            opt.zero_grad(set_to_none=True)
            loss, acc = forward_loss(x, y)
            loss.backward()
            opt_step()
            return loss.item()

        return step

    return make_step


def main():
    p = harness.common_args("PyTorch peer: whole training steps")
    p.add_argument("--mode", choices=["eager", "compile"], default="eager")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    versions = {"torch": torch.__version__,
                "mkldnn": torch.backends.mkldnn.is_available(),
                "threads": torch.get_num_threads()}
    notes = ("NCHW; Adam default implementation on CPU"
             + ("; torch.compile(inductor) of forward+loss and opt.step"
                if args.mode == "compile" else ""))
    return harness.run(f"torch-{args.mode}", versions,
                       make_step_factory(args.mode), args, notes)


if __name__ == "__main__":
    sys.exit(main())
