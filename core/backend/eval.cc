#include "core/backend/eval.h"

#include <mutex>
#include <unordered_set>
#include <utility>

#include "core/backend/backend.h"
#include "core/backend/eager.h"
#include "core/error.h"
#include "core/ir/primitive.h"

namespace graft {

std::vector<std::shared_ptr<Node>> pending_nodes(const std::vector<Array>& roots) {
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<Node*> seen;
  // Node, a copy of its inputs (another thread may evaluate it and clear its own), next input.
  struct Visit {
    std::shared_ptr<Node> node;
    std::vector<Array> inputs;
    size_t next = 0;
  };
  std::vector<Visit> stack;
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (!seen.insert(n.get()).second) return;
    Visit v{n, {}, 0};
    if (n->pending_inputs(&v.inputs)) stack.push_back(std::move(v));
  };
  for (const Array& r : roots) {
    if (!r.valid()) fail("eval", "called on an empty Array handle");
    visit(r.node());
    while (!stack.empty()) {
      Visit& v = stack.back();
      if (v.next < v.inputs.size()) {
        visit(v.inputs[v.next++].node());  // may reallocate the stack: `v` is not used after
      } else {
        order.push_back(std::move(v.node));
        stack.pop_back();
      }
    }
  }
  return order;
}

void run_pending(const std::vector<Array>& arrays) {
  std::vector<std::shared_ptr<Node>> order = pending_nodes(arrays);
  if (order.empty()) return;
  const Backend& backend = default_backend();
  // `order` holds each node until its turn and lets go right after, so a buffer still lives
  // only as long as a consumer that has not run holds it. (Holding is needed: a call
  // primitive's kernel runs a nested eval that may run, and release, later nodes of `order`.)
  for (std::shared_ptr<Node>& held : order) {
    std::shared_ptr<Node> n = std::move(held);
    if (n->evaluated()) continue;
    // Another thread sharing this node waits here until the first one has computed it.
    std::lock_guard<std::mutex> lock(n->eval_mu);
    if (n->donated()) fail_donated();
    // Computed meanwhile: by another thread, or by a call primitive's nested eval (custom_vjp,
    // remat evaluate their function inside their kernel) that ran a node this order holds.
    if (n->evaluated()) continue;
    if (n->tracer || n->primitive == nullptr) {
      fail("eval", "cannot evaluate a traced array ", n->avals[0].str(),
           ": it stands for a value that is only known when the traced function is called");
    }
    run_eager(backend, *n);
    n->inputs.clear();  // frees producers whose last consumer this was
  }
}

}  // namespace graft
