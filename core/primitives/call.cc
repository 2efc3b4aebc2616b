#include "core/primitives/call.h"

#include "core/error.h"

namespace graft {

std::vector<Aval> CallPrimitive::infer(const std::vector<Aval>& in) const {
  if (in.size() != in_avals_.size()) {
    fail(name(), fn_name_, " takes ", in_avals_.size(), " arrays, got ", in.size());
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape != in_avals_[i].shape || in[i].dtype != in_avals_[i].dtype) {
      fail(name(), fn_name_, " argument ", i, " is ", in[i].str(), " but it was traced with ",
           in_avals_[i].str());
    }
  }
  return out_avals_;
}

}  // namespace graft
