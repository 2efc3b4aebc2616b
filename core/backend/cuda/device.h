// CUDA device discovery. Without --config=cuda, or without a usable GPU and driver, there are
// no CUDA devices and callers carry on with the CPU; probe() says which of those it is (no
// device, or a driver present but unusable, with the CUDA error's name and string).
#pragma once

#include <string>

#include "core/backend/cuda/probe.h"

namespace graft::cuda {

// cudaGetDeviceCount's answer, classified (probe.h); asked once per process.
const Probe& probe();
// Number of usable CUDA devices: probe().count (0 without CUDA, a device, or a working driver).
int device_count();
// probe().str(): the first device's name, or why there are no devices.
std::string status();
// Runs a tiny kernel that fills `n` floats with `value` on device 0 and copies them back;
// false (with `error` set) when there is no device.
bool fill_on_device(float* host, int n, float value, std::string* error);

}  // namespace graft::cuda
