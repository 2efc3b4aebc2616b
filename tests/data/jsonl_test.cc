// JSON Lines datasets (data/jsonl.h): the same documents from plain, .gz and .zst files
// (several gzip members / zstd frames too) and from directories; every bad input is an error
// naming the file and line: malformed JSON, no "text", a non-string "text", truncated or corrupt
// compressed data, an empty .gz / .zst file, a directory mixing .txt and JSON Lines files.
#include "data/jsonl.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/data/jsonl_files.h"

namespace graft::data {
namespace {
namespace fs = std::filesystem;
using namespace testing_jsonl;

std::string tmp_dir(const std::string& name) {
  const auto dir = fs::path(::testing::TempDir()) / "jsonl_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

const std::vector<std::string> kDocs = {
    "First document.",
    "Second one, with \"quotes\", a tab\there and\nnewlines\n\ninside.",
    "Unicode: caf\xC3\xA9, \xE6\x97\xA5\xE6\x9C\xAC, \xF0\x9F\x91\x8D, <|endoftext|>",
    "   leading and trailing spaces   ",
};

absl::StatusOr<std::vector<std::string>> read_all(const std::vector<std::string>& files) {
  auto d = JsonlDocuments::open(files);
  if (!d.ok()) return d.status();
  std::vector<std::string> docs;
  std::string doc;
  while (true) {
    auto more = d->next(doc);
    if (!more.ok()) return more.status();
    if (!*more) break;
    docs.push_back(doc);
  }
  EXPECT_EQ(d->file_bytes_read(), d->file_bytes_total());
  return docs;
}

void expect_error(const absl::Status& s, absl::StatusCode code,
                  const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s;
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << p << " in " << s;
}

TEST(Jsonl, PlainGzipAndZstdGiveTheSameDocuments) {
  const std::string dir = tmp_dir("formats");
  // Blank lines, CRLF endings, an empty text and a last line without '\n' are all fine.
  const std::string text = jsonl_text(kDocs) +
                           "\n  \n{\"text\": \"\"}\r\n{\"text\": \"crlf\"}\r\n" +
                           "{\"meta\": 1, \"text\": \"no newline at the end\"}";
  std::vector<std::string> want = kDocs;
  want.push_back("crlf");
  want.push_back("no newline at the end");
  write_file(dir + "/a.jsonl", text);
  write_file(dir + "/a.jsonl.gz", gzip(text));
  write_file(dir + "/a.jsonl.zst", zstd(text));
  const size_t half = text.size() / 2;  // several members / frames back to back
  write_file(dir + "/b.json.gz", gzip(text.substr(0, half)) + gzip(text.substr(half)));
  write_file(dir + "/b.json.zst", zstd(text.substr(0, half)) + zstd(text.substr(half)));
  for (const char* name : {"a.jsonl", "a.jsonl.gz", "a.jsonl.zst", "b.json.gz", "b.json.zst"}) {
    auto docs = read_all({dir + "/" + name});
    ASSERT_TRUE(docs.ok()) << name << ": " << docs.status();
    EXPECT_EQ(*docs, want) << name;
  }
}

TEST(Jsonl, DirectoriesAreReadRecursivelyInPathOrder) {
  const std::string dir = tmp_dir("dir");
  fs::create_directories(dir + "/sub");
  write_file(dir + "/b.jsonl.zst", zstd(jsonl_text({"b"})));
  write_file(dir + "/a.jsonl", jsonl_text({"a1", "a2"}));
  write_file(dir + "/sub/c.jsonl.gz", gzip(jsonl_text({"c"})));
  write_file(dir + "/notes.md", "not a dataset file");
  auto files = find_jsonl_files(dir);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 3u);
  auto docs = read_all(*files);
  ASSERT_TRUE(docs.ok()) << docs.status();
  EXPECT_EQ(*docs, (std::vector<std::string>{"a1", "a2", "b", "c"}));
  // A single file; a text file and a directory of .txt files are not JSON Lines datasets.
  EXPECT_EQ(*find_jsonl_files(dir + "/a.jsonl"), std::vector<std::string>{dir + "/a.jsonl"});
  write_file(dir + "/plain.txt", "text");
  EXPECT_TRUE(find_jsonl_files(dir + "/plain.txt")->empty());
  expect_error(find_jsonl_files(dir).status(), absl::StatusCode::kInvalidArgument,
               {dir, "both JSON Lines and .txt"});
}

TEST(Jsonl, BadLinesNameTheFileAndLine) {
  const std::string dir = tmp_dir("bad_lines");
  struct Case {
    std::string line, message;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"text\": \"unterminated}", "malformed JSON"},
           {"{\"txt\": \"x\"}", "no \"text\" field"},
           {"{\"text\": 42}", "\"text\" is not a string"},
           {"[\"text\"]", "expected a JSON object"},
           {"\"just a string\"", "expected a JSON object"},
           {"{\"text\": \"ok\"} trailing", "malformed JSON"},
           {"{\"text\": \"bad utf-8 \xFF\"}", "malformed JSON"},
           {"{\"text\": \"lone surrogate \\udc00\"}", "malformed JSON"},
       }) {
    const std::string path = dir + "/bad.jsonl";
    write_file(path, "{\"text\": \"fine\"}\n\n" + c.line + "\n{\"text\": \"after\"}\n");
    expect_error(read_all({path}).status(), absl::StatusCode::kInvalidArgument,
                 {path + ":3:", c.message});
  }
}

TEST(Jsonl, TruncatedOrCorruptCompressedFilesAreDataLoss) {
  const std::string dir = tmp_dir("truncated");
  std::vector<std::string> many;
  for (int i = 0; i < 2000; ++i) many.push_back("document number " + std::to_string(i));
  const std::string text = jsonl_text(many);
  const std::string gz = gzip(text), zs = zstd(text);
  struct Case {
    std::string name, bytes, message;
  };
  std::string corrupt_gz = gz;
  corrupt_gz[corrupt_gz.size() / 2] ^= 0x5A;
  corrupt_gz[corrupt_gz.size() / 2 + 1] ^= 0x33;
  std::string corrupt_zs = zs;
  corrupt_zs[corrupt_zs.size() / 2] ^= 0x5A;
  for (const Case& c : std::vector<Case>{
           {"cut.jsonl.gz", gz.substr(0, gz.size() / 2), "truncated gzip"},
           {"cut_tail.jsonl.gz", gz.substr(0, gz.size() - 4), "truncated gzip"},
           {"cut.jsonl.zst", zs.substr(0, zs.size() / 2), "truncated zstd"},
           {"empty.jsonl.gz", "", "truncated gzip"},
           {"empty.jsonl.zst", "", "truncated zstd"},
           {"notgzip.jsonl.gz", text, "corrupt gzip"},
           {"notzstd.jsonl.zst", text, "corrupt zstd"},
           {"flipped.jsonl.gz", corrupt_gz, "gzip"},
           {"flipped.jsonl.zst", corrupt_zs, "zstd"},
       }) {
    const std::string path = dir + "/" + c.name;
    write_file(path, c.bytes);
    auto r = read_all({path});
    ASSERT_FALSE(r.ok()) << c.name;
    // A flipped byte may also surface as a malformed line (invalid data decoded first).
    if (c.name.rfind("flipped", 0) != 0) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << c.name << ": " << r.status();
    }
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status();
  }
  expect_error(read_all({dir + "/missing.jsonl"}).status(), absl::StatusCode::kNotFound,
               {"missing.jsonl"});
  expect_error(JsonlDocuments::open({}).status(), absl::StatusCode::kInvalidArgument, {"no JSON"});
}

}  // namespace
}  // namespace graft::data
