#include "core/eval.h"

#include <unordered_set>
#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"
#include "core/primitive.h"

namespace graft {

std::vector<std::shared_ptr<Node>> pending_nodes(const std::vector<Array>& roots) {
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack;  // node, next input to visit
  for (const Array& r : roots) {
    if (!r.valid()) fail("eval", "called on an empty Array handle");
    const std::shared_ptr<Node>& n = r.node();
    if (!n->buffers.empty() || !seen.insert(n.get()).second) continue;
    stack.emplace_back(n, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        std::shared_ptr<Node> in = node->inputs[next++].node();
        if (in->buffers.empty() && seen.insert(in.get()).second) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

void eval(const std::vector<Array>& arrays) {
  std::vector<std::shared_ptr<Node>> order = pending_nodes(arrays);
  // `order` holds each node until its turn and lets go right after, so a buffer still lives
  // only as long as a consumer that has not run holds it. (Holding is needed: a call
  // primitive's kernel runs a nested eval that may run, and release, later nodes of `order`.)
  for (std::shared_ptr<Node>& held : order) {
    std::shared_ptr<Node> n = std::move(held);
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
