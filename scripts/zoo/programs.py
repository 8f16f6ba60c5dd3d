"""A zoo of small plain-JAX programs, partitioned by XLA's SPMD partitioner.

Each program is a training or inference step people really run (MLP, FSDP,
Megatron tensor/sequence parallelism, ring attention, mixture of experts,
convnet, sharded AdamW, scanned layers, vocab-sharded embeddings, a pipeline),
written with jax.numpy only and sharded over a one-axis mesh of N devices so
that XLA emits the collectives the hlocheck passes and interpreter work on.

Interface:

    PROGRAMS: dict[str, Program]          # ordered, key == Program.name
    Program.name                          # short, [a-z0-9_]
    Program.doc                           # one line: what it is, which collectives
    Program.build(size, devices, rng) -> (fn, args)

size is "small" or "large"; devices are N jax devices (N in 2, 4, 8) in the
order the mesh uses them, so partition p runs on devices[p]; rng is a seeded
numpy Generator.  fn is a jax.jit-ed function with in_shardings/out_shardings
(shard_map inside where the program needs explicit collectives), args a flat
tuple of arrays already placed with their NamedSharding; fn(*args) returns a
flat tuple of arrays.  Every sharded dimension divides by 8, every dtype is
explicit (float32, bfloat16, int32), so nothing depends on jax_enable_x64, and
the jitted functions hold no randomness, callbacks or donation.
"""
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

F32 = jnp.float32
BF16 = jnp.bfloat16
SIZES = ("small", "large")


@dataclass(frozen=True)
class Program:
    name: str
    doc: str
    builder: Callable

    def build(self, size: str, devices: list, rng: np.random.Generator):
        if size not in SIZES:
            raise ValueError(f"size must be one of {SIZES}, not {size!r}")
        return self.builder(size, list(devices), rng)


PROGRAMS: dict[str, Program] = {}


def register(doc: str):
    """Adds the decorated build_<name> function to PROGRAMS as <name>."""
    def add(builder):
        name = builder.__name__.removeprefix("build_")
        PROGRAMS[name] = Program(name, doc, builder)
        return builder
    return add


# ---------------------------------------------------------------- helpers

def make_mesh(devices: list, axis: str) -> Mesh:
    """A one-axis mesh whose flat order is exactly `devices`."""
    return Mesh(np.array(devices).reshape(len(devices)), (axis,))


def normal(rng, shape, scale, dtype=F32):
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)


def dense_init(rng, fan_in, fan_out, dtype=F32):
    return normal(rng, (fan_in, fan_out), fan_in ** -0.5, dtype)


def labels_in_range(rng, shape, count):
    return rng.integers(0, count, shape, dtype=np.int32)


def jit_placed(mesh, fn, inputs, out_specs):
    """jax.jit(fn) with the shardings of `inputs` ((array, spec) pairs) and
    `out_specs`; returns (jitted fn, the inputs placed on the mesh)."""
    in_shardings = tuple(NamedSharding(mesh, spec) for _, spec in inputs)
    out_shardings = tuple(NamedSharding(mesh, spec) for spec in out_specs)
    args = tuple(jax.device_put(array, sharding)
                 for (array, _), sharding in zip(inputs, in_shardings))
    return jax.jit(fn, in_shardings=in_shardings, out_shardings=out_shardings), args


def sgd_training_step(mesh, loss_fn, params, batch, lr):
    """One SGD step of loss_fn(params_tuple, *batch); params and batch are
    (array, spec) pairs.  fn(*params, *batch) -> (*new_params, loss); the new
    params keep their dtype and sharding (the update itself is done in f32)."""
    n_params = len(params)

    def step(*args):
        weights, data = args[:n_params], args[n_params:]
        loss, grads = jax.value_and_grad(loss_fn)(weights, *data)
        updated = tuple((w.astype(F32) - lr * g.astype(F32)).astype(w.dtype)
                        for w, g in zip(weights, grads))
        return (*updated, loss)

    out_specs = [spec for _, spec in params] + [P()]
    return jit_placed(mesh, step, list(params) + list(batch), out_specs)


def constrainer(mesh, specs: dict):
    """constrain(x, tag): with_sharding_constraint to specs[tag], if present."""
    def constrain(x, tag):
        if tag not in specs:
            return x
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, specs[tag]))
    return constrain


def layer_norm(x, gain):
    """Layer norm computed in f32, returned in x's dtype."""
    x32 = x.astype(F32)
    mean = x32.mean(-1, keepdims=True)
    var = jnp.square(x32 - mean).mean(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * gain.astype(F32)).astype(x.dtype)


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy in f32; one-hot form, as for sharded classes."""
    log_probs = jax.nn.log_softmax(logits.astype(F32), axis=-1)
    one_hot = jax.nn.one_hot(labels, logits.shape[-1], dtype=F32)
    return -(one_hot * log_probs).sum(-1).mean()


def mean_squared_error(prediction, target):
    return jnp.mean(jnp.square(prediction.astype(F32) - target.astype(F32)))


def mlp_params(rng, widths, dtype):
    """[w1, b1, w2, b2, ...] for a dense stack with these layer widths."""
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:]):
        params += [dense_init(rng, fan_in, fan_out, dtype), np.zeros(fan_out, dtype)]
    return params


def mlp_logits(params, x, constrain=lambda h, tag: h):
    """tanh MLP over [w, b] pairs; computes in the params' dtype.
    constrain(h, "activation") pins the sharding of each layer's output."""
    h = x.astype(params[0].dtype)
    for i in range(0, len(params), 2):
        if i:
            h = jnp.tanh(h)
        h = constrain(h @ params[i] + params[i + 1], "activation")
    return h


# ---------------------------------------------------------------- programs

MLP_SIZES = {"small": (16, 32, 64, 16), "large": (64, 128, 256, 64)}   # batch, in, hidden, classes


@register("3-layer f32 MLP SGD step, batch sharded, params replicated: "
          "gradient all-reduce")
def build_mlp_dp(size, devices, rng):
    batch, d_in, hidden, classes = MLP_SIZES[size]
    mesh = make_mesh(devices, "data")
    params = [(w, P()) for w in mlp_params(rng, (d_in, hidden, hidden, classes), F32)]
    data = [(normal(rng, (batch, d_in), 1.0), P("data", None)),
            (labels_in_range(rng, (batch,), classes), P("data"))]

    def loss_fn(weights, x, labels):
        return cross_entropy(mlp_logits(weights, x), labels)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.1)


def fsdp_mlp_inputs(size, mesh, rng):
    """bf16 MLP params sharded on dim 0 over "fsdp", and a batch sharded over "fsdp"."""
    batch, d_in, hidden, classes = MLP_SIZES[size]
    params = [(w, P("fsdp", *[None] * (w.ndim - 1)))
              for w in mlp_params(rng, (d_in, hidden, hidden, classes), BF16)]
    data = [(normal(rng, (batch, d_in), 1.0), P("fsdp", None)),
            (labels_in_range(rng, (batch,), classes), P("fsdp"))]
    return params, data


@register("3-layer MLP, FSDP/ZeRO-3 in shard_map: bf16 params sharded on dim 0, batch "
          "sharded: param all-gather, bf16 gradient reduce-scatter, loss all-reduce")
def build_mlp_fsdp(size, devices, rng):
    mesh = make_mesh(devices, "fsdp")
    params, data = fsdp_mlp_inputs(size, mesh, rng)

    def local_loss(weights, x, labels):
        gathered = [jax.lax.all_gather(w, "fsdp", axis=0, tiled=True) for w in weights]
        return jax.lax.pmean(cross_entropy(mlp_logits(gathered, x), labels), "fsdp")

    sharded_loss = jax.shard_map(local_loss, mesh=mesh,
                                 in_specs=(tuple(spec for _, spec in params),
                                           *(spec for _, spec in data)),
                                 out_specs=P())
    return sgd_training_step(mesh, sharded_loss, params, data, lr=0.1)


@register("the mlp_fsdp step left to GSPMD (activations pinned batch-sharded): param "
          "all-gather, bf16 gradient all-reduce + dynamic-slice, loss all-reduce")
def build_mlp_fsdp_gspmd(size, devices, rng):
    mesh = make_mesh(devices, "fsdp")
    params, data = fsdp_mlp_inputs(size, mesh, rng)
    constrain = constrainer(mesh, {"activation": P("fsdp", None)})

    def loss_fn(weights, x, labels):
        return cross_entropy(mlp_logits(weights, x, constrain), labels)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.1)


def transformer_params(rng, d_model, d_ff):
    """[ln1, wq, wk, wv, wo, ln2, w1, w2] in bf16."""
    return [np.ones(d_model, BF16),
            *(dense_init(rng, d_model, d_model, BF16) for _ in range(4)),
            np.ones(d_model, BF16),
            dense_init(rng, d_model, d_ff, BF16),
            dense_init(rng, d_ff, d_model, BF16)]


def transformer_block(params, x, heads, constrain):
    """Pre-LN causal self-attention + GELU MLP block; bf16 matmuls, f32 softmax.
    constrain(x, tag) pins the sharding of the "heads", "scores", "ffn",
    "gathered" and "residual" activations."""
    ln1, wq, wk, wv, wo, ln2, w1, w2 = params
    b, s, d = x.shape
    h = constrain(layer_norm(x, ln1), "gathered")
    q, k, v = (constrain((h @ w).reshape(b, s, heads, d // heads), "heads")
               for w in (wq, wk, wv))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(F32) * (d // heads) ** -0.5
    position = jnp.arange(s, dtype=jnp.int32)
    causal = position[:, None] >= position[None, :]
    scores = constrain(jnp.where(causal, scores, np.float32(-1e9)), "scores")
    probs = jax.nn.softmax(scores, axis=-1).astype(x.dtype)
    attention = constrain(jnp.einsum("bhqk,bkhd->bqhd", probs, v), "heads").reshape(b, s, d)
    x = constrain(x + attention @ wo, "residual")
    h = constrain(layer_norm(x, ln2), "gathered")
    x = constrain(x + constrain(jax.nn.gelu(h @ w1), "ffn") @ w2, "residual")
    return x


TRANSFORMER_SIZES = {"small": dict(batch=8, seq=8, d_model=32, d_ff=128, heads=8),
                     "large": dict(batch=4, seq=16, d_model=128, d_ff=256, heads=8)}
MEGATRON_WEIGHT_SPECS = [P(None), P(None, "model"), P(None, "model"), P(None, "model"),
                         P("model", None), P(None), P(None, "model"), P("model", None)]


def build_transformer_step(size, devices, rng, activation_specs):
    """Megatron-sharded transformer block training step (MSE to a target),
    with activations pinned by activation_specs (tag -> spec, "residual"
    also giving the input/target sharding)."""
    cfg = TRANSFORMER_SIZES[size]
    mesh = make_mesh(devices, "model")
    shape = (cfg["batch"], cfg["seq"], cfg["d_model"])
    params = list(zip(transformer_params(rng, cfg["d_model"], cfg["d_ff"]),
                      MEGATRON_WEIGHT_SPECS))
    data = [(normal(rng, shape, 1.0, BF16), activation_specs["residual"]),
            (normal(rng, shape, 1.0, F32), activation_specs["residual"])]
    constrain = constrainer(mesh, activation_specs)

    def loss_fn(weights, x, target):
        return mean_squared_error(transformer_block(weights, x, cfg["heads"], constrain), target)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.05)


# heads and the MLP's hidden units split over "model", as Megatron splits them
MEGATRON_ACTIVATION_SPECS = {"heads": P(None, None, "model", None),
                             "scores": P(None, "model", None, None),
                             "ffn": P(None, None, "model")}


@register("bf16 transformer block training step, Megatron tensor parallel (QKV/W1 "
          "column-, WO/W2 row-sharded): activation all-reduces forward and backward")
def build_transformer_tp(size, devices, rng):
    return build_transformer_step(size, devices, rng, {"residual": P(), **MEGATRON_ACTIVATION_SPECS})


@register("bf16 transformer block training step, Megatron sequence parallel: sequence "
          "all-gather before attention/MLP, reduce-scatter (GSPMD: all-reduce + dynamic-slice) after")
def build_transformer_sp(size, devices, rng):
    return build_transformer_step(size, devices, rng, {
        "residual": P(None, "model", None), "gathered": P(), **MEGATRON_ACTIVATION_SPECS})


@register("causal ring attention training step (shard_map): Q/K/V sharded on sequence, "
          "K/V blocks rotated by collective-permute, online softmax; weight-grad all-reduce")
def build_attention_kv_sharded(size, devices, rng):
    batch, seq, d_model, heads = {"small": (2, 16, 32, 4), "large": (2, 64, 128, 8)}[size]
    mesh = make_mesh(devices, "seq")
    n = len(devices)
    block, d_head = seq // n, d_model // heads
    ring = [(i, (i + 1) % n) for i in range(n)]

    def ring_attention(q, k, v):
        """q, k, v: this device's [b, block, h, dh] blocks; after step t it holds
        the K/V block of device (index - t) mod n."""
        index = jax.lax.axis_index("seq")
        q_pos = index * block + jnp.arange(block, dtype=jnp.int32)
        masked = np.float32(-1e30)
        running_max = jnp.full((batch, heads, block), masked, F32)
        denominator = jnp.zeros((batch, heads, block), F32)
        numerator = jnp.zeros((batch, heads, block, d_head), F32)
        for step in range(n):
            k_block = jax.lax.rem(index + (n - step), np.int32(n))
            k_pos = k_block * block + jnp.arange(block, dtype=jnp.int32)
            visible = q_pos[:, None] >= k_pos[None, :]
            scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * d_head ** -0.5
            scores = jnp.where(visible, scores, masked)
            new_max = jnp.maximum(running_max, scores.max(-1))
            rescale = jnp.exp(running_max - new_max)
            weights = jnp.where(visible, jnp.exp(scores - new_max[..., None]), np.float32(0))
            denominator = denominator * rescale + weights.sum(-1)
            numerator = (numerator * rescale[..., None]
                         + jnp.einsum("bhqk,bkhd->bhqd", weights, v))
            running_max = new_max
            if step < n - 1:
                k, v = jax.lax.ppermute((k, v), "seq", ring)
        out = numerator / denominator[..., None]
        return out.transpose(0, 2, 1, 3).reshape(batch, block, d_model)

    def local_loss(wq, wk, wv, wo, x, target):
        q, k, v = ((x @ w).reshape(batch, block, heads, d_head) for w in (wq, wk, wv))
        prediction = x + ring_attention(q, k, v) @ wo
        return jax.lax.pmean(mean_squared_error(prediction, target), "seq")

    seq_spec = P(None, "seq", None)
    sharded_loss = jax.shard_map(local_loss, mesh=mesh,
                                 in_specs=(P(),) * 4 + (seq_spec,) * 2, out_specs=P())
    params = [(dense_init(rng, d_model, d_model), P()) for _ in range(4)]
    data = [(normal(rng, (batch, seq, d_model), 1.0), seq_spec) for _ in range(2)]
    return sgd_training_step(mesh, lambda w, x, t: sharded_loss(*w, x, t),
                             params, data, lr=0.05)


@register("top-1 mixture-of-experts training step (shard_map), experts sharded: "
          "token dispatch/return all-to-all, router-grad all-reduce")
def build_moe_ep(size, devices, rng):
    tokens, d_model, d_ff, experts = {"small": (32, 32, 64, 8),
                                      "large": (128, 128, 256, 8)}[size]
    mesh = make_mesh(devices, "expert")
    n = len(devices)
    local_tokens = tokens // n
    capacity = -(-5 * local_tokens // (4 * experts))   # capacity factor 1.25

    def local_loss(router, w_in, w_out, x, target):
        probs = jax.nn.softmax(x @ router, axis=-1)                  # [t, E]
        choice = jax.nn.one_hot(jax.lax.argmax(probs, 1, jnp.int32), experts, dtype=F32)
        gate = (probs * choice).sum(-1)
        slot = ((jnp.cumsum(choice, axis=0) - 1) * choice).sum(-1).astype(jnp.int32)
        dispatch = choice[:, :, None] * jax.nn.one_hot(slot, capacity, dtype=F32)[:, None, :]
        expert_in = jnp.einsum("tec,td->ecd", dispatch, x)            # [E, C, D]
        expert_in = jax.lax.all_to_all(expert_in, "expert", 0, 1, tiled=True)
        hidden = jax.nn.relu(jnp.einsum("ecd,edf->ecf", expert_in, w_in))
        expert_out = jnp.einsum("ecf,efd->ecd", hidden, w_out)        # [E/n, n*C, D]
        expert_out = jax.lax.all_to_all(expert_out, "expert", 1, 0, tiled=True)
        prediction = x + jnp.einsum("tec,ecd->td", dispatch, expert_out) * gate[:, None]
        balance = experts * (choice.mean(0) * probs.mean(0)).sum()
        return jax.lax.pmean(mean_squared_error(prediction, target) + 0.01 * balance, "expert")

    token_spec = P("expert", None)
    sharded_loss = jax.shard_map(
        local_loss, mesh=mesh,
        in_specs=(P(), P("expert", None, None), P("expert", None, None), token_spec, token_spec),
        out_specs=P())
    params = [(dense_init(rng, d_model, experts), P()),
              (normal(rng, (experts, d_model, d_ff), d_model ** -0.5), P("expert", None, None)),
              (normal(rng, (experts, d_ff, d_model), d_ff ** -0.5), P("expert", None, None))]
    data = [(normal(rng, (tokens, d_model), 1.0), token_spec) for _ in range(2)]
    return sgd_training_step(mesh, lambda w, x, t: sharded_loss(*w, x, t),
                             params, data, lr=0.05)


@register("2-conv-layer f32 convnet (avg pool, dense head, cross-entropy) SGD step, "
          "data parallel: gradient all-reduce")
def build_convnet_dp(size, devices, rng):
    batch, image, channels, classes = {"small": (16, 8, (3, 8, 16), 10),
                                       "large": (32, 16, (3, 16, 32), 10)}[size]
    mesh = make_mesh(devices, "data")
    c_in, c_mid, c_out = channels
    params = [(normal(rng, (3, 3, c_in, c_mid), (9 * c_in) ** -0.5), P()),
              (np.zeros(c_mid, np.float32), P()),
              (normal(rng, (3, 3, c_mid, c_out), (9 * c_mid) ** -0.5), P()),
              (np.zeros(c_out, np.float32), P()),
              (dense_init(rng, c_out, classes), P()),
              (np.zeros(classes, np.float32), P())]
    data = [(normal(rng, (batch, image, image, c_in), 1.0), P("data", None, None, None)),
            (labels_in_range(rng, (batch,), classes), P("data"))]

    def conv_relu(x, kernel, bias):
        y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.nn.relu(y + bias)

    def loss_fn(weights, images, labels):
        k1, b1, k2, b2, w_out, b_out = weights
        h = conv_relu(images, k1, b1)
        h = jax.lax.reduce_window(h, np.float32(0), jax.lax.add,
                                  (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        h = conv_relu(h, k2, b2).mean((1, 2))
        return cross_entropy(h @ w_out + b_out, labels)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.1)


@register("AdamW update of f32 master/m/v sharded on dim 0 from per-replica bf16 "
          "gradients: bf16 gradient reduce-scatter, global-norm all-reduce, bf16 param all-gather")
def build_adamw_sharded(size, devices, rng):
    d_model, d_ff = {"small": (32, 64), "large": (256, 512)}[size]
    mesh = make_mesh(devices, "shard")
    n = len(devices)
    shapes = [(d_model, d_ff), (d_ff, d_model), (d_model, d_model)]
    lr, beta1, beta2, eps, weight_decay, max_norm = 1e-3, 0.9, 0.95, 1e-8, 0.1, 1.0
    state_spec, replica_spec = P("shard", None), P("shard", None, None)
    reduce_scatter = jax.shard_map(
        lambda g: jax.lax.psum_scatter(g[0], "shard", scatter_dimension=0, tiled=True),
        mesh=mesh, in_specs=replica_spec, out_specs=state_spec)

    def step(count, *tensors):
        """count: f32 step number (>= 1); tensors: (master, m, v, grads) per
        weight, grads bf16 [n, ...] holding replica r's gradient at [r]."""
        masters, ms, vs, replica_grads = (tensors[i::4] for i in range(4))
        grads = [reduce_scatter(g) for g in replica_grads]
        norm = jnp.sqrt(sum(jnp.sum(jnp.square(g.astype(F32))) for g in grads))
        clip = jnp.minimum(1.0, max_norm / (norm + 1e-6))
        new_masters, new_ms, new_vs, params = [], [], [], []
        for master, m, v, g in zip(masters, ms, vs, grads):
            g = g.astype(F32) * clip
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * jnp.square(g)
            update = (m / (1 - beta1 ** count)) / (jnp.sqrt(v / (1 - beta2 ** count)) + eps)
            master = master - lr * (update + weight_decay * master)
            new_masters.append(master)
            new_ms.append(m)
            new_vs.append(v)
            params.append(master.astype(BF16))
        return (*new_masters, *new_ms, *new_vs, *params, norm)

    inputs = [(np.array(10, np.float32), P())]
    for shape in shapes:
        inputs += [(normal(rng, shape, shape[0] ** -0.5), state_spec),
                   (normal(rng, shape, 1e-3), state_spec),
                   (np.abs(normal(rng, shape, 1e-5)), state_spec),
                   (normal(rng, (n, *shape), 1e-2, BF16), replica_spec)]
    out_specs = [state_spec] * (3 * len(shapes)) + [P()] * len(shapes) + [P()]
    return jit_placed(mesh, step, inputs, out_specs)


MICROBATCHES = {"small": 4, "large": 8}


def accumulated_fsdp_gradients(size, devices, rng):
    """The FSDP MLP of mlp_fsdp with gradient accumulation over microbatches,
    as large-batch training runs it: a lax.scan whose body all-gathers the
    bf16 params, takes one microbatch's gradients, reduce-scatters them in
    bf16 and adds them to an f32 accumulator carried by the loop, i.e.
    add(convert(reduce-scatter(g)), get-tuple-element(loop state)), the
    target of flip-reduce-convert-add (#102).  Returns (mesh, params, data,
    grads_fn): grads_fn(weights, xs, labels) -> (f32 gradient shards, loss)."""
    mesh = make_mesh(devices, "fsdp")
    params, _ = fsdp_mlp_inputs(size, mesh, rng)
    batch, d_in, _, classes = MLP_SIZES[size]
    steps = MICROBATCHES[size]
    data = [(normal(rng, (steps, batch, d_in), 1.0), P(None, "fsdp", None)),
            (labels_in_range(rng, (steps, batch), classes), P(None, "fsdp"))]

    n = len(devices)

    def local_grads(weights, xs, labels):
        def loss(shards, x, y):
            """This device's share of the global mean loss."""
            gathered = [jax.lax.all_gather(w, "fsdp", axis=0, tiled=True) for w in shards]
            return cross_entropy(mlp_logits(gathered, x), y) / n

        def microbatch(carry, xy):
            acc, total = carry
            # the gradient of the gathered params, back on the shards: the
            # all-gather's transpose is a bf16 reduce-scatter
            value, grads = jax.value_and_grad(loss)(weights, *xy)
            return ([a + g.astype(F32) for a, g in zip(acc, grads)], total + value), None

        zeros = jax.lax.pcast(([jnp.zeros(w.shape, F32) for w in weights], jnp.zeros((), F32)),
                              ("fsdp",), to="varying")
        (acc, total), _ = jax.lax.scan(microbatch, zeros, (xs, labels))
        return [a / steps for a in acc], jax.lax.psum(total / steps, "fsdp")

    specs = tuple(spec for _, spec in params)
    grads_fn = jax.shard_map(local_grads, mesh=mesh, in_specs=(specs, *(spec for _, spec in data)),
                             out_specs=(list(specs), P()))
    return mesh, params, data, grads_fn


@register("FSDP MLP step with gradient accumulation over microbatches (lax.scan, shard_map): "
          "bf16 param all-gathers and bf16 gradient reduce-scatters in the loop body, summed "
          "into an f32 accumulator (#102's target), SGD update")
def build_fsdp_grad_accum(size, devices, rng):
    mesh, params, data, grads_fn = accumulated_fsdp_gradients(size, devices, rng)
    n_params = len(params)

    def step(*args):
        weights, (xs, labels) = args[:n_params], args[n_params:]
        grads, loss = grads_fn(weights, xs, labels)
        return (*((w.astype(F32) - 0.1 * g).astype(BF16) for w, g in zip(weights, grads)), loss)

    return jit_placed(mesh, step, params + data, [spec for _, spec in params] + [P()])


@register("AdamW on FSDP-sharded f32 master weights and m/v after gradient accumulation "
          "(lax.scan, shard_map): bf16 gradient reduce-scatters summed into f32 in the loop "
          "(#102's target), global-norm all-reduce, bf16 params from the masters")
def build_fsdp_adamw_accum(size, devices, rng):
    mesh, params, data, grads_fn = accumulated_fsdp_gradients(size, devices, rng)
    n_params = len(params)
    lr, beta1, beta2, eps, weight_decay, max_norm, count = 1e-3, 0.9, 0.95, 1e-8, 0.1, 1.0, 10.0
    masters = [(w.astype(np.float32), spec) for w, spec in params]
    moments = [(normal(rng, w.shape, 1e-3), spec) for w, spec in masters]
    seconds = [(np.abs(normal(rng, w.shape, 1e-5)), spec) for w, spec in masters]

    def step(*args):
        weights = args[:n_params]
        ms, vs, masters_in = (args[n_params * k:n_params * (k + 1)] for k in (1, 2, 3))
        xs, labels = args[4 * n_params:]
        grads, loss = grads_fn(weights, xs, labels)
        norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in grads))
        clip = jnp.minimum(1.0, max_norm / (norm + 1e-6))
        out_w, out_m, out_v, out_master = [], [], [], []
        for master, m, v, g in zip(masters_in, ms, vs, grads):
            g = g * clip
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * jnp.square(g)
            update = (m / (1 - beta1 ** count)) / (jnp.sqrt(v / (1 - beta2 ** count)) + eps)
            master = master - lr * (update + weight_decay * master)
            out_w.append(master.astype(BF16))
            out_m.append(m)
            out_v.append(v)
            out_master.append(master)
        return (*out_w, *out_m, *out_v, *out_master, loss, norm)

    inputs = params + moments + seconds + masters + data
    state_specs = [spec for _, spec in params]
    return jit_placed(mesh, step, inputs, state_specs * 4 + [P(), P()])


@register("L residual MLP layers via lax.scan over stacked tensor-parallel f32 weights, "
          "SGD step: activation all-reduces inside the while-loop body (forward and backward)")
def build_scan_layers(size, devices, rng):
    layers, batch, d_model, d_ff = {"small": (4, 16, 32, 64), "large": (8, 16, 128, 256)}[size]
    mesh = make_mesh(devices, "model")
    constrain = constrainer(mesh, {"carry": P(), "hidden": P(None, "model")})
    params = [(np.ones((layers, d_model), np.float32), P()),
              (normal(rng, (layers, d_model, d_ff), d_model ** -0.5), P(None, None, "model")),
              (normal(rng, (layers, d_ff, d_model), d_ff ** -0.5 / layers), P(None, "model", None))]
    data = [(normal(rng, (batch, d_model), 1.0), P()) for _ in range(2)]

    def layer(x, weights):
        gain, w_in, w_out = weights
        hidden = constrain(jax.nn.gelu(layer_norm(x, gain) @ w_in), "hidden")
        return constrain(x + hidden @ w_out, "carry"), None

    def loss_fn(weights, x, target):
        out, _ = jax.lax.scan(layer, x, weights)
        return mean_squared_error(out, target)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.05)


@register("vocab-sharded embedding + tied output projection + cross-entropy SGD step: "
          "masked-gather all-reduce, softmax max/sum all-reduces over the vocab")
def build_embedding_vocab(size, devices, rng):
    vocab, d_model, batch, seq = {"small": (128, 32, 8, 8), "large": (512, 128, 8, 16)}[size]
    mesh = make_mesh(devices, "vocab")
    params = [(normal(rng, (vocab, d_model), 0.02), P("vocab", None)),
              (dense_init(rng, d_model, d_model), P()),
              (np.ones(d_model, np.float32), P())]
    data = [(labels_in_range(rng, (batch, seq), vocab), P()),
            (labels_in_range(rng, (batch, seq), vocab), P())]

    def loss_fn(weights, tokens, labels):
        table, w_mix, gain = weights
        embedded = jnp.take(table, tokens, axis=0)
        hidden = layer_norm(embedded + jnp.tanh(embedded @ w_mix), gain)
        return cross_entropy(jnp.einsum("bsd,vd->bsv", hidden, table), labels)

    return sgd_training_step(mesh, loss_fn, params, data, lr=0.1)


@register("GPipe pipeline training step (shard_map), one residual layer per stage, "
          "microbatches passed on by collective-permute; output psum all-reduce")
def build_pipeline_ppermute(size, devices, rng):
    microbatches, micro_size, d_model = {"small": (4, 4, 32), "large": (8, 16, 128)}[size]
    mesh = make_mesh(devices, "stage")
    stages = len(devices)
    forward = [(i, i + 1) for i in range(stages - 1)]

    def local_loss(weights, inputs, targets):
        """weights: this stage's [1, D, D]; inputs/targets: all [M, mb, D]."""
        stage = jax.lax.axis_index("stage")
        received = jnp.zeros((micro_size, d_model), F32)
        outputs = jnp.zeros_like(targets)
        ticks = microbatches + stages - 1
        for tick in range(ticks):
            x = jnp.where(stage == 0, inputs[min(tick, microbatches - 1)], received)
            y = x + jnp.tanh(x @ weights[0])
            done = tick - (stages - 1)
            if done >= 0:
                outputs = outputs.at[done].set(jnp.where(stage == stages - 1, y, outputs[done]))
            if tick < ticks - 1:
                received = jax.lax.ppermute(y, "stage", forward)
        outputs = jax.lax.psum(jnp.where(stage == stages - 1, outputs, np.float32(0)), "stage")
        return mean_squared_error(outputs, targets)

    sharded_loss = jax.shard_map(local_loss, mesh=mesh,
                                 in_specs=(P("stage", None, None), P(), P()), out_specs=P())
    params = [(normal(rng, (stages, d_model, d_model), d_model ** -0.5), P("stage", None, None))]
    shape = (microbatches, micro_size, d_model)
    data = [(normal(rng, shape, 1.0), P()), (normal(rng, shape, 1.0), P())]
    return sgd_training_step(mesh, lambda w, x, t: sharded_loss(w[0], x, t),
                             params, data, lr=0.05)
