// Checkpoints of sharded arrays (GRAFT_CPU_DEVICES=8, BUILD.bazel): the metadata records each
// leaf's real sharding, and a restore places every leaf as its target is placed, so a tree
// saved under an 8-device mesh restores under a 2-device mesh, on one device, and back.
#include <map>
#include <string>

#include "checkpoint/manager.h"
#include "core/ops.h"
#include "core/sharding.h"
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

}  // namespace
}  // namespace graft::checkpoint
