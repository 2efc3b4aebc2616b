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
  * inject_sgd_set_lr/<t>/...: inject_hyperparams(sgd) with the learning rate overwritten in
    the state before step INJECT_AT; <name>/<t>/... for NAN_OPTIMIZERS run on nan_grads (the
    gradients with NaNs put at NAN_STEPS), with apply_if_finite's counters / zero_nans'
    found_nan per step.
  * <opt>/<t>/lr: for optimizers with a schedule, the schedule value at count t.
  * global_norm/<t>: optax.tree.norm(grads at t).
  * sched/<name>: a schedule evaluated at the int32 steps in sched/steps.
  * loss/<name>: Optax's losses (optax.losses) on the fixed inputs also stored under loss/
    (pred, targ, logits, bin_labels, prob_labels, int_labels, log_preds), elementwise or per
    example exactly as Optax returns them.
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
    # Breadth: the remaining optax.schedules a JAX user reaches for.
    "exp_decay": optax.exponential_decay(1.0, 5, 0.5, transition_begin=3),
    "exp_decay_staircase_end": optax.exponential_decay(1.0, 4, 0.5, staircase=True,
                                                       end_value=0.1),
    "exp_growth_end": optax.exponential_decay(0.1, 3, 2.0, end_value=1.0),
    "piecewise_constant": optax.piecewise_constant_schedule(1.0, {5: 0.5, 10: 0.1, 20: 2.0}),
    "polynomial": optax.polynomial_schedule(1.0, 0.01, 2, 20, transition_begin=5),
    "polynomial_sqrt": optax.polynomial_schedule(0.0, 1.0, 0.5, 10),
    "onecycle": optax.cosine_onecycle_schedule(30, 1.0),
    "linear_onecycle": optax.linear_onecycle_schedule(40, 2.0),
    "piecewise_linear": optax.piecewise_interpolate_schedule("linear", 1.0,
                                                             {4: 3.0, 12: 0.25, 13: 0.0}),
    "onecycle_custom": optax.cosine_onecycle_schedule(20, 0.5, pct_start=0.25, div_factor=10.0,
                                                      final_div_factor=100.0),
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
    # Breadth: rmsprop, adagrad, adamax, nadam, radam, lamb, lars.
    "rmsprop": (optax.rmsprop(0.01), None),
    "rmsprop_centered_momentum": (optax.rmsprop(0.01, centered=True, momentum=0.9), None),
    "rmsprop_bc_nesterov": (optax.rmsprop(0.01, decay=0.95, eps_in_sqrt=False,
                                          bias_correction=True, momentum=0.5, nesterov=True),
                            None),
    "rmsprop_initial_scale_exp_lr": (optax.rmsprop(
        optax.exponential_decay(0.05, 2, 0.5, staircase=True), initial_scale=0.1), None),
    "adagrad": (optax.adagrad(0.1), None),
    "adagrad_zero_init": (optax.adagrad(0.1, initial_accumulator_value=0.0, eps=1e-6), None),
    "adamax": (optax.adamax(0.01), None),
    "nadam": (optax.nadam(0.01), None),
    "radam": (optax.radam(0.01), None),
    # b2=0.9: the variance becomes tractable (rho >= threshold) within the recorded steps.
    "radam_rectified": (optax.radam(0.01, b2=0.9, threshold=4.5), None),
    "radam_rectified_nesterov": (optax.radam(0.01, b2=0.9, threshold=4.5, nesterov=True), None),
    "lamb": (optax.lamb(0.01, weight_decay=0.1, mask=decay_2d), None),
    "lars": (optax.lars(0.1, weight_decay=0.01), None),
    "lars_nesterov": (optax.lars(0.1, weight_decay=0.01, trust_coefficient=0.5,
                                 momentum=0.8, nesterov=True), None),
    # Breadth, continued: muon, clip, ema, multi_transform, inject_hyperparams,
    # apply_every (apply_if_finite and zero_nans run on NAN_GRADS, below).
    "muon": (optax.contrib.muon(0.02), None),
    "muon_dion_wd": (optax.contrib.muon(0.02, ns_coeffs="dion", weight_decay=0.1,
                                        nesterov=False, adam_learning_rate=0.01,
                                        consistent_rms=0.2), None),
    "muon_adaptive_3steps": (optax.contrib.muon(0.05, ns_steps=3, beta=0.9, adaptive=True),
                             None),
    "clip_sgd": (optax.chain(optax.clip(0.3), optax.sgd(0.1)), None),
    "ema_sgd": (optax.chain(optax.ema(0.9), optax.sgd(0.1)), None),
    "ema_no_debias_sgd": (optax.chain(optax.ema(0.8, debias=False), optax.sgd(0.1)), None),
    "multi_transform": (optax.multi_transform(
        {"mat": optax.adam(0.01), "vec": optax.sgd(0.1, momentum=0.9)},
        lambda p: {k: ("mat" if k in ("v", "w") else "vec") for k in p}), None),
    "inject_adam_linear_lr": (optax.inject_hyperparams(optax.adam)(
        learning_rate=optax.linear_schedule(0.02, 0.0, 5)), None),
    "apply_every_sgd": (optax.chain(optax.apply_every(3), optax.sgd(0.1, momentum=0.5)), None),
}

# inject_hyperparams with the learning rate overwritten in the state before step INJECT_AT.
INJECT_AT, INJECT_LR = 3, 0.03
NAN_STEPS = {1: [("b", 1)], 3: [("w", 2)], 4: [("b", 0), ("s", 0)]}
NAN_OPTIMIZERS = {
    "apply_if_finite_sgd": optax.apply_if_finite(optax.sgd(0.1, momentum=0.9), 2),
    "apply_if_finite_adam": optax.apply_if_finite(optax.adam(0.01), 2),
    "zero_nans_sgd": optax.chain(optax.zero_nans(), optax.sgd(0.1)),
}


def nan_grads(t):
  """grads(t) with NaN at the (leaf, flat index) places NAN_STEPS lists for step t.

  Not recorded (JSON has no NaN): the C++ test puts NaNs at the same places."""
  g = {k: np.array(v) for k, v in grads(t).items()}
  for k, i in NAN_STEPS.get(t, []):
    g[k].reshape(-1)[i] = np.nan
  return {k: jnp.asarray(v) for k, v in g.items()}


def record_wrappers(arrays):
  """inject_hyperparams with a state override; apply_if_finite and zero_nans on NaNs."""
  opt = optax.inject_hyperparams(optax.sgd)(learning_rate=0.1, momentum=0.9)
  params, state = params0(), None
  state = opt.init(params)
  for t in range(STEPS):
    if t == INJECT_AT:
      state.hyperparams["learning_rate"] = jnp.float32(INJECT_LR)
    updates, state = opt.update(grads(t), state, params)
    params = optax.apply_updates(params, updates)
    for k, v in params.items():
      record(arrays, f"inject_sgd_set_lr/{t}/{k}", v)
  for name, opt in NAN_OPTIMIZERS.items():
    params = params0()
    state = opt.init(params)
    for t in range(STEPS):
      updates, state = opt.update(nan_grads(t), state, params)
      params = optax.apply_updates(params, updates)
      for k, v in params.items():
        record(arrays, f"{name}/{t}/{k}", v)
      if name.startswith("apply_if_finite"):
        record(arrays, f"{name}/{t}/notfinite_count", state.notfinite_count)
        record(arrays, f"{name}/{t}/total_notfinite", state.total_notfinite)
        record(arrays, f"{name}/{t}/last_finite", np.int32(state.last_finite))
      else:
        found = state[0].found_nan
        record(arrays, f"{name}/{t}/found_nan",
               np.array([bool(found[k]) for k in sorted(found)], np.int32))


def record_losses(arrays):
  pred = np.array([[0.5, -1.2, 3.0, 0.1], [2.5, 0.0, -0.4, 1.7], [-3.1, 0.9, 0.25, -0.6]],
                  np.float32)
  targ = np.array([[0.4, -0.2, 1.0, 0.1], [0.0, 0.3, -0.5, 2.9], [-1.0, 1.0, 1.25, -0.2]],
                  np.float32)
  logits = np.array([[1.0, -2.0, 0.5, 3.0, 0.0], [30.0, -30.0, 0.1, -0.1, 2.0],
                     [-1.5, 0.7, 0.2, -0.3, 5.0]], np.float32)
  bin_labels = np.array([[1, 0, 1, 0, 0.3], [1, 0, 0, 1, 0.5], [0, 1, 0.25, 1, 0]], np.float32)
  prob_labels = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0],
                          [0.25, 0.25, 0.0, 0.25, 0.25]], np.float32)
  int_labels = np.array([3, 0, 2], np.int32)
  log_preds = np.asarray(jax.nn.log_softmax(jnp.asarray(logits)))
  for k, v in [("pred", pred), ("targ", targ), ("logits", logits), ("bin_labels", bin_labels),
               ("prob_labels", prob_labels), ("int_labels", int_labels),
               ("log_preds", log_preds)]:
    record(arrays, f"loss/{k}", v)
  L = optax.losses
  record(arrays, "loss/l2", L.l2_loss(pred, targ))
  record(arrays, "loss/l2_no_targets", L.l2_loss(pred))
  record(arrays, "loss/huber", L.huber_loss(pred, targ))
  record(arrays, "loss/huber_delta", L.huber_loss(pred, targ, delta=0.5))
  record(arrays, "loss/sigmoid_bce", L.sigmoid_binary_cross_entropy(logits, bin_labels))
  record(arrays, "loss/softmax_ce", L.softmax_cross_entropy(logits, prob_labels))
  record(arrays, "loss/softmax_ce_axis0", L.softmax_cross_entropy(logits, prob_labels, axis=0))
  record(arrays, "loss/softmax_ce_int",
         L.softmax_cross_entropy_with_integer_labels(logits, int_labels))
  record(arrays, "loss/kl", L.kl_divergence(log_preds, prob_labels))
  record(arrays, "loss/kl_axis0", L.kl_divergence(log_preds, prob_labels, axis=0))
  # Gradients of the summed loss w.r.t. its first argument (jax.grad).
  gsum = lambda f: jax.grad(lambda x, *a: jnp.sum(f(x, *a)))
  record(arrays, "loss/grad_l2", gsum(L.l2_loss)(pred, targ))
  record(arrays, "loss/grad_huber_delta",
         gsum(lambda x, t: L.huber_loss(x, t, delta=0.5))(pred, targ))
  record(arrays, "loss/grad_sigmoid_bce", gsum(L.sigmoid_binary_cross_entropy)(logits, bin_labels))
  record(arrays, "loss/grad_softmax_ce", gsum(L.softmax_cross_entropy)(logits, prob_labels))
  record(arrays, "loss/grad_softmax_ce_int",
         gsum(L.softmax_cross_entropy_with_integer_labels)(logits, int_labels))
  record(arrays, "loss/grad_kl", gsum(L.kl_divergence)(log_preds, prob_labels))


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

  record_losses(arrays)
  record_wrappers(arrays)

  meta = {"generator": "tools/make_optax_vectors.py", "optax": optax.__version__,
          "jax": jax.__version__, "numpy": np.__version__, "steps": STEPS,
          "backend": jax.default_backend()}
  os.makedirs(os.path.dirname(OUT), exist_ok=True)
  with open(OUT, "w") as f:
    json.dump({"meta": meta, "arrays": arrays}, f, indent=0)
  print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")


if __name__ == "__main__":
  main()
