// Hostile and damaged files: every class gives a clear absl::Status, never a crash. Headers
// are written by hand here, not by graft's writer, so the parser is checked against the spec.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/crc32c.h"
#include "checkpoint/manager.h"
#include "checkpoint/metadata.h"
#include "checkpoint/safetensors.h"
#include "core/ops.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;

std::string with_size(const std::string& header, uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header;
}
// A file: size field, header, then `data_bytes` bytes of buffer.
std::string file_of(const std::string& header, size_t data_bytes) {
  return with_size(header, header.size()) + std::string(data_bytes, '\x01');
}

absl::Status parse(const std::string& bytes) { return parse_safetensors_bytes(bytes).status(); }

void expect_error(const std::string& bytes, const std::string& fragment) {
  absl::Status s = parse(bytes);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << "wanted '" << fragment << "': " << s;
}

TEST(Safetensors, AcceptsAValidHandWrittenFile) {
  std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"BF16","shape":[1,3],"data_offsets":[8,14]},)"
                  R"("__metadata__":{"format":"pt"}})";
  auto r = parse_safetensors_bytes(file_of(h, 14));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[1].name, "b");
  EXPECT_EQ(r->tensors[1].dtype, DType::kBF16);
  EXPECT_EQ(r->tensors[1].shape, (Shape{1, 3}));
  EXPECT_EQ(r->metadata.at("format"), "pt");
  EXPECT_EQ(r->data_start, 8 + h.size());
}

TEST(Safetensors, RejectsEveryBadHeaderClass) {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  expect_error("", "too small");
  expect_error(std::string("\x05\0\0", 3), "too small");
  expect_error(with_size("{}", uint64_t{1} << 62), "exceeds the limit");
  expect_error(with_size("{}", 1000), "exceeds the 2 bytes");
  expect_error(file_of("{" + ok_entry, 8), "not valid JSON");
  expect_error(file_of("[1,2]", 0), "not a JSON object");
  expect_error(file_of(R"({"a":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})", 8),
               "unknown dtype");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
               "bad dimension");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "need 12");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", 8),
               "outside the data buffer");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8),
               "outside the data buffer");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8),
               "data_offsets");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       12),
               "overlaps");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12), "hole");
  expect_error(file_of("{" + ok_entry + "}", 9), "cover 8 bytes of a data buffer of 9");
  expect_error(file_of("{" + ok_entry + "," + ok_entry + "}", 8), "duplicate tensor name");
  for (const char* name : {"..", "a/../b", "/etc/passwd", "a/b", "a\\\\b", ""}) {
    expect_error(file_of(std::string(R"({")") + name +
                             R"(":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                         8),
                 "tensor name");
  }
  expect_error(file_of(R"({"__metadata__":{"a":1}})", 0), "not a string");
  expect_error(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8),
               "unknown field");
  // A shape whose byte count overflows 64 bits.
  expect_error(file_of(R"({"a":{"dtype":"F64","shape":[281474976710656,281474976710656],)"
                       R"("data_offsets":[0,8]}})",
                       8),
               "more than 2^64");
  // Deep nesting is a JSON error or a schema error, not a stack overflow.
  expect_error(file_of(std::string(100000, '[') + std::string(100000, ']'), 0), "");
}

TEST(Crc32c, KnownVector) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C check value (RFC 3720)
  std::string s(1000, 'x');
  EXPECT_EQ(crc32c(s.data() + 500, 500, crc32c(s.data(), 500)), crc32c(s.data(), 1000));
}

class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("damaged");
    auto m = CheckpointManager::open(dir_, {.enable_async = false});
    ASSERT_TRUE(m.ok());
    mgr_ = std::move(*m);
    tree_ = {{"w", testing::pattern_array(DType::kF32, {64}, 1)},
             {"b", testing::pattern_array(DType::kI32, {8}, 2)}};
    ASSERT_TRUE(mgr_->save(1, {{"p", Item::tree(tree_)}}).ok());
    file_ = dir_ + "/1/p.safetensors";
  }
  absl::Status restore() {
    // Re-open, as a restarted job would (the first manager is gone: it holds the lock).
    mgr_.reset();
    auto m = CheckpointManager::open(dir_, {.enable_async = false});
    if (!m.ok()) return m.status();
    return (*m)->restore(1, {{"p", Item::tree(tree_)}}).status();
  }
  void rewrite(const std::function<void(std::string&)>& edit, const std::string& path) {
    std::string bytes;
    {
      std::ifstream f(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    edit(bytes);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  std::string dir_, file_;
  std::unique_ptr<CheckpointManager> mgr_;
  std::map<std::string, Array> tree_;
};

TEST_F(DamagedCheckpoint, IntactRestores) { EXPECT_TRUE(restore().ok()); }

TEST_F(DamagedCheckpoint, TruncatedFile) {
  rewrite([](std::string& b) { b.resize(b.size() - 5); }, file_);
  absl::Status s = restore();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(file_), std::string::npos) << s;
}

TEST_F(DamagedCheckpoint, TruncatedInsideHeader) {
  rewrite([](std::string& b) { b.resize(20); }, file_);
  EXPECT_EQ(restore().code(), absl::StatusCode::kDataLoss);
}

TEST_F(DamagedCheckpoint, FlippedDataByteFailsChecksum) {
  rewrite([](std::string& b) { b[b.size() - 3] ^= 0x10; }, file_);
  absl::Status s = restore();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("checksum"), std::string::npos) << s;
}

TEST_F(DamagedCheckpoint, MissingTensorFile) {
  fs::remove(file_);
  EXPECT_EQ(restore().code(), absl::StatusCode::kNotFound);
}

TEST_F(DamagedCheckpoint, MissingMetadata) {
  fs::remove(dir_ + "/1/_CHECKPOINT_METADATA");
  EXPECT_EQ(restore().code(), absl::StatusCode::kNotFound);
}

TEST_F(DamagedCheckpoint, CorruptMetadata) {
  rewrite([](std::string& b) { b[b.size() / 2] = '}'; }, dir_ + "/1/_CHECKPOINT_METADATA");
  EXPECT_EQ(restore().code(), absl::StatusCode::kDataLoss);
}

TEST_F(DamagedCheckpoint, HugeHeaderSize) {
  rewrite([](std::string& b) { std::memset(b.data(), 0x7f, 8); }, file_);
  absl::Status s = restore();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("header size"), std::string::npos) << s;
}

TEST_F(DamagedCheckpoint, FileFromAnotherTreeDisagreesWithMetadata) {
  // A valid safetensors file whose tensor has another shape than the metadata says.
  std::vector<float> v(32, 1.f);
  ASSERT_TRUE(write_safetensors(
                  file_, {{"w", DType::kF32, {32}, v.data()}, {"b", DType::kI32, {4}, v.data()}})
                  .ok());
  absl::Status s = restore();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("in the metadata"), std::string::npos) << s;
}

TEST(Metadata, RejectsInconsistentDocuments) {
  StepMetadata m;
  m.step = 3;
  ItemMeta it;
  it.name = "p";
  it.treedef = tree_structure(std::vector<Array>{zeros({2})});
  it.leaves.push_back({"0", "0", DType::kF32, {2}, "replicated", 8, 7});
  m.items.push_back(it);
  std::string good = metadata_to_json(m);
  auto back = parse_metadata(good);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->items[0].treedef, it.treedef);
  EXPECT_EQ(back->items[0].leaves[0].crc32c, 7u);

  auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    size_t pos = t.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    return parse_metadata(t).status();
  };
  EXPECT_EQ(broken("\"nbytes\": 8", "\"nbytes\": 9").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(broken("\"dtype\": \"f32\"", "\"dtype\": \"f31\"").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(broken("\"tensor\": \"0\"", "\"tensor\": \"../0\"").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(broken("\"name\": \"p\"", "\"name\": \"../p\"").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(broken("\"kind\": \"*\"", "\"kind\": \"vector\"").code(),
            absl::StatusCode::kDataLoss);  // 0 leaves in the structure, 1 listed
  EXPECT_EQ(parse_metadata("{").status().code(), absl::StatusCode::kDataLoss);
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += R"({"kind":"vector","children":[)";
  deep += R"({"kind":"*"})";
  for (int i = 0; i < 1000; ++i) deep += "]}";
  auto d = treedef_from_json(nlohmann::json::parse(deep));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace graft::checkpoint
