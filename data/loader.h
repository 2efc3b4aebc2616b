// Batches of token windows from a memory-mapped token file (data/token_file.h).
//
// TokenLoader (training): each epoch e draws an offset o_e in [0, T) and a permutation of
// the non-overlapping windows starting at o_e + k*T (k < W_e = (N - 1 - o_e) / T), both from
// splitmix64 seeded by (seed, e), so every epoch sees shifted, reshuffled windows and the
// order is the same with every compiler. A batch takes the next B windows of the permutation;
// the last W_e mod B windows of an epoch are dropped. inputs = tokens[s, s+T), targets =
// tokens[s+1, s+T+1). LoaderState (seed, epoch, position) fully determines what comes next:
// save it with a checkpoint and restore() it to read exactly the same batches again.
//
// SequentialLoader (evaluation): batch i holds windows i*B .. i*B+B-1 starting at k*T, in
// file order, always the same; max_batches caps how many.
//
// Not thread-safe (one loader per thread); loaders may share one TokenFile.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/array.h"
#include "core/tree/tree.h"
#include "data/token_file.h"

namespace graft::data {

struct Batch {
  Array inputs;   // [B, T] i32
  Array targets;  // [B, T] i32, inputs shifted left by one token
};

struct HostBatch {
  int64_t batch = 0, seq_len = 0;
  std::vector<int32_t> inputs, targets;  // row-major [batch, seq_len]
  Batch to_arrays() const;
};

struct LoaderState {
  int64_t seed = 0;
  int64_t epoch = 0;
  int64_t position = 0;  // index of the next window in this epoch's permutation

  std::string to_json() const;  // {"seed":..,"epoch":..,"position":..}
  static absl::StatusOr<LoaderState> from_json(const std::string& json);
  std::array<int64_t, 3> to_values() const { return {seed, epoch, position}; }
  static absl::StatusOr<LoaderState> from_values(const std::vector<int64_t>& values);
  bool operator==(const LoaderState&) const = default;
};

class TokenLoader {
 public:
  static absl::StatusOr<TokenLoader> open(const std::string& path, int64_t batch, int64_t seq_len,
                                          int64_t seed);
  // FailedPrecondition when the file holds fewer than (batch + 1) * seq_len tokens.
  static absl::StatusOr<TokenLoader> create(std::shared_ptr<const TokenFile> file, int64_t batch,
                                            int64_t seq_len, int64_t seed);

  Batch next();
  HostBatch next_host();
  const LoaderState& state() const { return state_; }
  // InvalidArgument if the state does not point at a batch of this file's layout.
  absl::Status restore(const LoaderState& state);

  int64_t batch() const { return batch_; }
  int64_t seq_len() const { return seq_len_; }
  int64_t windows_in_epoch(int64_t epoch) const;
  int64_t batches_in_epoch(int64_t epoch) const { return windows_in_epoch(epoch) / batch_; }
  const TokenFile& file() const { return *file_; }

 private:
  TokenLoader() = default;
  void prepare_epoch(int64_t epoch);  // fills offset_ and perm_ for epoch
  uint64_t epoch_seed(int64_t epoch) const;

  std::shared_ptr<const TokenFile> file_;
  int64_t batch_ = 0, seq_len_ = 0;
  LoaderState state_;
  int64_t perm_epoch_ = -1;  // epoch that offset_ / perm_ belong to
  int64_t offset_ = 0;
  std::vector<int64_t> perm_;
};

class SequentialLoader {
 public:
  // max_batches <= 0: every full batch. FailedPrecondition when not even one batch fits.
  static absl::StatusOr<SequentialLoader> open(const std::string& path, int64_t batch,
                                               int64_t seq_len, int64_t max_batches = 0);
  static absl::StatusOr<SequentialLoader> create(std::shared_ptr<const TokenFile> file,
                                                 int64_t batch, int64_t seq_len,
                                                 int64_t max_batches = 0);
  int64_t num_batches() const { return num_batches_; }
  Batch batch(int64_t i) const;  // throws graft::Error "[SequentialLoader]" if out of range
  HostBatch host_batch(int64_t i) const;

 private:
  SequentialLoader() = default;
  std::shared_ptr<const TokenFile> file_;
  int64_t batch_ = 0, seq_len_ = 0, num_batches_ = 0;
};

}  // namespace graft::data

GRAFT_TREE(graft::data::Batch, inputs, targets);
