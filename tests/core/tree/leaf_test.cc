// tree_flatten / tree_leaves / tree_unflatten with is_leaf (core/tree/leaf.h): JAX's
// tree_flatten(model, is_leaf=lambda x: isinstance(x, Block)) gives the Blocks whole and the
// Arrays outside them, in leaf order, and tree_unflatten rebuilds the model from them.
#include "core/tree/leaf.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"

struct LeafBlock {
  graft::Array w, b;
};
GRAFT_TREE(LeafBlock, w, b);

struct LeafModel {
  std::vector<LeafBlock> layers;
  std::map<std::string, graft::Array> extra;
  std::optional<graft::Array> scale;
};
GRAFT_TREE(LeafModel, layers, extra, scale);

namespace graft {
namespace {

LeafModel make_model() {
  LeafModel m;
  m.layers = {{full({2}, 1.0), full({}, 2.0)}, {full({2}, 3.0), full({}, 4.0)}};
  m.extra["beta"] = full({}, 5.0);
  m.extra["alpha"] = full({}, 6.0);
  m.scale = full({}, 7.0);
  return m;
}

const auto kBlocks = is_leaf([](const LeafBlock&) { return true; });

TEST(TreeLeafTest, LeavesAreBlocksAndTheArraysOutsideThem) {
  std::vector<TreeLeaf> leaves = tree_leaves(make_model(), kBlocks);
  ASSERT_EQ(leaves.size(), 5u);
  EXPECT_TRUE(leaves[0].is<LeafBlock>());
  EXPECT_TRUE(leaves[1].is<LeafBlock>());
  EXPECT_EQ(leaves[1].get<LeafBlock>().w.to_vector<float>(), (std::vector<float>{3, 3}));
  // Then extra (by key: alpha, beta) and scale, as Arrays.
  EXPECT_TRUE(leaves[2].is_array());
  EXPECT_EQ(leaves[2].array().item<float>(), 6.0f);
  EXPECT_EQ(leaves[3].array().item<float>(), 5.0f);
  EXPECT_EQ(leaves[4].array().item<float>(), 7.0f);
  EXPECT_EQ(leaves[0].type_name(), "LeafBlock");
  // A predicate that never holds gives the plain leaves.
  EXPECT_EQ(tree_leaves(make_model(), is_leaf([](const LeafBlock&) { return false; })).size(), 7u);
}

TEST(TreeLeafTest, FlattenEditUnflatten) {
  auto [leaves, def] = tree_flatten(make_model(), kBlocks);
  EXPECT_EQ(def, tree_structure(make_model(), kBlocks));
  EXPECT_EQ(def.num_leaves, 5);
  for (TreeLeaf& l : leaves) {
    if (l.is<LeafBlock>()) {
      const LeafBlock& b = l.get<LeafBlock>();
      l = TreeLeaf(LeafBlock{b.w + b.b, b.b});
    } else {
      l = TreeLeaf(l.array() * 10.0);
    }
  }
  LeafModel out = tree_unflatten<LeafModel>(def, leaves);
  ASSERT_EQ(out.layers.size(), 2u);
  EXPECT_EQ(out.layers[0].w.to_vector<float>(), (std::vector<float>{3, 3}));  // 1 + 2
  EXPECT_EQ(out.layers[1].w.to_vector<float>(), (std::vector<float>{7, 7}));  // 3 + 4
  EXPECT_EQ(out.layers[1].b.item<float>(), 4.0f);
  EXPECT_EQ(out.extra.at("alpha").item<float>(), 60.0f);
  EXPECT_EQ(out.extra.at("beta").item<float>(), 50.0f);
  ASSERT_TRUE(out.scale.has_value());
  EXPECT_EQ(out.scale->item<float>(), 70.0f);
  // An empty optional and an empty vector round-trip too; a generic predicate can stop at the
  // vector of layers itself.
  LeafModel sparse;
  sparse.extra["k"] = full({}, 1.0);
  auto layers_leaf = is_leaf([](const auto& node) {
    return std::is_same_v<std::decay_t<decltype(node)>, std::vector<LeafBlock>>;
  });
  auto [l2, d2] = tree_flatten(sparse, layers_leaf);
  ASSERT_EQ(l2.size(), 2u);
  EXPECT_TRUE(l2[0].is<std::vector<LeafBlock>>());
  LeafModel back = tree_unflatten<LeafModel>(d2, l2);
  EXPECT_TRUE(back.layers.empty());
  EXPECT_FALSE(back.scale.has_value());
  EXPECT_EQ(back.extra.at("k").item<float>(), 1.0f);
}

template <typename F>
void expect_error(F f, const std::string& start) {
  try {
    f();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << e.what();
  }
}

TEST(TreeLeafTest, MisuseIsAnError) {
  auto [leaves, def] = tree_flatten(make_model(), kBlocks);
  expect_error([&] { leaves[2].get<LeafBlock>(); }, "[TreeLeaf] holds graft::Array, asked for LeafBlock");
  // Leaves swapped: an Array where the structure has a Block.
  std::vector<TreeLeaf> swapped = leaves;
  std::swap(swapped[0], swapped[2]);
  expect_error([&] { tree_unflatten<LeafModel>(def, swapped); }, "[TreeLeaf] holds graft::Array");
  leaves.pop_back();
  expect_error([&] { tree_unflatten<LeafModel>(def, leaves); },
               "[tree_unflatten] structure");
  // A structure that does not fit the type.
  TreeDef pair_def = tree_structure(std::pair<Array, Array>{});
  std::vector<TreeLeaf> two = {TreeLeaf(full({}, 1.0)), TreeLeaf(full({}, 2.0))};
  expect_error([&] { tree_unflatten<std::vector<Array>>(pair_def, two); },
               "[tree_unflatten] structure (*, *) does not fit the type std::vector");
}

}  // namespace
}  // namespace graft
