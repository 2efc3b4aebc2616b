// named_scope, like jax.named_scope: operations created while it lives carry its name, which
// make_graph (and jit's as_text) print before their primitive: "attn/dot_general". Scopes
// nest ("block/attn/mul") and are per thread.
//
//   { graft::named_scope s("attn"); y = softmax(matmul(q, k_t)); }
//
// The name is attached when an operation is bound, so it names the equations of the traced
// function itself (not those a transform such as grad derives from them later).
#pragma once

#include <string>

#include "core/ir/name_scope.h"

namespace graft {

class named_scope {
 public:
  explicit named_scope(const std::string& name) { detail::push_name_scope(name); }
  ~named_scope() { detail::pop_name_scope(); }
  named_scope(const named_scope&) = delete;
  named_scope& operator=(const named_scope&) = delete;
};

}  // namespace graft
