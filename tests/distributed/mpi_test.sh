#!/usr/bin/env bash
# Runs mpi_world_test as 2 MPI processes x 2 virtual devices (mpirun from openmpi-bin). Fails
# if any process fails. OpenMPI refuses to run as root unless told.
set -euo pipefail
bin="$1"
as_root=()
if [ "$(id -u)" -eq 0 ]; then as_root=(--allow-run-as-root); fi
# Loopback only, shared memory between the two processes; no daemons beyond mpirun's own.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Under the ASan config: OpenMPI's own allocations are still live at exit (it frees little in
# MPI_Finalize), which LeakSanitizer would report; graft's leaks are caught by the other tests.
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="${ASAN_OPTIONS}:detect_leaks=0"; fi
exec mpirun "${as_root[@]}" --oversubscribe -np 2 -x GRAFT_CPU_DEVICES=2 -x ASAN_OPTIONS \
  -x LSAN_OPTIONS -x UBSAN_OPTIONS "$bin"
