// Call primitives: a node whose meaning is a C++ function over arrays (custom_jvp and
// custom_vjp functions; transforms/custom_derivatives.h defines their rules). The CPU kernel
// runs the function on the evaluated inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/primitive.h"

namespace graft {

class CallPrimitive : public Primitive {
 public:
  using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
  CallPrimitive(PrimitiveId id, std::string fn_name, Fn fn, std::vector<Aval> in_avals,
                std::vector<Aval> out_avals)
      : Primitive(id),
        fn_name_(std::move(fn_name)),
        fn_(std::move(fn)),
        in_avals_(std::move(in_avals)),
        out_avals_(std::move(out_avals)) {}

  // The function's result avals; the inputs must have the avals it was traced with.
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override { return "name=" + fn_name_; }
  bool same_params(const Primitive& o) const override { return &o == this; }

  const Fn& fn() const { return fn_; }
  const std::string& fn_name() const { return fn_name_; }
  const std::vector<Aval>& in_avals() const { return in_avals_; }
  const std::vector<Aval>& out_avals() const { return out_avals_; }

 private:
  std::string fn_name_;
  Fn fn_;
  std::vector<Aval> in_avals_, out_avals_;
};

}  // namespace graft
