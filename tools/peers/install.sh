#!/usr/bin/env bash
# Installs the peers of tools/peers (PyTorch 2.15 CPU-usable, JAX 0.10.2 + optax, MLX 0.32.4)
# into a virtualenv, and extracts Debian's pthread OpenBLAS (for MLX, LD_PRELOADed by
# compare.py; NOT installed system-wide, which would switch the system's libblas).
# Installs the peers (CPU wheels, pinned versions). Idempotent; ~3 GB of downloads and disk.
#
#   bash tools/peers/install.sh            # venv: ${GRAFT_PEERS_VENV:-~/.cache/graft-peers/venv}
#
# The venv lives outside the repository so that `bazel test //...` never walks its files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${GRAFT_PEERS_VENV:-$HOME/.cache/graft-peers/venv}"
py="${PYTHON:-python3}"

[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
pip="$venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q numpy safetensors
# JAX (0.10.2 is the newest for Python 3.11) and optax.
"$pip" install -q "jax==0.10.2" optax
# PyTorch: the PyPI wheel is a CUDA build; install it without its CUDA dependency tree, then
# the small pure deps, then the four nvidia wheels it needs to import (the rest of CUDA is
# not needed for CPU ops: torch.cuda.is_available() is False).
"$pip" install -q --no-deps "torch==2.15.*"
"$pip" install -q filelock typing-extensions setuptools sympy networkx jinja2 fsspec
"$pip" install -q --no-deps nvidia-cufile nvidia-cusparselt-cu13 nvidia-nvshmem-cu13 \
  nvidia-nccl-cu13
# MLX for CPU (bundles a single-threaded reference BLAS: see OpenBLAS below).
"$pip" install -q "mlx[cpu]==0.32.4"

# Debian's OpenBLAS (pthread build), extracted under tools/peers/.cache (gitignored).
ob="$here/.cache/openblas"
if [ ! -e "$ob/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0" ]; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && { apt-get download libopenblas0-pthread 2>/dev/null ||
                  { apt-get update -qq && apt-get download libopenblas0-pthread; }; })
  mkdir -p "$ob"
  dpkg-deb -x "$tmp"/libopenblas0-pthread_*.deb "$ob"
  rm -rf "$tmp"
fi

"$venv/bin/python" - <<'PY'
import jax, optax, torch, mlx.core as mx
print(f"torch {torch.__version__} (cuda available: {torch.cuda.is_available()}), "
      f"jax {jax.__version__}, optax {optax.__version__}, mlx {mx.__version__}")
PY
echo "OpenBLAS for MLX: $ob/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
