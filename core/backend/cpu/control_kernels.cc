// CPU kernels of the control-flow primitives: they run the bodies' programs on concrete
// arrays through the executor (executable.h), with a buffer plan made once per primitive (no
// tracing or shape rules per iteration; intermediates freed, elementwise steps in place).
// scan copies each x slice out of its stacked input and each y into a preallocated stacked
// output.
#include <algorithm>
#include <cstring>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/run_body.h"
#include "core/error.h"
#include "core/primitives/control.h"

namespace graft::cpu {
namespace {

std::vector<Array> inputs(const Call& c, int begin, int end) {
  std::vector<Array> out;
  for (int i = begin; i < end; ++i) out.push_back(c.input(i));
  return out;
}

void check_count(const Primitive& p, const std::vector<Array>& outs, size_t n) {
  if (outs.size() != n) fail(p.name(), "body returned ", outs.size(), " arrays, expected ", n);
}

void scan_kernel(Call& c) {
  const auto& p = c.params<ScanPrimitive>();
  const int nc = p.num_consts(), nk = p.num_carry(), nx = p.num_xs(), ny = p.num_ys();
  std::vector<Array> consts = inputs(c, 0, nc), carry = inputs(c, nc, nc + nk);
  std::vector<int64_t> x_row(nx), y_row(ny);
  for (int j = 0; j < nx; ++j) {
    x_row[j] = p.length() ? numel(c.in_aval(nc + nk + j).shape) / p.length() : 0;
  }
  for (int j = 0; j < ny; ++j) {
    const Aval& a = c.out_aval(nk + j);
    y_row[j] = p.length() ? numel(a.shape) / p.length() : 0;
  }
  for (int64_t step = 0; step < p.length(); ++step) {
    const int64_t i = p.reverse() ? p.length() - 1 - step : step;
    std::vector<Array> args = consts;
    args.insert(args.end(), carry.begin(), carry.end());
    for (int j = 0; j < nx; ++j) {
      const Aval& a = c.in_aval(nc + nk + j);
      const size_t bytes = static_cast<size_t>(x_row[j] * dtype_size(a.dtype));
      auto buf = Buffer::make(bytes);
      if (bytes)
        std::memcpy(buf->data(), static_cast<const char*>(c.in_raw(nc + nk + j)) + i * bytes,
                    bytes);
      args.push_back(
          Array::from_buffer(buf, Shape(a.shape.begin() + 1, a.shape.end()), a.dtype, a.weak));
    }
    std::vector<Array> outs = run_body(p, 0, args);
    check_count(p, outs, static_cast<size_t>(nk + ny));
    carry.assign(outs.begin(), outs.begin() + nk);
    for (int j = 0; j < ny; ++j) {
      const Aval& a = c.out_aval(nk + j);
      const size_t bytes = static_cast<size_t>(y_row[j] * dtype_size(a.dtype));
      if (bytes) std::memcpy(c.out<char>(nk + j) + i * bytes, outs[nk + j].raw_data(), bytes);
    }
  }
  eval(carry);
  for (int k = 0; k < nk; ++k) c.set_output(k, carry[k].buffer());
}

void cond_kernel(Call& c) {
  const auto& p = c.params<CondPrimitive>();
  int64_t n = static_cast<int64_t>(p.num_branches());
  int64_t index = std::clamp<int64_t>(c.input(0).item<int64_t>(), 0, n - 1);
  std::vector<Array> outs = run_body(p, static_cast<size_t>(index), inputs(c, 1, c.num_inputs()));
  check_count(p, outs, p.out_avals().size());
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), outs[o].buffer());
}

void while_kernel(Call& c) {
  const auto& p = c.params<WhilePrimitive>();
  const int ncc = p.num_cond_consts(), nbc = p.num_body_consts();
  std::vector<Array> cc = inputs(c, 0, ncc), bc = inputs(c, ncc, ncc + nbc);
  std::vector<Array> carry = inputs(c, ncc + nbc, c.num_inputs());
  for (;;) {
    std::vector<Array> args = cc;
    args.insert(args.end(), carry.begin(), carry.end());
    std::vector<Array> pred = run_body(p, 0, args);
    check_count(p, pred, 1);
    if (!pred[0].item<bool>()) break;
    args = bc;
    args.insert(args.end(), carry.begin(), carry.end());
    std::vector<Array> next = run_body(p, 1, args);
    check_count(p, next, carry.size());
    carry = std::move(next);
  }
  eval(carry);
  for (size_t k = 0; k < carry.size(); ++k) c.set_output(static_cast<int>(k), carry[k].buffer());
}

}  // namespace

void register_control_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kScan)] = &scan_kernel;
  table[static_cast<int>(PrimitiveId::kCond)] = &cond_kernel;
  table[static_cast<int>(PrimitiveId::kWhileLoop)] = &while_kernel;
}

}  // namespace graft::cpu
