// The block logic of sharded saves without devices: which blocks each process writes (on
// device lists built here, as two processes would own them), block copies, and the
// metadata parser's checks of a shard list (hand-written JSON, so the parser is checked
// against the format, not against graft's writer).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <filesystem>

#include "checkpoint/crc32c.h"
#include "checkpoint/metadata.h"
#include "checkpoint/shards.h"
#include "core/sharding/device_put.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

// Eight devices; device i belongs to process owner(i).
template <typename F>
std::vector<Device> devices_of(F owner) {
  std::vector<Device> d;
  for (int i = 0; i < 8; ++i) d.push_back(Device{i, owner(i)});
  return d;
}

std::vector<int> writers(const std::vector<BlockPlan>& plan) {
  std::vector<int> out;
  for (const BlockPlan& b : plan) out.push_back(b.device);
  return out;
}

const Mesh kMesh({4, 2}, {"data", "model"});

TEST(ShardPlan, FullySplitLeafEachProcessWritesItsDevicesBlocks) {
  auto devs = devices_of([](int i) { return i / 4; });  // host 0: 0..3, host 1: 4..7
  auto plan = plan_blocks(NamedSharding(kMesh, P("data", "model")), {8, 4}, devs);
  ASSERT_EQ(plan.size(), 8u);
  EXPECT_EQ(writers(blocks_of_process(plan, 0)), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(writers(blocks_of_process(plan, 1)), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan[5].index, (BlockIndex{{4, 6}, {2, 4}}));  // device 5: data 2, model 1
  EXPECT_TRUE(blocks_of_process(plan, 2).empty());
}

TEST(ShardPlan, ReplicasAreWrittenOnceByTheirFirstHolder) {
  auto devs = devices_of([](int i) { return i / 4; });
  // Split over data, replicated over model: devices 2k and 2k+1 hold row block k.
  auto rows = plan_blocks(NamedSharding(kMesh, P("data")), {8, 4}, devs);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(writers(blocks_of_process(rows, 0)), (std::vector<int>{0, 2}));
  EXPECT_EQ(writers(blocks_of_process(rows, 1)), (std::vector<int>{4, 6}));
  EXPECT_EQ(rows[3].index, (BlockIndex{{6, 8}, {0, 4}}));
  // Split over model only: the first holders are devices 0 and 1, both on process 0, so
  // process 1 writes nothing although it holds every block.
  auto cols = plan_blocks(NamedSharding(kMesh, P(none, "model")), {8, 4}, devs);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(writers(blocks_of_process(cols, 0)), (std::vector<int>{0, 1}));
  EXPECT_TRUE(blocks_of_process(cols, 1).empty());
  // Processes interleaved (device i on process i % 2): device 1's block goes to process 1.
  auto odd = devices_of([](int i) { return i % 2; });
  cols = plan_blocks(NamedSharding(kMesh, P(none, "model")), {8, 4}, odd);
  EXPECT_EQ(writers(blocks_of_process(cols, 0)), (std::vector<int>{0}));
  EXPECT_EQ(writers(blocks_of_process(cols, 1)), (std::vector<int>{1}));
  EXPECT_EQ(blocks_of_process(cols, 1)[0].index, (BlockIndex{{0, 8}, {2, 4}}));
}

TEST(ShardPlan, ProcessesTogetherWriteEveryBlockExactlyOnce) {
  auto devs = devices_of([](int i) { return (i * 5) % 3; });  // three uneven processes
  for (const PartitionSpec& spec : {P("data", "model"), P("model", "data"), P(none, "data"),
                                    P(AxisNames{"model", "data"})}) {
    auto plan = plan_blocks(NamedSharding(kMesh, spec), {8, 8}, devs);
    std::vector<BlockIndex> all;
    for (int p = 0; p < 3; ++p) {
      for (const BlockPlan& b : blocks_of_process(plan, p)) all.push_back(b.index);
    }
    EXPECT_EQ(all.size(), plan.size()) << spec.str();
    EXPECT_TRUE(check_shard_grid({8, 8}, all).ok()) << spec.str();
  }
}

TEST(ShardPlan, NamesAndBlockCopies) {
  EXPECT_EQ(shard_tensor_name("layers.wq", {{0, 2}, {0, 64}}), "layers.wq@0:2,0:64");
  EXPECT_EQ(shard_file_name("params", 3), "params.process-3.safetensors");
  // A [2, 3, 4] array of bytes 0..23; block [1:2, 0:3, 1:3] is rows of two, strided.
  std::vector<unsigned char> whole(24);
  for (int i = 0; i < 24; ++i) whole[i] = static_cast<unsigned char>(i);
  const BlockIndex b = {{1, 2}, {0, 3}, {1, 3}};
  std::vector<unsigned char> block(6, 0xFF);
  copy_block_out(whole.data(), {2, 3, 4}, 1, b, block.data());
  EXPECT_EQ(block, (std::vector<unsigned char>{13, 14, 17, 18, 21, 22}));
  std::vector<unsigned char> back(24, 0);
  copy_block_in(block.data(), {2, 3, 4}, 1, b, back.data());
  for (int i = 0; i < 24; ++i) {
    const bool inside = i >= 12 && (i % 4 == 1 || i % 4 == 2);
    EXPECT_EQ(back[i], inside ? i : 0) << i;
  }
  // Elements wider than a byte, rank 1.
  std::vector<int32_t> v = {10, 11, 12, 13}, out(2);
  copy_block_out(v.data(), {4}, 4, {{2, 4}}, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{12, 13}));
}

// Two processes' part of a save, played in turn on one: each writes its own file from the
// same plan, process 0 then collects process 1's checksums from its file's header, and the
// leaf reads back whole from both files.
TEST(ShardPlan, TwoProcessesWriteTheirFilesAndProcessZeroCollectsTheChecksums) {
  auto devs = devices_of([](int i) { return i / 4; });
  const Shape shape = {8, 6};
  auto plan = plan_blocks(NamedSharding(kMesh, P("data", "model")), shape, devs);
  std::vector<int32_t> whole(48);
  for (int i = 0; i < 48; ++i) whole[i] = 1000 + i;
  ItemMeta im;
  im.name = "p";
  LeafMeta l{"w", "w", DType::kI32, shape};
  l.nbytes = 48 * 4;
  for (const BlockPlan& b : plan) {
    l.shards.push_back({shard_file_name("p", b.process), shard_tensor_name("w", b.index),
                        b.index, 4 * 2 * 3});
  }
  im.leaves.push_back(l);
  const std::vector<SaveJob::Source> sources = {{whole.data(), l.nbytes}};
  const std::string dir = testing::fresh_dir("two_processes");
  ItemMeta on1 = im;  // what process 1 holds; its checksums never reach process 0 directly
  ASSERT_TRUE(write_item_shards(dir, on1, sources, 1).ok());
  ASSERT_TRUE(write_item_shards(dir, im, sources, 0).ok());
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(im.leaves[0].shards[k].crc32c == 0, k >= 4) << k;  // own blocks only so far
  }
  ASSERT_TRUE(collect_shard_checksums(dir, im, 0).ok());
  std::vector<int32_t> block(6);
  for (int k = 0; k < 8; ++k) {
    const ShardMeta& s = im.leaves[0].shards[k];
    EXPECT_EQ(s.file, k < 4 ? "p.process-0.safetensors" : "p.process-1.safetensors");
    copy_block_out(whole.data(), shape, 4, s.index, block.data());
    EXPECT_EQ(s.crc32c, crc32c(block.data(), 24)) << k;
    // Process 1 computed exactly its own blocks' checksums: the ones process 0 collected.
    EXPECT_EQ(on1.leaves[0].shards[k].crc32c, k >= 4 ? s.crc32c : 0u) << k;
  }
  ReaderCache readers;
  auto got = read_split_leaf(dir, "test", im.leaves[0], readers, /*verify=*/true);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::memcmp((*got)->data(), whole.data(), 48 * 4), 0);
  EXPECT_EQ(readers.size(), 2u);  // one open per file

  // Process 1 never wrote: process 0 does not get its checksums (and so does not commit).
  std::filesystem::remove(dir + "/p.process-1.safetensors");
  absl::Status s = collect_shard_checksums(dir, im, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("p.process-1.safetensors"), std::string::npos) << s;
}

// A format-2 document with one leaf "w" of shape [4, 6] f32 split in the given blocks.
std::string doc(const std::string& shards, const std::string& format = "graft-checkpoint-2") {
  return R"({"format":")" + format +
         R"(","graft_version":"0.1.0","step":1,"timestamp_ms":1,"metrics":null,)"
         R"("user_metadata":null,"items":[{"name":"p","kind":"tree","file":"p.safetensors",)"
         R"("treedef":{"kind":"*"},"leaves":[{"path":"","tensor":"w","dtype":"f32",)"
         R"("shape":[4,6],"sharding":"x","nbytes":96,"shards":[)" +
         shards + "]}]}]}";
}
// A block of "w" at rows [a0, z0), columns [a1, z1), named for its place ("w@0:2,0:3") unless
// `tensor` names it otherwise.
std::string shard(int a0, int z0, int a1, int z1,
                  const std::string& file = "p.process-0.safetensors", std::string tensor = "") {
  if (tensor.empty()) tensor = shard_tensor_name("w", {{a0, z0}, {a1, z1}});
  const int nbytes = 4 * (z0 - a0) * (z1 - a1);
  return "{\"file\":\"" + file + "\",\"tensor\":\"" + tensor + "\",\"index\":[[" +
         std::to_string(a0) + "," + std::to_string(z0) + "],[" + std::to_string(a1) + "," +
         std::to_string(z1) + "]],\"nbytes\":" + std::to_string(nbytes) + ",\"crc32c\":5}";
}

void expect_bad(const std::string& text, const std::string& fragment) {
  auto m = parse_metadata(text);
  ASSERT_FALSE(m.ok()) << text;
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << m.status();
  EXPECT_NE(m.status().message().find(fragment), std::string::npos)
      << "wanted '" << fragment << "': " << m.status();
}

TEST(ShardMetadata, AValidShardListRoundTrips) {
  const std::string four = shard(0, 2, 0, 3) + "," + shard(0, 2, 3, 6) + "," +
                           shard(2, 4, 0, 3, "p.process-1.safetensors") + "," +
                           shard(2, 4, 3, 6, "p.process-1.safetensors");
  auto m = parse_metadata(doc(four));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->format, kFormatSharded);
  const LeafMeta& l = m->items[0].leaves[0];
  ASSERT_EQ(l.shards.size(), 4u);
  EXPECT_EQ(l.shards[2].file, "p.process-1.safetensors");
  EXPECT_EQ(l.shards[3].index, (BlockIndex{{2, 4}, {3, 6}}));
  EXPECT_EQ(l.shards[3].nbytes, 24u);  // 2 x 3 f32
  auto again = parse_metadata(metadata_to_json(*m));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->items[0].leaves[0].shards[1].tensor, "w@0:2,3:6");
  EXPECT_EQ(again->items[0].leaves[0].shards[1].crc32c, 5u);
  // One block holding everything is a grid too.
  EXPECT_TRUE(parse_metadata(doc(shard(0, 4, 0, 6))).ok());
}

TEST(ShardMetadata, RejectsShardListsThatDoNotTileTheLeaf) {
  const std::string a = shard(0, 2, 0, 6), b = shard(2, 4, 0, 6);
  expect_bad(doc(a), "no block covers [2, 4) of dimension 0");                    // missing
  expect_bad(doc(a + "," + shard(1, 4, 0, 6)), "overlap");                   // overlap
  expect_bad(doc(a + "," + b + "," + shard(2, 4, 0, 6)), "appears twice");   // same block
  // A name that says another place than the index: the block would land elsewhere.
  expect_bad(doc(a + "," + shard(2, 4, 0, 6, "p.process-0.safetensors", "w@0:2,0:6")),
             "shard \"w@0:2,0:6\" is listed at [2:4, 0:6], which its name does not say "
             "(w@2:4,0:6)");
  expect_bad(doc(a + "," + shard(2, 5, 0, 6)), "outside dimension 0 of size 4");  // past end
  expect_bad(doc(a + "," + shard(2, 2, 0, 6)), "empty");                     // empty
  expect_bad(doc(""), "no shard list");
  // Ranges partition each dimension, yet a combination is missing (three of four blocks).
  expect_bad(doc(shard(0, 2, 0, 3) + "," + shard(0, 2, 3, 6) + "," +
                 shard(2, 4, 0, 3)),
             "missing");
  // Not a grid: a [0:2] x [0:6] block beside [2:4] x [0:3] and [2:4] x [3:6].
  expect_bad(doc(a + "," + shard(2, 4, 0, 3) + "," + shard(2, 4, 3, 6)), "overlap");
}

TEST(ShardMetadata, RejectsMalformedShards) {
  const std::string b = shard(2, 4, 0, 6);
  std::string wrong_bytes = shard(0, 2, 0, 6);
  wrong_bytes.replace(wrong_bytes.find("48"), 2, "40");
  expect_bad(doc(wrong_bytes + "," + b), "nbytes disagrees");
  expect_bad(doc(shard(0, 2, 0, 6, "..x") + "," + b), "contains \"..\"");
  expect_bad(doc(shard(0, 2, 0, 6, "_COMMITTED") + "," + b), "may not start with");
  expect_bad(doc(shard(0, 2, 0, 6, "p.process-0.safetensors", "a/b") + "," + b),
             "path separator");
  expect_bad(doc(R"({"file":"f","tensor":"t","index":[[0,4]],"nbytes":96,"crc32c":1})"),
             "index of rank 1");
  expect_bad(doc(R"({"file":"f","tensor":"t","index":[[4,0],[0,6]],"nbytes":0,"crc32c":1})"),
             "bad index range");
  expect_bad(doc(R"({"file":"f","tensor":"t","index":[[0,4],[0,6]],"nbytes":96,"crc32c":-1})"),
             "needs file, tensor, index, nbytes and crc32c");
  expect_bad(doc("7"), "not an object");
  // Format 1 has no shards.
  expect_bad(doc(shard(0, 4, 0, 6), "graft-checkpoint-1"), "does not have");
}

}  // namespace
}  // namespace graft::checkpoint
