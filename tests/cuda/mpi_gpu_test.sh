#!/usr/bin/env bash
# Runs mpi_gpu_test as 2 MPI processes, each seeing one GPU of its own (CUDA_VISIBLE_DEVICES =
# its local rank) and one CPU virtual device. With fewer than 2 GPUs it skips (exit 0, saying
# so): two processes on one GPU would give NCCL one device twice. Fails if any process fails.
set -euo pipefail
bin="$1"
gpus=0
if command -v nvidia-smi > /dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
fi
if [ "${gpus}" -lt 2 ]; then
  echo "SKIPPED: mpi_gpu_test needs 2 GPUs on this machine, found ${gpus}"
  exit 0
fi
as_root=()
if [ "$(id -u)" -eq 0 ]; then as_root=(--allow-run-as-root); fi
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
exec mpirun "${as_root[@]}" --oversubscribe -np 2 -x GRAFT_CPU_DEVICES=1 \
  bash -c 'export CUDA_VISIBLE_DEVICES="${OMPI_COMM_WORLD_LOCAL_RANK}"; exec "$0"' "$bin"
