// jnp.save and jnp.load: NumPy .npy files
// (format version 1.0, little-endian, C order) for bool, u8, i32, i64, u32, f16, f32, f64 and
// bf16. As numpy (through ml_dtypes) and jnp.save do, bf16 is written as descr '<V2', and
// jnp.load reads '<V2' back as bf16. fp8 arrays have no descr numpy would read back as fp8:
// save refuses them with a Status, npy_bytes with graft::Error. Broken files give an absl::Status naming the problem,
// never a crash. Not included from core/ops.h: absl/status pulls <functional> in, whose
// std::bind ADL then finds for core's own bind() calls; include this header where needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/array.h"

namespace graft {

// The .npy bytes of x (x is evaluated), and back.
std::string npy_bytes(const Array& x);
absl::StatusOr<Array> npy_from_bytes(std::string_view bytes);

// jnp.save(path, x) / jnp.load(path): a .npy file.
absl::Status save(const std::string& path, const Array& x);
absl::StatusOr<Array> load(const std::string& path);

}  // namespace graft
