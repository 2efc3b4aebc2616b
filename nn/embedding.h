// Token embedding: a [vocab, dim] table read with `take`. Its gradient is a scatter-add of
// the output cotangents into the rows of the looked-up ids (take's vjp), so a token seen n
// times accumulates n contributions; rows never looked up get zero.
#pragma once

#include <cstdint>

#include "core/array.h"
#include "core/tree/tree.h"

namespace graft::nn {

struct Embedding {
  Array table;  // [vocab, dim]

  // tokens (any shape, integer) -> tokens.shape + [dim]. Ids outside [-vocab, vocab) give
  // NaN rows (take's fill mode), like jnp.take; negative ids wrap.
  Array operator()(const Array& tokens) const;
  // Tied output projection: x [..., dim] -> logits [..., vocab] = x table^T.
  Array attend(const Array& x) const;
};

Embedding embedding_init(const Array& key, int64_t vocab, int64_t dim, double stddev = 0.02,
                         DType dtype = DType::kF32);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::Embedding, table);
