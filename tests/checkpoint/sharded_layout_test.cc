// What a sharded save puts on disk (GRAFT_CPU_DEVICES=8, BUILD.bazel): split leaves as their
// distinct blocks in this process's file, read back here from the safetensors header and
// checked to tile each array exactly once with the saved bytes; replicated leaves whole and
// once; and the errors of a damaged or missing shard file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "checkpoint/manager.h"
#include "checkpoint/safetensors.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;
using namespace testing;  // NOLINT: fresh_dir, pattern_array, same_bytes
using Tree = std::map<std::string, Array>;

const Mesh kFsdp({8}, {"fsdp"});
const Mesh kGrid({4, 2}, {"data", "model"});

Tree values() {
  return {{"emb", pattern_array(DType::kBF16, {6, 4}, 1)},
          {"norm", pattern_array(DType::kF32, {4}, 2)},
          {"step", pattern_array(DType::kI32, {}, 3)},
          {"wo", pattern_array(DType::kF32, {4, 16}, 4)},
          {"wq", pattern_array(DType::kF32, {16, 4}, 5)}};
}

// FSDP-like: wq split by rows over 8 devices, wo by columns, emb over "model" only (so
// replicated 4 times), norm replicated, step unplaced.
Tree fsdp(const Tree& v) {
  return {{"emb", device_put(v.at("emb"), NamedSharding(kGrid, P(none, "model")))},
          {"norm", device_put(v.at("norm"), NamedSharding(kFsdp, P()))},
          {"step", v.at("step")},
          {"wo", device_put(v.at("wo"), NamedSharding(kFsdp, P(none, "fsdp")))},
          {"wq", device_put(v.at("wq"), NamedSharding(kFsdp, P("fsdp")))}};
}

std::set<std::string> files_in(const std::string& d) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out.insert(e.path().filename().string());
  return out;
}

// Parses "wq@0:2,0:4" into its leaf and block.
std::pair<std::string, BlockIndex> parse_name(const std::string& name) {
  const size_t at = name.find('@');
  BlockIndex b;
  std::string rest = name.substr(at + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string r = rest.substr(0, comma);
    const size_t colon = r.find(':');
    b.emplace_back(std::stoll(r.substr(0, colon)), std::stoll(r.substr(colon + 1)));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return {name.substr(0, at), b};
}

std::unique_ptr<CheckpointManager> saved(const std::string& dir, const Tree& t,
                                         CheckpointManagerOptions o = {}) {
  auto mgr = CheckpointManager::open(dir, o);
  EXPECT_TRUE(mgr.ok()) << mgr.status();
  if (!mgr.ok()) return nullptr;
  EXPECT_TRUE((*mgr)->save(1, {{"p", Item::tree(t)}}).ok());
  EXPECT_TRUE((*mgr)->wait_until_finished().ok());
  return std::move(*mgr);
}

// Rewrites step 1's metadata with `edit` applied to leaf wq's entry.
template <typename Edit>
void edit_wq_metadata(const CheckpointManager& mgr, Edit edit) {
  const std::string path = mgr.step_dir(1) + "/_CHECKPOINT_METADATA";
  nlohmann::json j;
  {
    std::ifstream in(path);
    in >> j;
  }
  nlohmann::json& wq = j["items"][0]["leaves"][4];
  ASSERT_EQ(wq["path"], "wq");
  edit(wq);
  std::ofstream out(path, std::ios::trunc);
  out << j.dump();
}

TEST(ShardedLayout, SplitLeavesAreTheirDistinctBlocksInThisProcesssFile) {
  const Tree v = values();
  std::string dir = fresh_dir("layout");
  auto mgr = saved(dir, fsdp(v));
  ASSERT_NE(mgr, nullptr);
  const std::string step = mgr->step_dir(1);
  EXPECT_EQ(files_in(step), (std::set<std::string>{"_CHECKPOINT_METADATA", "_COMMITTED",
                                                   "p.safetensors", "p.process-0.safetensors"}));

  // The whole file holds the unsplit leaves, each once.
  auto whole = SafetensorsReader::open(step + "/p.safetensors");
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::set<std::string> names;
  for (const TensorInfo& t : whole->header().tensors) names.insert(t.name);
  EXPECT_EQ(names, (std::set<std::string>{"norm", "step"}));

  // The shard file: blocks of wq (8 row blocks), wo (8 column blocks), emb (2: its replicas
  // over "data" are not written again), each with the block's shape and the saved bytes,
  // together covering every element of each array exactly once.
  auto shards = SafetensorsReader::open(step + "/p.process-0.safetensors");
  ASSERT_TRUE(shards.ok()) << shards.status();
  std::map<std::string, int> blocks_of;
  std::map<std::string, std::vector<int>> covered;
  for (const auto& [name, a] : v) covered[name].assign(static_cast<size_t>(a.size()), 0);
  for (const TensorInfo& t : shards->header().tensors) {
    auto [leaf, b] = parse_name(t.name);
    ASSERT_TRUE(v.count(leaf)) << t.name;
    const Array& a = v.at(leaf);
    ASSERT_EQ(b.size(), a.shape().size()) << t.name;
    Shape start, limit, bshape;
    for (const auto& [lo, hi] : b) {
      start.push_back(lo);
      limit.push_back(hi);
      bshape.push_back(hi - lo);
    }
    EXPECT_EQ(t.shape, bshape) << t.name;
    EXPECT_EQ(t.dtype, a.dtype()) << t.name;
    auto buf = Buffer::make(static_cast<size_t>(t.end - t.begin));
    ASSERT_TRUE(shards->read(t, buf->data()).ok());
    EXPECT_TRUE(same_bytes(Array::from_buffer(buf, bshape, t.dtype), slice(a, start, limit)))
        << t.name;
    ++blocks_of[leaf];
    for (int64_t i = b[0].first; i < b[0].second; ++i) {
      for (int64_t j = b[1].first; j < b[1].second; ++j) ++covered[leaf][i * a.dim(1) + j];
    }
  }
  EXPECT_EQ(blocks_of, (std::map<std::string, int>{{"emb", 2}, {"wo", 8}, {"wq", 8}}));
  for (const std::string leaf : {"emb", "wo", "wq"}) {
    for (int c : covered[leaf]) ASSERT_EQ(c, 1) << leaf;
  }

  // The metadata lists the same blocks, with the real shardings.
  auto meta = mgr->metadata(1);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->format, kFormatSharded);
  const ItemMeta* p = meta->find("p");
  ASSERT_NE(p, nullptr);
  const LeafMeta& wq = p->leaves[4];
  EXPECT_EQ(wq.path, "wq");
  EXPECT_EQ(wq.sharding, "NamedSharding(Mesh(fsdp=8), P('fsdp'))");
  ASSERT_EQ(wq.shards.size(), 8u);
  EXPECT_EQ(wq.shards[3].tensor, "wq@6:8,0:4");
  EXPECT_EQ(wq.shards[3].file, "p.process-0.safetensors");
  EXPECT_EQ(wq.shards[3].index, (BlockIndex{{6, 8}, {0, 4}}));
  EXPECT_EQ(wq.shards[3].nbytes, 32u);
  EXPECT_TRUE(p->leaves[1].shards.empty());  // norm: whole
  EXPECT_EQ(p->leaves[1].sharding, "NamedSharding(Mesh(fsdp=8), P())");

  // And it restores as saved, onto another layout.
  Tree target = v;
  target["wq"] = device_put(v.at("wq"), NamedSharding(kGrid, P("model", "data")));
  auto got = mgr->restore(1, {{"p", Item::tree(target)}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree r = got->at("p").as<Tree>();
  for (const auto& [name, a] : v) EXPECT_TRUE(same_bytes(r.at(name), a)) << name;
  EXPECT_EQ(r.at("wq").sharding(), NamedSharding(kGrid, P("model", "data")));
}

TEST(ShardedLayout, AsyncCopySnapshotWritesTheSameBlocks) {
  const Tree v = values();
  std::string dir = fresh_dir("layout_copy");
  auto mgr = saved(dir, fsdp(v), {.enable_async = true, .snapshot = AsyncSnapshot::kCopy});
  ASSERT_NE(mgr, nullptr);
  auto got = mgr->restore(1, {{"p", Item::tree(v)}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree r = got->at("p").as<Tree>();
  for (const auto& [name, a] : v) EXPECT_TRUE(same_bytes(r.at(name), a)) << name;
}

TEST(ShardedLayout, CorruptBlockIsAnErrorNamingTheLeaf) {
  const Tree v = values();
  std::string dir = fresh_dir("layout_corrupt");
  auto mgr = saved(dir, fsdp(v));
  ASSERT_NE(mgr, nullptr);
  const std::string file = mgr->step_dir(1) + "/p.process-0.safetensors";
  uint64_t at = 0;
  {
    auto r = SafetensorsReader::open(file);
    ASSERT_TRUE(r.ok()) << r.status();
    const TensorInfo* t = r->header().find("wo@0:4,6:8");
    ASSERT_NE(t, nullptr);
    at = r->header().data_start + t->begin + 5;
  }
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(&c, 1);
  }
  auto got = mgr->restore(1, {{"p", Item::tree(v)}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  const std::string msg(got.status().message());
  EXPECT_NE(msg.find("leaf \"wo\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("wo@0:4,6:8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  // Without checksum verification the flipped bit comes through (so the check above is what
  // caught it).
  auto unchecked = mgr->restore(1, {{"p", Item::tree(v)}}, {.verify_checksums = false});
  ASSERT_TRUE(unchecked.ok()) << unchecked.status();
  EXPECT_FALSE(same_bytes(unchecked->at("p").as<Tree>().at("wo"), v.at("wo")));
}

TEST(ShardedLayout, MissingShardFileIsAnErrorNamingIt) {
  const Tree v = values();
  std::string dir = fresh_dir("layout_missing");
  auto mgr = saved(dir, fsdp(v));
  ASSERT_NE(mgr, nullptr);
  fs::remove(mgr->step_dir(1) + "/p.process-0.safetensors");
  auto got = mgr->restore(1, {{"p", Item::tree(v)}});
  ASSERT_FALSE(got.ok());
  const std::string msg(got.status().message());
  EXPECT_NE(msg.find("p.process-0.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("leaf \""), std::string::npos) << msg;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << got.status();
  EXPECT_TRUE(mgr->metadata(1).ok());  // the metadata alone still reads
}

TEST(ShardedLayout, ShardListThatNoLongerCoversTheLeafIsAnError) {
  const Tree v = values();
  std::string dir = fresh_dir("layout_uncovered");
  auto mgr = saved(dir, fsdp(v));
  ASSERT_NE(mgr, nullptr);
  edit_wq_metadata(*mgr, [](nlohmann::json& wq) {
    wq["shards"].erase(wq["shards"].begin() + 5);  // rows 10:12 of 16
  });
  auto got = mgr->restore(1, {{"p", Item::tree(v)}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  const std::string msg(got.status().message());
  EXPECT_NE(msg.find("leaf \"wq\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("no block covers [10, 12) of dimension 0"), std::string::npos) << msg;
}

// Metadata that swaps two blocks' positions (the shard list still tiles the leaf, and each
// block's bytes still match their checksum) would load permuted rows: the blocks' names say
// where they belong, and reading checks them.
TEST(ShardedLayout, ShardListThatMovesABlockIsAnError) {
  const Tree v = values();
  std::string dir = fresh_dir("layout_swapped");
  auto mgr = saved(dir, fsdp(v));
  ASSERT_NE(mgr, nullptr);
  ASSERT_TRUE(mgr->restore(1, {{"p", Item::tree(v)}}).ok());
  edit_wq_metadata(*mgr, [](nlohmann::json& wq) {
    ASSERT_EQ(wq["shards"][0]["tensor"], "wq@0:2,0:4");
    ASSERT_EQ(wq["shards"][1]["tensor"], "wq@2:4,0:4");
    std::swap(wq["shards"][0]["index"], wq["shards"][1]["index"]);
  });
  auto got = mgr->restore(1, {{"p", Item::tree(v)}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  EXPECT_NE(got.status().message().find(
                "leaf \"wq\": shard \"wq@0:2,0:4\" is listed at [2:4, 0:4], which its name does "
                "not say (wq@2:4,0:4)"),
            std::string::npos)
      << got.status();
}

TEST(ShardedLayout, ReplicatedAndUnplacedTreesKeepTheFirstFormat) {
  // The unchanged path: nothing split, so format 1, one whole file, as checkpoints were
  // written before sharded saves; it restores under a split layout.
  const Tree v = values();
  Tree replicated = v;
  replicated["wq"] = device_put(v.at("wq"), NamedSharding(kGrid, P()));
  std::string dir = fresh_dir("layout_old");
  auto mgr = saved(dir, replicated);
  ASSERT_NE(mgr, nullptr);
  EXPECT_EQ(files_in(mgr->step_dir(1)),
            (std::set<std::string>{"_CHECKPOINT_METADATA", "_COMMITTED", "p.safetensors"}));
  auto meta = mgr->metadata(1);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->format, kFormat);
  std::ifstream in(mgr->step_dir(1) + "/_CHECKPOINT_METADATA");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("shards"), std::string::npos);
  auto got = mgr->restore(1, {{"p", Item::tree(fsdp(v))}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree r = got->at("p").as<Tree>();
  for (const auto& [name, a] : v) EXPECT_TRUE(same_bytes(r.at(name), a)) << name;
  EXPECT_EQ(r.at("wq").sharding(), NamedSharding(kFsdp, P("fsdp")));
}

}  // namespace
}  // namespace graft::checkpoint
