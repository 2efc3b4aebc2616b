// The Llama's Hugging Face folders against transformers. testdata/hf_tiny and hf_tiny_tied
// were written by graft's exporter (write_hf_tiny) and loaded by
// transformers.AutoModelForCausalLM.from_pretrained in float32, which recorded its logits
// for three token sequences (tools/make_hf_llama_vectors.py). Here: the exporter still writes
// those folders byte for byte, graft's forward pass on the params read back from them gives
// transformers' logits (hf_tiny_tied is sharded, so transformers and graft read the index),
// and a sharded export round-trips.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "checkpoint/hf.h"
#include "checkpoint/safetensors.h"
#include "core/ops.h"
#include "examples/llama/hf_config.h"
#include "examples/llama/hf_names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/examples/llama/hf_tiny.h"
#include "tests/examples/llama/tiny_run.h"
#include "tests/util/test_vectors.h"

namespace graft::llama_train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTestdata = "tests/examples/llama/testdata/";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// The params of a folder, read the way checkpoint.initial_load_hf reads them.
nn::LlamaParams load(const std::string& dir, const nn::LlamaConfig& c) {
  auto got = checkpoint::import_hf(dir, nn::llama_init(c, random::key(0)), llama_hf_names());
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : nn::LlamaParams{};
}

void expect_same_params(const nn::LlamaParams& a, const nn::LlamaParams& b) {
  auto [la, da] = tree_flatten(a);
  auto [lb, db] = tree_flatten(b);
  ASSERT_EQ(la.size(), lb.size());
  const auto paths = tree_leaf_paths(da);
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_EQ(la[i].shape(), lb[i].shape()) << paths[i];
    EXPECT_EQ(la[i].to_vector<float>(), lb[i].to_vector<float>()) << paths[i];
  }
}

class HfTinyTest : public ::testing::TestWithParam<bool> {};  // the parameter: tied

TEST_P(HfTinyTest, CommittedFolderIsWhatTheExporterWrites) {
  const nn::LlamaConfig c = hf_tiny_config(GetParam());
  const std::string committed = kTestdata + hf_tiny_name(GetParam());
  const std::set<std::string> files = entries(committed);
  if (c.tied_output) {  // written in 32 KiB shards
    EXPECT_EQ(files, (std::set<std::string>{
                         "config.json", "generation_config.json",
                         "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                         "model-00003-of-00003.safetensors", "model.safetensors.index.json"}));
  } else {
    EXPECT_EQ(files, (std::set<std::string>{"config.json", "generation_config.json",
                                            "model.safetensors"}));
  }
  // config.json says what hf_tiny.h says, key by key (transformers read it as the same model:
  // the tool script asserts that).
  const json cfg = json::parse(read_bytes(committed + "/config.json"));
  EXPECT_EQ(cfg["architectures"], json({"LlamaForCausalLM"}));
  EXPECT_EQ(cfg["model_type"], "llama");
  EXPECT_EQ(cfg["hidden_size"], c.dim);
  EXPECT_EQ(cfg["num_attention_heads"], 4);
  EXPECT_EQ(cfg["num_key_value_heads"], c.n_kv_heads);
  EXPECT_EQ(cfg["head_dim"], c.dim / 4);
  EXPECT_EQ(cfg["intermediate_size"], c.ffn_dim);
  EXPECT_EQ(cfg["num_hidden_layers"], 2);
  EXPECT_EQ(cfg["vocab_size"], 96);
  EXPECT_EQ(cfg["rope_theta"], c.rope_theta);
  EXPECT_EQ(cfg["rope_parameters"], json({{"rope_type", "default"}, {"rope_theta", c.rope_theta}}));
  EXPECT_EQ(cfg["rms_norm_eps"], c.norm_eps);
  EXPECT_EQ(cfg["tie_word_embeddings"], c.tied_output);
  EXPECT_EQ(cfg["hidden_act"], "silu");
  EXPECT_EQ(cfg["attention_bias"], false);
  EXPECT_EQ(cfg["mlp_bias"], false);
  EXPECT_EQ(cfg["torch_dtype"], "float32");
  EXPECT_EQ(cfg["max_position_embeddings"], 64);
  EXPECT_EQ(cfg["eos_token_id"], 95);
  EXPECT_EQ(json::parse(read_bytes(committed + "/generation_config.json")),
            json({{"bos_token_id", 95}, {"eos_token_id", 95}}));
  EXPECT_TRUE(check_llama_hf_config(cfg, c, "committed").ok());

  // The tensors: HF names, [out, in] shapes; a tied model has no lm_head.
  std::map<std::string, Shape> shapes;
  for (const std::string& f : files) {
    if (f.find(".safetensors") == std::string::npos || f.ends_with(".json")) continue;
    auto r = checkpoint::SafetensorsReader::open(committed + "/" + f);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->header().metadata.at("format"), "pt");
    for (const auto& t : r->header().tensors) shapes[t.name] = t.shape;
  }
  EXPECT_EQ(shapes.size(), (c.tied_output ? 2u : 3u) + 2 * 9u);
  EXPECT_EQ(shapes.count("lm_head.weight"), c.tied_output ? 0u : 1u);
  EXPECT_EQ(shapes["model.layers.1.self_attn.k_proj.weight"],
            (Shape{c.n_kv_heads * c.head_dim(), c.dim}));
  EXPECT_EQ(shapes["model.layers.0.mlp.down_proj.weight"], (Shape{c.dim, c.ffn_dim}));

  // Exporting the params read back writes the same files, byte for byte.
  const std::string again = fresh_test_dir("hf_again_" + hf_tiny_name(GetParam())) + "/hf";
  ASSERT_TRUE(export_llama_hf(again, load(committed, c), c, hf_tiny_extras(),
                              hf_tiny_options(c.tied_output))
                  .ok());
  EXPECT_EQ(entries(again), files);
  for (const std::string& f : files) {
    EXPECT_EQ(read_bytes(again + "/" + f), read_bytes(committed + "/" + f)) << f;
  }
}

// Tolerance: elementwise |graft - transformers| <= 1e-5 + 1e-5 |transformers|, both in f32.
// Seen: worst 5.7e-6 (hf_tiny) and 2.7e-6 (tied) on logits up to 5.5; transformers' own f32
// logits are 9e-6 from its float64 ones, so this is f32 rounding, not a model difference.
TEST_P(HfTinyTest, LogitsMatchTransformers) {
  const nn::LlamaConfig c = hf_tiny_config(GetParam());
  const std::string name = hf_tiny_name(GetParam());
  auto tv = testing::TestVectors::Load(kTestdata + "hf_tiny_logits.json");
  ASSERT_TRUE(tv.ok()) << tv.status();
  const Array tokens = tv->get(name + "/tokens");
  const Array want = tv->get(name + "/logits");
  const nn::LlamaParams p = load(kTestdata + name, c);
  testing::expect_allclose(nn::llama_logits(p, tokens, c), want, 1e-5, 1e-5, name);

  // The comparison can tell a config read wrong: transformers' defaults for rope_theta and
  // eps (what a missing key would give) move the logits far beyond the tolerance.
  auto worst = [&](const nn::LlamaConfig& other) {
    std::vector<float> g = nn::llama_logits(p, tokens, other).to_vector<float>();
    std::vector<float> w = want.to_vector<float>();
    double m = 0;
    for (size_t i = 0; i < g.size(); ++i) m = std::max(m, double(std::abs(g[i] - w[i])));
    return m;
  };
  nn::LlamaConfig theta = c, eps = c;
  theta.rope_theta = 10000.0;
  eps.norm_eps = 1e-6;
  EXPECT_GT(worst(theta), 1e-2);
  EXPECT_GT(worst(eps), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(HfExport, HfTinyTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Tied" : "Untied"; });

// A small shard limit splits the export; the index names every tensor's file and the total
// bytes, and reading the folder back gives the params bit for bit.
TEST(HfExportTest, ShardedExportRoundTrips) {
  const nn::LlamaConfig c = hf_tiny_config(false);
  const nn::LlamaParams p = hf_tiny_params(c);
  const std::string dir = fresh_test_dir("hf_sharded") + "/hf";
  ASSERT_TRUE(export_llama_hf(dir, p, c, hf_tiny_extras(), {.max_shard_bytes = 64 << 10}).ok());
  const std::set<std::string> files = entries(dir);
  EXPECT_EQ(files.count("model.safetensors"), 0u);
  ASSERT_EQ(files.count("model.safetensors.index.json"), 1u);
  const json index = json::parse(read_bytes(dir + "/model.safetensors.index.json"));
  EXPECT_EQ(index["metadata"]["total_size"], nn::count_params(c) * 4);
  EXPECT_EQ(index["weight_map"].size(), 3u + 2 * 9u);
  std::set<std::string> shards;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    shards.insert(file.get<std::string>());
    auto r = checkpoint::SafetensorsReader::open(dir + "/" + file.get<std::string>());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NE(r->header().find(tensor), nullptr) << tensor << " in " << file;
  }
  // 344 KiB of tensors over 64 KiB shards (no tensor is larger than 64 KiB).
  EXPECT_GE(shards.size(), 6u);
  for (const std::string& s : shards) {
    EXPECT_EQ(files.count(s), 1u) << s;
    EXPECT_LE(fs::file_size(dir + "/" + s), (64u << 10) + 4096) << s;  // + the header
  }
  EXPECT_EQ(files.size(), shards.size() + 3);  // + config, generation config, index
  expect_same_params(load(dir, c), p);
}

}  // namespace
}  // namespace graft::llama_train
