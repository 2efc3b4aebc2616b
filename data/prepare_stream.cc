#include "data/prepare_stream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "data/baseline.h"
#include "data/prepare.h"
#include "data/token_file.h"

namespace graft::data {
namespace {

using Clock = std::chrono::steady_clock;

std::string human_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char s[32];
  std::snprintf(s, sizeof s, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return s;
}

std::string human_seconds(double s) {
  char out[32];
  if (s < 120) {
    std::snprintf(out, sizeof out, "%.0f s", s);
  } else if (s < 7200) {
    std::snprintf(out, sizeof out, "%.0f min", s / 60);
  } else {
    std::snprintf(out, sizeof out, "%.1f h", s / 3600);
  }
  return out;
}

class Progress {
 public:
  Progress(const ProgressOptions& o, const DocumentSource& docs)
      : o_(o), docs_(docs), start_(Clock::now()), last_(start_) {}

  void tick(int64_t n_docs, int64_t text_bytes) {
    if (o_.out == nullptr || n_docs % 256 != 0) return;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < o_.seconds) return;
    last_ = now;
    line(n_docs, text_bytes, false);
  }

  void line(int64_t n_docs, int64_t text_bytes, bool done) const {
    if (o_.out == nullptr) return;
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    const double done_bytes = static_cast<double>(docs_.bytes_done());
    const double total = static_cast<double>(docs_.bytes_total());
    const double rate = secs > 0 ? done_bytes / secs : 0;
    *o_.out << "prepare: " << n_docs << " docs, " << human_bytes(static_cast<double>(text_bytes))
            << " of text, " << human_bytes(done_bytes);
    if (done) {
      *o_.out << " of input in " << human_seconds(secs) << ", " << human_bytes(rate) << "/s ("
              << human_bytes(secs > 0 ? static_cast<double>(text_bytes) / secs : 0)
              << "/s of text)\n";
    } else if (total > 0) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", 100 * done_bytes / total);
      *o_.out << " of " << human_bytes(total) << " input (" << pct << "), " << human_bytes(rate)
              << "/s, ETA " << (rate > 0 ? human_seconds((total - done_bytes) / rate) : "?")
              << "\n";
    } else {
      *o_.out << " of input, " << human_bytes(rate) << "/s\n";
    }
    o_.out->flush();
  }

 private:
  const ProgressOptions& o_;
  const DocumentSource& docs_;
  Clock::time_point start_, last_;
};

// A document of one side that the other side would take if it stayed empty.
struct Candidate {
  bool set = false;
  double unit = 0;  // its position in [0, 1) (is_val_doc's hash)
  int64_t token_start = 0, tokens = 0, bytes = 0;
};

}  // namespace

absl::StatusOr<SplitCounts> encode_split(DocumentSource& docs, const Tokenizer& tok,
                                         double val_fraction, int64_t seed,
                                         const std::string& train_path, const std::string& val_path,
                                         const ProgressOptions& progress) {
  auto train = TokenFileWriter::create(train_path, tok.vocab_size());
  if (!train.ok()) return train.status();
  auto val = TokenFileWriter::create(val_path, tok.vocab_size());
  if (!val.ok()) return val.status();
  SplitCounts c;
  std::vector<int64_t> train_counts(static_cast<size_t>(tok.vocab_size()), 0);
  std::vector<int64_t> val_counts(train_counts.size(), 0);
  Candidate lowest_train, highest_val;  // split_docs' nearest documents: the first of equals
  Progress report(progress, docs);
  std::string doc;
  int64_t n_docs = 0;
  while (true) {
    auto more = docs.next(doc);
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::vector<int32_t> ids = tok.encode(doc);
    ids.push_back(tok.eot_id());
    const double unit = doc_unit(doc, seed);
    const bool to_val = unit < val_fraction;
    TokenFileWriter& w = to_val ? **val : **train;
    Candidate& cand = to_val ? highest_val : lowest_train;
    if (!cand.set || (to_val ? unit > cand.unit : unit < cand.unit)) {
      cand = {true, unit, w.size(), static_cast<int64_t>(ids.size()),
              static_cast<int64_t>(doc.size())};
    }
    if (auto s = w.append(ids); !s.ok()) return s;  // checks every id is in the vocabulary
    for (int32_t id : ids) ++(to_val ? val_counts : train_counts)[id];
    (to_val ? c.val_docs : c.train_docs) += 1;
    (to_val ? c.val_bytes : c.train_bytes) += static_cast<int64_t>(doc.size());
    report.tick(++n_docs, c.train_bytes + c.val_bytes);
  }
  // Tiny corpora: move the document nearest the threshold so that neither side is empty.
  if (val_fraction > 0 && n_docs >= 2 && (c.val_docs == 0 || c.train_docs == 0)) {
    const bool to_val = c.val_docs == 0;
    TokenFileWriter& from = to_val ? **train : **val;
    TokenFileWriter& to = to_val ? **val : **train;
    const Candidate& moved = to_val ? lowest_train : highest_val;
    auto ids = from.cut(moved.token_start, moved.tokens);
    if (!ids.ok()) return ids.status();
    if (auto s = to.append(*ids); !s.ok()) return s;
    for (int32_t id : *ids) {
      --(to_val ? train_counts : val_counts)[id];
      ++(to_val ? val_counts : train_counts)[id];
    }
    (to_val ? c.val_docs : c.train_docs) += 1;
    (to_val ? c.train_docs : c.val_docs) -= 1;
    (to_val ? c.val_bytes : c.train_bytes) += moved.bytes;
    (to_val ? c.train_bytes : c.val_bytes) -= moved.bytes;
  }
  c.train_tokens = (*train)->size();
  c.val_tokens = (*val)->size();
  if (auto s = (*train)->finish(); !s.ok()) return s;
  if (auto s = (*val)->finish(); !s.ok()) return s;
  c.unigram_nats = c.val_tokens > 0 ? unigram_cross_entropy_from_counts(train_counts, val_counts)
                                    : std::numeric_limits<double>::quiet_NaN();
  report.line(n_docs, c.train_bytes + c.val_bytes, true);
  return c;
}

}  // namespace graft::data
