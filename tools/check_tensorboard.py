#!/usr/bin/env python3
"""Reads a TensorBoard event file (or log dir) with TensorBoard's own EventAccumulator and
prints every scalar and text summary: an independent check that graft's SummaryWriter
(examples/train/tensorboard.cc) writes files TensorBoard understands. TensorBoard's record reader checks both masked
CRC-32Cs of every record (DataLossError otherwise), so a clean read also checks the framing.

  pip install tensorboard
  bazel run //examples/train:tensorboard_demo -- /tmp/tb && python3 tools/check_tensorboard.py /tmp/tb
"""
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util import tensor_util
import tensorboard


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_tensorboard.py <event file or log dir>")
    acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    print(f"tensorboard {tensorboard.__version__}; file_version {acc.file_version}")
    print(f"scalar tags: {tags['scalars']}; tensor tags: {tags['tensors']}")
    for tag in tags["scalars"]:
        for e in acc.Scalars(tag):
            print(f"  scalar {tag:12s} step {e.step:4d}  value {e.value:.6g}  wall {e.wall_time:.3f}")
    for tag in tags["tensors"]:
        for e in acc.Tensors(tag):
            value = tensor_util.make_ndarray(e.tensor_proto)
            print(f"  tensor {tag:12s} step {e.step:4d}  {value!r}")
    if not tags["scalars"]:
        sys.exit("no scalars found")


if __name__ == "__main__":
    main()
