#include "core/primitives/control.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace graft {

std::vector<Aval> ControlPrimitive::infer(const std::vector<Aval>& in) const {
  if (in.size() != in_avals_.size()) {
    fail(name(), "takes ", in_avals_.size(), " arrays, got ", in.size());
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape != in_avals_[i].shape || in[i].dtype != in_avals_[i].dtype) {
      fail(name(), "argument ", i, " is ", in[i].str(), " but the body was traced with ",
           in_avals_[i].str());
    }
  }
  return out_avals_;
}

std::string ScanPrimitive::params() const {
  return absl::StrCat("length=", length_, " reverse=", reverse_ ? "true" : "false",
                      " num_consts=", num_consts_, " num_carry=", num_carry_);
}

std::string CondPrimitive::params() const { return absl::StrCat("branches=", branches_.size()); }

std::string WhilePrimitive::params() const {
  return absl::StrCat("cond_consts=", num_cond_consts_, " body_consts=", num_body_consts_);
}

}  // namespace graft
