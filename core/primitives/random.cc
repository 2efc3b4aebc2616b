#include "core/primitives/random.h"

#include "core/error.h"

namespace graft {

std::vector<Aval> Threefry2x32::infer(const std::vector<Aval>& in) const {
  if (in.size() != 4) fail(name(), "takes 4 operands (k1, k2, x1, x2), got ", in.size());
  for (const Aval& a : in) {
    if (a.dtype != DType::kU32) {
      fail(name(), "operands must be u32, got ", in[0].str(), ", ", in[1].str(), ", ", in[2].str(),
           ", ", in[3].str());
    }
  }
  const Shape& shape = in[2].shape;
  if (in[3].shape != shape) {
    fail(name(), "x1 and x2 must have equal shapes, got ", in[2].str(), " and ", in[3].str());
  }
  for (int k = 0; k < 2; ++k) {
    if (!in[k].shape.empty() && in[k].shape != shape) {
      fail(name(), "key words must be scalars or have the counters' shape ", shape_str(shape),
           ", got ", in[k].str());
    }
  }
  return {Aval{shape, DType::kU32, false}, Aval{shape, DType::kU32, false}};
}

Cost Threefry2x32::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  // 20 rounds of (add, rotate, xor) plus 5 key injections of 3 adds, per output pair.
  c.flops = static_cast<double>(numel(out[0].shape)) * (20 * 4 + 5 * 3);
  return c;
}

}  // namespace graft
