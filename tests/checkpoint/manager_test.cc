// CheckpointManager round trips and restore checks. Expectations are the saved bytes
// themselves (pattern_array), compared with memcmp, and casts are checked against astype.
#include "checkpoint/manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/ops.h"
#include "tests/checkpoint/test_util.h"
#include "transforms/jit.h"

struct CkLayer {
  graft::Array wq, wk;
  std::optional<graft::Array> bias;
};
GRAFT_TREE(CkLayer, wq, wk, bias);

struct CkModel {
  graft::Array embed;
  std::vector<CkLayer> layers;
  std::map<std::string, graft::Array> extra;
  std::tuple<graft::Array, std::array<graft::Array, 2>> misc;
};
GRAFT_TREE(CkModel, embed, layers, extra, misc);

namespace graft::checkpoint {
namespace {

using testing::fresh_dir;
using testing::pattern_array;
using testing::same_bytes;

// One leaf of every dtype, at several ranks (scalar, empty, 1-3 dims).
CkModel make_model(uint64_t seed) {
  CkModel m;
  m.embed = pattern_array(DType::kF32, {5, 3}, seed);
  m.layers.push_back({pattern_array(DType::kBF16, {4, 2}, seed + 1),
                      pattern_array(DType::kF16, {2, 4}, seed + 2),
                      pattern_array(DType::kF64, {3}, seed + 3)});
  m.layers.push_back({pattern_array(DType::kI32, {2, 2, 2}, seed + 4),
                      pattern_array(DType::kI64, {}, seed + 5), std::nullopt});
  m.extra["mask"] = pattern_array(DType::kBool, {7}, seed + 6);
  m.extra["bytes"] = pattern_array(DType::kU8, {0, 3}, seed + 7);
  m.extra["key"] = pattern_array(DType::kU32, {2}, seed + 8);
  m.misc = {pattern_array(DType::kF32, {1}, seed + 9),
            {pattern_array(DType::kF32, {2}, seed + 10), pattern_array(DType::kI32, {1}, seed)}};
  return m;
}

void expect_same_tree(const CkModel& a, const CkModel& b) {
  auto la = tree_leaves(a), lb = tree_leaves(b);
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_TRUE(same_bytes(la[i], lb[i])) << "leaf " << i;
}

std::unique_ptr<CheckpointManager> open_or_die(const std::string& dir,
                                               CheckpointManagerOptions o = {}) {
  auto m = CheckpointManager::open(dir, std::move(o));
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

class RoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(RoundTrip, EveryDTypeAndNesting) {
  std::string dir = fresh_dir("roundtrip");
  CheckpointManagerOptions o;
  o.enable_async = GetParam();
  auto mgr = open_or_die(dir, o);
  CkModel model = make_model(1);
  nlohmann::json loader = {{"offset", 12345}, {"epoch", 2}, {"files", {"a.bin", "b.bin"}}};
  ASSERT_TRUE(mgr->save(10,
                        {{"params", Item::tree(model)},
                         {"rng", Item::tree(pattern_array(DType::kU32, {2}, 99))},
                         {"loader", Item::json(loader)}},
                        {.metrics = {{"loss", 1.5}}, .user_metadata = {{"run", "t"}}})
                  .ok());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  EXPECT_EQ(mgr->latest_step(), 10);

  // A fresh manager (as after a restart) sees the step and restores it.
  mgr.reset();
  auto again = open_or_die(dir, o);
  ASSERT_EQ(again->all_steps(), std::vector<int64_t>{10});
  auto got = again->restore(10, {{"params", Item::tree(make_model(2))},
                                 {"rng", Item::tree(Array())},
                                 {"loader", Item::json(nullptr)}});
  ASSERT_TRUE(got.ok()) << got.status();
  expect_same_tree(got->at("params").as<CkModel>(), model);
  EXPECT_TRUE(same_bytes(got->at("rng").as<Array>(), pattern_array(DType::kU32, {2}, 99)));
  EXPECT_EQ(got->at("loader").json_value(), loader);

  // Without targets: every item with the saved structure.
  auto all = again->restore(10);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 3u);
  expect_same_tree(all->at("params").as<CkModel>(), model);

  // metadata() without tensors.
  auto meta = again->metadata(10);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->metrics["loss"], 1.5);
  EXPECT_EQ(meta->user_metadata["run"], "t");
  const ItemMeta* p = meta->find("params");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->treedef, tree_structure(model));
  EXPECT_EQ(p->leaves[0].path, "embed");
  EXPECT_EQ(p->leaves[1].path, "layers.0.wq");
  EXPECT_EQ(p->leaves[1].dtype, DType::kBF16);
  EXPECT_EQ(p->leaves[1].shape, (Shape{4, 2}));
  EXPECT_EQ(p->leaves[1].sharding, "replicated");
}

INSTANTIATE_TEST_SUITE_P(SyncAsync, RoundTrip, ::testing::Values(false, true));

// fp8 leaves (s5-fp8): every byte pattern (NaNs included) restores bit for bit, with the
// dtype in the metadata; the safetensors header names them F8_E4M3 / F8_E5M2.
TEST(Manager, Float8LeavesRoundTrip) {
  std::string dir = fresh_dir("float8");
  auto mgr = open_or_die(dir, {.enable_async = false});
  std::vector<uint8_t> bits(256);
  for (int i = 0; i < 256; ++i) bits[i] = static_cast<uint8_t>(i);
  std::map<std::string, Array> tree{
      {"e4", bitcast_convert_type(array(bits, Shape{16, 16}), DType::kF8E4M3FN)},
      {"e5", bitcast_convert_type(array(bits), DType::kF8E5M2)}};
  ASSERT_TRUE(mgr->save(3, {{"p", Item::tree(tree)}}).ok());
  auto got = mgr->restore(3);
  ASSERT_TRUE(got.ok()) << got.status();
  auto back = got->at("p").as<std::map<std::string, Array>>();
  for (const auto& [k, v] : tree) EXPECT_TRUE(same_bytes(back.at(k), v)) << k;
  auto meta = mgr->metadata(3);
  ASSERT_TRUE(meta.ok()) << meta.status();
  const ItemMeta* p = meta->find("p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->leaves[0].dtype, DType::kF8E4M3FN);
  EXPECT_EQ(p->leaves[1].dtype, DType::kF8E5M2);
  bool header_names = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".safetensors") continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    header_names = header_names || (bytes.find("\"F8_E4M3\"") != std::string::npos &&
                                    bytes.find("\"F8_E5M2\"") != std::string::npos);
  }
  EXPECT_TRUE(header_names) << "no safetensors file names F8_E4M3 and F8_E5M2";
}

TEST(Manager, AsyncAndSyncWriteIdenticalFiles) {
  CkModel model = make_model(3);
  std::string files[2];
  for (int async = 0; async < 2; ++async) {
    std::string dir = fresh_dir("eq");
    CheckpointManagerOptions o;
    o.enable_async = async;
    auto mgr = open_or_die(dir, o);
    ASSERT_TRUE(mgr->save(1, {{"params", Item::tree(model)}}).ok());
    ASSERT_TRUE(mgr->wait_until_finished().ok());
    std::ifstream f(dir + "/1/params.safetensors", std::ios::binary);
    files[async].assign(std::istreambuf_iterator<char>(f), {});
  }
  EXPECT_GT(files[0].size(), 100u);
  EXPECT_EQ(files[0], files[1]);
}

TEST(Manager, AsyncSnapshotSurvivesDonation) {
  // kReference holds the buffers: a jitted step that donates the saved array while the save
  // is in flight must compute elsewhere, and the checkpoint holds the values before the step.
  // A 32 MiB second item keeps the save in flight long enough, and is_saving_in_progress()
  // says whether it was (a fast disk may finish first: then writing in place is allowed).
  std::string dir = fresh_dir("donate");
  auto mgr = open_or_die(dir);
  Array p = pattern_array(DType::kF32, {1 << 16}, 6);
  Array expect = pattern_array(DType::kF32, {1 << 16}, 6);
  Array big = zeros({8 << 20});
  const void* p_data = p.buffer()->data();
  auto step = jit([](const Array& x) { return x * 2.0f; }, {.donate_argnums = {0}});
  (void)step(pattern_array(DType::kF32, {1 << 16}, 7));  // compiled before the save
  ASSERT_TRUE(mgr->save(1, {{"p", Item::tree(p)}, {"big", Item::tree(big)}}).ok());
  const bool in_flight = mgr->is_saving_in_progress();
  Array q = step(p);
  eval(q);
  if (in_flight && mgr->is_saving_in_progress()) {
    EXPECT_NE(q.buffer()->data(), p_data);
  }
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  EXPECT_FALSE(mgr->is_saving_in_progress());
  auto got = mgr->restore(1, {{"p", Item::tree(expect)}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(same_bytes(got->at("p").as<Array>(), expect));
}

TEST(Manager, AsyncCopySnapshotIsTakenBeforeReturning) {
  // kCopy takes the staging copy inside save(): overwriting the source buffer right after
  // the call must not change what lands on disk.
  std::string dir = fresh_dir("copy");
  auto mgr = open_or_die(dir, {.snapshot = AsyncSnapshot::kCopy});
  Array a = pattern_array(DType::kF32, {1 << 16}, 5);
  Array expect = pattern_array(DType::kF32, {1 << 16}, 5);
  ASSERT_TRUE(mgr->save(1, {{"x", Item::tree(a)}}).ok());
  std::memset(a.buffer()->data(), 0, a.nbytes());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  auto got = mgr->restore(1, {{"x", Item::tree(expect)}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(same_bytes(got->at("x").as<Array>(), expect));
}

TEST(Manager, RestoreChecksStructureShapeAndDType) {
  std::string dir = fresh_dir("mismatch");
  auto mgr = open_or_die(dir, {.enable_async = false});
  std::map<std::string, Array> tree{{"w", pattern_array(DType::kF32, {2, 3}, 1)},
                                    {"n", pattern_array(DType::kI32, {4}, 2)}};
  ASSERT_TRUE(mgr->save(5, {{"p", Item::tree(tree)}}).ok());

  auto other_keys = tree;
  other_keys.erase("n");
  other_keys["m"] = zeros({4}, DType::kI32);
  auto r = mgr->restore(5, {{"p", Item::tree(other_keys)}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("structure differs"), std::string::npos) << r.status();

  auto bad_shape = tree;
  bad_shape["w"] = zeros({3, 2});
  r = mgr->restore(5, {{"p", Item::tree(bad_shape)}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("shape"), std::string::npos) << r.status();

  auto bad_dtype = tree;
  bad_dtype["w"] = zeros({2, 3}, DType::kBF16);
  r = mgr->restore(5, {{"p", Item::tree(bad_dtype)}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("dtype"), std::string::npos) << r.status();

  // With cast: the values are astype of the saved ones.
  r = mgr->restore(5, {{"p", Item::tree(bad_dtype)}}, {.cast = true});
  ASSERT_TRUE(r.ok()) << r.status();
  auto got = r->at("p").as<std::map<std::string, Array>>();
  EXPECT_EQ(got["w"].dtype(), DType::kBF16);
  Array ref = astype(tree["w"], DType::kBF16);
  EXPECT_TRUE(same_bytes(got["w"], ref));

  EXPECT_EQ(mgr->restore(5, {{"q", Item::tree(tree)}}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(mgr->restore(6, {{"p", Item::tree(tree)}}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(mgr->restore(5, {{"p", Item::json(nullptr)}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Manager, SaveRejectsBadInput) {
  std::string dir = fresh_dir("badsave");
  auto mgr = open_or_die(dir, {.enable_async = false});
  std::map<std::string, Array> slash{{"a/b", zeros({1})}};
  EXPECT_EQ(mgr->save(1, {{"p", Item::tree(slash)}}).code(), absl::StatusCode::kInvalidArgument);
  std::map<std::string, Array> dots{{"..", zeros({1})}};
  EXPECT_EQ(mgr->save(1, {{"p", Item::tree(dots)}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mgr->save(1, {{"../x", Item::tree(zeros({1}))}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mgr->save(1, {{"_x", Item::tree(zeros({1}))}}).code(),
            absl::StatusCode::kInvalidArgument);
  Array tracer = Array::placeholder({{2}, DType::kF32});
  EXPECT_EQ(mgr->save(1, {{"p", Item::tree(tracer)}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(mgr->all_steps().empty());
  ASSERT_TRUE(mgr->save(1, {{"p", Item::tree(zeros({1}))}}).ok());
  EXPECT_EQ(mgr->save(1, {{"p", Item::tree(zeros({1}))}}, {.force = true}).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(Manager, OpenWithoutCreate) {
  std::string dir = fresh_dir("nocreate") + "/missing";
  EXPECT_EQ(CheckpointManager::open(dir, {.create = false}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(CheckpointManager::open(dir, {.create = true}).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

}  // namespace
}  // namespace graft::checkpoint
