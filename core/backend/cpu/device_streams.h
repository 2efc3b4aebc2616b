// The execution streams of the CPU's virtual devices: one worker thread per device, started
// on first use, that runs the work given to that device in order.
//
// run_on_devices is how a shard_map (and so a pmap) runs: member k on device k, all members
// at once (their collectives wait for each other). The members of one call are queued on
// every device under one lock, so two shard_maps started from different threads run in the
// same order on every device and cannot wait on each other crosswise.
#pragma once

#include <functional>
#include <vector>

namespace graft::cpu {

// Which devices' streams: the CPU's virtual devices, or the GPUs (the CUDA backend's
// shard_map drives GPU k from a host thread of its own, as the CPU drives virtual device k).
enum class StreamPool { kCpu, kGpu };

// Runs fn(i) on the stream of this process's device streams[i] (an index among
// local_devices(), or a GPU's index for kGpu) for every i, and returns when all have finished. If
// any threw, rethrows one of the errors (a graft::Error other than "another device failed" first).
// fn must not itself call run_on_devices (a shard_map inside another is refused when it is traced).
void run_on_devices(const std::vector<int>& streams, const std::function<void(int)>& fn,
                    StreamPool pool = StreamPool::kCpu);

// The device whose stream this thread is, of either pool (-1 on other threads).
int current_device();

}  // namespace graft::cpu
