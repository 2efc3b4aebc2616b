// Control-flow primitives: scan, cond and while_loop. Each holds its traced body as a closed
// function over flat lists of arrays (values the body closed over that belong to an outer
// trace were lifted into explicit inputs, "consts"), plus the avals it was traced with. The CPU
// kernels (core/backend/cpu/control_kernels.cc) run the bodies on concrete arrays;
// transforms/control_flow.{h,cc} builds these primitives and defines their rules.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/primitive.h"

namespace graft {

class ControlPrimitive : public Primitive {
 public:
  using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
  ControlPrimitive(PrimitiveId id, std::vector<Aval> in_avals, std::vector<Aval> out_avals)
      : Primitive(id), in_avals_(std::move(in_avals)), out_avals_(std::move(out_avals)) {}

  // The avals it was built with; the inputs must match them (shape and dtype).
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  bool same_params(const Primitive& o) const override { return &o == this; }

  const std::vector<Aval>& in_avals() const { return in_avals_; }
  const std::vector<Aval>& out_avals() const { return out_avals_; }

 private:
  std::vector<Aval> in_avals_, out_avals_;
};

// Inputs: consts, initial carry, xs (leading axis = length). Outputs: final carry, ys stacked
// along a new leading axis. body([consts, carry, x]) -> [new carry, y].
class ScanPrimitive : public ControlPrimitive {
 public:
  ScanPrimitive(Fn body, int num_consts, int num_carry, int64_t length, bool reverse,
                std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kScan, std::move(in), std::move(out)),
        body_(std::move(body)),
        num_consts_(num_consts),
        num_carry_(num_carry),
        length_(length),
        reverse_(reverse) {}
  std::string params() const override;

  const Fn& body() const { return body_; }
  int num_consts() const { return num_consts_; }
  int num_carry() const { return num_carry_; }
  int num_xs() const { return static_cast<int>(in_avals().size()) - num_consts_ - num_carry_; }
  int num_ys() const { return static_cast<int>(out_avals().size()) - num_carry_; }
  int64_t length() const { return length_; }
  bool reverse() const { return reverse_; }

 private:
  Fn body_;
  int num_consts_, num_carry_;
  int64_t length_;
  bool reverse_;
};

// Inputs: an i32 scalar index, then the operands. Runs branches[clamp(index)](operands).
class CondPrimitive : public ControlPrimitive {
 public:
  CondPrimitive(std::vector<Fn> branches, std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kCond, std::move(in), std::move(out)),
        branches_(std::move(branches)) {}
  std::string params() const override;
  const std::vector<Fn>& branches() const { return branches_; }

 private:
  std::vector<Fn> branches_;
};

// Inputs: cond consts, body consts, initial carry. Output: the final carry.
// cond([cond consts, carry]) -> [bool scalar]; body([body consts, carry]) -> [carry].
class WhilePrimitive : public ControlPrimitive {
 public:
  WhilePrimitive(Fn cond, Fn body, int num_cond_consts, int num_body_consts, std::vector<Aval> in,
                 std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kWhileLoop, std::move(in), std::move(out)),
        cond_(std::move(cond)),
        body_(std::move(body)),
        num_cond_consts_(num_cond_consts),
        num_body_consts_(num_body_consts) {}
  std::string params() const override;

  const Fn& cond() const { return cond_; }
  const Fn& body() const { return body_; }
  int num_cond_consts() const { return num_cond_consts_; }
  int num_body_consts() const { return num_body_consts_; }
  int num_carry() const { return static_cast<int>(out_avals().size()); }

 private:
  Fn cond_, body_;
  int num_cond_consts_, num_body_consts_;
};

}  // namespace graft
