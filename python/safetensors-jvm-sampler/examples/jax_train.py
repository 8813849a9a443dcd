"""A small JAX training loop fed by the sampler, in the shape of headwater's training architecture:
pull a batch -> jax.device_put -> jitted train step -> periodic validation from the val channel.

The model is a toy (cells encoded from their values and the frozen column/categorical/text
embedding tables, mean-pooled over the context, one head per target type), but it consumes the
real batch tensors and trains on CPU. Run:

    python jax_train.py --db /path/to/db [--steps 200]
    python jax_train.py --synthetic /tmp/demo-db      # generate a database first

Works unchanged with headwater's own module: pass --headwater to import it instead.
"""

from __future__ import annotations

import argparse
import math

import jax
import jax.numpy as jnp
import numpy as np

D = 32  # hidden width
EMB = 256  # embedding width of the database's tables
TARGET_STYPES = 4  # 1 Numerical, 2 Timestamp, 3 Boolean, 4 Categorical

# What the model reads from a batch (the rest stays on the host).
MODEL_KEYS = ("column_ids", "numeric_values", "timestamp_values", "bool_values", "categorical_embed_ids",
              "text_embed_ids", "is_null", "is_target", "is_padding", "text_batch_embeddings", "target_stype")


def init_params(key):
    k = jax.random.split(key, 6)
    cell_in = 3 * EMB + 1 + 15 + 3  # three embeddings; numeric, 15 timestamp floats, bool, is_null, is_target

    def dense(key, n_in, n_out):
        return {"w": jax.random.normal(key, (n_in, n_out)) / math.sqrt(n_in), "b": jnp.zeros(n_out)}

    return {
        "cell": dense(k[0], cell_in, D),
        "query": dense(k[1], EMB, D),
        "hidden": dense(k[2], 2 * D, D),
        "out": dense(k[3], D, 1 + 15 + 1 + EMB),  # numeric, timestamp, boolean logit, categorical vector
    }


def apply(params, batch, col_table, cat_table):
    f32 = jnp.float32
    cols = col_table[batch["column_ids"]].astype(f32)  # [B, S, 256]
    cats = cat_table[batch["categorical_embed_ids"]].astype(f32)
    texts = batch["text_batch_embeddings"][batch["text_embed_ids"]].astype(f32)
    scalars = jnp.concatenate([
        batch["numeric_values"][..., None], batch["timestamp_values"],
        batch["bool_values"][..., None].astype(f32), batch["is_null"][..., None].astype(f32),
        batch["is_target"][..., None].astype(f32)], axis=-1)
    # The target cell's value is in the batch: the model must not see it.
    visible = (1 - batch["is_target"].astype(f32))[..., None]
    cell = jnp.concatenate([cols, cats * visible, texts, scalars * jnp.concatenate(
        [visible, jnp.broadcast_to(visible, visible.shape[:-1] + (15,)), visible, jnp.ones_like(visible),
         jnp.ones_like(visible)], axis=-1)], axis=-1)
    h = jax.nn.relu(cell @ params["cell"]["w"] + params["cell"]["b"])  # [B, S, D]
    context = (1 - batch["is_padding"].astype(f32)) * (1 - batch["is_target"].astype(f32))
    pooled = (h * context[..., None]).sum(1) / jnp.maximum(context.sum(1, keepdims=True), 1.0)
    target_col = (cols * batch["is_target"].astype(f32)[..., None]).sum(1)  # [B, 256]
    q = target_col @ params["query"]["w"] + params["query"]["b"]
    z = jax.nn.relu(jnp.concatenate([pooled, q], -1) @ params["hidden"]["w"] + params["hidden"]["b"])
    return z @ params["out"]["w"] + params["out"]["b"]  # [B, 1 + 15 + 1 + 256]


def compute_loss(params, batch, col_table, cat_table):
    f32 = jnp.float32
    out = apply(params, batch, col_table, cat_table)
    tgt = batch["is_target"].astype(f32)  # [B, S], one 1 per sequence
    at = lambda x: (x * tgt).sum(1)  # noqa: E731 - value at the target cell
    num_loss = (out[:, 0] - at(batch["numeric_values"])) ** 2
    ts_true = (batch["timestamp_values"] * tgt[..., None]).sum(1)
    ts_loss = ((out[:, 1:16] - ts_true) ** 2).mean(-1)
    bool_loss = optax_free_bce(out[:, 16], at(batch["bool_values"].astype(f32)))
    cat_true = (cat_table[batch["categorical_embed_ids"]].astype(f32) * tgt[..., None]).sum(1)
    pred = out[:, 17:]
    cos = (pred * cat_true).sum(-1) / (jnp.linalg.norm(pred, axis=-1) * jnp.linalg.norm(cat_true, axis=-1) + 1e-6)
    cat_loss = 1.0 - cos
    type_losses = jnp.stack([num_loss, ts_loss, bool_loss, cat_loss])  # [4, B]
    selector = jax.nn.one_hot(batch["target_stype"][0].astype(jnp.int32) - 1, TARGET_STYPES)  # [4]
    type_loss = selector @ type_losses  # [B]
    not_null = 1 - at(batch["is_null"].astype(f32))
    return (not_null * type_loss).sum() / jnp.maximum(not_null.sum(), 1.0)


def optax_free_bce(logit, label):
    return jnp.maximum(logit, 0) - logit * label + jnp.log1p(jnp.exp(-jnp.abs(logit)))


@jax.jit
def train_step(params, opt_state, batch, col_table, cat_table, lr=1e-2):
    loss, grads = jax.value_and_grad(compute_loss)(params, batch, col_table, cat_table)
    # Adam, written out to keep the example's dependencies to jax.
    m, v, t = opt_state
    t = t + 1
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    scale = lr * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return params, (m, v, t), loss


eval_step = jax.jit(compute_loss)


def to_device(np_batch, device):
    """The model's tensors on the device. ``text_batch_embeddings`` has a data-dependent row count;
    it is padded to a power of two so the jitted step compiles a handful of times, not every batch."""
    host = {k: np_batch[k] for k in MODEL_KEYS}
    texts = host["text_batch_embeddings"]
    rows = max(256, 1 << max(texts.shape[0] - 1, 0).bit_length())
    host["text_batch_embeddings"] = np.pad(texts.astype(np.float16, copy=False).view(np.float16),
                                           ((0, rows - texts.shape[0]), (0, 0)))
    return jax.device_put(host, device)


def as_f16(table: np.ndarray) -> np.ndarray:
    # headwater's own module returns f16 tables as uint16 bit patterns; ours as float16.
    return table.view(np.float16) if table.dtype == np.uint16 else table


def run_validation(sampler, params, col_table, cat_table, num_val_steps, device):
    total = 0.0
    for _ in range(num_val_steps):
        np_batch = sampler.next_val_batch()
        total += float(eval_step(params, to_device(np_batch, device), col_table, cat_table))
    return total / num_val_steps


def train(sampler, steps: int, eval_interval: int = 20, num_val_steps: int = 2, seed: int = 0, log=print):
    """Runs the loop; returns (train losses per step, validation losses)."""
    device = jax.local_devices()[0]
    col_table = jax.device_put(as_f16(sampler.column_embeddings()), device)
    cat_table = jax.device_put(as_f16(sampler.categorical_embeddings()), device)
    params = init_params(jax.random.key(seed))
    zeros = jax.tree.map(jnp.zeros_like, params)
    opt_state = (zeros, zeros, jnp.zeros((), jnp.float32))
    losses, val_losses = [], []
    for step in range(steps):
        np_batch = sampler.next_train_batch()  # blocks with the GIL released
        device_batch = to_device(np_batch, device)
        params, opt_state, loss = train_step(params, opt_state, device_batch, col_table, cat_table)
        losses.append(float(loss))
        if step % eval_interval == 0 or step == steps - 1:
            val = run_validation(sampler, params, col_table, cat_table, num_val_steps, device)
            val_losses.append(val)
            log(f"step {step:4d}  train loss {losses[-1]:.4f}  val loss {val:.4f}")
    return losses, val_losses


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--db", help="a headwater database directory")
    src.add_argument("--synthetic", help="generate a synthetic database here first (must not exist)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--sequence-length", type=int, default=1024)
    ap.add_argument("--headwater", action="store_true", help="use headwater's own Python module")
    args = ap.parse_args()
    if args.headwater:
        import headwater as sampling
    else:
        import safetensors_jvm_sampler as sampling
    db = args.db
    if args.synthetic:
        import safetensors_jvm_sampler

        db = safetensors_jvm_sampler.generate_synthetic_database(args.synthetic, rows=20_000, seed=1)["dir"]
    sampler = sampling.Sampler(
        db_path=db,
        rank=jax.process_index(),
        world_size=jax.process_count(),
        split_ratios=(0.8, 0.1, 0.1),
        split_seed=123,
        seed=42,
        num_prefetch=3,
        default_batch_size=args.batch_size,
        default_sequence_length=args.sequence_length,
    )
    try:
        train(sampler, args.steps)
    finally:
        sampler.shutdown()


if __name__ == "__main__":
    main()
