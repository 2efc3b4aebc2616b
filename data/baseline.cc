#include "data/baseline.h"

#include <cmath>

#include "core/error.h"

namespace graft::data {
namespace {

template <typename Train, typename Val>
double cross_entropy(int64_t n_train, Train train_at, int64_t n_val, Val val_at, int64_t v) {
  if (v <= 0) fail("unigram_cross_entropy", "vocab_size ", v, " <= 0");
  if (n_val <= 0) fail("unigram_cross_entropy", "empty validation set");
  std::vector<int64_t> train(static_cast<size_t>(v), 0), val(static_cast<size_t>(v), 0);
  auto check = [&](int32_t t) {
    if (t < 0 || t >= v) fail("unigram_cross_entropy", "token ", t, " outside [0, ", v, ")");
    return t;
  };
  for (int64_t i = 0; i < n_train; ++i) ++train[check(train_at(i))];
  for (int64_t i = 0; i < n_val; ++i) ++val[check(val_at(i))];
  return unigram_cross_entropy_from_counts(train, val);
}

}  // namespace

double unigram_cross_entropy_from_counts(const std::vector<int64_t>& train_counts,
                                         const std::vector<int64_t>& val_counts) {
  const size_t v = train_counts.size();
  if (v == 0 || val_counts.size() != v) {
    fail("unigram_cross_entropy", "count vectors of sizes ", v, " and ", val_counts.size());
  }
  int64_t n_train = 0, n_val = 0;
  for (size_t t = 0; t < v; ++t) {
    n_train += train_counts[t];
    n_val += val_counts[t];
  }
  if (n_val <= 0) fail("unigram_cross_entropy", "empty validation set");
  const double log_denominator = std::log(static_cast<double>(n_train + static_cast<int64_t>(v)));
  double total = 0.0;
  for (size_t t = 0; t < v; ++t) {
    if (val_counts[t] == 0) continue;
    total += static_cast<double>(val_counts[t]) *
             (log_denominator - std::log(static_cast<double>(train_counts[t] + 1)));
  }
  return total / static_cast<double>(n_val);
}

double unigram_cross_entropy(const std::vector<int32_t>& train, const std::vector<int32_t>& val,
                             int64_t vocab_size) {
  return cross_entropy(
      static_cast<int64_t>(train.size()), [&](int64_t i) { return train[i]; },
      static_cast<int64_t>(val.size()), [&](int64_t i) { return val[i]; }, vocab_size);
}

absl::StatusOr<double> unigram_cross_entropy(const TokenFile& train, const TokenFile& val) {
  if (train.vocab_size() != val.vocab_size()) {
    return absl::InvalidArgumentError(
        "train and val vocab sizes differ: " + std::to_string(train.vocab_size()) + " vs " +
        std::to_string(val.vocab_size()));
  }
  if (val.size() == 0) return absl::InvalidArgumentError("empty validation file " + val.path());
  return cross_entropy(
      train.size(), [&](int64_t i) { return train.at(i); }, val.size(),
      [&](int64_t i) { return val.at(i); }, train.vocab_size());
}

}  // namespace graft::data
