#===- models.py - The models and cases every peer benchmark times ---------===#
#
# One description of each model, read by every peer script (torch_train.py,
# jax_train.py, keras_train.py) and by run_all.sh / report.py, so that every
# system times the same training step:
#
#   forward, sparse categorical crossentropy (mean over the batch; from
#   logits only where the model ends without softmax, as in the Keras spec),
#   the accuracy metric, backward, one Adam update (lr 1e-3, beta1 0.9,
#   beta2 0.999, epsilon 1e-7: Keras's defaults), f32, static batch.
#
# Weights: glorot_uniform kernels, zero biases (Keras's defaults).
# kcc reads the same models from Keras JSON specs (kcc_spec below).
#
#===----------------------------------------------------------------------===#

# Layers: ("dense", units, activation) | ("conv", filters, k, activation) |
#         ("pool", 2) | ("flatten",)
MODELS = {
    # Dispatch-bound: tiny GEMMs, so per-op overhead dominates.
    "mlp_small": {
        "input": (32,),
        "layers": [("dense", 64, "relu"), ("dense", 64, "relu"),
                   ("dense", 10, "softmax")],
        "from_logits": False,
        "kcc_spec": "benchmarks/peers/specs/mlp_small.json",
    },
    # The reference MLP (examples/mlp.json): 784-128-64-10, softmax output.
    "mlp": {
        "input": (28, 28, 1),
        "layers": [("flatten",), ("dense", 128, "relu"),
                   ("dense", 64, "relu"), ("dense", 10, "softmax")],
        "from_logits": False,
        "kcc_spec": "examples/mlp.json",
    },
    # The reference CNN (examples/cnn.json): logits output.
    "cnn": {
        "input": (28, 28, 1),
        "layers": [("conv", 32, 3, "relu"), ("pool", 2),
                   ("conv", 64, 3, "relu"), ("pool", 2), ("flatten",),
                   ("dense", 128, "relu"), ("dense", 10, "linear")],
        "from_logits": True,
        "kcc_spec": "examples/cnn.json",
    },
    # GEMM-bound: 4096-4096-4096-10, softmax output.
    "mlp_gemm": {
        "input": (4096,),
        "layers": [("dense", 4096, "relu"), ("dense", 4096, "relu"),
                   ("dense", 10, "softmax")],
        "from_logits": False,
        "kcc_spec": "benchmarks/peers/specs/mlp_gemm.json",
    },
}

# (model, batch), in report order.
CASES = [("mlp_small", 16), ("mlp", 32), ("mlp", 64), ("mlp", 256),
         ("cnn", 32), ("cnn", 128), ("mlp_gemm", 512)]

# The GEMM-bound case is ~100 GFLOP a step: a few seconds each on 2 shared
# cores. It gets fewer repetitions (see repetitions()).
HEAVY = {"mlp_gemm"}


def case_name(model, batch):
    return f"{model}/b{batch}"


def parse_cases(text):
    """'mlp_small:16,mlp:32' -> [('mlp_small', 16), ('mlp', 32)]; '' -> all."""
    if not text:
        return list(CASES)
    out = []
    for item in text.split(","):
        model, batch = item.split(":")
        if model not in MODELS:
            raise SystemExit(f"unknown model {model!r}")
        out.append((model, int(batch)))
    return out


def layer_shapes(model):
    """Yields (layer, input shape without batch, output shape)."""
    shape = tuple(MODELS[model]["input"])
    for layer in MODELS[model]["layers"]:
        kind = layer[0]
        if kind == "dense":
            out = shape[:-1] + (layer[1],)
        elif kind == "conv":
            k = layer[2]
            out = (shape[0] - k + 1, shape[1] - k + 1, layer[1])
        elif kind == "pool":
            p = layer[1]
            out = (shape[0] // p, shape[1] // p, shape[2])
        else:  # flatten
            n = 1
            for d in shape:
                n *= d
            out = (n,)
        yield layer, shape, out
        shape = out


def step_flops(model, batch):
    """FLOPs of one training step's GEMMs and convolutions (the work that
    matters; elementwise ops, pooling, the loss and Adam are O(params) or
    O(activations) and left out):

      forward            2 * MACs          per Dense / Conv layer
      weight gradient    2 * MACs          per layer
      input gradient     2 * MACs          per layer except the first
                                           (nobody needs d loss / d x)

    i.e. 6 * MACs per layer, 4 * MACs for the first. MACs per sample:
    Dense in*out, Conv Ho*Wo*Cout*k*k*Cin.
    """
    total = 0
    first = True
    for layer, shape_in, shape_out in layer_shapes(model):
        if layer[0] == "dense":
            macs = shape_in[-1] * shape_out[-1]
        elif layer[0] == "conv":
            k = layer[2]
            macs = shape_out[0] * shape_out[1] * shape_out[2] * k * k * shape_in[2]
        else:
            continue
        total += (4 if first else 6) * macs * batch
        first = False
    return total


def params(model):
    n = 0
    for layer, shape_in, shape_out in layer_shapes(model):
        if layer[0] == "dense":
            n += shape_in[-1] * shape_out[-1] + shape_out[-1]
        elif layer[0] == "conv":
            n += layer[2] * layer[2] * shape_in[2] * layer[1] + layer[1]
    return n
