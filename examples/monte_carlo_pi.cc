#include "examples/monte_carlo_pi.h"

#include "core/ops.h"
#include "core/random/random.h"

namespace graft::examples {

Array monte_carlo_pi(const Array& key, int64_t n) {
  Array subkey = reshape(slice(random::split(key, 4), {0, 0}, {1, 2}), {2});
  Array xy = random::uniform(subkey, {n, 2});
  Array inside = sum(square(xy), {1}) <= 1.0;
  return 4.0 * mean(astype(inside, DType::kF32));
}

}  // namespace graft::examples
