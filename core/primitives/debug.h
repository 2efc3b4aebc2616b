// debug_print: an identity on its inputs whose CPU kernel prints them (jax.debug.print).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

class DebugPrint : public Primitive {
 public:
  explicit DebugPrint(std::string fmt)
      : Primitive(PrimitiveId::kDebugPrint), fmt_(std::move(fmt)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override { return in; }
  std::string params() const override;
  // Two prints are never merged (CSE): each must happen.
  bool same_params(const Primitive& o) const override { return &o == this; }
  Cost cost(const std::vector<Aval>&, const std::vector<Aval>&) const override { return {}; }
  bool has_side_effects() const override { return true; }
  // Tangents and cotangents pass through without printing; vmap prints the batched values.
  GRAFT_TRANSFORM_RULES;

  const std::string& fmt() const { return fmt_; }
  // fmt with each "{}" replaced by the next array's values.
  std::string format(const std::vector<Array>& values) const;

 private:
  std::string fmt_;
};

// Where debug_print's text goes (one call per print, the text without a trailing newline).
// Default (or a null function): a line on stderr. Returns the previous sink.
using DebugSink = std::function<void(const std::string&)>;
DebugSink set_debug_print_sink(DebugSink sink);
void debug_print_emit(const std::string& text);

}  // namespace graft
