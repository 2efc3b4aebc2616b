// config.json read back: each key where a Hugging Face folder and [model] disagree is an
// error naming the key and both values; models graft's Llama is not are refused by what
// they are; model.from_hf_config takes [model] from the folder. The configs start from the
// committed testdata/hf_tiny/config.json (hf_tiny.h) with one key changed.
#include "examples/llama/hf_config.h"

#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/examples/llama/hf_tiny.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

using nlohmann::json;

const std::string kFolder = "tests/examples/llama/testdata/hf_tiny";

json tiny_json() {
  std::ifstream in(kFolder + "/config.json");
  return json::parse(in);
}

absl::Status check(const json& j) {
  return check_llama_hf_config(j, hf_tiny_config(false), "x/config.json");
}

struct Case {
  json patch;        // merged into config.json; null values remove the key
  std::string want;  // in the message
};

TEST(HfConfigTest, EachDisagreementNamesTheKeyAndBothValues) {
  ASSERT_TRUE(check(tiny_json()).ok());
  const std::vector<Case> cases = {
      {{{"num_attention_heads", 8}, {"head_dim", 8}}, "num_attention_heads = 8, model.n_heads = 4"},
      {{{"num_attention_heads", 8}, {"head_dim", 8}},
       "head_dim = 8, model.dim / model.n_heads = 16"},
      {{{"num_key_value_heads", 4}}, "num_key_value_heads = 4, model.n_kv_heads = 2"},
      {{{"hidden_size", 128}, {"head_dim", 32}}, "hidden_size = 128, model.dim = 64"},
      {{{"intermediate_size", 256}}, "intermediate_size = 256, model.ffn_dim = 128"},
      {{{"num_hidden_layers", 3}}, "num_hidden_layers = 3, model.n_layers = 2"},
      {{{"vocab_size", 128}}, "vocab_size = 128, the model's vocabulary"},
      {{{"tie_word_embeddings", true}},
       "tie_word_embeddings = true, model.tied_embeddings = false"},
      {{{"rms_norm_eps", 1e-6}}, "rms_norm_eps = 1e-06, model.norm_eps = 0.001"},
      // rope_theta as transformers 5 writes it, and as transformers 4 does (top level only).
      {{{"rope_theta", 10000.0},
        {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e4}}}},
       "rope_theta = 10000, model.rope_theta = 500"},
      {{{"rope_theta", 1e6}, {"rope_parameters", nullptr}},
       "rope_theta = 1000000, model.rope_theta = 500"},
      // Missing keys take transformers' defaults, as from_pretrained would.
      {{{"rms_norm_eps", nullptr}}, "rms_norm_eps = 1e-06, model.norm_eps = 0.001"},
      {{{"num_key_value_heads", nullptr}}, "num_key_value_heads = 4, model.n_kv_heads = 2"},
      {{{"rope_theta", nullptr}, {"rope_parameters", nullptr}},
       "rope_theta = 10000, model.rope_theta = 500"},
      // What graft's Llama never is.
      {{{"attention_bias", true}}, "attention_bias = true: graft's Llama has no attention bias"},
      {{{"mlp_bias", true}}, "mlp_bias = true: graft's Llama has no MLP bias"},
      {{{"hidden_act", "gelu"}}, "hidden_act = \"gelu\""},
      {{{"model_type", "mistral"}}, "model_type = \"mistral\""},
      {{{"head_dim", 32}},
       "head_dim = 32: graft's Llama has head_dim = hidden_size / "
       "num_attention_heads = 64 / 4"},
      {{{"rope_parameters", {{"rope_type", "llama3"}, {"factor", 8.0}}}}, "rope_type = \"llama3\""},
      {{{"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}, "rope_type = \"linear\""},
      {{{"hidden_size", "64"}}, "hidden_size = \"64\": expected an integer"},
      {{{"num_attention_heads", 0}}, "num_attention_heads = 0: must be > 0"},
  };
  for (const Case& c : cases) {
    json j = tiny_json();
    j.merge_patch(c.patch);
    absl::Status s = check(j);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.patch << ": " << s;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << c.patch << ": " << s;
    EXPECT_EQ(s.message().rfind("x/config.json", 0), 0u) << s;  // says which file
  }
}

TEST(HfConfigTest, AllDisagreementsInOneMessageWithTheWayOut) {
  json j = tiny_json();
  j.merge_patch({{"num_hidden_layers", 3}, {"rms_norm_eps", 1e-5}});
  absl::Status s = check(j);
  EXPECT_NE(s.message().find("num_hidden_layers = 3, model.n_layers = 2; rms_norm_eps = 1e-05, "
                             "model.norm_eps = 0.001"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("model.from_hf_config = true"), std::string::npos) << s;
}

TEST(HfConfigTest, FloatsThatWentThroughFloat32StillAgree) {
  json j = tiny_json();
  j["rms_norm_eps"] = double(float(1e-3));
  j["rope_parameters"]["rope_theta"] = double(float(500.0));
  EXPECT_TRUE(check(j).ok());
  j["rms_norm_eps"] = 1.001e-3;  // but not a different value
  EXPECT_FALSE(check(j).ok());
}

TEST(HfConfigTest, FromHfConfigTakesModelFromTheFolder) {
  train::TrainConfig t;
  t.model.from_hf_config = true;
  t.checkpoint.initial_load_hf = kFolder;
  ASSERT_TRUE(apply_from_hf_config(t).ok());
  const train::ModelConfig& m = t.model;
  EXPECT_EQ(m.vocab_size, 96);
  EXPECT_EQ(m.dim, 64);
  EXPECT_EQ(m.n_layers, 2);
  EXPECT_EQ(m.n_heads, 4);
  EXPECT_EQ(m.n_kv_heads, 2);
  EXPECT_EQ(m.ffn_dim, 128);
  EXPECT_EQ(m.rope_theta, 500.0);
  EXPECT_EQ(m.norm_eps, 1e-3);
  EXPECT_FALSE(m.tied_embeddings);
  // What the program prints as its effective config.
  const std::string toml = train::to_toml(t);
  EXPECT_NE(toml.find("from_hf_config = true"), std::string::npos) << toml;
  EXPECT_NE(toml.find("rope_theta = 500"), std::string::npos) << toml;
  train::TrainConfig again = t;  // idempotent
  ASSERT_TRUE(apply_from_hf_config(again).ok());
  EXPECT_EQ(again, t);
  // Without the key nothing is read.
  train::TrainConfig off;
  off.checkpoint.initial_load_hf = kFolder;
  ASSERT_TRUE(apply_from_hf_config(off).ok());
  EXPECT_EQ(off, [] {
    train::TrainConfig d;
    d.checkpoint.initial_load_hf = kFolder;
    return d;
  }());
}

TEST(HfConfigTest, FromHfConfigNeedsAFolderWithConfigJson) {
  train::TrainConfig t;
  t.model.from_hf_config = true;
  absl::Status s = apply_from_hf_config(t);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs checkpoint.initial_load_hf"), std::string::npos) << s;
  t.checkpoint.initial_load_hf = kFolder + "/model.safetensors";  // a file: no config.json
  s = apply_from_hf_config(t);
  EXPECT_NE(s.message().find("is not a folder with config.json"), std::string::npos) << s;
  // A config graft's Llama cannot be is refused here too.
  const std::string dir = fresh_test_dir("hf_biased");
  std::filesystem::create_directories(dir);
  json j = tiny_json();
  j["attention_bias"] = true;
  std::ofstream(dir + "/config.json") << j.dump();
  t.checkpoint.initial_load_hf = dir;
  s = apply_from_hf_config(t);
  EXPECT_NE(s.message().find("attention_bias = true"), std::string::npos) << s;
}

TEST(HfConfigTest, ExportPathMustNameAFolder) {
  train::TrainConfig t;
  t.job.dump_folder = fresh_test_dir("hf_export_path");
  t.checkpoint.export_hf = "hf/model.safetensors";
  absl::Status s = check_export_hf_path(t);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("names a file, but the export is a folder"), std::string::npos) << s;
  t.checkpoint.export_hf = "hf";
  EXPECT_TRUE(check_export_hf_path(t).ok());
}

}  // namespace
}  // namespace graft::llama_train
