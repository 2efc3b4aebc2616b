// Rotary position embeddings with the Hugging Face "rotate_half" layout: within a head of
// size D, element i (i < D/2) is paired with element i + D/2 and the pair rotates by angle
// pos * inv_freq[i]. (Meta's checkpoints interleave pairs instead; HF's conversion permutes
// wq / wk so that this layout applies, which is why HF Llama weights load without changes.)
//
//   inv_freq[i] = theta^(-2i / D),   i = 0 .. D/2 - 1
//   cos/sin tables: [positions, D] = cos/sin(pos * concat(inv_freq, inv_freq))
//   rope(x) = x * cos + rotate_half(x) * sin,   rotate_half(x) = concat(-x[D/2:], x[:D/2])
//
// Llama 3 frequency scaling follows Meta's `apply_scaling` (== HF's "llama3" rope_type):
// wavelengths shorter than original_max / high_freq_factor keep their frequency, longer than
// original_max / low_freq_factor are divided by `factor`, and those in between blend
// smoothly. Angles are computed in double on the host, tables are f32.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "core/array.h"

namespace graft::nn {

struct RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};
std::ostream& operator<<(std::ostream& os, const RopeScaling& s);

// The D/2 inverse frequencies (after scaling, if any). D must be even and positive.
std::vector<double> rope_inv_freq(int64_t head_dim, double theta,
                                  const std::optional<RopeScaling>& scaling = std::nullopt);

struct RopeTables {
  Array cos;  // [positions, head_dim], f32
  Array sin;
};
// Tables for positions 0 .. positions - 1.
RopeTables rope_tables(int64_t positions, int64_t head_dim, double theta,
                       const std::optional<RopeScaling>& scaling = std::nullopt);

// x [B, T, H, D] at positions offset .. offset + T - 1 (tables must cover them). Computed in
// f32, returned in x's dtype.
Array apply_rope(const Array& x, const RopeTables& tables, int64_t offset = 0);

}  // namespace graft::nn
