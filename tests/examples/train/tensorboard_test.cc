// SummaryWriter: the event file is decoded here by an independent reader (own protobuf
// decoder, bit-by-bit CRC-32C; the CRC itself is tested in tests/checkpoint/crc32c_test).
// tools/check_tensorboard.py reads the same format with TensorBoard itself.
#include "examples/train/tensorboard.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/util/crc32c_reference.h"

namespace graft::train {
namespace {

namespace fs = std::filesystem;

using graft::testing::crc32c_bitwise;

uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

// ---- an independent reader: TFRecord framing + protobuf wire format ------------------------

uint64_t le(const std::string& s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s.at(pos + i));
  return v;
}

// Reads records, checking both masked CRCs of each.
std::vector<std::string> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string file = ss.str();
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < file.size()) {
    EXPECT_LE(pos + 12, file.size());
    if (pos + 12 > file.size()) break;
    uint64_t len = le(file, pos, 8);
    EXPECT_EQ(le(file, pos + 8, 4), mask(crc32c_bitwise(file.substr(pos, 8)))) << "length crc";
    EXPECT_LE(pos + 12 + len + 4, file.size());
    if (pos + 12 + len + 4 > file.size()) break;
    std::string data = file.substr(pos + 12, len);
    EXPECT_EQ(le(file, pos + 12 + len, 4), mask(crc32c_bitwise(data))) << "data crc";
    records.push_back(data);
    pos += 12 + len + 4;
  }
  return records;
}

struct Fields {  // field number -> raw values (varints as numbers, the rest as bytes)
  std::multimap<int, uint64_t> ints;
  std::multimap<int, std::string> bytes;
};

uint64_t varint(const std::string& s, size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0; pos < s.size(); shift += 7) {
    auto b = static_cast<unsigned char>(s[pos++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

Fields decode(const std::string& s) {
  Fields f;
  size_t pos = 0;
  while (pos < s.size()) {
    uint64_t key = varint(s, pos);
    int field = static_cast<int>(key >> 3);
    switch (key & 7) {
      case 0:
        f.ints.emplace(field, varint(s, pos));
        break;
      case 1:
        f.bytes.emplace(field, s.substr(pos, 8));
        pos += 8;
        break;
      case 5:
        f.bytes.emplace(field, s.substr(pos, 4));
        pos += 4;
        break;
      case 2: {
        uint64_t len = varint(s, pos);
        f.bytes.emplace(field, s.substr(pos, len));
        pos += len;
        break;
      }
      default:
        ADD_FAILURE() << "wire type " << (key & 7);
        return f;
    }
  }
  return f;
}

double as_double(const std::string& b) {
  double d;
  std::memcpy(&d, b.data(), 8);
  return d;
}
float as_float(const std::string& b) {
  float f;
  std::memcpy(&f, b.data(), 4);
  return f;
}

std::string temp_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / name;
  fs::remove_all(p);
  return p.string();
}

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(SummaryWriter, WritesScalarsTensorBoardCanRead) {
  std::string dir = temp_dir("tb_scalars") + "/nested/run1";
  double before = now();
  auto writer = SummaryWriter::create(dir);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::string name = fs::path(writer->path()).filename().string();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  EXPECT_EQ(fs::path(writer->path()).parent_path(), fs::path(dir));
  ASSERT_TRUE(writer->add_scalar("loss", 2.5, 10).ok());
  ASSERT_TRUE(writer->add_scalar("lr", 1e-4, -1).ok());  // negative steps are int64 varints
  ASSERT_TRUE(writer->add_scalars({{"a", 1.0 / 3}, {"b", -7.0}}, 1LL << 40).ok());
  ASSERT_TRUE(writer->flush().ok());
  double after = now();

  std::vector<std::string> records = read_records(writer->path());
  ASSERT_EQ(records.size(), 4u);
  Fields first = decode(records[0]);
  ASSERT_EQ(first.bytes.count(3), 1u);
  EXPECT_EQ(first.bytes.find(3)->second, "brain.Event:2");
  double wall = as_double(first.bytes.find(1)->second);
  EXPECT_GE(wall, before - 1);
  EXPECT_LE(wall, after + 1);

  struct Want {
    int64_t step;
    std::vector<std::pair<std::string, float>> values;
  };
  std::vector<Want> want = {
      {10, {{"loss", 2.5f}}}, {-1, {{"lr", 1e-4f}}}, {1LL << 40, {{"a", 1.0f / 3}, {"b", -7.0f}}}};
  for (size_t i = 0; i < want.size(); ++i) {
    Fields event = decode(records[i + 1]);
    EXPECT_EQ(static_cast<int64_t>(event.ints.find(2)->second), want[i].step);
    EXPECT_GE(as_double(event.bytes.find(1)->second), before - 1);
    ASSERT_EQ(event.bytes.count(5), 1u);
    Fields summary = decode(event.bytes.find(5)->second);
    ASSERT_EQ(summary.bytes.count(1), want[i].values.size());
    auto it = summary.bytes.lower_bound(1);
    for (const auto& [tag, value] : want[i].values) {
      Fields v = decode((it++)->second);
      EXPECT_EQ(v.bytes.find(1)->second, tag);
      EXPECT_EQ(as_float(v.bytes.find(2)->second), value) << tag;
    }
  }
}

TEST(SummaryWriter, EventBytesMatchHandEncoding) {
  // Event{wall_time: 1.0, step: 3, summary{value{tag: "a", simple_value: 0.5}}}, encoded by
  // hand from the protobuf wire format.
  std::string expected = std::string("\x09\x00\x00\x00\x00\x00\x00\xf0\x3f", 9) +
                         std::string("\x10\x03", 2) + std::string("\x2a\x0a", 2) +
                         std::string("\x0a\x08", 2) +
                         std::string(
                             "\x0a\x01"
                             "a",
                             3) +
                         std::string("\x15\x00\x00\x00\x3f", 5);
  EXPECT_EQ(internal::encode_scalars_event(1.0, 3, {{"a", 0.5}}), expected);
  // TFRecord framing of the payload "x".
  std::string framed = internal::frame_record("x");
  ASSERT_EQ(framed.size(), 8u + 4 + 1 + 4);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(le(framed, 8, 4), mask(crc32c_bitwise(framed.substr(0, 8))));
  EXPECT_EQ(le(framed, 13, 4), mask(crc32c_bitwise("x")));
}

TEST(SummaryWriter, TextSummary) {
  auto writer = SummaryWriter::create(temp_dir("tb_text"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE(writer->add_text("sample", "hello, world", 5).ok());
  ASSERT_TRUE(writer->close().ok());
  std::vector<std::string> records = read_records(writer->path());
  ASSERT_EQ(records.size(), 2u);
  Fields event = decode(records[1]);
  EXPECT_EQ(event.ints.find(2)->second, 5u);
  Fields value = decode(decode(event.bytes.find(5)->second).bytes.find(1)->second);
  EXPECT_EQ(value.bytes.find(1)->second, "sample");
  Fields tensor = decode(value.bytes.find(8)->second);
  EXPECT_EQ(tensor.ints.find(1)->second, 7u);  // DT_STRING
  EXPECT_EQ(tensor.bytes.find(8)->second, "hello, world");
  Fields plugin = decode(decode(value.bytes.find(9)->second).bytes.find(1)->second);
  EXPECT_EQ(plugin.bytes.find(1)->second, "text");
}

TEST(SummaryWriter, TwoWritersGetTwoFiles) {
  std::string dir = temp_dir("tb_two");
  auto a = SummaryWriter::create(dir);
  auto b = SummaryWriter::create(dir);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->path(), b->path());
}

TEST(SummaryWriter, Errors) {
  std::string dir = temp_dir("tb_errors");
  fs::create_directories(dir);
  std::ofstream(dir + "/file") << "not a directory";
  auto bad = SummaryWriter::create(dir + "/file/sub");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find(dir + "/file/sub"), std::string::npos)
      << bad.status();

  auto writer = SummaryWriter::create(dir);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->close().ok());
  EXPECT_EQ(writer->add_scalar("x", 1, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(writer->close().ok());  // closing twice is harmless
}

}  // namespace
}  // namespace graft::train
