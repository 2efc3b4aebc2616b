// The kernels of the control-flow and call primitives, shared by the backends: they run the
// bodies' programs through the backend's executor (`Backend` below says how) on concrete
// buffers, with a plan made once per primitive. scan hands its body each x slice as a view of
// its stacked input (a copy only where a slice would break 64-byte alignment) and each y's row
// of its stacked output as the place to compute that y in (copied there only where the body
// gave it elsewhere: an alias of an input, a backend that ignores the offer); cond's index and
// while_loop's predicate are read on the host (for a GPU, a synchronizing copy of one element, as
// XLA's GPU backend does).
//
// `Call` is the backend's kernel call (a KernelCall with out<T>(i)); `Backend` provides
//   Buffers run_body(const ControlPrimitive&, size_t body, Buffers args, size_t first_donated,
//                    const Buffers* dests)                 (dests: see cpu/executable.h)
//   std::shared_ptr<Buffer> allocate(size_t bytes)          (a scan x slice)
//   void copy(void* dst, const void* src, size_t bytes)     (within the backend's memory)
#pragma once

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/kernel_call.h"
#include "core/error.h"
#include "core/primitives/call.h"
#include "core/primitives/control.h"

namespace graft::control {

inline Buffers inputs(const KernelCall& c, int begin, int end) {
  Buffers out;
  out.reserve(static_cast<size_t>(end - begin));
  for (int i = begin; i < end; ++i) out.push_back(c.in_buffer(i));
  return out;
}

inline void check_count(const Primitive& p, const Buffers& outs, size_t n) {
  if (outs.size() != n) fail(p.name(), "body returned ", outs.size(), " arrays, expected ", n);
}

// Bytes of one row (one iteration's slice) of a stacked [length, ...] array.
inline size_t row_bytes(const Aval& a, int64_t length) {
  return length ? static_cast<size_t>(numel(a.shape) / length * dtype_size(a.dtype)) : 0;
}

template <class Call, class Backend>
void scan(Call& c, const Backend& backend) {
  const auto& p = c.template params<ScanPrimitive>();
  const int nc = p.num_consts(), nk = p.num_carry(), nx = p.num_xs(), ny = p.num_ys();
  const Buffers consts = inputs(c, 0, nc);
  Buffers carry = inputs(c, nc, nc + nk);
  std::vector<size_t> x_bytes(nx), y_bytes(ny);
  for (int j = 0; j < nx; ++j) x_bytes[j] = row_bytes(c.in_aval(nc + nk + j), p.length());
  for (int j = 0; j < ny; ++j) y_bytes[j] = row_bytes(c.out_aval(nk + j), p.length());
  // ys computed in place: rows that keep 64-byte alignment, of stacked outputs that share no
  // input's buffer. scan is not an in-place primitive (core/primitives/list.h), so its outputs
  // are fresh today; the check keeps a y row from ever landing on an x slice the body reads.
  std::vector<bool> in_place(ny, false);
  for (int j = 0; j < ny; ++j) {
    if (y_bytes[j] == 0 || y_bytes[j] % 64 != 0) continue;
    const char* out = c.template out<char>(nk + j);
    bool shared = false;
    for (int k = 0; k < c.num_inputs(); ++k) shared = shared || c.in_raw(k) == out;
    in_place[j] = !shared;
  }
  Buffers dests(static_cast<size_t>(nk + ny));
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
      std::shared_ptr<Buffer> slice = backend.allocate(x_bytes[j]);
      if (x_bytes[j]) {
        backend.copy(slice->data(), c.template in<char>(nc + nk + j) + offset, x_bytes[j]);
      }
      args.push_back(std::move(slice));
    }
    for (int j = 0; j < ny; ++j) {
      if (!in_place[j]) continue;
      dests[nk + j] =
          Buffer::view(c.out_buffer(nk + j), static_cast<size_t>(i) * y_bytes[j], y_bytes[j]);
    }
    Buffers outs = backend.run_body(p, 0, std::move(args), static_cast<size_t>(nc), &dests);
    check_count(p, outs, static_cast<size_t>(nk + ny));
    carry.assign(std::make_move_iterator(outs.begin()), std::make_move_iterator(outs.begin() + nk));
    for (int j = 0; j < ny; ++j) {
      char* row = c.template out<char>(nk + j) + i * y_bytes[j];
      if (y_bytes[j] == 0 || outs[nk + j]->data() == row) continue;  // computed in place
      backend.copy(row, outs[nk + j]->data(), y_bytes[j]);
    }
  }
  for (int k = 0; k < nk; ++k) c.set_output(k, std::move(carry[k]));
}

template <class Backend>
void cond(KernelCall& c, const Backend& backend) {
  const auto& p = c.params<CondPrimitive>();
  const auto n = static_cast<int64_t>(p.num_branches());
  const int64_t index = std::clamp<int64_t>(c.input(0).item<int64_t>(), 0, n - 1);
  Buffers outs = backend.run_body(p, static_cast<size_t>(index), inputs(c, 1, c.num_inputs()),
                                  static_cast<size_t>(-1));
  check_count(p, outs, p.out_avals().size());
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

template <class Backend>
void while_loop(KernelCall& c, const Backend& backend) {
  const auto& p = c.params<WhilePrimitive>();
  const int ncc = p.num_cond_consts(), nbc = p.num_body_consts();
  const Buffers cc = inputs(c, 0, ncc), bc = inputs(c, ncc, ncc + nbc);
  Buffers carry = inputs(c, ncc + nbc, c.num_inputs());
  for (;;) {
    Buffers args = cc;
    args.insert(args.end(), carry.begin(), carry.end());
    Buffers pred = backend.run_body(p, 0, std::move(args), static_cast<size_t>(-1));
    check_count(p, pred, 1);
    if (!Array::from_buffer(pred[0], {}, DType::kBool).item<bool>()) break;
    args = bc;
    args.insert(args.end(), std::make_move_iterator(carry.begin()),
                std::make_move_iterator(carry.end()));
    Buffers next = backend.run_body(p, 1, std::move(args), static_cast<size_t>(nbc));
    check_count(p, next, static_cast<size_t>(c.num_inputs() - ncc - nbc));
    carry = std::move(next);
  }
  for (size_t k = 0; k < carry.size(); ++k) c.set_output(static_cast<int>(k), std::move(carry[k]));
}

// A primitive that means "run its body" (fused_reduce where the backend has no kernel of its
// own for the case): runs body 0 on the inputs and returns its outputs.
template <class Backend>
void run_whole_body(KernelCall& c, const Backend& backend) {
  const auto& p = c.params<ControlPrimitive>();
  Buffers outs = backend.run_body(p, 0, inputs(c, 0, c.num_inputs()), static_cast<size_t>(-1));
  if (outs.size() != p.out_avals().size()) {
    fail(p.name(), "body returned ", outs.size(), " arrays, expected ", p.out_avals().size());
  }
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

// custom_jvp_call / custom_vjp_call / remat: runs fun (or fwd, when a custom_vjp_call's
// outputs include fwd's residuals) or the remat body.
template <class Backend>
void call(KernelCall& c, const Backend& backend) {
  const auto& p = c.params<CallPrimitive>();
  size_t body = 0;
  if (p.id() == PrimitiveId::kCustomVjpCall && c.params<CustomVjpCall>().residual_outputs()) {
    body = 1;
  }
  Buffers outs = backend.run_body(p, body, inputs(c, 0, c.num_inputs()), static_cast<size_t>(-1));
  if (outs.size() != p.out_avals().size()) {
    fail(p.name(), p.fn_name(), " returned ", outs.size(), " arrays, expected ",
         p.out_avals().size());
  }
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

}  // namespace graft::control
