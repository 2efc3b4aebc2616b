// Hugging Face import/export on a small Llama-shaped struct. The HF file is written here in
// HF's layout ([out, in] weights, HF names); expectations index the HF data directly
// (graft w[i][j] == hf[j][i]), independent of the transpose op the importer uses.
#include "checkpoint/hf.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "nlohmann/json.hpp"
#include "core/ops.h"
#include "tests/checkpoint/test_util.h"

struct HfAttn {
  graft::Array wq, wk, wv, wo;  // [in, out]
};
GRAFT_TREE(HfAttn, wq, wk, wv, wo);
struct HfMlp {
  graft::Array gate, up, down;  // [in, out]
};
GRAFT_TREE(HfMlp, gate, up, down);
struct HfLayer {
  graft::Array attn_norm;
  HfAttn attn;
  graft::Array mlp_norm;
  HfMlp mlp;
};
GRAFT_TREE(HfLayer, attn_norm, attn, mlp_norm, mlp);
struct HfLlama {
  graft::Array embed;  // [vocab, dim]
  std::vector<HfLayer> layers;
  graft::Array norm;
  graft::Array lm_head;  // [dim, vocab]
};
GRAFT_TREE(HfLlama, embed, layers, norm, lm_head);
// The scan-over-layers layout: every layer leaf has a leading [n_layers] axis.
struct HfLlamaStacked {
  graft::Array embed;
  HfLayer layers;
  graft::Array norm;
  graft::Array lm_head;
};
GRAFT_TREE(HfLlamaStacked, embed, layers, norm, lm_head);

namespace graft::checkpoint {
namespace {

constexpr int64_t V = 11, D = 8, KV = 4, F = 12, L = 2;

// HF name -> shape in HF's layout.
std::vector<std::pair<std::string, Shape>> hf_layout() {
  std::vector<std::pair<std::string, Shape>> t = {{"model.embed_tokens.weight", {V, D}},
                                                  {"model.norm.weight", {D}},
                                                  {"lm_head.weight", {V, D}}};
  for (int i = 0; i < L; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", {D}});
    t.push_back({p + "self_attn.q_proj.weight", {D, D}});
    t.push_back({p + "self_attn.k_proj.weight", {KV, D}});
    t.push_back({p + "self_attn.v_proj.weight", {KV, D}});
    t.push_back({p + "self_attn.o_proj.weight", {D, D}});
    t.push_back({p + "post_attention_layernorm.weight", {D}});
    t.push_back({p + "mlp.gate_proj.weight", {F, D}});
    t.push_back({p + "mlp.up_proj.weight", {F, D}});
    t.push_back({p + "mlp.down_proj.weight", {D, F}});
  }
  return t;
}

// HF values: element k of tensor number t is ((7t + k) mod 128 - 64) / 4 (exact in bf16).
std::map<std::string, std::vector<float>> write_hf(const std::string& path, DType dtype) {
  std::map<std::string, std::vector<float>> values;
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<TensorView> views;
  int t = 0;
  for (const auto& [name, shape] : hf_layout()) {
    std::vector<float> v(numel(shape));
    for (size_t k = 0; k < v.size(); ++k) v[k] = float(int64_t((t * 7 + k) % 128) - 64) / 4;
    Array a = astype(array(v, shape), dtype);
    keep.push_back(a.buffer());
    views.push_back({name, dtype, shape, keep.back()->data()});
    values[name] = v;
    ++t;
  }
  EXPECT_TRUE(write_safetensors(path, views, {{"format", "pt"}}).ok());
  return values;
}

HfNameFn llama_names(bool stacked) {
  std::string l = stacked ? R"(layers\.)" : R"(layers\.(\d+)\.)";
  std::string h = stacked ? "model.layers.{i}." : "model.layers.$1.";
  return hf_rules({
      {R"(embed)", {"model.embed_tokens.weight"}},
      {R"(norm)", {"model.norm.weight"}},
      {R"(lm_head)", {"lm_head.weight", true}},
      {l + "attn_norm", {h + "input_layernorm.weight", false, stacked}},
      {l + "mlp_norm", {h + "post_attention_layernorm.weight", false, stacked}},
      {l + R"(attn\.wq)", {h + "self_attn.q_proj.weight", true, stacked}},
      {l + R"(attn\.wk)", {h + "self_attn.k_proj.weight", true, stacked}},
      {l + R"(attn\.wv)", {h + "self_attn.v_proj.weight", true, stacked}},
      {l + R"(attn\.wo)", {h + "self_attn.o_proj.weight", true, stacked}},
      {l + R"(mlp\.gate)", {h + "mlp.gate_proj.weight", true, stacked}},
      {l + R"(mlp\.up)", {h + "mlp.up_proj.weight", true, stacked}},
      {l + R"(mlp\.down)", {h + "mlp.down_proj.weight", true, stacked}},
  });
}

HfLayer layer_like(const Shape& lead) {
  auto s = [&](Shape tail) {
    Shape out = lead;
    out.insert(out.end(), tail.begin(), tail.end());
    return zeros(out);
  };
  return {s({D}),
          {s({D, D}), s({D, KV}), s({D, KV}), s({D, D})},
          s({D}),
          {s({D, F}), s({D, F}), s({F, D})}};
}

HfLlama llama_like() {
  return {zeros({V, D}), {layer_like({}), layer_like({})}, zeros({D}), zeros({D, V})};
}

// graft [in, out] element (i, j) must be HF [out, in] element (j, i).
void expect_transposed(const Array& g, const std::vector<float>& hf, const std::string& what) {
  ASSERT_EQ(g.ndim(), 2) << what;
  auto v = g.to_vector<float>();
  int64_t in = g.dim(0), out = g.dim(1);
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      ASSERT_EQ(v[i * out + j], hf[j * in + i]) << what << " at " << i << "," << j;
    }
  }
}

TEST(HfImport, PerLayerStructFromBf16) {
  std::string dir = testing::fresh_dir("hf");
  auto hf = write_hf(dir + "/model.safetensors", DType::kBF16);
  auto got = import_hf(dir, llama_like(), llama_names(false));  // a directory works
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->embed.dtype(), DType::kF32);  // cast from bf16
  EXPECT_EQ(got->embed.to_vector<float>(), hf["model.embed_tokens.weight"]);
  EXPECT_EQ(got->norm.to_vector<float>(), hf["model.norm.weight"]);
  expect_transposed(got->lm_head, hf["lm_head.weight"], "lm_head");
  for (int i = 0; i < L; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    const HfLayer& l = got->layers[i];
    EXPECT_EQ(l.attn_norm.to_vector<float>(), hf[p + "input_layernorm.weight"]);
    expect_transposed(l.attn.wq, hf[p + "self_attn.q_proj.weight"], p + "q");
    expect_transposed(l.attn.wk, hf[p + "self_attn.k_proj.weight"], p + "k");
    expect_transposed(l.mlp.down, hf[p + "mlp.down_proj.weight"], p + "down");
  }
}

TEST(HfImport, StackedLayersAndExportRoundTripsBytes) {
  std::string dir = testing::fresh_dir("hf_stacked");
  auto hf = write_hf(dir + "/in.safetensors", DType::kF32);
  HfLlamaStacked like{zeros({V, D}), layer_like({L}), zeros({D}), zeros({D, V})};
  auto got = import_hf(dir + "/in.safetensors", like, llama_names(true));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->layers.attn.wq.shape(), (Shape{L, D, D}));
  for (int i = 0; i < L; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    expect_transposed(squeeze(slice_axis(got->layers.attn.wo, 0, i, i + 1), {0}),
                      hf[p + "self_attn.o_proj.weight"], p + "o");
    expect_transposed(squeeze(slice_axis(got->layers.mlp.up, 0, i, i + 1), {0}),
                      hf[p + "mlp.up_proj.weight"], p + "up");
  }
  // Export gives back HF's names, layout and bytes.
  ASSERT_TRUE(export_hf(dir + "/out.safetensors", *got, llama_names(true)).ok());
  auto a = SafetensorsReader::open(dir + "/in.safetensors");
  auto b = SafetensorsReader::open(dir + "/out.safetensors");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->header().metadata.at("format"), "pt");
  ASSERT_EQ(a->header().tensors.size(), b->header().tensors.size());
  for (const TensorInfo& t : a->header().tensors) {
    const TensorInfo* u = b->header().find(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(u->shape, t.shape) << t.name;
    std::string x(t.end - t.begin, 0), y(u->end - u->begin, 0);
    ASSERT_TRUE(a->read(t, x.data()).ok());
    ASSERT_TRUE(b->read(*u, y.data()).ok());
    EXPECT_EQ(x, y) << t.name;
  }
}

TEST(HfImport, ShardedIndex) {
  std::string dir = testing::fresh_dir("hf_sharded");
  auto hf = write_hf(dir + "/all.safetensors", DType::kF32);
  // Split into two shards with an index, as HF's save_pretrained does for big models.
  auto all = SafetensorsReader::open(dir + "/all.safetensors");
  ASSERT_TRUE(all.ok());
  std::vector<TensorView> s1, s2;
  std::vector<std::string> bytes;
  bytes.reserve(all->header().tensors.size());
  nlohmann::json map;
  int k = 0;
  for (const TensorInfo& t : all->header().tensors) {
    bytes.emplace_back(t.end - t.begin, 0);
    ASSERT_TRUE(all->read(t, bytes.back().data()).ok());
    std::string file =
        k % 2 ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
    (k++ % 2 ? s2 : s1).push_back({t.name, t.dtype, t.shape, bytes.back().data()});
    map[t.name] = file;
  }
  ASSERT_TRUE(write_safetensors(dir + "/model-00001-of-00002.safetensors", s1).ok());
  ASSERT_TRUE(write_safetensors(dir + "/model-00002-of-00002.safetensors", s2).ok());
  std::filesystem::remove(dir + "/all.safetensors");
  std::ofstream(dir + "/model.safetensors.index.json") << nlohmann::json{{"weight_map", map}};
  auto got = import_hf(dir, llama_like(), llama_names(false));
  ASSERT_TRUE(got.ok()) << got.status();
  expect_transposed(got->layers[1].mlp.gate, hf["model.layers.1.mlp.gate_proj.weight"], "gate");
}

TEST(HfImport, Errors) {
  std::string dir = testing::fresh_dir("hf_err");
  write_hf(dir + "/m.safetensors", DType::kBF16);
  std::string f = dir + "/m.safetensors";
  // No cast allowed: bf16 into f32 is refused.
  auto r = import_hf(f, llama_like(), llama_names(false), {.cast = false});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  // A wrong shape in the target.
  HfLlama bad = llama_like();
  bad.layers[0].attn.wk = zeros({D, KV + 1});
  r = import_hf(f, bad, llama_names(false));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("k_proj"), std::string::npos) << r.status();
  // A mapping that skips the lm_head leaves an HF tensor unused, and the leaf unmapped.
  auto no_head = [base = llama_names(false)](const std::string& p) -> std::optional<HfTensorMap> {
    if (p == "lm_head") return std::nullopt;
    return base(p);
  };
  r = import_hf(f, llama_like(), no_head);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  r = import_hf(f, llama_like(), no_head, {.keep_unmapped = true});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("lm_head.weight"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("set HfImportOptions::allow_unused to ignore them"),
            std::string::npos)
      << r.status();
  // A program that exposes the option under its own name has the message say that name.
  r = import_hf(f, llama_like(), no_head,
                {.keep_unmapped = true, .allow_unused_name = "run.allow_unused = true"});
  EXPECT_NE(r.status().message().find("set run.allow_unused = true to ignore them"),
            std::string::npos)
      << r.status();
  r = import_hf(f, llama_like(), no_head, {.keep_unmapped = true, .allow_unused = true});
  EXPECT_TRUE(r.ok()) << r.status();
  // A mapping to a name the file lacks.
  auto typo = hf_rules({{".*", {"model.nope"}}});
  EXPECT_EQ(import_hf(f, llama_like(), typo).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(import_hf(dir + "/missing", llama_like(), llama_names(false)).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graft::checkpoint
