// The unigram baseline: cross-entropy (nats per token) on validation tokens of the train-set
// unigram distribution with add-one smoothing, p(t) = (count_train(t) + 1) / (N_train + V).
// A language model that does not beat this has learned nothing beyond token frequencies.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "data/token_file.h"

namespace graft::data {

// From token counts per id (both of vocab_size entries): what the functions below compute, in
// one fixed order (by id), so a streaming count gives the same bits as the token files.
// Throws graft::Error "[unigram_cross_entropy]" for an empty val set or mismatched sizes.
double unigram_cross_entropy_from_counts(const std::vector<int64_t>& train_counts,
                                         const std::vector<int64_t>& val_counts);
// Throws graft::Error "[unigram_cross_entropy]" for an empty val set, vocab_size <= 0 or an
// id outside [0, vocab_size).
double unigram_cross_entropy(const std::vector<int32_t>& train, const std::vector<int32_t>& val,
                             int64_t vocab_size);
// InvalidArgument when the files disagree on vocab_size or val is empty.
absl::StatusOr<double> unigram_cross_entropy(const TokenFile& train, const TokenFile& val);

}  // namespace graft::data
