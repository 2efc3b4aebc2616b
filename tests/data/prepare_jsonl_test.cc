// prepare on JSON Lines datasets: the same documents as .jsonl, .jsonl.gz, .jsonl.zst, a
// directory of several files and a text file give byte-identical token files (byte and hf
// tokenizers); special tokens written in documents stay text; progress lines; reuse and rebuild;
// bad input is an error naming the file and line that leaves no meta.json or temporary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/hf_tokenizer.h"
#include "data/prepare.h"
#include "data/token_file.h"
#include "data/tokenizer.h"
#include "tests/data/jsonl_files.h"

namespace graft::data {
namespace {
namespace fs = std::filesystem;
using namespace testing_jsonl;

const std::string kHf = "hf:tests/data/testdata/hf/llama3_style.json";

std::string tmp_dir(const std::string& name) {
  const auto dir = fs::path(::testing::TempDir()) / "prepare_jsonl_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// Single paragraphs (no blank lines, no trailing newline), so a text file of them separated by
// blank lines holds the same documents.
std::vector<std::string> make_docs(int n) {
  std::vector<std::string> docs;
  for (int i = 0; i < n; ++i) {
    docs.push_back("Doc " + std::to_string(i) + ": it's caf\xC3\xA9 time," +
                   std::string(static_cast<size_t>(i % 4), ' ') + " \xE6\x97\xA5 " +
                   std::to_string(i * 7919) + (i % 9 == 0 ? " <|end_of_text|> inside" : "") +
                   (i % 5 == 0 ? "\nsecond line" : ""));
  }
  return docs;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PrepareOptions options(const std::string& input, const std::string& out, const std::string& tok) {
  PrepareOptions o;
  o.input = input;
  o.out_dir = out;
  o.tokenizer = tok;
  o.val_fraction = 0.1;
  o.seed = 5;
  return o;
}

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path());
  }
  return out;
}

TEST(PrepareJsonl, EveryEncodingGivesTheSameTokenFiles) {
  const std::string dir = tmp_dir("same");
  const auto docs = make_docs(300);
  const std::string text = jsonl_text(docs);
  write_file(dir + "/d.jsonl", text);
  write_file(dir + "/d.jsonl.gz", gzip(text));
  write_file(dir + "/d.jsonl.zst", zstd(text));
  fs::create_directories(dir + "/parts");  // the documents over three files, in name order
  write_file(dir + "/parts/00.jsonl", jsonl_text({docs.begin(), docs.begin() + 100}));
  write_file(dir + "/parts/01.jsonl.gz",
             gzip(jsonl_text({docs.begin() + 100, docs.begin() + 200})));
  write_file(dir + "/parts/02.jsonl.zst", zstd(jsonl_text({docs.begin() + 200, docs.end()})));
  std::string paragraphs;
  for (const auto& d : docs) paragraphs += d + "\n\n";
  write_file(dir + "/d.txt", paragraphs);

  for (const std::string& tok : {std::string("byte"), kHf}) {
    SCOPED_TRACE(tok);
    std::string train0, val0;
    for (const char* input : {"d.jsonl", "d.jsonl.gz", "d.jsonl.zst", "parts", "d.txt"}) {
      const std::string out = dir + "/out_" + std::string(input) + (tok == "byte" ? "_b" : "_h");
      auto r = prepare(options(dir + "/" + input, out, tok));
      ASSERT_TRUE(r.ok()) << input << ": " << r.status();
      EXPECT_EQ(r->train_docs + r->val_docs, 300) << input;
      EXPECT_GT(r->val_docs, 10) << input;
      const std::string train = bytes_of(r->train_path), val = bytes_of(r->val_path);
      if (train0.empty()) {
        train0 = train;
        val0 = val;
        // The documents come back, each followed by eot; special tokens in them stay text.
        auto tk = load_tokenizer(r->tokenizer_path);
        ASSERT_TRUE(tk.ok()) << tk.status();
        auto file = TokenFile::open(r->train_path);
        ASSERT_TRUE(file.ok());
        const auto ids = (*file)->read_all();
        EXPECT_EQ(std::count(ids.begin(), ids.end(), (*tk)->eot_id()), r->train_docs);
        std::vector<int32_t> first(ids.begin(), std::find(ids.begin(), ids.end(), (*tk)->eot_id()));
        EXPECT_EQ((*tk)->decode(first), docs[0]);  // doc 0 (with <|end_of_text|>) is in train
        EXPECT_FALSE(is_val_doc(docs[0], 0.1, 5));
      } else {
        EXPECT_EQ(train, train0) << input;
        EXPECT_EQ(val, val0) << input;
      }
    }
  }
}

TEST(PrepareJsonl, ProgressReuseAndRebuild) {
  const std::string dir = tmp_dir("progress");
  const std::string input = dir + "/d.jsonl.zst";
  write_file(input, zstd(jsonl_text(make_docs(1000))));
  std::ostringstream lines;
  PrepareOptions o = options(input, dir + "/out", kHf);
  o.progress = &lines;
  o.progress_seconds = 0;  // a line every 256 documents
  auto r = prepare(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->reused);
  EXPECT_NE(lines.str().find("prepare: 256 docs, "), std::string::npos) << lines.str();
  EXPECT_NE(lines.str().find("input (100%)"), std::string::npos) << lines.str();
  EXPECT_NE(lines.str().find("/s, ETA "), std::string::npos) << lines.str();
  EXPECT_NE(lines.str().find("prepare: 1000 docs, "), std::string::npos) << lines.str();
  EXPECT_TRUE(std::isfinite(r->unigram_nats));
  auto again = prepare(o);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(again->train_tokens, r->train_tokens);
  // Another eot token or another file is another dataset.
  o.eot_token = "<|eot_id|>";
  auto other_eot = prepare(o);
  ASSERT_TRUE(other_eot.ok()) << other_eot.status();
  EXPECT_FALSE(other_eot->reused);
  write_file(input, zstd(jsonl_text(make_docs(999))));
  auto changed = prepare(o);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(changed->reused);
  EXPECT_EQ(changed->train_docs + changed->val_docs, 999);
}

TEST(PrepareJsonl, TinyDatasetsStillGetBothSplits) {
  const std::string dir = tmp_dir("tiny");
  write_file(dir + "/two.jsonl", jsonl_text({"only one", "and two"}));
  std::string txt = "only one\n\nand two\n";
  write_file(dir + "/two.txt", txt);
  auto j = prepare(options(dir + "/two.jsonl", dir + "/out_j", "byte"));
  auto t = prepare(options(dir + "/two.txt", dir + "/out_t", "byte"));
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(j->train_docs, 1);
  EXPECT_EQ(j->val_docs, 1);
  EXPECT_EQ(bytes_of(j->train_path), bytes_of(t->train_path));
  EXPECT_EQ(bytes_of(j->val_path), bytes_of(t->val_path));
}

TEST(PrepareJsonl, BadInputIsAnErrorThatLeavesNothingBehind) {
  const std::string dir = tmp_dir("bad");
  std::string text = jsonl_text(make_docs(50));
  text += "{\"text\": \"fine\"}\n{\"title\": \"no text\"}\n";
  write_file(dir + "/bad.jsonl.gz", gzip(text));
  const std::string out = dir + "/out";
  auto r = prepare(options(dir + "/bad.jsonl.gz", out, "byte"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(dir + "/bad.jsonl.gz:52: no \"text\""), std::string::npos)
      << r.status();
  EXPECT_FALSE(fs::exists(out + "/meta.json"));
  EXPECT_EQ(temporaries(out), std::vector<std::string>{});

  const std::string gz = gzip(jsonl_text(make_docs(50)));
  write_file(dir + "/cut.jsonl.gz", gz.substr(0, gz.size() - 10));
  r = prepare(options(dir + "/cut.jsonl.gz", out, "byte"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_EQ(temporaries(out), std::vector<std::string>{});

  fs::create_directories(dir + "/empty");
  r = prepare(options(dir + "/empty", out, "byte"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("JSON Lines"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find(dir + "/empty"), std::string::npos) << r.status();

  write_file(dir + "/ok.jsonl", jsonl_text(make_docs(5)));
  r = prepare(options(dir + "/ok.jsonl", out, "bpe"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'byte' or 'hf:"), std::string::npos) << r.status();
  for (const std::string& tok :
       std::vector<std::string>{"hf:", "hf:" + dir + "/missing.json", "word"}) {
    r = prepare(options(dir + "/ok.jsonl", out, tok));
    EXPECT_FALSE(r.ok()) << tok;
  }
}

}  // namespace
}  // namespace graft::data
