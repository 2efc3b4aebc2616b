#!/usr/bin/env bash
# Runs mpi_collectives_test under mpirun as 2 x 1, 4 x 1, 2 x 2 and 4 x 2 processes x virtual
# devices (openmpi-bin; oversubscribed on a small machine), then as the multi-host recipe does
# (a host list, TCP only). Fails if any run fails.
set -euo pipefail
bin="$1"
as_root=()
if [ "$(id -u)" -eq 0 ]; then as_root=(--allow-run-as-root); fi
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Under the ASan config: OpenMPI's own allocations are still live at exit (see mpi_test.sh).
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="${ASAN_OPTIONS}:detect_leaks=0"; fi
for world in "2 1" "4 1" "2 2" "4 2"; do
  read -r procs devices <<< "$world"
  echo "== $procs processes x $devices devices"
  mpirun "${as_root[@]}" --oversubscribe -np "$procs" -x GRAFT_CPU_DEVICES="$devices" \
    -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS "$bin"
done
# The multi-host recipe of docs/devices-and-sharding.md on this one host: a host list and the
# TCP transport only (no shared memory between the processes), as between machines.
echo "== 2 processes x 2 devices, -H localhost:2, TCP only"
OMPI_MCA_btl=self,tcp mpirun "${as_root[@]}" -H localhost:2 -np 2 -x GRAFT_CPU_DEVICES=2 \
  --mca btl_tcp_if_include lo -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS "$bin"
