// TrainConfig: TOML loading, every error class (with file:line), command-line overrides,
// to_toml round trip. Expectations are written by hand from the TOML text, not from a run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "examples/train/train_config.h"

namespace graft::train {
namespace {

const char* kMoe = "tests/examples/train/testdata/moe_debug.toml";
const char* kBadRange = "tests/examples/train/testdata/bad_range.toml";

// Expects InvalidArgumentError whose message contains every part.
void expect_invalid(const absl::Status& status, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(std::string(status.message()).find(part), std::string::npos)
        << "missing \"" << part << "\" in: " << status.message();
  }
}

absl::Status parse_status(const std::string& text) {
  return parse_train_config(text, "x.toml").status();
}

TEST(TrainConfig, DefaultsAreValid) {
  EXPECT_TRUE(validate(TrainConfig{}).ok());
  auto loaded = load_train_config("");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, TrainConfig{});
}

TEST(TrainConfig, LoadsFileAndKeepsDefaultsForMissingKeys) {
  auto c = load_train_config(kMoe);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job.description, "moe debug run");
  EXPECT_EQ(c->job.dump_folder, "/tmp/graft_moe");
  EXPECT_EQ(c->model.flavor, "debug-moe");
  EXPECT_EQ(c->model.dim, 128);
  EXPECT_EQ(c->model.n_kv_heads, 2);
  EXPECT_EQ(c->model.rope_theta, 500000.0);
  EXPECT_EQ(c->model.remat, "dots");
  EXPECT_EQ(c->model.compute_dtype, "bfloat16");
  EXPECT_EQ(c->model.n_routed_experts, 8);
  EXPECT_EQ(c->model.moe_every, 2);
  EXPECT_EQ(c->model.router, "sigmoid");
  EXPECT_EQ(c->optimizer.name, "lion");
  EXPECT_EQ(c->optimizer.lr, 3e-4);
  EXPECT_EQ(c->optimizer.weight_decay, 0.0);
  EXPECT_EQ(c->lr_scheduler.decay_type, "wsd");
  EXPECT_EQ(c->lr_scheduler.decay_ratio, 0.25);
  EXPECT_EQ(c->training.tokenizer, "bpe");
  EXPECT_EQ(c->training.steps, 40);
  EXPECT_EQ(c->training.gradient_accumulation_steps, 2);
  EXPECT_EQ(c->training.time_limit_seconds, 90.5);
  EXPECT_TRUE(c->checkpoint.enable);
  EXPECT_EQ(c->checkpoint.async_mode, "async");
  EXPECT_FALSE(c->metrics.enable_tensorboard);
  EXPECT_EQ(c->sample.prompt, "The \"graft\" library");
  EXPECT_EQ(c->sample.temperature, 0.0);
  // Not in the file: defaults.
  EXPECT_EQ(c->model.vocab_size, 0);
  EXPECT_EQ(c->optimizer.beta2, 0.95);
  EXPECT_EQ(c->checkpoint.load_step, -1);
  EXPECT_EQ(c->metrics.save_tb_folder, "tb");
}

TEST(TrainConfig, MissingFileIsNotFound) {
  EXPECT_EQ(load_train_config("tests/examples/train/testdata/nope.toml").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TrainConfig, SyntaxErrorNamesFileAndLine) {
  expect_invalid(parse_status("[model]\ndim = = 3\n"), {"x.toml:2:", "TOML syntax error"});
}

TEST(TrainConfig, UnknownSectionsAndKeys) {
  expect_invalid(parse_status("\n\n[modle]\ndim = 3\n"),
                 {"x.toml:3:", "[modle]", "unknown section"});
  expect_invalid(parse_status("[model]\ndim = 64\ndimm = 4\n"),
                 {"x.toml:3:1", "model.dimm", "unknown key"});
  expect_invalid(parse_status("steps = 3\n"), {"x.toml:1:1", "steps", "unknown top-level key"});
  expect_invalid(parse_status("model = 3\n"), {"x.toml:1:1", "must be a [model] table"});
  expect_invalid(parse_status("[model.moe]\ntop_k = 1\n"), {"model.moe", "unknown key"});
  expect_invalid(parse_status("[[training]]\nsteps = 1\n"), {"must be a [training] table"});
}

TEST(TrainConfig, WrongValueTypes) {
  expect_invalid(parse_status("[training]\nsteps = \"ten\"\n"),
                 {"x.toml:2:1", "training.steps", "expected integer, got string"});
  expect_invalid(parse_status("[training]\nsteps = 1.5\n"), {"expected integer, got float"});
  expect_invalid(parse_status("[checkpoint]\nenable = 1\n"),
                 {"checkpoint.enable", "expected boolean, got integer"});
  expect_invalid(parse_status("[optimizer]\nlr = \"3e-4\"\n"),
                 {"optimizer.lr", "expected float, got string"});
  expect_invalid(parse_status("[sample]\nprompt = 5\n"), {"sample.prompt", "expected string"});
  expect_invalid(parse_status("[model]\ndim = [1, 2]\n"), {"model.dim", "got array"});
  expect_invalid(parse_status("[optimizer]\nlr = inf\n"), {"optimizer.lr", "must be finite"});
  // An integer is a valid float.
  auto c = parse_train_config("[optimizer]\nlr = 1\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->optimizer.lr, 1.0);
}

TEST(TrainConfig, UnknownEnumStrings) {
  struct Case {
    std::string text, key;
  };
  for (const Case& k : std::vector<Case>{
           {"[model]\nremat = \"some\"", "model.remat"},
           {"[model]\ncompute_dtype = \"fp16\"", "model.compute_dtype"},
           {"[model]\nrouter = \"topk\"", "model.router"},
           {"[optimizer]\nname = \"adafactor\"", "optimizer.name"},
           {"[lr_scheduler]\ndecay_type = \"step\"", "lr_scheduler.decay_type"},
           {"[training]\ntokenizer = \"word\"", "training.tokenizer"},
           {"[training]\ntokenizer = \"hf:\"", "training.tokenizer"},  // no path
           {"[training]\ntokenizer = \"hf\"", "training.tokenizer"},
           {"[checkpoint]\nasync_mode = \"sync\"", "checkpoint.async_mode"},
       }) {
    expect_invalid(parse_status(k.text), {"x.toml:2:1", k.key, "must be one of"});
  }
}

TEST(TrainConfig, HfTokenizerTakesAPathAndAnEotToken) {
  auto c = parse_train_config(
      "[training]\ntokenizer = \"hf:models/llama3/tokenizer.json\"\n"
      "tokenizer_eot = \"<|eot_id|>\"\ndataset = \"data/shards\"\n",
      "x.toml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->training.tokenizer, "hf:models/llama3/tokenizer.json");
  EXPECT_EQ(c->training.tokenizer_eot, "<|eot_id|>");
  EXPECT_EQ(c->training.dataset, "data/shards");
  auto bad = parse_status("[training]\ntokenizer = \"word\"");
  EXPECT_NE(std::string(bad.message()).find("\"hf:<tokenizer.json>\""), std::string::npos) << bad;
  EXPECT_NE(usage("llama").find("byte | bpe | hf:<tokenizer.json>"), std::string::npos);
}

TEST(TrainConfig, OutOfRangeValues) {
  struct Case {
    std::string text, message;
  };
  for (const Case& k : std::vector<Case>{
           {"[training]\nsteps = -1", "x.toml:2:1: training.steps = -1: must be >= 0"},
           {"[training]\nbatch_size = 0", "training.batch_size = 0: must be > 0"},
           {"[training]\nseq_len = -3", "training.seq_len = -3"},
           {"[training]\nbatch_size = 6\ngradient_accumulation_steps = 4",
            "gradient_accumulation_steps = 4: must divide training.batch_size = 6"},
           {"[training]\ntokenizer_vocab_size = 100", "training.tokenizer_vocab_size = 100"},
           {"[training]\nmax_norm = -1.0", "training.max_norm"},
           {"[model]\ndim = 100\nn_heads = 8", "model.n_heads = 8: must divide model.dim = 100"},
           {"[model]\ndim = 24\nn_heads = 8\nn_kv_heads = 8", "head dim"},
           {"[model]\nn_heads = 8\nn_kv_heads = 3", "model.n_kv_heads = 3: must divide"},
           {"[model]\nn_routed_experts = 4\ntop_k = 0", "model.top_k = 0"},
           {"[model]\nn_routed_experts = -1", "model.n_routed_experts = -1"},
           {"[optimizer]\nlr = 0.0", "optimizer.lr = 0: must be > 0"},
           {"[optimizer]\nbeta1 = 1.0", "optimizer.beta1"},
           {"[lr_scheduler]\ndecay_ratio = 1.5", "lr_scheduler.decay_ratio = 1.5"},
           {"[lr_scheduler]\nwarmup_steps = -2", "lr_scheduler.warmup_steps"},
           {"[checkpoint]\nload_step = -2", "checkpoint.load_step = -2"},
           {"[checkpoint]\ninterval = 0", "checkpoint.interval"},
           {"[metrics]\nlog_freq = 0", "metrics.log_freq"},
           {"[sample]\ntemperature = -0.5", "sample.temperature"},
           {"[sample]\ntop_k = -1", "sample.top_k"},
           {"[optimizer]\nname = \"adam\"\neps = 0.0",
            "optimizer.eps = 0: must be > 0 for adam (it divides by sqrt(nu) + eps"},
           {"[optimizer]\neps = 0.0", "optimizer.eps = 0: must be > 0 for adamw"},
           {"[parallelism]\ndata_parallel_replicate_degree = 0",
            "parallelism.data_parallel_replicate_degree = 0: must be >= 1"},
           {"[training]\nbatch_size = 8\n[parallelism]\ndata_parallel_replicate_degree = 3",
            "parallelism.data_parallel_replicate_degree = 3: must divide the micro-batch "
            "(training.batch_size / training.gradient_accumulation_steps = 8)"},
           {"[parallelism]\ndata_parallel_shard_degree = 0",
            "parallelism.data_parallel_shard_degree = 0: must be >= 1"},
           {"[training]\nbatch_size = 8\n[parallelism]\ndata_parallel_replicate_degree = 2\n"
            "data_parallel_shard_degree = 3",
            "parallelism.data_parallel_shard_degree = 3: times data_parallel_replicate_degree "
            "must divide the micro-batch (8)"},
           {"[parallelism]\ntensor_parallel_degree = 0",
            "parallelism.tensor_parallel_degree = 0: must be >= 1"},
           {"[parallelism]\ntensor_parallel_degree = 3",
            "parallelism.tensor_parallel_degree = 3: must divide model.n_heads = 8"},
           {"[model]\nn_heads = 16\nn_kv_heads = 4\n[parallelism]\ntensor_parallel_degree = 8",
            "parallelism.tensor_parallel_degree = 8: must divide model.n_kv_heads = 4"},
           {"[model]\nffn_dim = 770\n[parallelism]\ntensor_parallel_degree = 4",
            "parallelism.tensor_parallel_degree = 4: must divide model.ffn_dim = 770"},
           {"[model]\nn_routed_experts = 4\n[parallelism]\ntensor_parallel_degree = 2",
            "parallelism.tensor_parallel_degree = 2: must be 1 for a mixture-of-experts model "
            "(model.n_routed_experts = 4)"},
           {"[parallelism]\nexpert_parallel_degree = 4",
            "parallelism.expert_parallel_degree = 4: must be 1 or equal to "
            "data_parallel_shard_degree = 1"},
           {"[model]\nn_routed_experts = 4\nmoe_capacity_factor = 1.0\n"
            "[parallelism]\ndata_parallel_shard_degree = 4\nexpert_parallel_degree = 4",
            "parallelism.expert_parallel_degree = 4: must divide model.moe_token_groups = 1"},
           {"[parallelism]\ndata_parallel_shard_degree = 4\nexpert_parallel_degree = 4",
            "parallelism.expert_parallel_degree = 4: needs an MoE model"},
           {"[model]\nn_routed_experts = 4\n"
            "[parallelism]\ndata_parallel_shard_degree = 4\nexpert_parallel_degree = 4",
            "parallelism.expert_parallel_degree = 4: needs model.moe_capacity_factor > 0"},
           {"[model]\nmoe_capacity_factor = -1.0", "model.moe_capacity_factor = -1: must be >= 0"},
           {"[model]\nmoe_token_groups = 0", "model.moe_token_groups = 0: must be >= 1"},
           {"[model]\nn_routed_experts = 4\nmoe_capacity_factor = 1.0\nmoe_token_groups = 3",
            "model.moe_token_groups = 3: must divide the tokens of a micro-batch"},
           {"[model]\nvocab_size = 300\n[sample]\ntop_k = 301",
            "sample.top_k = 301: must be <= model.vocab_size = 300"},
       }) {
    expect_invalid(parse_status(k.text), {k.message});
  }
  // eps is Adam's: lion and sgd do not divide by it.
  EXPECT_TRUE(parse_status("[optimizer]\nname = \"lion\"\neps = 0.0").ok());
  EXPECT_TRUE(parse_status("[optimizer]\nname = \"sgd\"\neps = 0.0").ok());
  // top_k only matters for MoE models: a dense model ignores it.
  EXPECT_TRUE(parse_status("[model]\ntop_k = 99").ok());
}

TEST(TrainConfig, RangeErrorNamesFileAndLine) {
  expect_invalid(load_train_config(kBadRange).status(),
                 {std::string(kBadRange) + ":5:1", "model.top_k = 5",
                  "must be in [1, model.n_routed_experts = 4]"});
  // top_k left at its default (2): the message says so.
  expect_invalid(parse_status("[model]\nn_routed_experts = 1"), {"default: model.top_k = 2"});
}

TEST(TrainConfig, ValidateChecksConfigsBuiltInCode) {
  TrainConfig c;
  c.model.remat = "bogus";
  expect_invalid(validate(c), {"model.remat", "must be one of \"none\", \"dots\", \"full\""});
  c = TrainConfig{};
  c.training.steps = -5;
  expect_invalid(validate(c), {"training.steps = -5"});
}

absl::StatusOr<CommandLine> parse_args(std::vector<const char*> args) {
  args.insert(args.begin(), "train");
  return parse_command_line(static_cast<int>(args.size()), args.data());
}

TEST(CommandLine, ParsesConfigAndOverrides) {
  auto cl = parse_args({"--config", kMoe, "--training.steps=100", "--model.dim", "256",
                        "--checkpoint.enable", "--metrics.enable_tensorboard=true",
                        "--optimizer.lr=3e-3", "--training.steps=120"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->config_path, kMoe);
  EXPECT_FALSE(cl->help);
  std::vector<Override> expected = {
      {"training.steps", "100"},     {"model.dim", "256"},
      {"checkpoint.enable", "true"}, {"metrics.enable_tensorboard", "true"},
      {"optimizer.lr", "3e-3"},      {"training.steps", "120"}};
  EXPECT_EQ(cl->overrides, expected);

  auto c = load_train_config(*cl);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->training.steps, 120);           // the later override wins
  EXPECT_EQ(c->model.dim, 256);                // over the file's 128
  EXPECT_TRUE(c->metrics.enable_tensorboard);  // file said false
  EXPECT_EQ(c->optimizer.lr, 3e-3);
  EXPECT_EQ(c->model.n_layers, 2);  // from the file

  auto help = parse_args({"--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->help);
  EXPECT_TRUE(help->config_path.empty());
}

TEST(CommandLine, Errors) {
  expect_invalid(parse_args({"--training.stepz=1"}).status(),
                 {"--training.stepz", "unknown option"});
  expect_invalid(parse_args({"--steps=5"}).status(), {"did you mean --training.steps?"});
  expect_invalid(parse_args({"--training.steps=abc"}).status(),
                 {"command line --training.steps", "expected integer"});
  expect_invalid(parse_args({"--training.steps=1.5"}).status(), {"expected integer"});
  expect_invalid(parse_args({"--optimizer.lr=fast"}).status(), {"expected float"});
  expect_invalid(parse_args({"--checkpoint.enable=maybe"}).status(), {"expected boolean"});
  expect_invalid(parse_args({"--model.remat=bogus"}).status(), {"model.remat", "must be one of"});
  expect_invalid(parse_args({"run.toml"}).status(), {"unexpected argument \"run.toml\""});
  expect_invalid(parse_args({"--model.dim"}).status(), {"--model.dim", "needs a value"});
  expect_invalid(parse_args({"--config"}).status(), {"--config", "needs a value"});
  // Ranges are checked when the config is assembled, naming the command line.
  auto cl = parse_args({"--training.batch_size=0"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  expect_invalid(load_train_config(*cl).status(),
                 {"command line --training.batch_size: training.batch_size = 0: must be > 0"});
  expect_invalid(load_train_config("", {{"model.nope", "1"}}).status(), {"unknown option"});
}

TEST(TrainConfig, ToTomlRoundTrips) {
  auto defaults = parse_train_config(to_toml(TrainConfig{}));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(*defaults, TrainConfig{});

  auto moe = load_train_config(kMoe);
  ASSERT_TRUE(moe.ok()) << moe.status();
  TrainConfig c = *moe;
  c.job.description = "quotes \" backslash \\ newline \n tab \t bell \x07 del \x7f unicode é✓";
  c.training.dataset = "C:\\data\\corpus.txt";
  c.optimizer.lr = 1.0 / 3.0;
  c.optimizer.eps = 1e-300;
  c.model.norm_eps = 0.1 + 0.2;  // not 0.3: needs all 17 digits
  c.training.seed = -9000000000000000000;
  c.checkpoint.load_step = 12;
  ASSERT_TRUE(validate(c).ok());
  std::string text = to_toml(c);
  auto back = parse_train_config(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, c);
  EXPECT_NE(*back, TrainConfig{});
  EXPECT_NE(text.find("[lr_scheduler]\nwarmup_steps = 5  #"), std::string::npos) << text;
  EXPECT_NE(text.find("rope_theta = 500000.0"), std::string::npos) << text;
}

TEST(TrainConfig, Usage) {
  std::string u = usage("llama");
  EXPECT_EQ(u.rfind("usage: llama [--config=file.toml]", 0), 0u) << u;
  EXPECT_NE(u.find("--training.steps=<integer> (default 1000)"), std::string::npos) << u;
  EXPECT_NE(u.find("--model.remat=<string> (default \"none\")"), std::string::npos) << u;
  EXPECT_NE(u.find("none | dots | full"), std::string::npos) << u;
}

}  // namespace
}  // namespace graft::train
