#include "core/primitives/callback.h"

#include <exception>

#include "core/error.h"
#include "core/ir/graph.h"
#include "core/lax/lax.h"
#include "core/primitives/control.h"

namespace graft {
namespace {

const char* method_name(VmapMethod m) {
  switch (m) {
    case VmapMethod::kNone:
      return "none";
    case VmapMethod::kSequential:
      return "sequential";
    case VmapMethod::kExpandDims:
      return "expand_dims";
    case VmapMethod::kBroadcastAll:
      return "broadcast_all";
  }
  return "?";
}

// An array over the bytes of `host` (a host buffer), without copying.
Array host_view(std::shared_ptr<const Buffer> host, const Aval& a) {
  const size_t bytes = host->bytes();
  return Array::from_buffer(Buffer::view(std::move(host), 0, bytes), a.shape, a.dtype, a.weak);
}

bool any_valid(const std::vector<Array>& xs) {
  for (const Array& x : xs) {
    if (x.valid()) return true;
  }
  return false;
}

[[noreturn]] void no_derivative() {
  fail("pure_callback",
       "pure callbacks do not support JVP (or grad); use custom_jvp or custom_vjp to give the "
       "callback a derivative");
}

}  // namespace

std::string PureCallback::params() const {
  std::string s = "result_avals=(";
  for (const Aval& a : result_avals_) s += a.str() + ",";
  return s + ") vmap_method=" + method_name(vmap_method_);
}

bool PureCallback::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  const auto& p = static_cast<const PureCallback&>(o);
  return p.callback_ == callback_ && p.result_avals_ == result_avals_ &&
         p.vmap_method_ == vmap_method_;
}

std::vector<std::shared_ptr<const Buffer>> PureCallback::run(
    const std::vector<Array>& inputs) const {
  std::vector<Array> args;
  for (const Array& x : inputs) args.push_back(host_view(x.host_buffer(), x.aval()));
  std::vector<Array> results;
  try {
    results = (*callback_)(args);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("pure_callback", "the callback threw: ", e.what());
  } catch (...) {
    fail("pure_callback", "the callback threw an exception that is not a std::exception");
  }
  if (results.size() != result_avals_.size()) {
    fail("pure_callback", "the callback returned ", results.size(), " arrays, ",
         result_avals_.size(), " were declared");
  }
  std::vector<std::shared_ptr<const Buffer>> out;
  for (size_t i = 0; i < results.size(); ++i) {
    const Array& r = results[i];
    const Aval& want = result_avals_[i];
    if (!r.valid()) fail("pure_callback", "result ", i, " is an empty Array handle");
    if (r.shape() != want.shape || r.dtype() != want.dtype) {
      fail("pure_callback", "result ", i, " is ", r.aval().str(), ", declared ", want.str());
    }
    if (r.is_tracer()) {
      fail("pure_callback", "result ", i, " depends on a traced value, not on the arguments");
    }
    out.push_back(r.host_buffer());
  }
  return out;
}

// Only a derivative actually asked for is an error: zero (absent) tangents or cotangents
// give zero ones.
std::vector<Array> PureCallback::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                     const std::vector<Array>&) const {
  if (any_valid(tangents)) no_derivative();
  return std::vector<Array>(result_avals_.size());
}

std::vector<Array> PureCallback::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                     const std::vector<Array>& cotangents) const {
  if (any_valid(cotangents)) no_derivative();
  return std::vector<Array>(primals.size());
}

Batched PureCallback::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int64_t n = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) n = args[i].shape()[dims[i]];
  }
  if (vmap_method_ == VmapMethod::kNone) {
    fail("pure_callback",
         "vmap needs a vmap_method (VmapMethod::kSequential, kExpandDims or kBroadcastAll); "
         "the default kNone does not batch, as in JAX");
  }
  std::vector<Array> moved(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    moved[i] = dims[i] >= 0 ? moveaxis(args[i], dims[i], 0) : args[i];
  }
  std::vector<int> out_dims(result_avals_.size(), 0);
  if (vmap_method_ == VmapMethod::kSequential) {
    // A scan over the batch: batched arguments are its xs, the others its constants.
    std::vector<Array> consts, xs;
    for (size_t i = 0; i < args.size(); ++i) (dims[i] >= 0 ? xs : consts).push_back(moved[i]);
    auto self = std::make_shared<const PureCallback>(callback_, result_avals_, vmap_method_);
    FlatFn body = [self, dims, nc = consts.size()](const std::vector<Array>& in) {
      std::vector<Array> call_args;
      size_t c = 0, x = nc;
      for (int d : dims) call_args.push_back(d >= 0 ? in[x++] : in[c++]);
      return graft::bind(self, call_args);  // no carry: the ys are the results
    };
    std::vector<Array> outs = detail::bind_scan(body, consts, {}, xs, n, false);
    return {outs, out_dims};
  }
  std::vector<Array> call_args;
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) {
      call_args.push_back(moved[i]);
    } else if (vmap_method_ == VmapMethod::kExpandDims) {
      call_args.push_back(expand_dims(args[i], Axes{0}));
    } else {
      Shape s = args[i].shape();
      s.insert(s.begin(), n);
      call_args.push_back(broadcast_to(args[i], s));
    }
  }
  std::vector<Aval> batched = result_avals_;
  for (Aval& a : batched) a.shape.insert(a.shape.begin(), n);
  auto p = std::make_shared<const PureCallback>(callback_, batched, vmap_method_);
  return {graft::bind(p, call_args), out_dims};
}

std::vector<Array> pure_callback(HostCallback callback,
                                 const std::vector<Aval>& result_shape_dtypes,
                                 const std::vector<Array>& args, VmapMethod vmap_method) {
  if (!callback) fail("pure_callback", "the callback is empty");
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid()) fail("pure_callback", "argument ", i, " is an empty Array handle");
  }
  std::vector<Aval> avals;
  for (const Aval& a : result_shape_dtypes) {
    check_shape("pure_callback", a.shape, a.dtype);
    avals.push_back(Aval{a.shape, a.dtype});  // strongly typed, varying as the arguments
  }
  auto fn = std::make_shared<const HostCallback>(std::move(callback));
  return graft::bind(std::make_shared<const PureCallback>(fn, avals, vmap_method), args);
}

std::vector<Array> pure_callback(HostCallback callback, const std::vector<Array>& result_like,
                                 const std::vector<Array>& args, VmapMethod vmap_method) {
  std::vector<Aval> avals;
  for (size_t i = 0; i < result_like.size(); ++i) {
    if (!result_like[i].valid()) {
      fail("pure_callback", "result_shape_dtypes ", i, " is an empty Array handle");
    }
    avals.push_back(result_like[i].aval());
  }
  return pure_callback(std::move(callback), avals, args, vmap_method);
}

}  // namespace graft
