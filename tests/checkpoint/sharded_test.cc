// Checkpoints of sharded arrays (GRAFT_CPU_DEVICES=8, BUILD.bazel): the metadata records each
// leaf's real sharding and split leaves are saved as their blocks (sharded_layout_test looks
// at the files); a restore places every leaf as its target is placed, so a tree saved under
// an 8-device mesh restores under a 2-device mesh, on one device, and back.
#include <map>
#include <string>

#include "checkpoint/manager.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

using namespace testing;  // NOLINT: fresh_dir, pattern_array, same_bytes
using Tree = std::map<std::string, Array>;

Tree placed(const Tree& t, const Mesh& mesh, const PartitionSpec& w, const PartitionSpec& b) {
  return {{"b", device_put(t.at("b"), NamedSharding(mesh, b))},
          {"w", device_put(t.at("w"), NamedSharding(mesh, w))}};
}

TEST(ShardedCheckpoint, SavedUnderOneMeshRestoresUnderAnother) {
  const Tree values = {{"b", pattern_array(DType::kF32, {8}, 1)},
                       {"w", pattern_array(DType::kBF16, {8, 16}, 2)}};
  const Mesh eight({4, 2}, {"data", "model"}), two({2}, {"data"});
  std::string dir = fresh_dir("sharded");
  auto mgr = CheckpointManager::open(dir, {});
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  ASSERT_TRUE((*mgr)->save(1, {{"p", Item::tree(placed(values, eight, P("data", "model"), P()))}})
                  .ok());
  ASSERT_TRUE((*mgr)->wait_until_finished().ok());
  auto meta = (*mgr)->metadata(1);
  ASSERT_TRUE(meta.ok()) << meta.status();
  const ItemMeta* p = meta->find("p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->leaves[0].sharding, "NamedSharding(Mesh(data=4, model=2), P())");
  EXPECT_EQ(p->leaves[1].sharding, "NamedSharding(Mesh(data=4, model=2), P('data', 'model'))");

  // Under 2 devices, split the other way.
  Tree target = placed(values, two, P(none, "data"), P("data"));
  auto got = (*mgr)->restore(1, {{"p", Item::tree(target)}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree r = got->at("p").as<Tree>();
  EXPECT_EQ(r.at("w").sharding(), NamedSharding(two, P(none, "data")));
  EXPECT_EQ(r.at("b").sharding(), NamedSharding(two, P("data")));
  EXPECT_TRUE(same_bytes(r.at("w"), values.at("w")));
  EXPECT_TRUE(same_bytes(r.at("b"), values.at("b")));
  ASSERT_EQ(r.at("w").addressable_shards().size(), 2u);
  EXPECT_TRUE(same_bytes(r.at("w").addressable_shards()[1].data,
                         slice(values.at("w"), {0, 8}, {8, 16})));

  // On one device (an unplaced target), saved again from there and back to eight.
  got = (*mgr)->restore(1, {{"p", Item::tree(values)}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree one = got->at("p").as<Tree>();
  EXPECT_EQ(one.at("w").sharding().str(), "SingleDevice(cpu:0)");
  ASSERT_TRUE((*mgr)->save(2, {{"p", Item::tree(one)}}).ok());
  ASSERT_TRUE((*mgr)->wait_until_finished().ok());
  got = (*mgr)->restore(2, {{"p", Item::tree(placed(values, eight, P("data"), P("model")))}});
  ASSERT_TRUE(got.ok()) << got.status();
  Tree back = got->at("p").as<Tree>();
  EXPECT_EQ(back.at("w").sharding(), NamedSharding(eight, P("data")));
  EXPECT_TRUE(same_bytes(back.at("w"), values.at("w")));
}

// Each hop saves from the layout the previous restore gave, so the blocks on disk change too:
// 8 FSDP blocks -> restored on 2 devices, saved as 2 blocks -> restored on one device, saved
// whole -> restored on 8 devices of a 4 x 2 mesh, saved as those blocks -> back to FSDP.
TEST(ShardedCheckpoint, BlocksReshardEightTwoOneEight) {
  using Layout = std::map<std::string, NamedSharding>;
  const Tree values = {{"norm", pattern_array(DType::kF32, {8}, 3)},
                       {"wo", pattern_array(DType::kBF16, {8, 16}, 4)},
                       {"wq", pattern_array(DType::kF32, {16, 8}, 5)}};
  const Mesh fsdp({8}, {"fsdp"}), two({2}, {"fsdp"}), grid({4, 2}, {"data", "model"});
  const Layout l8 = {{"norm", NamedSharding(fsdp, P())},
                     {"wo", NamedSharding(fsdp, P(none, "fsdp"))},
                     {"wq", NamedSharding(fsdp, P("fsdp"))}};
  const Layout l2 = {{"norm", NamedSharding(two, P("fsdp"))},
                     {"wo", NamedSharding(two, P("fsdp"))},
                     {"wq", NamedSharding(two, P(none, "fsdp"))}};
  const Layout lgrid = {{"norm", NamedSharding(grid, P("model"))},
                        {"wo", NamedSharding(grid, P("model", "data"))},
                        {"wq", NamedSharding(grid, P("data", "model"))}};
  auto place = [&](const Layout& l) {
    Tree t;
    for (const auto& [k, a] : values) t[k] = device_put(a, l.at(k));
    return t;
  };
  std::string dir = fresh_dir("reshard");
  auto mgr = CheckpointManager::open(dir, {});
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  // Saves `t` as `step`, checks how many blocks wq was written as, restores into `target`.
  auto hop = [&](int64_t step, const Tree& t, size_t wq_blocks, const Tree& target) -> Tree {
    EXPECT_TRUE((*mgr)->save(step, {{"p", Item::tree(t)}}).ok());
    EXPECT_TRUE((*mgr)->wait_until_finished().ok());
    auto meta = (*mgr)->metadata(step);
    EXPECT_TRUE(meta.ok()) << meta.status();
    if (meta.ok()) {
      EXPECT_EQ(meta->find("p")->leaves[2].shards.size(), wq_blocks) << step;
    }
    auto got = (*mgr)->restore(step, {{"p", Item::tree(target)}});
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return {};
    Tree r = got->at("p").as<Tree>();
    for (const auto& [k, a] : values) EXPECT_TRUE(same_bytes(r.at(k), a)) << step << " " << k;
    return r;
  };
  Tree on2 = hop(1, place(l8), 8, place(l2));
  ASSERT_EQ(on2.size(), 3u);
  EXPECT_EQ(on2.at("wq").sharding(), l2.at("wq"));
  Tree on1 = hop(2, on2, 2, values);
  ASSERT_EQ(on1.size(), 3u);
  EXPECT_EQ(on1.at("wq").sharding().str(), "SingleDevice(cpu:0)");
  Tree on8 = hop(3, on1, 0, place(lgrid));
  ASSERT_EQ(on8.size(), 3u);
  EXPECT_EQ(on8.at("wo").sharding(), lgrid.at("wo"));
  Tree back = hop(4, on8, 8, place(l8));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.at("wq").sharding(), l8.at("wq"));
}

}  // namespace
}  // namespace graft::checkpoint
