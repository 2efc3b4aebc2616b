// Pytrees: flatten / unflatten round trips over every node kind, structure checks, tree_map.
#include "core/tree/tree.h"

#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"

struct Layer {
  graft::Array w, b;
};
GRAFT_TREE(Layer, w, b);

struct Net {
  std::vector<Layer> layers;
  std::map<std::string, graft::Array> extra;
  std::optional<graft::Array> scale;
};
GRAFT_TREE(Net, layers, extra, scale);

namespace graft {
namespace {

Net make_net() {
  Net n;
  n.layers = {{ones({2, 2}), zeros({2})}, {ones({2, 1}), zeros({1})}};
  n.extra["beta"] = full({}, 3.0);
  n.extra["alpha"] = full({}, 2.0);
  n.scale = full({}, 0.5);
  return n;
}

TEST(TreeTest, FlattensDepthFirstWithMapsByKey) {
  Net n = make_net();
  auto [leaves, def] = tree_flatten(n);
  ASSERT_EQ(leaves.size(), 7u);
  EXPECT_TRUE(leaves[0].same(n.layers[0].w));
  EXPECT_TRUE(leaves[3].same(n.layers[1].b));
  EXPECT_TRUE(leaves[4].same(n.extra["alpha"])) << "map leaves come in key order";
  EXPECT_TRUE(leaves[6].same(*n.scale));
  EXPECT_EQ(def.num_leaves, 7);
  EXPECT_EQ(def.str(),
            "Net(layers=[Layer(w=*, b=*), Layer(w=*, b=*)], extra={alpha=*, beta=*}, "
            "scale=Some(*))");
}

TEST(TreeTest, LeafPathsNameFieldsKeysAndIndices) {
  std::vector<std::string> paths = tree_leaf_paths(tree_structure(make_net()));
  EXPECT_EQ(paths, (std::vector<std::string>{"layers.0.w", "layers.0.b", "layers.1.w",
                                             "layers.1.b", "extra.alpha", "extra.beta",
                                             "scale"}));
  EXPECT_EQ(tree_leaf_paths(tree_structure(ones({2}))), std::vector<std::string>{""});
}

TEST(TreeTest, UnflattenRebuildsTheSameStructure) {
  Net n = make_net();
  auto [leaves, def] = tree_flatten(n);
  Net m = tree_unflatten<Net>(def, leaves);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_TRUE(m.layers[1].w.same(n.layers[1].w));
  EXPECT_TRUE(m.extra.at("beta").same(n.extra.at("beta")));
  ASSERT_TRUE(m.scale.has_value());
  EXPECT_EQ(tree_structure(m), def);
}

TEST(TreeTest, TuplesPairsArraysAndOptionals) {
  auto t =
      std::make_tuple(ones({1}), std::pair{zeros({2}), std::array<Array, 2>{ones({3}), ones({4})}},
                      std::optional<Array>{});
  auto [leaves, def] = tree_flatten(t);
  EXPECT_EQ(leaves.size(), 4u);
  EXPECT_EQ(def.str(), "(*, (*, [*, *]), None)");
  auto back = tree_unflatten<decltype(t)>(def, leaves);
  EXPECT_TRUE(std::get<1>(back).second[1].same(leaves[3]));
  EXPECT_FALSE(std::get<2>(back).has_value());
}

TEST(TreeTest, TreeMapOverSeveralTrees) {
  Net a = make_net(), b = make_net();
  Net c = tree_map([](const Array& x, const Array& y) { return x + y * 2.0; }, a, b);
  EXPECT_FLOAT_EQ(c.layers[0].w.to_vector<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(c.extra.at("beta").item<float>(), 9.0f);
}

TEST(TreeTest, MismatchedStructuresAreClearErrors) {
  Net a = make_net(), b = make_net();
  b.layers.pop_back();
  try {
    tree_map([](const Array& x, const Array& y) { return x + y; }, a, b);
    FAIL() << "expected graft::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[tree_map] pytree structures differ: Net(layers=[", 0),
              0u)
        << e.what();
  }
  auto [leaves, def] = tree_flatten(a);
  leaves.pop_back();
  EXPECT_THROW(tree_unflatten<Net>(def, leaves), Error);
}

}  // namespace
}  // namespace graft
