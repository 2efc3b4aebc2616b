// Hugging Face model folders (checkpoint/hf_folder.h): the files written, sharding by a size
// limit with its index, replacing an earlier export, and the paths an export cannot write,
// refused by check_hf_export_dir before anything is written.
#include "checkpoint/hf_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "checkpoint/safetensors.h"
#include "nlohmann/json.hpp"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Tensor k: `sizes[k]` f32 values, all equal to k (so a shard's content is checkable).
struct Tensors {
  std::vector<std::vector<float>> data;
  std::vector<TensorView> views;
  explicit Tensors(const std::vector<int64_t>& sizes) {
    data.reserve(sizes.size());
    for (size_t k = 0; k < sizes.size(); ++k) {
      data.emplace_back(sizes[k], float(k));
      views.push_back({"t" + std::to_string(k), DType::kF32, {sizes[k]}, data.back().data()});
    }
  }
};

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

const HfFolderFiles kFiles{.config = {{"model_type", "llama"}, {"hidden_size", 8}},
                           .generation_config = {{"eos_token_id", 2}}};

TEST(HfFolder, SmallModelIsOneFileWithConfigs) {
  const std::string dir = testing::fresh_dir("hf_one") + "/out/hf";  // parents are created
  Tensors t({3, 5});
  ASSERT_TRUE(write_hf_folder(dir, kFiles, t.views).ok());
  EXPECT_EQ(entries(dir),
            (std::set<std::string>{"config.json", "generation_config.json", "model.safetensors"}));
  EXPECT_EQ(read_json(dir + "/config.json"), kFiles.config);
  EXPECT_EQ(read_json(dir + "/generation_config.json"), kFiles.generation_config);
  auto r = SafetensorsReader::open(dir + "/model.safetensors");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->header().metadata.at("format"), "pt");
  EXPECT_EQ(r->header().tensors.size(), 2u);
  EXPECT_EQ(entries(fs::path(dir).parent_path().string()), std::set<std::string>{"hf"});
}

// Tensors of 40, 40, 100 (over the limit alone) and six of 20 bytes with a 96-byte limit: a
// shard closes when the next tensor would take it past 96 bytes.
TEST(HfFolder, ShardsBySizeWithAnIndex) {
  const std::string dir = testing::fresh_dir("hf_shards") + "/hf";
  Tensors t({10, 10, 25, 5, 5, 5, 5, 5, 5});  // bytes 40 40 100 20 20 20 20 20 20
  ASSERT_TRUE(
      write_hf_folder(dir, {.config = kFiles.config}, t.views, {.max_shard_bytes = 96}).ok());
  // Expected shards: [t0 t1] (80), [t2] (100 alone), [t3 t4 t5 t6] (80), [t7 t8] (40).
  const std::vector<std::vector<int>> want = {{0, 1}, {2}, {3, 4, 5, 6}, {7, 8}};
  std::set<std::string> files = {"config.json", "model.safetensors.index.json"};
  for (size_t k = 0; k < want.size(); ++k) {
    files.insert("model-0000" + std::to_string(k + 1) + "-of-00004.safetensors");
  }
  EXPECT_EQ(entries(dir), files);  // no generation_config.json: none was given
  json index = read_json(dir + "/model.safetensors.index.json");
  EXPECT_EQ(index["metadata"]["total_size"], 300);
  ASSERT_EQ(index["weight_map"].size(), 9u);
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string file = "model-0000" + std::to_string(k + 1) + "-of-00004.safetensors";
    auto r = SafetensorsReader::open(dir + "/" + file);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->header().tensors.size(), want[k].size()) << file;
    for (int i : want[k]) {
      const std::string name = "t" + std::to_string(i);
      EXPECT_EQ(index["weight_map"][name], file) << name;
      const TensorInfo* info = r->header().find(name);
      ASSERT_NE(info, nullptr) << name;
      std::vector<float> got(t.data[i].size());
      ASSERT_TRUE(r->read(*info, got.data()).ok());
      EXPECT_EQ(got, t.data[i]) << name;
    }
  }
}

TEST(HfFolder, ReplacesAnEarlierExportWhole) {
  const std::string dir = testing::fresh_dir("hf_replace") + "/hf";
  Tensors t({10, 10, 10});
  ASSERT_TRUE(write_hf_folder(dir, kFiles, t.views, {.max_shard_bytes = 40}).ok());
  EXPECT_TRUE(fs::exists(dir + "/model-00003-of-00003.safetensors"));
  ASSERT_TRUE(check_hf_export_dir(dir).ok());  // an earlier export may be replaced
  ASSERT_TRUE(write_hf_folder(dir, kFiles, t.views).ok());
  // The shards and index of the first export are gone with it.
  EXPECT_EQ(entries(dir),
            (std::set<std::string>{"config.json", "generation_config.json", "model.safetensors"}));
  EXPECT_EQ(entries(fs::path(dir).parent_path().string()), std::set<std::string>{"hf"});
}

TEST(HfFolder, AFailedExportKeepsTheEarlierOneAndLeavesNothingBehind) {
  const std::string dir = testing::fresh_dir("hf_fail") + "/hf";
  Tensors good({4});
  ASSERT_TRUE(write_hf_folder(dir, kFiles, good.views).ok());
  std::string before;
  {
    std::ifstream in(dir + "/model.safetensors", std::ios::binary);
    before.assign(std::istreambuf_iterator<char>(in), {});
  }
  Tensors bad({4, 4});
  bad.views[1].name = "a/b";  // a name safetensors refuses: the second shard write fails
  absl::Status s = write_hf_folder(dir, kFiles, bad.views, {.max_shard_bytes = 16});
  EXPECT_FALSE(s.ok());
  std::ifstream in(dir + "/model.safetensors", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), before);
  EXPECT_EQ(entries(fs::path(dir).parent_path().string()), std::set<std::string>{"hf"});
}

TEST(HfFolder, ExportFileNames) {
  for (const char* ok : {"config.json", "generation_config.json", "model.safetensors",
                         "model.safetensors.index.json", "model-00002-of-00010.safetensors"}) {
    EXPECT_TRUE(is_hf_export_file(ok)) << ok;
  }
  for (const char* no : {"tokenizer.json", "model-2-of-3.safetensors", "README.md", "x"}) {
    EXPECT_FALSE(is_hf_export_file(no)) << no;
  }
}

// Each path an export cannot write is refused with the path and the reason, and nothing
// that was there is touched.
TEST(HfFolder, PathsAnExportCannotWriteAreRefused) {
  const std::string base = testing::fresh_dir("hf_refuse");
  std::ofstream(base + "/file") << "keep";
  // A regular file where the folder would be.
  absl::Status s = check_hf_export_dir(base + "/file");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("exists and is not a folder"), std::string::npos) << s;
  // A folder below a regular file: its parent cannot be created (ENOTDIR, also for root).
  s = check_hf_export_dir(base + "/file/sub/hf");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(base + "/file/sub"), std::string::npos) << s;
  // A folder holding something an export does not write (here a tokenizer): replacing the
  // folder would lose it.
  fs::create_directories(base + "/model");
  std::ofstream(base + "/model/config.json") << "{}";
  std::ofstream(base + "/model/tokenizer.json") << "{}";
  s = check_hf_export_dir(base + "/model");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("\"tokenizer.json\""), std::string::npos) << s;
  Tensors t({2});
  EXPECT_FALSE(write_hf_folder(base + "/model", kFiles, t.views).ok());
  EXPECT_TRUE(fs::exists(base + "/model/tokenizer.json"));
  // Paths that name no folder of their own.
  for (const char* p : {"", ".", "..", "/"}) {
    EXPECT_EQ(check_hf_export_dir(p).code(), absl::StatusCode::kInvalidArgument) << p;
  }
  // An empty folder and a new one are fine; the check leaves nothing behind.
  fs::create_directories(base + "/empty");
  EXPECT_TRUE(check_hf_export_dir(base + "/empty").ok());
  EXPECT_TRUE(check_hf_export_dir(base + "/new/hf").ok());
  EXPECT_TRUE(fs::is_empty(base + "/new"));
  std::ifstream in(base + "/file");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep");
}

// Places the process may not write. Tests run as root here, and root ignores file modes;
// procfs refuses new entries to root too, so that case runs for everyone.
TEST(HfFolder, ProcfsIsRefusedEvenForRoot) {
  absl::Status s = check_hf_export_dir("/proc/graft_hf_export_test/hf");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create /proc/graft_hf_export_test"), std::string::npos) << s;
}

// A mode-0555 folder stops every user but root: the probe write fails with EACCES.
TEST(HfFolder, ReadOnlyFolderIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file modes (ProcfsIsRefusedEvenForRoot runs)";
  const std::string base = testing::fresh_dir("hf_mode");
  fs::permissions(base, fs::perms::owner_read | fs::perms::owner_exec);
  absl::Status s = check_hf_export_dir(base + "/hf");
  fs::permissions(base, fs::perms::owner_all);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Permission denied"), std::string::npos) << s;
}

TEST(HfFolder, BadArguments) {
  const std::string dir = testing::fresh_dir("hf_args") + "/hf";
  Tensors t({2});
  EXPECT_EQ(write_hf_folder(dir, {.config = json::array()}, t.views).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(write_hf_folder(dir, {.config = kFiles.config, .generation_config = 3}, t.views).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(write_hf_folder(dir, kFiles, t.views, {.max_shard_bytes = 0}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(HfFolder, ReadConfig) {
  const std::string dir = testing::fresh_dir("hf_read");
  auto none = read_hf_config(dir);  // a folder without config.json
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::ofstream(dir + "/model.safetensors") << "";
  none = read_hf_config(dir + "/model.safetensors");  // a file: no config to read
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::ofstream(dir + "/config.json") << R"({"hidden_size": 8})";
  auto got = read_hf_config(dir);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((**got)["hidden_size"], 8);
  std::ofstream(dir + "/config.json") << "[1, 2";
  EXPECT_EQ(read_hf_config(dir).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace graft::checkpoint
