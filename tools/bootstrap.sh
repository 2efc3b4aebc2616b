#!/usr/bin/env bash
# Installs what graft's build, tests and examples need (Debian bookworm, as root).
# Idempotent: installs only packages that are missing; safe to run on every start.
set -euo pipefail

packages=(
  bazel-bootstrap   # Bazel 4.2.3 (offline-capable; see third_party/rules_*)
  g++
  libeigen3-dev
  libabsl-dev
  libgtest-dev
  libbenchmark-dev
  libdnnl-dev       # oneDNN: CPU GEMM
  liblapacke-dev    # LAPACK + LAPACKE + BLAS: factorizations (cholesky, qr, svd, eigh, lu)
  llvm-14-dev       # LLVM's ORC JIT: fused elementwise groups compiled to native loops
  nlohmann-json3-dev   # JSON: checkpoint metadata, test vectors
  libtomlplusplus-dev  # TOML: training configs
  zlib1g-dev        # gzip: .jsonl.gz datasets
  libzstd-dev       # zstd: .jsonl.zst datasets
  libopenmpi-dev    # MPI: collectives between processes (core/distributed/mpi.cc)
  openmpi-bin       # mpirun, for multi-process runs and their tests
  fortunes          # the default English training corpus (/usr/share/games/fortunes)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  echo "bootstrap: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: all packages present"
fi
