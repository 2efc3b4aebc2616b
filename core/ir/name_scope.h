// Name scopes (graft::named_scope in transforms/named_scope.h, like jax.named_scope): the
// scopes active on this thread, and the scope path each primitive was bound under, which
// make_graph's printer puts before the primitive's name ("attn/dot_general"). The path is
// kept beside the primitive instance (every bind makes its own), so it survives tracing,
// lowering and the passes that keep an instruction's primitive.
#pragma once

#include <memory>
#include <string>

namespace graft {
class Primitive;
}

namespace graft::detail {

extern thread_local int name_scope_depth;  // > 0 inside a named_scope

void push_name_scope(const std::string& name);
void pop_name_scope();
// Records this thread's scope path for p, unless p already has one. bind calls it.
void record_name_scope(const std::shared_ptr<const Primitive>& p);
inline void note_name_scope(const std::shared_ptr<const Primitive>& p) {
  if (name_scope_depth > 0) record_name_scope(p);
}
// The scope path p was bound under ("outer/inner"), or "" when none.
std::string name_scope_of(const Primitive* p);

}  // namespace graft::detail
