#include "data/loader.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/ops.h"
#include "data/rng.h"

namespace graft::data {
namespace {

// Copies window starts[i] .. +T (+1 for targets) into a host batch.
HostBatch gather(const TokenFile& f, const std::vector<int64_t>& starts, int64_t seq_len) {
  HostBatch hb;
  hb.batch = static_cast<int64_t>(starts.size());
  hb.seq_len = seq_len;
  hb.inputs.resize(static_cast<size_t>(hb.batch * seq_len));
  hb.targets.resize(hb.inputs.size());
  std::vector<int32_t> window(static_cast<size_t>(seq_len + 1));
  for (int64_t b = 0; b < hb.batch; ++b) {
    f.read(starts[b], seq_len + 1, window.data());
    std::copy(window.begin(), window.end() - 1, hb.inputs.begin() + b * seq_len);
    std::copy(window.begin() + 1, window.end(), hb.targets.begin() + b * seq_len);
  }
  return hb;
}

absl::Status check_dims(int64_t batch, int64_t seq_len) {
  if (batch <= 0 || seq_len <= 0) {
    return absl::InvalidArgumentError(
        "batch and seq_len must be positive, got batch=" + std::to_string(batch) +
        " seq_len=" + std::to_string(seq_len));
  }
  return absl::OkStatus();
}

}  // namespace

Batch HostBatch::to_arrays() const {
  return {array<int32_t>(inputs, Shape{batch, seq_len}),
          array<int32_t>(targets, Shape{batch, seq_len})};
}

std::string LoaderState::to_json() const {
  return nlohmann::json{{"seed", seed}, {"epoch", epoch}, {"position", position}}.dump();
}

absl::StatusOr<LoaderState> LoaderState::from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("loader state: not a JSON object: " + text);
  }
  LoaderState s;
  for (auto [key, field] : {std::pair{"seed", &s.seed}, std::pair{"epoch", &s.epoch},
                            std::pair{"position", &s.position}}) {
    if (!j.contains(key) || !j[key].is_number_integer()) {
      return absl::InvalidArgumentError(std::string("loader state: missing integer '") + key +
                                        "' in " + text);
    }
    *field = j[key].get<int64_t>();
  }
  if (s.epoch < 0 || s.position < 0) {
    return absl::InvalidArgumentError("loader state: negative epoch or position in " + text);
  }
  return s;
}

absl::StatusOr<LoaderState> LoaderState::from_values(const std::vector<int64_t>& v) {
  if (v.size() != 3 || v[1] < 0 || v[2] < 0) {
    return absl::InvalidArgumentError(
        "loader state: expected 3 values {seed, epoch >= 0, position >= 0}");
  }
  return LoaderState{v[0], v[1], v[2]};
}

absl::StatusOr<TokenLoader> TokenLoader::open(const std::string& path, int64_t batch,
                                              int64_t seq_len, int64_t seed) {
  auto f = TokenFile::open(path);
  if (!f.ok()) return f.status();
  return create(*std::move(f), batch, seq_len, seed);
}

absl::StatusOr<TokenLoader> TokenLoader::create(std::shared_ptr<const TokenFile> file,
                                                int64_t batch, int64_t seq_len, int64_t seed) {
  if (auto s = check_dims(batch, seq_len); !s.ok()) return s;
  // The worst epoch (offset T - 1) has (N - T) / T windows; it must fill one batch.
  if (file->size() < (batch + 1) * seq_len) {
    return absl::FailedPreconditionError(file->path() + " holds " + std::to_string(file->size()) +
                                         " tokens; batch " + std::to_string(batch) + " x seq_len " +
                                         std::to_string(seq_len) + " needs at least " +
                                         std::to_string((batch + 1) * seq_len));
  }
  TokenLoader l;
  l.file_ = std::move(file);
  l.batch_ = batch;
  l.seq_len_ = seq_len;
  l.state_ = {seed, 0, 0};
  return l;
}

uint64_t TokenLoader::epoch_seed(int64_t epoch) const {
  return mix64(static_cast<uint64_t>(state_.seed) ^ mix64(static_cast<uint64_t>(epoch) * 2 + 1));
}

int64_t TokenLoader::windows_in_epoch(int64_t epoch) const {
  uint64_t s = epoch_seed(epoch);
  const auto offset = static_cast<int64_t>(uniform_below(s, static_cast<uint64_t>(seq_len_)));
  return (file_->size() - 1 - offset) / seq_len_;
}

void TokenLoader::prepare_epoch(int64_t epoch) {
  if (perm_epoch_ == epoch) return;
  uint64_t s = epoch_seed(epoch);
  offset_ = static_cast<int64_t>(uniform_below(s, static_cast<uint64_t>(seq_len_)));
  perm_ = permutation((file_->size() - 1 - offset_) / seq_len_, splitmix64(s));
  perm_epoch_ = epoch;
}

absl::Status TokenLoader::restore(const LoaderState& st) {
  if (st.epoch < 0 || st.position < 0) {
    return absl::InvalidArgumentError("loader state: negative epoch or position");
  }
  LoaderState old = state_;
  state_ = st;
  perm_epoch_ = -1;  // the seed may have changed
  if (st.position + batch_ > windows_in_epoch(st.epoch)) {
    state_ = old;
    return absl::InvalidArgumentError(
        "loader state " + st.to_json() + " is past the end of " + "its epoch for batch " +
        std::to_string(batch_) + " x seq_len " + std::to_string(seq_len_) + " on " + file_->path());
  }
  return absl::OkStatus();
}

HostBatch TokenLoader::next_host() {
  prepare_epoch(state_.epoch);
  std::vector<int64_t> starts(static_cast<size_t>(batch_));
  for (int64_t b = 0; b < batch_; ++b) starts[b] = offset_ + perm_[state_.position + b] * seq_len_;
  HostBatch hb = gather(*file_, starts, seq_len_);
  state_.position += batch_;
  if (state_.position + batch_ > static_cast<int64_t>(perm_.size())) {
    ++state_.epoch;
    state_.position = 0;
  }
  return hb;
}

Batch TokenLoader::next() { return next_host().to_arrays(); }

absl::StatusOr<SequentialLoader> SequentialLoader::open(const std::string& path, int64_t batch,
                                                        int64_t seq_len, int64_t max_batches) {
  auto f = TokenFile::open(path);
  if (!f.ok()) return f.status();
  return create(*std::move(f), batch, seq_len, max_batches);
}

absl::StatusOr<SequentialLoader> SequentialLoader::create(std::shared_ptr<const TokenFile> file,
                                                          int64_t batch, int64_t seq_len,
                                                          int64_t max_batches) {
  if (auto s = check_dims(batch, seq_len); !s.ok()) return s;
  SequentialLoader l;
  l.num_batches_ = ((file->size() - 1) / seq_len) / batch;
  if (file->size() < 1 || l.num_batches_ < 1) {
    return absl::FailedPreconditionError(file->path() + " holds " + std::to_string(file->size()) +
                                         " tokens; one batch of " + std::to_string(batch) + " x " +
                                         std::to_string(seq_len) + " needs " +
                                         std::to_string(batch * seq_len + 1));
  }
  if (max_batches > 0) l.num_batches_ = std::min(l.num_batches_, max_batches);
  l.file_ = std::move(file);
  l.batch_ = batch;
  l.seq_len_ = seq_len;
  return l;
}

HostBatch SequentialLoader::host_batch(int64_t i) const {
  if (i < 0 || i >= num_batches_) {
    fail("SequentialLoader", "batch ", i, " outside [0, ", num_batches_, ")");
  }
  std::vector<int64_t> starts(static_cast<size_t>(batch_));
  for (int64_t b = 0; b < batch_; ++b) starts[b] = (i * batch_ + b) * seq_len_;
  return gather(*file_, starts, seq_len_);
}

Batch SequentialLoader::batch(int64_t i) const { return host_batch(i).to_arrays(); }

}  // namespace graft::data
