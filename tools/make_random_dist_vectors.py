#!/usr/bin/env python3
"""Golden vectors for graft's jax.random distributions (beyond the basics).

Runs jax.random (JAX 0.10.2 on CPU, default flags: partitionable threefry, x64 off, raw
uint32[2] keys from jax.random.PRNGKey) and writes
tests/core/random/testdata/random_dist_vectors.txt in the format of
tools/make_random_vectors.py (`<name> <dtype> <shape|scalar> <values>`, floats as exact hex
bit patterns). tests/core/random/random_dist_test.cc computes each case with graft and compares.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_random_dist_vectors.py
"""

import datetime
import os
import platform
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_random_vectors import fmt_line  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "random", "testdata", "random_dist_vectors.txt")

K = jr.PRNGKey
f32 = jnp.float32
# Points for lgamma / digamma: reflection side, poles, near 1 and 2, large.
LGAMMA_POINTS = [-4.5, -3.7, -2.5, -2.0, -1.2, -0.5, -0.1, 0.0, 0.1, 0.3, 0.5, 0.9, 1.0, 1.5,
                 2.0, 2.5, 3.0, 4.2, 7.7, 10.0, 25.5, 100.0, 1234.5, 1e6, float("inf")]


def cases():
  c = []
  add = lambda name, v: c.append((name, np.asarray(v)))
  # ---- transforms of one uniform / normal draw
  # ---- built on jnp.linalg (graft compares these within an absolute tolerance)
  add("orthogonal_k51_n4_f32", jr.orthogonal(K(51), 4))
  add("orthogonal_k52_n3_m5_f32_2", jr.orthogonal(K(52), 3, (2,), m=5))
  add("orthogonal_k53_n5_m2_f32", jr.orthogonal(K(53), 5, m=2))
  mean = jnp.array([1.0, -2.0, 0.5], f32)
  cov = jnp.array([[2.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.5]], f32)
  add("multivariate_normal_k54_cholesky_f32_6", jr.multivariate_normal(K(54), mean, cov, (6,)))
  add("multivariate_normal_k55_svd_f32", jr.multivariate_normal(K(55), mean, cov, method="svd"))
  add("multivariate_normal_k56_eigh_f32_2x4",
      jr.multivariate_normal(K(56), mean, cov, (2, 4), method="eigh"))
  add("exponential_k1_f32_16", jr.exponential(K(1), (16,)))
  add("exponential_k2_f32_3x4", jr.exponential(K(2), (3, 4)))
  add("laplace_k3_f32_16", jr.laplace(K(3), (16,)))
  add("logistic_k4_f32_16", jr.logistic(K(4), (16,)))
  add("cauchy_k5_f32_16", jr.cauchy(K(5), (16,)))
  add("rademacher_k6_i32_16", jr.rademacher(K(6), (16,)))
  add("rademacher_k6_f32_2x3", jr.rademacher(K(6), (2, 3), f32))
  add("rayleigh_k7_scale2_f32_16", jr.rayleigh(K(7), 2.0, (16,)))
  add("rayleigh_k7_scalevec_f32_2x3",
      jr.rayleigh(K(7), jnp.array([0.5, 1.0, 3.0], f32), (2, 3)))
  add("weibull_min_k8_s2_c1.5_f32_16", jr.weibull_min(K(8), 2.0, 1.5, (16,)))
  add("pareto_k9_b3_f32_16", jr.pareto(K(9), 3.0, (16,)))
  add("maxwell_k10_f32_8", jr.maxwell(K(10), (8,)))
  add("double_sided_maxwell_k11_loc1_scale2_f32_8",
      jr.double_sided_maxwell(K(11), 1.0, 2.0, (8,)))
  add("lognormal_k12_s0.5_f32_16", jr.lognormal(K(12), 0.5, (16,)))
  add("triangular_k13_0_1_3_f32_16", jr.triangular(K(13), 0.0, 1.0, 3.0, (16,)))
  add("triangular_k13_vec_f32_2x3",
      jr.triangular(K(13), jnp.array([-1., 0., 1.], f32), 2.0,
                    jnp.array([3., 4., 5.], f32), (2, 3)))
  add("wald_k14_m1.5_f32_16", jr.wald(K(14), 1.5, (16,)))
  add("geometric_k15_p0.3_i32_16", jr.geometric(K(15), 0.3, (16,)))
  add("geometric_k15_pvec_i32_2x3",
      jr.geometric(K(15), jnp.array([0.1, 0.5, 0.9], f32), (2, 3)))
  # ---- choice
  add("choice_k16_n10_8", jr.choice(K(16), 10, (8,)))
  add("choice_k17_n10_norep_6", jr.choice(K(17), 10, (6,), replace=False))
  arr = jnp.arange(12, dtype=f32).reshape(3, 4)
  add("choice_k18_arr3x4_axis1_5", jr.choice(K(18), arr, (5,), axis=1))
  add("choice_k19_arr3x4_norep_axis1_3", jr.choice(K(19), arr, (3,), replace=False, axis=1))
  pp = jnp.array([0.1, 0.2, 0.3, 0.4], f32)
  add("choice_k20_n4_p_2x5", jr.choice(K(20), 4, (2, 5), p=pp))
  add("choice_k21_n4_p_norep_3", jr.choice(K(21), 4, (3,), replace=False, p=pp))
  # ---- gamma family (Marsaglia-Tsang, per-element keys)
  add("gamma_k30_a2.5_f32_16", jr.gamma(K(30), 2.5, (16,)))
  add("gamma_k31_avec_f32_2x4",
      jr.gamma(K(31), jnp.array([0.3, 1.0, 4.0, 50.0], f32), (2, 4)))
  add("gamma_k32_a0.5_f32_16", jr.gamma(K(32), 0.5, (16,)))
  add("loggamma_k33_a0.2_f32_16", jr.loggamma(K(33), 0.2, (16,)))
  add("loggamma_k34_avec_f32_4",
      jr.loggamma(K(34), jnp.array([0.01, 0.7, 1.0, 9.0], f32)))
  add("beta_k35_a2_b3_f32_16", jr.beta(K(35), 2.0, 3.0, (16,)))
  add("dirichlet_k36_alpha3_f32_4x3",
      jr.dirichlet(K(36), jnp.array([0.5, 1.0, 2.0], f32), (4,)))
  add("chisquare_k37_df3_f32_16", jr.chisquare(K(37), 3.0, (16,)))
  add("f_k38_5_7_f32_16", jr.f(K(38), 5.0, 7.0, (16,)))
  add("t_k39_df4_f32_16", jr.t(K(39), 4.0, (16,)))
  add("generalized_normal_k40_p1.5_f32_16", jr.generalized_normal(K(40), 1.5, (16,)))
  add("ball_k41_d3_p2_f32_4x3", jr.ball(K(41), 3, 2.0, (4,)))
  # ---- counts: poisson, binomial, multinomial (one key for all elements, while_loops)
  lam = jnp.array([0., 0.5, 3., 9.9, 10., 25., 1000., 1e4], f32)
  add("poisson_k70_lam3_i32_16", jr.poisson(K(70), 3.0, (16,)))
  add("poisson_k71_lamvec_i32_2x8", jr.poisson(K(71), lam, (2, 8)))
  add("poisson_k72_lam50_i32_16", jr.poisson(K(72), 50.0, (16,)))
  add("binomial_k80_n10_p0.3_f32_16", jr.binomial(K(80), 10.0, 0.3, (16,)))
  add("binomial_k81_n100_p0.4_f32_16", jr.binomial(K(81), 100.0, 0.4, (16,)))
  add("binomial_k82_n60_p0.8_f32_16", jr.binomial(K(82), 60.0, 0.8, (16,)))
  add("binomial_k83_vec_f32_8",
      jr.binomial(K(83), jnp.array([5., 0., 20., 1000., jnp.inf, -1., 100., 7.5], f32),
                  jnp.array([0.3, 0.5, 0.9, 0.4, 0.5, 0.5, 1.5, 0.], f32)))
  add("multinomial_k90_n20_p3_f32", jr.multinomial(K(90), 20.0, jnp.array([0.2, 0.3, 0.5], f32)))
  add("multinomial_k91_nvec_p2x4_f32",
      jr.multinomial(K(91), jnp.array([10., 300.], f32),
                     jnp.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.25, 0.25]], f32)))
  add("multinomial_k92_shape3x3_f32",
      jr.multinomial(K(92), 50.0, jnp.array([0.6, 0.3, 0.1], f32), shape=(3, 3)))
  # ---- lax.lgamma / lax.digamma at fixed points (tests/core/random/random_dist_test.cc has the
  # same lists), and lgamma(k + 1) for k = 0..199 (what the poisson rejection uses).
  pts = jnp.array(LGAMMA_POINTS, f32)
  add("lgamma_points_f32", jax.lax.lgamma(pts))
  add("digamma_points_f32", jax.lax.digamma(pts))
  add("lgamma_kp1_f32_200", jax.lax.lgamma(jnp.arange(200, dtype=f32) + 1))
  # d lgamma / dx (JAX: digamma) where it is finite.
  grad_pts = jnp.array([x for x in LGAMMA_POINTS
                        if np.isfinite(x) and not (x <= 0 and x == int(x))], f32)
  add("grad_lgamma_points_f32", jax.vmap(jax.grad(jax.lax.lgamma))(grad_pts))
  # ---- gradients of gamma / loggamma in a (JAX's _gamma_grad via random_gamma_grad)
  ga = jnp.array([0.3, 1.0, 2.5, 4.0, 50.0, 0.05], f32)
  add("grad_gamma_k31_avec_f32_6", jax.grad(lambda a: jr.gamma(K(31), a).sum())(ga))
  add("grad_loggamma_k34_avec_f32_6", jax.grad(lambda a: jr.loggamma(K(34), a).sum())(ga))
  xs = jnp.array([0.1, 0.5, 1.0, 2.0, 3.0, 7.5, 40.0, 0.02], f32)
  aa = jnp.array([0.5, 2.0, 1.0, 0.7, 3.0, 5.0, 45.0, 0.1], f32)
  add("random_gamma_grad_points_f32", jax.lax.random_gamma_grad(aa, xs))
  return c


def main():
  lines = [
      "# graft random distribution golden vectors (tools/make_random_dist_vectors.py)",
      "# jax %s jaxlib %s numpy %s on %s %s, %s" %
      (jax.__version__, jax.lib.__version__, np.__version__, platform.system(),
       platform.machine(), datetime.date.today().isoformat()),
      "# flags: jax_threefry_partitionable=%s jax_enable_x64=%s" %
      (jax.config.jax_threefry_partitionable, jax.config.jax_enable_x64),
  ]
  for name, v in cases():
    lines.append(fmt_line(name, v))
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
  print("wrote", OUT, len(lines) - 3, "cases")


if __name__ == "__main__":
  main()
