#!/usr/bin/env python3
"""Record JAX's jacrev / jacfwd / hessian of pytree functions for tests/transforms/jacobian_test.

Runs JAX 0.10.2 on CPU in float64 and writes tests/transforms/testdata/jacobian_jax.inc: for
each case, the Jacobian's leaves in JAX's tree_leaves order (dict keys sorted, tuples in
order, as graft's std::map and std::tuple flatten), each as {shape, values}. The C++ test
builds the same functions and inputs and compares tree_leaves of graft's result leaf by
leaf, so both the nesting (output outside, arguments inside) and the values are JAX's.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jacobian_vectors.py
"""
import os

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

P = {"a": jnp.array([0.5, -1.5]), "b": jnp.array([[0.3, -0.2], [0.1, 0.4]])}
X = jnp.array([0.25, -0.75, 1.5])


def f(p, x):  # dict output of (dict, array) arguments
    return {"u": jnp.tanh(p["b"] @ p["a"]) * jnp.sum(x), "w": jnp.sin(x) * p["a"][0]}


def g(p, x):  # scalar
    return jnp.sum(jnp.tanh(p["b"] @ p["a"] + x[:2]) ** 2) * x[2]


CASES = {
    "kJacrevDictOutput": jax.jacrev(f, argnums=(0, 1))(P, X),
    "kJacfwdDictOutput": jax.jacfwd(f, argnums=(0, 1))(P, X),
    "kHessianTwoArgs": jax.hessian(g, argnums=(0, 1))(P, X),
}


def main():
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "transforms", "testdata",
                       "jacobian_jax.inc")
    lines = [f"// Made by tools/make_jacobian_vectors.py with jax {jax.__version__} (float64)."]
    for name, tree in CASES.items():
        lines.append(f"const std::vector<RecordedLeaf> {name} = {{")
        for leaf in jax.tree_util.tree_leaves(tree):
            shape = ", ".join(str(d) for d in leaf.shape)
            vals = ", ".join(repr(float(v)) for v in leaf.reshape(-1).tolist())
            lines.append(f"    {{{{{shape}}}, {{{vals}}}}},")
        lines.append("};")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
