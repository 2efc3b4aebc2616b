// CPU kernels of the control-flow primitives: they run the bodies' programs on concrete
// arrays through the executor (executable.h), with a buffer plan made once per primitive (no
// tracing or shape rules per iteration; intermediates freed, elementwise steps in place).
// scan hands its body each x slice as a view of its stacked input (a copy only where a slice
// would break 64-byte alignment) and copies each y into a preallocated stacked output.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/run_body.h"
#include "core/error.h"
#include "core/primitives/control.h"

namespace graft::cpu {
namespace {

Buffers inputs(const Call& c, int begin, int end) {
  Buffers out;
  out.reserve(static_cast<size_t>(end - begin));
  for (int i = begin; i < end; ++i) out.push_back(c.in_buffer(i));
  return out;
}

void check_count(const Primitive& p, const Buffers& outs, size_t n) {
  if (outs.size() != n) fail(p.name(), "body returned ", outs.size(), " arrays, expected ", n);
}

// Bytes of one row (one iteration's slice) of a stacked [length, ...] array.
size_t row_bytes(const Aval& a, int64_t length) {
  return length ? static_cast<size_t>(numel(a.shape) / length * dtype_size(a.dtype)) : 0;
}

// memcpy over the intra-op pool: one thread's copy does not reach the memory bandwidth.
void copy_bytes(char* dst, const void* src, size_t n) {
  constexpr int64_t kGrain = 1 << 18;
  const auto* from = static_cast<const char*>(src);
  parallel_for(static_cast<int64_t>(n), kGrain, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, from + b, static_cast<size_t>(e - b));
  });
}

void scan_kernel(Call& c) {
  const auto& p = c.params<ScanPrimitive>();
  const int nc = p.num_consts(), nk = p.num_carry(), nx = p.num_xs(), ny = p.num_ys();
  const Buffers consts = inputs(c, 0, nc);
  Buffers carry = inputs(c, nc, nc + nk);
  std::vector<size_t> x_bytes(nx), y_bytes(ny);
  for (int j = 0; j < nx; ++j) x_bytes[j] = row_bytes(c.in_aval(nc + nk + j), p.length());
  for (int j = 0; j < ny; ++j) y_bytes[j] = row_bytes(c.out_aval(nk + j), p.length());
  for (int64_t step = 0; step < p.length(); ++step) {
    const int64_t i = p.reverse() ? p.length() - 1 - step : step;
    Buffers args;
    args.reserve(static_cast<size_t>(nc + nk + nx));
    args.insert(args.end(), consts.begin(), consts.end());
    args.insert(args.end(), std::make_move_iterator(carry.begin()),
                std::make_move_iterator(carry.end()));
    for (int j = 0; j < nx; ++j) {
      const size_t offset = static_cast<size_t>(i) * x_bytes[j];
      if (x_bytes[j] % 64 == 0) {
        args.push_back(Buffer::view(c.in_buffer(nc + nk + j), offset, x_bytes[j]));
        continue;
      }
      auto buf = Buffer::make(x_bytes[j]);
      if (x_bytes[j]) {
        std::memcpy(buf->data(), static_cast<const char*>(c.in_raw(nc + nk + j)) + offset,
                    x_bytes[j]);
      }
      args.push_back(std::move(buf));
    }
    Buffers outs = run_body(p, 0, std::move(args), static_cast<size_t>(nc));
    check_count(p, outs, static_cast<size_t>(nk + ny));
    carry.assign(std::make_move_iterator(outs.begin()), std::make_move_iterator(outs.begin() + nk));
    for (int j = 0; j < ny; ++j) {
      if (y_bytes[j] == 0) continue;
      copy_bytes(c.out<char>(nk + j) + i * y_bytes[j], outs[nk + j]->data(), y_bytes[j]);
    }
  }
  for (int k = 0; k < nk; ++k) c.set_output(k, std::move(carry[k]));
}

void cond_kernel(Call& c) {
  const auto& p = c.params<CondPrimitive>();
  int64_t n = static_cast<int64_t>(p.num_branches());
  int64_t index = std::clamp<int64_t>(c.input(0).item<int64_t>(), 0, n - 1);
  Buffers outs = run_body(p, static_cast<size_t>(index), inputs(c, 1, c.num_inputs()));
  check_count(p, outs, p.out_avals().size());
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

void while_kernel(Call& c) {
  const auto& p = c.params<WhilePrimitive>();
  const int ncc = p.num_cond_consts(), nbc = p.num_body_consts();
  const Buffers cc = inputs(c, 0, ncc), bc = inputs(c, ncc, ncc + nbc);
  Buffers carry = inputs(c, ncc + nbc, c.num_inputs());
  for (;;) {
    Buffers args = cc;
    args.insert(args.end(), carry.begin(), carry.end());
    Buffers pred = run_body(p, 0, std::move(args));
    check_count(p, pred, 1);
    if (!Array::from_buffer(pred[0], {}, DType::kBool).item<bool>()) break;
    args = bc;
    args.insert(args.end(), std::make_move_iterator(carry.begin()),
                std::make_move_iterator(carry.end()));
    Buffers next = run_body(p, 1, std::move(args), static_cast<size_t>(nbc));
    check_count(p, next, static_cast<size_t>(c.num_inputs() - ncc - nbc));
    carry = std::move(next);
  }
  for (size_t k = 0; k < carry.size(); ++k) c.set_output(static_cast<int>(k), std::move(carry[k]));
}

}  // namespace

void register_control_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kScan)] = &scan_kernel;
  table[static_cast<int>(PrimitiveId::kCond)] = &cond_kernel;
  table[static_cast<int>(PrimitiveId::kWhileLoop)] = &while_kernel;
}

}  // namespace graft::cpu
