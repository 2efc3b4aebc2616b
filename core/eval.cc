#include "core/eval.h"

#include <unordered_set>
#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"
#include "core/primitive.h"

namespace graft {

std::vector<Node*> pending_nodes(const std::vector<Array>& roots) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack;  // node, next input to visit
  for (const Array& r : roots) {
    if (!r.valid()) fail("eval", "called on an empty Array handle");
    Node* n = r.node().get();
    if (!n->buffers.empty() || !seen.insert(n).second) continue;
    stack.emplace_back(n, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        Node* in = node->inputs[next++].node().get();
        if (in->buffers.empty() && seen.insert(in).second) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

void eval(const std::vector<Array>& arrays) {
  std::vector<Node*> order = pending_nodes(arrays);
  // Every node in `order` stays alive until it has run: the roots are held by the caller and
  // every other node by the inputs of a later node that has not run yet.
  for (Node* n : order) {
    if (n->donated) fail_donated();
    // A call primitive's kernel (custom_vjp, remat) evaluates its function with a nested eval,
    // which may already have run a constant node this order also holds.
    if (!n->buffers.empty()) continue;
    if (n->tracer || n->primitive == nullptr) {
      fail("eval", "cannot evaluate a traced array ", n->avals[0].str(),
           ": it stands for a value that is only known when the traced function is called");
    }
    cpu::run_kernel(*n);
    n->inputs.clear();  // frees producers whose last consumer this was
  }
}

}  // namespace graft
