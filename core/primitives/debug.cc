#include "core/primitives/debug.h"

#include <iostream>
#include <mutex>
#include <sstream>

#include "core/error.h"

namespace graft {

std::string DebugPrint::params() const {
  std::string quoted = "\"";
  for (char c : fmt_) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
  return "fmt=" + quoted + "\"";
}

std::string DebugPrint::format(const std::vector<Array>& values) const {
  std::ostringstream s;
  size_t next = 0;
  for (size_t i = 0; i < fmt_.size(); ++i) {
    if (fmt_.compare(i, 2, "{}") == 0 && next < values.size()) {
      s << values[next++];
      ++i;
    } else {
      s << fmt_[i];
    }
  }
  return s.str();
}

std::vector<Array> DebugPrint::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                   const std::vector<Array>&) const {
  return tangents;
}

std::vector<Array> DebugPrint::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                   const std::vector<Array>& cotangents) const {
  return cotangents;
}

Batched DebugPrint::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  auto p = std::make_shared<const DebugPrint>(fmt_);
  std::vector<Array> outs = graft::bind(p, args);  // prints (or records) the batch
  return {outs, dims};
}

namespace {
std::mutex sink_mu;
DebugSink& sink() {
  static DebugSink s;
  return s;
}
}  // namespace

DebugSink set_debug_print_sink(DebugSink s) {
  std::lock_guard<std::mutex> lock(sink_mu);
  std::swap(sink(), s);
  return s;
}

void debug_print_emit(const std::string& text) {
  std::lock_guard<std::mutex> lock(sink_mu);
  if (sink()) {
    sink()(text);
  } else {
    std::cerr << text << "\n";
  }
}

}  // namespace graft
