// pure_callback: calls a host function (core/lax/callback.h) on its inputs' values; its
// outputs are what the function returns, of the declared avals.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/lax/callback.h"
#include "core/ir/primitive.h"

namespace graft {

class PureCallback : public Primitive {
 public:
  PureCallback(std::shared_ptr<const HostCallback> callback, std::vector<Aval> result_avals,
               VmapMethod vmap_method)
      : Primitive(PrimitiveId::kPureCallback),
        callback_(std::move(callback)),
        result_avals_(std::move(result_avals)),
        vmap_method_(vmap_method) {}
  std::vector<Aval> infer(const std::vector<Aval>&) const override { return result_avals_; }
  std::string params() const override;
  // The same function on the same arguments gives the same results (CSE may merge them).
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>&, const std::vector<Aval>&) const override { return {}; }
  // jvp / vjp are errors (no derivative, as in JAX); vmap follows vmap_method.
  GRAFT_TRANSFORM_RULES;

  // Calls the function on host copies of `inputs` (views where they are on the host) and
  // returns its results' host buffers, after checking their shapes and dtypes. Errors the
  // function throws come back as graft::Error "[pure_callback] ...".
  std::vector<std::shared_ptr<const Buffer>> run(const std::vector<Array>& inputs) const;

 private:
  std::shared_ptr<const HostCallback> callback_;
  std::vector<Aval> result_avals_;
  VmapMethod vmap_method_;
};

}  // namespace graft
