// jax.tree_util's key paths, tree_reduce, tree_all and tree_transpose over graft's pytrees.
// The expected key strings are what jax.tree_util.keystr prints for the same nesting of
// lists/tuples (SequenceKey "[i]"), dicts (DictKey "['k']") and dataclass fields (GetAttrKey
// ".f"), written down by hand from JAX's documented format.
#include "core/tree/util.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"

struct Block {
  graft::Array w, b;
};
GRAFT_TREE(Block, w, b);

struct Model {
  std::vector<Block> layers;
  std::map<std::string, graft::Array> extra;
  std::optional<graft::Array> scale;
};
GRAFT_TREE(Model, layers, extra, scale);

namespace graft {
namespace {

Model make_model() {
  Model m;
  m.layers = {{full({2}, 1.0), full({}, 2.0)}, {full({2}, 3.0), full({}, 4.0)}};
  m.extra["beta"] = full({}, 5.0);
  m.extra["alpha"] = full({}, 6.0);
  m.scale = full({}, 7.0);
  return m;
}

std::vector<std::string> keystrs(const std::vector<std::pair<KeyPath, Array>>& leaves) {
  std::vector<std::string> out;
  for (const auto& [path, leaf] : leaves) out.push_back(keystr(path));
  return out;
}

TEST(TreeUtil, KeyPathsPrintAsJax) {
  EXPECT_EQ(keystrs(tree_leaves_with_path(make_model())),
            (std::vector<std::string>{".layers[0].w", ".layers[0].b", ".layers[1].w",
                                      ".layers[1].b", ".extra['alpha']", ".extra['beta']",
                                      ".scale"}));
  std::vector<std::map<std::string, Array>> list{{{"w", zeros({})}, {"b", zeros({})}}};
  EXPECT_EQ(keystrs(tree_leaves_with_path(list)),
            (std::vector<std::string>{"[0]['b']", "[0]['w']"}));
  std::tuple<Array, std::pair<Array, Array>> tup{zeros({}), {zeros({}), zeros({})}};
  auto [flat, def] = tree_flatten_with_path(tup);
  EXPECT_EQ(keystrs(flat), (std::vector<std::string>{"[0]", "[1][0]", "[1][1]"}));
  EXPECT_EQ(def, tree_structure(tup));
  EXPECT_EQ(keystr(tree_leaves_with_path(zeros({3}))[0].first), "");
  KeyPath p = tree_leaves_with_path(list)[1].first;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].kind, KeyEntry::Kind::kSequence);
  EXPECT_EQ(p[0].index, 0);
  EXPECT_EQ(p[1].kind, KeyEntry::Kind::kDict);
  EXPECT_EQ(p[1].name, "w");
}

TEST(TreeUtil, MapWithPathSeesPathsAndOtherTrees) {
  Model m = make_model();
  Model doubled = tree_map([](const Array& x) { return x * 2.0; }, m);
  // Zero the biases by path; add the second tree elsewhere.
  Model out = tree_map_with_path(
      [](const KeyPath& path, const Array& x, const Array& y) {
        return path.back().name == "b" ? zeros_like(x) : x + y;
      },
      m, doubled);
  EXPECT_EQ(out.layers[1].b.item<float>(), 0.0f);
  EXPECT_EQ(out.layers[1].w.to_vector<float>(), (std::vector<float>{9.0f, 9.0f}));
  EXPECT_EQ(out.extra.at("alpha").item<float>(), 18.0f);
  EXPECT_EQ(out.scale->item<float>(), 21.0f);
  Model other = m;
  other.layers.pop_back();
  EXPECT_THROW(tree_map_with_path([](const KeyPath&, const Array& x, const Array&) { return x; },
                                  m, other),
               Error);
}

TEST(TreeUtil, ReduceAndAll) {
  Model m = make_model();
  // 1+1 + 2 + 3+3 + 4 + 6 + 5 + 7, in leaf order.
  Array total = tree_reduce([](const Array& acc, const Array& x) { return acc + sum(x); }, m,
                            full({}, 0.0));
  EXPECT_EQ(total.item<float>(), 32.0f);
  EXPECT_EQ(tree_reduce([](double acc, const Array& x) { return acc + x.size(); }, m, 0.0), 9.0);
  Array biggest = tree_reduce(
      [](const Array& a, const Array& x) { return maximum(max(a), max(x)); }, m);
  EXPECT_EQ(biggest.item<float>(), 7.0f);
  EXPECT_THROW(tree_reduce([](const Array& a, const Array&) { return a; },
                           std::vector<Array>{}),
               Error);
  EXPECT_TRUE(tree_all(std::vector<Array>{full({}, 1, DType::kBool), full({}, 2.0)}));
  EXPECT_FALSE(tree_all(std::map<std::string, Array>{{"a", full({}, 1.0)},
                                                      {"b", full({}, 0.0)}}));
  EXPECT_TRUE(tree_all(std::vector<Array>{}));
  EXPECT_THROW(tree_all(std::vector<Array>{ones({2})}), Error);
}

// A leaf's truth as jax.tree_util.tree_all reads it (bool() of the leaf): NaN is true, and a
// complex leaf is true when either part is nonzero. JAX 0.10.2 gives tree_all([1j]) True,
// tree_all([0j]) False, tree_all([nan]) True.
TEST(TreeUtil, AllReadsTruthAsBool) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(tree_all(std::vector<Array>{full({}, nan)}));
  EXPECT_TRUE(tree_all(std::vector<Array>{complex(full({}, 0.0), full({}, 1.0))}));
  EXPECT_FALSE(tree_all(std::vector<Array>{complex(full({}, 0.0), full({}, 0.0))}));
  EXPECT_FALSE(tree_all(std::vector<Array>{full({}, 0, DType::kI32)}));
  EXPECT_TRUE(tree_all(std::vector<Array>{full({}, -3, DType::kI32)}));
}

TEST(TreeUtil, TransposeListOfPairs) {
  using Pair = std::pair<Array, Array>;
  std::vector<Pair> rows{{full({}, 1.0), full({}, 2.0)},
                         {full({}, 3.0), full({}, 4.0)},
                         {full({}, 5.0), full({}, 6.0)}};
  TreeDef outer = tree_structure(std::vector<Array>(3, Array()));
  TreeDef inner = tree_structure(Pair{});
  auto cols = tree_transpose<std::pair<std::vector<Array>, std::vector<Array>>>(outer, inner, rows);
  std::vector<float> a, b;
  for (const Array& x : cols.first) a.push_back(x.item<float>());
  for (const Array& x : cols.second) b.push_back(x.item<float>());
  EXPECT_EQ(a, (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(b, (std::vector<float>{2, 4, 6}));
  // And back.
  auto again = tree_transpose<std::vector<Pair>>(inner, outer, cols);
  EXPECT_EQ(again[2].second.item<float>(), 6.0f);
  // A structure that is not outer-of-inner.
  TreeDef wrong = tree_structure(std::vector<Array>(2, Array()));
  try {
    tree_transpose<std::pair<std::vector<Array>, std::vector<Array>>>(wrong, inner, rows);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tree_transpose"), std::string::npos) << e.what();
  }
}

// is_leaf stops the descent: JAX's tree_map(f, model, is_leaf=lambda x: isinstance(x, Block))
// hands f each Block whole (and the Arrays outside Blocks one by one).
TEST(TreeUtilIsLeaf, MapStopsAtBlocks) {
  Model m = make_model();
  int blocks = 0, arrays = 0;
  Model out = tree_map(
      [&](const auto& node) {
        using N = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<N, Block>) {
          ++blocks;
          return Block{node.w + node.b, node.b};  // mixes the Block's two leaves
        } else {
          ++arrays;
          return node * 10.0;
        }
      },
      m, is_leaf([](const Block&) { return true; }));
  EXPECT_EQ(blocks, 2);
  EXPECT_EQ(arrays, 3);  // extra['alpha'], extra['beta'], scale
  EXPECT_EQ(out.layers[1].w.to_vector<float>(), (std::vector<float>{7, 7}));  // 3 + 4
  EXPECT_EQ(out.layers[1].b.item<float>(), 4.0f);  // untouched
  EXPECT_EQ(out.extra.at("alpha").item<float>(), 60.0f);
  EXPECT_EQ(out.scale->item<float>(), 70.0f);
  // A predicate that never holds is plain tree_map.
  Model same = tree_map([](const auto& x) { return x; }, m, is_leaf([](const Block&) { return false; }));
  EXPECT_EQ(tree_leaves(same).size(), tree_leaves(m).size());
}

TEST(TreeUtilIsLeaf, StructureReduceAndPaths) {
  Model m = make_model();
  auto blocks_are_leaves = is_leaf([](const Block&) { return true; });
  TreeDef def = tree_structure(m, blocks_are_leaves);
  EXPECT_EQ(def.num_leaves, 5);
  EXPECT_EQ(tree_structure(m).num_leaves, 7);
  EXPECT_EQ(def.children[0].children.size(), 2u);
  EXPECT_EQ(def.children[0].children[0].kind, "*");
  // A generic predicate sees every node: stop at the vector of layers.
  auto layers_leaf = is_leaf([](const auto& node) {
    return std::is_same_v<std::decay_t<decltype(node)>, std::vector<Block>>;
  });
  int count = tree_reduce([](int acc, const auto&) { return acc + 1; }, m, 0, layers_leaf);
  EXPECT_EQ(count, 4);  // layers, extra['alpha'], extra['beta'], scale
  std::vector<std::string> paths;
  tree_map_with_path(
      [&](const KeyPath& path, const auto& node) {
        paths.push_back(keystr(path));
        return node;
      },
      m, blocks_are_leaves);
  EXPECT_EQ(paths, (std::vector<std::string>{".layers[0]", ".layers[1]", ".extra['alpha']",
                                             ".extra['beta']", ".scale"}));
}

}  // namespace
}  // namespace graft
