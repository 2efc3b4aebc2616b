#include "core/ir/effects.h"

namespace graft {

namespace {
thread_local std::vector<Array>* collector = nullptr;
}  // namespace

std::vector<Array>* set_effect_collector(std::vector<Array>* c) {
  std::vector<Array>* prev = collector;
  collector = c;
  return prev;
}

void record_effect(const Array& a) {
  if (collector != nullptr) collector->push_back(a);
}

}  // namespace graft
