// lax.select_n over the binary select primitive (see core/lax/select.h).
#include "core/lax/select.h"

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"

namespace graft {

Array select_n(const Array& which, const std::vector<Array>& cases) {
  constexpr const char* op = "select_n";
  detail::check_valid(op, which);
  if (cases.empty()) fail(op, "needs at least one case");
  for (const Array& c : cases) {
    detail::check_valid(op, c);
    if (c.shape() != cases[0].shape() || c.dtype() != cases[0].dtype()) {
      fail(op, "cases must have one shape and dtype, got ", cases[0].aval().str(), " and ",
           c.aval().str());
    }
  }
  if (which.ndim() != 0 && which.shape() != cases[0].shape()) {
    fail(op, "which must be a scalar or have the cases' shape ", cases[0].aval().str(), ", got ",
         which.aval().str());
  }
  if (which.dtype() == DType::kBool) {
    if (cases.size() > 2) {
      fail(op, "a bool which selects from at most 2 cases, got ", cases.size());
    }
  } else if (which.dtype() != DType::kI32) {
    fail(op, "which must be bool or i32, got ", which.aval().str());
  }
  if (cases.size() == 1) return cases[0];
  if (which.dtype() == DType::kBool) return where(which, cases[1], cases[0]);
  // From the last case down: which <= k picks case k over what follows, so an index below 0
  // lands on case 0 and one past the end on the last case.
  Array out = cases.back();
  for (int64_t k = static_cast<int64_t>(cases.size()) - 2; k >= 0; --k) {
    out = where(less_equal(which, Array(static_cast<int32_t>(k))), cases[k], out);
  }
  return out;
}

}  // namespace graft
