// CUDA device discovery. Without --config=cuda, or without a GPU and driver, there are no
// CUDA devices and callers carry on with the CPU.
#pragma once

#include <string>

namespace graft::cuda {

// Number of usable CUDA devices (0 when graft was built without CUDA or there is no GPU).
int device_count();
// Why there are no devices, or the first device's name.
std::string status();
// Runs a tiny kernel that fills `n` floats with `value` on device 0 and copies them back;
// false (with `error` set) when there is no device.
bool fill_on_device(float* host, int n, float value, std::string* error);

}  // namespace graft::cuda
