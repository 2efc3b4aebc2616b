// Bounded memory: a 256 MB (uncompressed) JSON Lines file is read and a 48 MB one prepared
// with the hf tokenizer while the process's peak resident set grows by far less than either
// (an implementation that held the documents, or their tokens, would grow by more). Its own
// binary, so that no other test's peak hides the growth.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include "data/jsonl.h"
#include "data/prepare.h"

namespace graft::data {
namespace {
namespace fs = std::filesystem;

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// Writes about `bytes` of JSON Lines (documents of ~2 KB with varied words) as zstd, streaming.
void write_big_jsonl_zst(const std::string& path, int64_t bytes) {
  std::ofstream out(path, std::ios::binary);
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  std::string line, compressed(ZSTD_CStreamOutSize(), '\0');
  const char* words[] = {"the",  "quick", "brown", "fox",         "jumps",
                         "over", "lazy",  "dog's", "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC",
                         "42",   "1999,"};
  int64_t written = 0;
  for (uint64_t i = 0; written < bytes; ++i) {
    line = "{\"id\": " + std::to_string(i) + ", \"text\": \"Document " + std::to_string(i) + ":";
    for (int w = 0; w < 360; ++w) line += std::string(" ") + words[(i * 7 + w * w) % 12];
    line += "\"}\n";
    written += static_cast<int64_t>(line.size());
    ZSTD_inBuffer in{line.data(), line.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o{compressed.data(), compressed.size(), 0};
      ZSTD_compressStream2(ctx, &o, &in, ZSTD_e_continue);
      out.write(compressed.data(), static_cast<std::streamsize>(o.pos));
    }
  }
  ZSTD_inBuffer none{nullptr, 0, 0};
  for (size_t left = 1; left != 0;) {
    ZSTD_outBuffer o{compressed.data(), compressed.size(), 0};
    left = ZSTD_compressStream2(ctx, &o, &none, ZSTD_e_end);
    out.write(compressed.data(), static_cast<std::streamsize>(o.pos));
  }
  ZSTD_freeCCtx(ctx);
}

// Under AddressSanitizer or ThreadSanitizer the resident set is not the program's: freed
// memory sits in the sanitizer's quarantine, and shadow memory grows with every byte touched.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

TEST(JsonlMemory, StreamingKeepsThePeakResidentSetSmall) {
  if (kSanitized) {
    GTEST_SKIP() << "peak RSS means nothing under a sanitizer (quarantine, shadow memory); "
                    "jsonl_test and prepare_jsonl_test run the same streaming paths there";
  }
  const auto dir = fs::path(::testing::TempDir()) / "jsonl_memory_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string big = (dir / "big.jsonl.zst").string();
  const std::string mid = (dir / "mid.jsonl.zst").string();
  write_big_jsonl_zst(big, int64_t{256} << 20);
  write_big_jsonl_zst(mid, int64_t{48} << 20);
  const int64_t before = peak_rss_bytes();

  auto docs = JsonlDocuments::open({big});
  ASSERT_TRUE(docs.ok()) << docs.status();
  std::string doc;
  int64_t n = 0, text_bytes = 0;
  for (auto more = docs->next(doc); more.ok() && *more; more = docs->next(doc)) {
    ++n;
    text_bytes += static_cast<int64_t>(doc.size());
  }
  EXPECT_GT(text_bytes, int64_t{240} << 20);
  const int64_t after_read = peak_rss_bytes();
  EXPECT_LT(after_read - before, int64_t{16} << 20)
      << "reading " << n << " documents grew the peak by " << (after_read - before) << " bytes";

  PrepareOptions o;
  o.input = mid;
  o.out_dir = (dir / "out").string();
  o.tokenizer = "hf:tests/data/testdata/hf/llama3_style.json";
  auto r = prepare(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->train_bytes + r->val_bytes, int64_t{45} << 20);
  const int64_t after_prepare = peak_rss_bytes();
  EXPECT_LT(after_prepare - before, int64_t{24} << 20)
      << "preparing " << (r->train_docs + r->val_docs) << " documents grew the peak by "
      << (after_prepare - before) << " bytes";
  std::cout << "peak RSS: " << (before >> 20) << " MiB before, " << (after_read >> 20)
            << " MiB after reading 256 MB, " << (after_prepare >> 20)
            << " MiB after preparing 48 MB (" << r->train_tokens + r->val_tokens << " tokens)\n";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace graft::data
