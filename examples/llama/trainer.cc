#include "examples/llama/trainer.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include "checkpoint/hf.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "examples/llama/checkpointing.h"
#include "examples/llama/data_setup.h"
#include "examples/llama/model.h"
#include "examples/llama/optimizer.h"
#include "examples/llama/train_step.h"
#include "examples/train/mfu_peak.h"
#include "examples/train/progress.h"
#include "examples/train/tensorboard.h"

namespace graft::llama_train {
namespace {

// The next batch [B, T] as k micro-batches [k, B / k, T] (validate() checks k divides B).
std::pair<Array, Array> next_batches(data::TokenLoader& loader, int64_t k) {
  data::Batch b = loader.next();
  const int64_t B = b.inputs.shape()[0], T = b.inputs.shape()[1];
  return {reshape(b.inputs, {k, B / k, T}), reshape(b.targets, {k, B / k, T})};
}

class Run {
 public:
  Run(const train::TrainConfig& config, RunData& data, std::ostream& out, const RunOptions& options)
      : config_(config), data_(data), out_(out), options_(options) {}

  template <class Model>
  absl::StatusOr<TrainResult> train(const Model& model);

 private:
  absl::Status open_tensorboard();
  void log_scalars(const std::vector<std::pair<std::string, double>>& values, int64_t step);
  template <class Model, class EvalStep>
  double validate(const typename Model::Params& params, EvalStep& eval_step, int64_t step);
  template <class Model>
  std::string sample(const Model& model, const typename Model::Params& params);

  const train::TrainConfig& config_;
  RunData& data_;
  template <class Model>
  absl::Status load_hf(const Model& model, typename Model::Params& params);
  template <class Model>
  absl::Status export_hf(const Model& model, const typename Model::Params& params);

  std::ostream& out_;
  const RunOptions options_;
  std::optional<train::SummaryWriter> tb_;
  TrainResult result_;
};

absl::Status Run::open_tensorboard() {
  if (!config_.metrics.enable_tensorboard) return absl::OkStatus();
  auto w = train::SummaryWriter::create(under_dump_folder(config_, config_.metrics.save_tb_folder));
  if (!w.ok()) return w.status();
  tb_.emplace(std::move(*w));
  result_.tensorboard_file = tb_->path();
  out_ << "tensorboard: " << tb_->path() << "\n";
  return absl::OkStatus();
}

void Run::log_scalars(const std::vector<std::pair<std::string, double>>& values, int64_t step) {
  if (!tb_) return;
  absl::Status s = tb_->add_scalars(values, step);
  if (s.ok()) s = tb_->flush();
  if (!s.ok()) {  // metrics are not worth stopping a run for: say so once and stop logging
    out_ << "tensorboard: " << s << "; no more events are written\n";
    tb_.reset();
  }
}

template <class Model, class EvalStep>
double Run::validate(const typename Model::Params& params, EvalStep& eval_step, int64_t step) {
  train::Stopwatch watch;
  double total = 0;
  const int64_t n = data_.val->num_batches();
  for (int64_t i = 0; i < n; ++i) {
    data::Batch b = data_.val->batch(i);
    total += eval_step(params, b.inputs, b.targets).template item<float>();
  }
  const double loss = total / static_cast<double>(n);
  out_ << train::format_validation({.step = step,
                                    .total_steps = config_.training.steps,
                                    .loss = loss,
                                    .batches = n,
                                    .seconds = watch.seconds()})
       << " | unigram baseline " << result_.unigram_nats << "\n";
  result_.val_losses.emplace_back(step, loss);
  log_scalars({{"loss/val", loss}, {"loss/unigram_baseline", result_.unigram_nats}}, step);
  return loss;
}

template <class Model>
std::string Run::sample(const Model& model, const typename Model::Params& params) {
  const auto& s = config_.sample;
  std::vector<int32_t> prompt = data_.tokenizer->encode(s.prompt);
  if (prompt.empty()) prompt.push_back(data_.tokenizer->eot_id());
  Array p = array(prompt, Shape{1, static_cast<int64_t>(prompt.size())});
  const int64_t room = config_.training.seq_len - static_cast<int64_t>(prompt.size());
  const int64_t n = std::min(s.max_new_tokens, std::max<int64_t>(room, 0));
  Array key = random::fold_in(random::key(config_.training.seed), 0x5a3b1e);
  Array tokens = model.generate(params, p, n, s.temperature, s.top_k, key);
  return data_.tokenizer->decode(tokens.to_vector<int32_t>());
}

template <class Model>
absl::Status Run::load_hf(const Model& model, typename Model::Params& params) {
  const std::string& path = config_.checkpoint.initial_load_hf;
  auto names = model.hf_names();
  if (!names) return absl::InvalidArgumentError("checkpoint.initial_load_hf: dense Llama only");
  auto loaded = checkpoint::import_hf(path, params, *names);
  if (!loaded.ok()) return loaded.status();
  params = std::move(*loaded);
  out_ << "initial params from Hugging Face safetensors " << path << "\n";
  return absl::OkStatus();
}

template <class Model>
absl::Status Run::export_hf(const Model& model, const typename Model::Params& params) {
  auto names = model.hf_names();
  if (!names) return absl::InvalidArgumentError("checkpoint.export_hf: dense Llama only");
  const std::string path = under_dump_folder(config_, config_.checkpoint.export_hf);
  if (auto s = checkpoint::export_hf(path, params, *names); !s.ok()) return s;
  out_ << "exported params as Hugging Face safetensors: " << path << "\n";
  return absl::OkStatus();
}

template <class Model>
absl::StatusOr<TrainResult> Run::train(const Model& model) {
  using Params = typename Model::Params;
  const auto& t = config_.training;
  result_.unigram_nats = data_.prepared.unigram_nats;
  if (auto s = open_tensorboard(); !s.ok()) return s;
  if (!config_.checkpoint.export_hf.empty()) {  // fail before training, not after it
    if (!model.hf_names()) {
      return absl::InvalidArgumentError("checkpoint.export_hf: dense Llama only");
    }
    const std::filesystem::path dir =
        std::filesystem::path(under_dump_folder(config_, config_.checkpoint.export_hf))
            .parent_path();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::FailedPreconditionError("checkpoint.export_hf: cannot create " + dir.string() +
                                           ": " + ec.message());
    }
  }
  out_ << "model: " << model.describe() << "\n";

  const double flops_per_token = model.flops_per_token(t.seq_len);
  train::MfuPeak peak = train::MfuPeak::for_training(
      config_.metrics.peak_flops,
      config_.model.compute_dtype == "bfloat16" ? DType::kBF16 : DType::kF32, flops_per_token,
      out_);

  optim::Schedule schedule = make_schedule(config_);
  optim::GradientTransformation opt = make_optimizer(config_, schedule);
  Params params = model.init(random::key(t.seed));
  optim::State opt_state = opt.init(params);
  auto checkpoints = RunCheckpoints::open(config_, out_);
  if (!checkpoints.ok()) return checkpoints.status();
  RunCheckpoints* ckpt = checkpoints->get();
  if (ckpt != nullptr) {
    auto resumed = ckpt->restore(params, opt_state, *data_.train);
    if (!resumed.ok()) return resumed.status();
    result_.first_step = *resumed;
  }
  if (result_.first_step == 0 && !config_.checkpoint.initial_load_hf.empty()) {
    if (auto s = load_hf(model, params); !s.ok()) return s;
  }
  auto train_step = make_train_step(model, opt);
  auto eval_step = make_eval_step(model);

  const int64_t k = t.gradient_accumulation_steps;
  const double tokens_per_step = static_cast<double>(t.batch_size * t.seq_len);
  train::Stopwatch run_clock, interval_clock;
  train::StepTimer step_timer;
  double interval_loss = 0, train_seconds = 0;
  int64_t interval_steps = 0, timed_steps = 0;
  int64_t step = result_.first_step;
  while (step < t.steps) {
    auto [xs, ys] = next_batches(*data_.train, k);
    auto [new_params, new_state, metrics] = train_step(params, opt_state, xs, ys);
    params = std::move(new_params);
    opt_state = std::move(new_state);
    ++step;
    const double loss = metrics.at("loss").template item<float>();
    if (!std::isfinite(loss)) {
      return absl::InternalError("training diverged: loss " + std::to_string(loss) + " at step " +
                                 std::to_string(step) + " (lower [optimizer].lr or raise warmup)");
    }
    result_.step_losses.push_back(loss);
    interval_loss += loss;
    ++interval_steps;
    const bool last = step == t.steps;
    const bool out_of_time =
        t.time_limit_seconds > 0 && run_clock.seconds() >= t.time_limit_seconds;
    if (step % config_.metrics.log_freq == 0 || last || out_of_time) {
      const double seconds = interval_clock.lap();
      step_timer.record(interval_steps, seconds);
      if (step > result_.first_step + interval_steps) {  // the first interval includes compiling
        train_seconds += seconds;
        timed_steps += interval_steps;
      }
      const double tps = tokens_per_step * interval_steps / seconds;
      const double lr = schedule(step - 1);
      const double gnorm = metrics.at("grad_norm").template item<float>();
      const double mean_loss = interval_loss / interval_steps;
      out_ << train::format_progress({.step = step,
                                      .total_steps = t.steps,
                                      .loss = mean_loss,
                                      .lr = lr,
                                      .grad_norm = gnorm,
                                      .tokens_per_second = tps,
                                      .mfu_percent = peak.mfu_percent(tps),
                                      .elapsed_seconds = run_clock.seconds(),
                                      .eta_seconds = step_timer.eta_seconds(t.steps - step)})
           << "\n";
      std::vector<std::pair<std::string, double>> scalars = {
          {"loss/train", mean_loss},
          {"lr", lr},
          {"grad_norm", gnorm},
          {"throughput/tokens_per_second", tps},
          {"throughput/mfu_percent", peak.mfu_percent(tps)}};
      for (const auto& [name, v] : metrics) {
        if (name == "loss" || name == "grad_norm") continue;
        std::vector<float> values = astype(v, DType::kF32).template to_vector<float>();
        if (values.size() == 1) {
          out_ << "  " << name << " " << values[0];
          scalars.emplace_back(name, values[0]);
        } else {  // per-expert vectors: one tag per entry
          out_ << "  " << name << " [";
          for (size_t i = 0; i < values.size(); ++i) {
            out_ << (i ? " " : "") << values[i];
            scalars.emplace_back(name + "/" + std::to_string(i), values[i]);
          }
          out_ << "]";
        }
      }
      if (metrics.size() > 2) out_ << "\n";  // the model's own metrics, on a second line
      out_.flush();
      log_scalars(scalars, step);
      interval_loss = 0;
      interval_steps = 0;
    }
    if (ckpt != nullptr) {
      const bool final_step = last || out_of_time || step == options_.stop_after_step;
      if (auto s = ckpt->save(step, params, opt_state, *data_.train, loss, final_step); !s.ok()) {
        return s;
      }
    }
    if (step == options_.stop_after_step) {  // a test's simulated crash
      if (ckpt != nullptr) {
        if (auto s = ckpt->finish(); !s.ok()) return s;
      }
      result_.steps_done = step;
      return result_;
    }
    if (data_.val && config_.metrics.eval_freq > 0 && step % config_.metrics.eval_freq == 0 &&
        !last && !out_of_time) {
      validate<Model>(params, eval_step, step);
      interval_clock.lap();  // validation time is not training time
    }
    if (out_of_time) {
      out_ << "time limit of " << t.time_limit_seconds << " s reached at step " << step << "\n";
      break;
    }
  }
  result_.steps_done = step;
  if (ckpt != nullptr) {
    if (auto s = ckpt->finish(); !s.ok()) return s;
  }
  if (!config_.checkpoint.export_hf.empty()) {
    if (auto s = export_hf(model, params); !s.ok()) return s;
  }
  result_.tokens_per_second = timed_steps > 0 ? tokens_per_step * timed_steps / train_seconds : 0;
  peak.finish(result_.tokens_per_second);  // re-measured, the higher kept
  if (data_.val) validate<Model>(params, eval_step, step);
  if (config_.sample.max_new_tokens > 0) {
    result_.sample = sample(model, params);
    out_ << "sample (temperature " << config_.sample.temperature << ", top_k "
         << config_.sample.top_k << "):\n"
         << result_.sample << "\n";
    if (tb_) (void)tb_->add_text("sample", result_.sample, step);
  }
  if (tb_) {
    if (auto s = tb_->close(); !s.ok()) out_ << "tensorboard: " << s << "\n";
  }
  return result_;
}

}  // namespace

absl::StatusOr<TrainResult> run_training(const train::TrainConfig& config, std::ostream& out,
                                         const RunOptions& options) {
  if (auto s = train::validate(config); !s.ok()) return s;
  try {
    auto data = setup_data(config, out);
    if (!data.ok()) return data.status();
    Run run(config, *data, out, options);
    const int64_t vocab = data->tokenizer->vocab_size();
    if (config.model.n_routed_experts > 0) {
      auto moe = moe_llama_config(config.model, vocab);
      if (!moe.ok()) return moe.status();
      return run.train(MoELlama{*moe});
    }
    auto llama = llama_config(config.model, vocab);
    if (!llama.ok()) return llama.status();
    return run.train(DenseLlama{*llama});
  } catch (const Error& e) {  // a model or op misuse that slipped past validation
    return absl::InternalError(e.what());
  }
}

}  // namespace graft::llama_train
