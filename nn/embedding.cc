#include "nn/embedding.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/init.h"

namespace graft::nn {

Array Embedding::operator()(const Array& tokens) const {
  if (table.ndim() != 2)
    fail("embedding", "table must be [vocab, dim], got ", shape_str(table.shape()));
  if (!is_integral(tokens.dtype())) {
    fail("embedding", "token ids must be integers, got ", dtype_name(tokens.dtype()));
  }
  return take(table, tokens, 0);
}

Array Embedding::attend(const Array& x) const {
  Array t = table.dtype() == x.dtype() ? table : astype(table, x.dtype());
  return dot_general(x, t, {{x.ndim() - 1}, {1}, {}, {}});
}

Embedding embedding_init(const Array& key, int64_t vocab, int64_t dim, double stddev, DType dtype) {
  return {normal_init(key, {vocab, dim}, stddev, dtype)};
}

}  // namespace graft::nn
