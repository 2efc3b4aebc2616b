// CPU kernel of pmap: splits each mapped input along its axis, runs the body as member k on
// virtual device k's stream (device_streams.h), all members at once in one in-process group
// (their collectives meet there), and stacks the members' outputs along their out_axes.
#include <cstring>
#include <exception>
#include <string>

#include "core/backend/cpu/device_streams.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/run_body.h"
#include "core/distributed/in_process.h"
#include "core/error.h"
#include "core/primitives/pmap.h"

namespace graft::cpu {
namespace {

struct Blocks {
  int64_t outer, inner;  // bytes per (outer row, member)
};

// A mapped array of shape `s` (member axis `axis`) as [outer, n, inner bytes].
Blocks blocks(const Shape& s, int axis, DType dtype) {
  Blocks b{1, static_cast<int64_t>(dtype_size(dtype))};
  for (int i = 0; i < axis; ++i) b.outer *= s[i];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) b.inner *= s[i];
  return b;
}

void pmap_kernel(Call& c) {
  const auto& p = c.params<Pmap>();
  const int n = static_cast<int>(p.size());
  std::vector<Buffers> ins(static_cast<size_t>(n));
  for (int i = 0; i < c.num_inputs(); ++i) {
    const int axis = p.in_axes()[i];
    if (axis < 0) {
      for (Buffers& b : ins) b.push_back(c.in_buffer(i));
      continue;
    }
    Blocks b = blocks(c.in_aval(i).shape, axis, c.in_aval(i).dtype);
    if (b.outer * b.inner == 0) {
      for (Buffers& m : ins) m.push_back(Buffer::make(0));
      continue;
    }
    const auto* src = static_cast<const char*>(c.in_raw(i));
    for (int k = 0; k < n; ++k) {
      auto buf = Buffer::make(static_cast<size_t>(b.outer * b.inner));
      auto* dst = static_cast<char*>(buf->data());
      for (int64_t o = 0; o < b.outer; ++o) {
        std::memcpy(dst + o * b.inner, src + (o * n + k) * b.inner, static_cast<size_t>(b.inner));
      }
      ins[k].push_back(std::move(buf));
    }
  }
  distributed::InProcessGroup group(n);
  const int bit = axis_bit(p.axis());
  std::vector<Buffers> outs(static_cast<size_t>(n));
  run_on_devices(n, [&](int k) {
    distributed::MemberScope member(bit, &group, k);
    try {
      outs[k] = run_body(p, 0, std::move(ins[k]));
    } catch (const std::exception& e) {
      group.abort("device " + std::to_string(k) + ": " + e.what());
      throw;
    } catch (...) {
      group.abort("device " + std::to_string(k) + " failed");
      throw;
    }
  });
  for (int o = 0; o < c.num_outputs(); ++o) {
    const int axis = p.out_axes()[o];
    if (axis < 0) {  // the same on every member (its type says so): member 0's
      c.set_output(o, outs[0][o]);
      continue;
    }
    Blocks b = blocks(c.out_aval(o).shape, axis, c.out_aval(o).dtype);
    if (b.outer * b.inner == 0) continue;  // the kernel runner gives it a fresh buffer
    auto* dst = static_cast<char*>(c.out_raw(o));
    for (int k = 0; k < n; ++k) {
      const auto* src = static_cast<const char*>(outs[k][o]->data());
      for (int64_t r = 0; r < b.outer; ++r) {
        std::memcpy(dst + (r * n + k) * b.inner, src + r * b.inner, static_cast<size_t>(b.inner));
      }
    }
  }
}

}  // namespace

void register_pmap_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kPmap)] = &pmap_kernel;
}

}  // namespace graft::cpu
