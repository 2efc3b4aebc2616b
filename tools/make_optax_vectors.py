#!/usr/bin/env python3
"""Reference vectors for graft::optim, recorded by running Optax.

Runs Optax (pip install optax) on JAX's CPU backend with default settings (f32, no x64) and
writes tests/optim/testdata/optax_vectors.json in the format of tests/util/test_vectors.h.

What is recorded:
  * params0/{b,s,v,w}: the initial parameters, a dict of a (4,) bias, a scalar, a (4, 3) and
    a (3, 4) matrix (keys sorted, as both jax.tree and graft's std::map flatten them).
  * grads/<t>/{b,s,v,w}: the gradient fed at step t (deterministic sines, scaled per step so
    that clip_by_global_norm both clips and passes through).
  * <opt>/<t>/{b,s,v,w}: the params after step t (t = 0..STEPS-1) for each optimizer below,
    computed with opt.init / opt.update / optax.apply_updates under jax.jit.
  * <opt>/<t>/lr: for optimizers with a schedule, the schedule value at count t.
  * global_norm/<t>: optax.tree.norm(grads at t).
  * sched/<name>: a schedule evaluated at the int32 steps in sched/steps.
    WSD (warmup-stable-decay) is not in Optax: its linear and cosine shapes are built from
    Optax's join_schedules / linear_schedule / cosine_decay_schedule, the sqrt shape is a
    numpy float64 closed form (1 - sqrt) written down below.

Usage: python3 tools/make_optax_vectors.py
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax

STEPS = 6
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "optim", "testdata",
                   "optax_vectors.json")


def params0():
  w = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5) * np.float32(0.1)
  b = np.array([0.5, -0.25, 0.0, 1.0], np.float32)
  s = np.float32(2.0)
  v = (np.arange(12, dtype=np.float32).reshape(4, 3) % 5 - 2.0) * np.float32(0.3)
  return {"b": jnp.asarray(b), "s": jnp.asarray(s), "v": jnp.asarray(v), "w": jnp.asarray(w)}


SCALES = [0.05, 1.0, 0.02, 2.0, 0.3, 0.7]


def grads(t):
  def leaf(shape, phase):
    n = int(np.prod(shape)) if shape else 1
    x = np.sin(np.arange(n, dtype=np.float64) * 0.7 + phase + 1.3 * t) * SCALES[t]
    return jnp.asarray(x.astype(np.float32).reshape(shape))
  return {"b": leaf((4,), 0.1), "s": leaf((), 0.2), "v": leaf((4, 3), 0.4),
          "w": leaf((3, 4), 0.3)}


def decay_2d(p):
  return jax.tree.map(lambda x: x.ndim >= 2, p)


def wsd(init, peak, warmup, total, frac, end, shape):
  """Warmup (linear), stable at peak, then decay over the last int(frac*total) steps."""
  decay_steps = int(frac * total)
  start = total - decay_steps
  warm = optax.linear_schedule(init, peak, warmup)
  stable = optax.constant_schedule(peak)
  if shape == "linear":
    dec = optax.linear_schedule(peak, end, decay_steps)
  elif shape == "cosine":
    dec = optax.cosine_decay_schedule(peak, decay_steps, alpha=end / peak)
  else:  # sqrt: peak - (peak - end) * sqrt(min(t, D) / D), in float64
    def dec(t):
      return peak - (peak - end) * np.sqrt(min(int(t), decay_steps) / decay_steps)
    def full(step):
      step = int(step)
      if step < warmup:
        return float(warm(step))
      if step < start:
        return peak
      return dec(step - start)
    return full
  return optax.join_schedules([warm, stable, dec], [warmup, start])


SCHEDULES = {
    "constant": optax.constant_schedule(0.5),
    "linear": optax.linear_schedule(1.0, 0.1, 10, transition_begin=5),
    "cosine": optax.cosine_decay_schedule(1.0, 20, alpha=0.1),
    "warmup_cosine": optax.warmup_cosine_decay_schedule(0.0, 1.0, 5, 25, 0.05),
    "wsd_linear": wsd(0.0, 1.0, 4, 30, 0.2, 0.0, "linear"),
    "wsd_cosine": wsd(0.1, 1.0, 4, 30, 0.2, 0.05, "cosine"),
    "wsd_sqrt": wsd(0.0, 1.0, 4, 30, 0.2, 0.0, "sqrt"),
}
SCHED_STEPS = list(range(0, 36)) + [100, 1000]

WARMUP_COS = optax.warmup_cosine_decay_schedule(0.0, 0.1, 2, 10, 0.01)
OPTIMIZERS = {
    "sgd": (optax.sgd(0.1), None),
    "sgd_momentum": (optax.sgd(0.1, momentum=0.9), None),
    "sgd_nesterov": (optax.sgd(0.1, momentum=0.9, nesterov=True), None),
    "sgd_linear_lr": (optax.sgd(optax.linear_schedule(0.2, 0.0, 4)), None),
    "adam": (optax.adam(0.01), None),
    "adam_nesterov": (optax.adam(0.01, nesterov=True), None),
    "adamw": (optax.adamw(0.01, weight_decay=0.1, mask=decay_2d), None),
    "lion": (optax.lion(0.01, weight_decay=0.1), None),
    "clip_adamw_warmup_cosine": (optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(WARMUP_COS, weight_decay=0.1, mask=decay_2d)), WARMUP_COS),
    # min_dim_size_to_factor=2 so that both matrices are factored (v: rows < cols, w: >).
    "adafactor": (optax.adafactor(0.1, min_dim_size_to_factor=2), None),
    "adafactor_wd": (optax.adafactor(0.05, min_dim_size_to_factor=2, clipping_threshold=None,
                                     multiply_by_parameter_scale=False, weight_decay_rate=0.1,
                                     weight_decay_mask=decay_2d), None),
    "multi_steps_adam": (optax.MultiSteps(optax.adam(0.1), every_k_schedule=3), None),
    # SGD is linear in the gradient, so this one checks the accumulated mean itself.
    "multi_steps_sgd_momentum": (optax.MultiSteps(optax.sgd(0.5, momentum=0.9),
                                                  every_k_schedule=2), None),
}


def record(arrays, name, x):
  x = np.asarray(x)
  arrays[name] = {"dtype": str(x.dtype), "shape": list(x.shape),
                  "data": x.reshape(-1).tolist()}


def main():
  arrays = {}
  for k, v in params0().items():
    record(arrays, f"params0/{k}", v)
  for t in range(STEPS):
    for k, v in grads(t).items():
      record(arrays, f"grads/{t}/{k}", v)
    record(arrays, f"global_norm/{t}", optax.tree.norm(grads(t)))

  for name, (opt, sched) in OPTIMIZERS.items():
    params = params0()
    state = opt.init(params)

    @jax.jit
    def step(params, state, g, opt=opt):
      updates, state = opt.update(g, state, params)
      return optax.apply_updates(params, updates), state

    for t in range(STEPS):
      params, state = step(params, state, grads(t))
      for k, v in params.items():
        record(arrays, f"{name}/{t}/{k}", v)
      if sched is not None:
        record(arrays, f"{name}/{t}/lr", np.float32(sched(jnp.int32(t))))

  record(arrays, "sched/steps", np.array(SCHED_STEPS, np.int32))
  for name, fn in SCHEDULES.items():
    vals = [np.float32(fn(jnp.int32(s)) if not name.endswith("sqrt") else fn(s))
            for s in SCHED_STEPS]
    record(arrays, f"sched/{name}", np.array(vals, np.float32))

  meta = {"generator": "tools/make_optax_vectors.py", "optax": optax.__version__,
          "jax": jax.__version__, "numpy": np.__version__, "steps": STEPS,
          "backend": jax.default_backend()}
  os.makedirs(os.path.dirname(OUT), exist_ok=True)
  with open(OUT, "w") as f:
    json.dump({"meta": meta, "arrays": arrays}, f, indent=0)
  print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")


if __name__ == "__main__":
  main()
