// Transform rules of threefry2x32: random bits have no derivative, and batching is
// elementwise (each key word is a scalar or has the counters' shape).
#include "core/lax/lax.h"
#include "core/primitives/random.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

std::vector<Array> Threefry2x32::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                     const std::vector<Array>&) const {
  return {Array(), Array()};  // integer bits: not differentiable
}

std::vector<Array> Threefry2x32::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                     const std::vector<Array>&) const {
  return {Array(), Array(), Array(), Array()};  // integer bits: not differentiable
}

Batched Threefry2x32::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // Every batched output is (batch, counters' shape): counters always take that shape, key
  // words too unless they are unbatched scalars (which the kernel broadcasts itself).
  const int64_t b = shape_rules::batch_size(args, dims);
  Shape full = args[2].shape();  // (batch, counters' shape)
  if (dims[2] >= 0) {
    full.erase(full.begin() + dims[2]);
  }
  full.insert(full.begin(), b);
  std::vector<Array> in(4);
  for (int i = 0; i < 4; ++i) {
    const Array& a = args[i];
    const int d = dims[i];
    if (d >= 0) {
      Array m = moveaxis(a, d, 0);
      // A batch of scalar key words: one per batch element, across the counters.
      in[i] = m.ndim() < static_cast<int>(full.size()) ? broadcast_in_dim(m, full, {0}) : m;
    } else if (i < 2 && a.ndim() == 0) {
      in[i] = a;
    } else {
      std::vector<int> bd(a.ndim());
      for (int k = 0; k < a.ndim(); ++k) bd[k] = k + 1;
      in[i] = broadcast_in_dim(a, full, bd);
    }
  }
  return {graft::bind(std::make_shared<const Threefry2x32>(), in), {0, 0}};
}

}  // namespace graft
