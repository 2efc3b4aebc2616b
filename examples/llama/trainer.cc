#include "examples/llama/trainer.h"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/hf.h"
#include "core/buffer.h"
#include "core/device/device.h"
#include "core/distributed/agreement.h"
#include "core/distributed/mpi.h"
#include "core/distributed/world.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "examples/llama/checkpointing.h"
#include "examples/llama/data_setup.h"
#include "examples/llama/hf_config.h"
#include "examples/llama/memory_estimate.h"
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

// Whether to stop after this step, the same on every process: the signal any process received
// (mpirun forwards one to all, but a signal sent to one process reaches only it), and the time
// limit once any process's clock reached it. One exchange of 8 bytes per step under mpirun.
struct StopDecision {
  int sig = 0;
  bool out_of_time = false;
};
StopDecision agree_on_stop(int sig, bool out_of_time) {
  if (process_count() == 1) return {sig, out_of_time};
  const int32_t mine[2] = {sig, out_of_time ? 1 : 0};
  StopDecision d;
  for (const std::string& theirs : distributed::mpi::allgather(
           "stop", std::string(reinterpret_cast<const char*>(mine), sizeof mine))) {
    int32_t v[2] = {0, 0};
    std::memcpy(v, theirs.data(), std::min(theirs.size(), sizeof v));
    d.sig = std::max(d.sig, static_cast<int>(v[0]));
    d.out_of_time = d.out_of_time || v[1] != 0;
  }
  return d;
}

std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
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
  void log_progress(int64_t step, double lr, double seconds, const Metrics& metrics);
  absl::Status diverged(int64_t step, double loss, double gnorm, double pnorm,
                        RunCheckpoints* ckpt);
  absl::StatusOr<TrainResult> stopped(int64_t step, int sig, RunCheckpoints* ckpt);
  int pending_signal() const { return options_.stop_signal ? options_.stop_signal->load() : 0; }

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
  // Progress-line state: the interval since the last line.
  std::optional<train::MfuPeak> peak_;  // set once the model is known
  double interval_loss_ = 0;
  int64_t interval_steps_ = 0;
  train::Stopwatch run_clock_;
  train::StepTimer step_timer_;
};

absl::Status Run::open_tensorboard() {
  // Process 0 alone writes events (and exports): every process runs the same config.
  if (!config_.metrics.enable_tensorboard || process_index() != 0) return absl::OkStatus();
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
  Array tokens =
      model.generate(params, p, n, s.temperature, s.top_k, data_.tokenizer->vocab_size(), key);
  return data_.tokenizer->decode(tokens.to_vector<int32_t>());
}

template <class Model>
absl::Status Run::load_hf(const Model& model, typename Model::Params& params) {
  const std::string& path = config_.checkpoint.initial_load_hf;
  auto names = model.hf_names();
  if (!names) return absl::InvalidArgumentError("checkpoint.initial_load_hf: dense Llama only");
  checkpoint::HfImportOptions options;
  options.allow_unused = config_.checkpoint.initial_load_hf_allow_unused;
  options.allow_unused_name = "checkpoint.initial_load_hf_allow_unused = true";
  auto loaded = checkpoint::import_hf(path, params, *names, options);
  if (!loaded.ok()) return loaded.status();
  params = std::move(*loaded);
  out_ << "initial params from Hugging Face safetensors " << path << "\n";
  return absl::OkStatus();
}

template <class Model>
absl::Status Run::export_hf(const Model& model, const typename Model::Params& params) {
  if constexpr (!std::is_same_v<Model, DenseLlama>) {
    return absl::InvalidArgumentError("checkpoint.export_hf: dense Llama only");
  } else {
    const std::string path = under_dump_folder(config_, config_.checkpoint.export_hf);
    // Documents end with eot (data/prepare.h), so it starts the next one too, as GPT-2's
    // <|endoftext|> does.
    const int64_t eot = data_.tokenizer->eot_id();
    LlamaHfExtras extras{.bos_token_id = eot,
                         .eos_token_id = eot,
                         .max_position_embeddings = config_.training.seq_len};
    if (auto s = export_llama_hf(path, params, model.config, extras); !s.ok()) return s;
    out_ << "exported params as a Hugging Face Llama folder: " << path << "\n";
    return absl::OkStatus();
  }
}

void Run::log_progress(int64_t step, double lr, double seconds, const Metrics& metrics) {
  const auto& t = config_.training;
  step_timer_.record(interval_steps_, seconds);
  const double tps = double(t.batch_size * t.seq_len) * interval_steps_ / seconds;
  const double gnorm = metrics.at("grad_norm").template item<float>();
  const double mean_loss = interval_loss_ / interval_steps_;
  // Each process measured (or was given) its own peak: against it, its share of the tokens.
  const double mfu = peak_->mfu_percent(tps / process_count());
  // Measured memory: the allocator's high-water mark since the last line, and peak RSS.
  const double peak_bytes = static_cast<double>(Buffer::peak_bytes());
  Buffer::reset_peak_bytes();
  struct rusage usage {};
  const double rss_bytes = ::getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss * 1024.0 : -1;
  out_ << train::format_progress({.step = step,
                                  .total_steps = t.steps,
                                  .loss = mean_loss,
                                  .lr = lr,
                                  .grad_norm = gnorm,
                                  .tokens_per_second = tps,
                                  .mfu_percent = mfu,
                                  .memory_bytes_per_device = result_.memory_per_device,
                                  .peak_bytes = peak_bytes,
                                  .rss_bytes = rss_bytes,
                                  .elapsed_seconds = run_clock_.seconds(),
                                  .eta_seconds = step_timer_.eta_seconds(t.steps - step)})
       << "\n";
  std::vector<std::pair<std::string, double>> scalars = {{"loss/train", mean_loss},
                                                         {"lr", lr},
                                                         {"grad_norm", gnorm},
                                                         {"throughput/tokens_per_second", tps},
                                                         {"throughput/mfu_percent", mfu}};
  if (result_.memory_per_device >= 0) {
    scalars.emplace_back("memory/mib_per_device", result_.memory_per_device / (1 << 20));
  }
  scalars.emplace_back("memory/peak_mib", peak_bytes / (1 << 20));
  if (rss_bytes >= 0) scalars.emplace_back("memory/rss_mib", rss_bytes / (1 << 20));
  bool model_metrics = false;
  for (const auto& [name, v] : metrics) {
    if (name == "loss" || name == "grad_norm" || name == "param_norm") continue;
    model_metrics = true;
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
  if (model_metrics) out_ << "\n";  // the model's own metrics, on a second line
  out_.flush();
  log_scalars(scalars, step);
  interval_loss_ = 0;
  interval_steps_ = 0;
}

// Step `step` gave a non-finite loss or gradient (so the params of step - 1 are bad, and a
// held checkpoint of them is dropped) or a non-finite update (the params of step - 1 were
// fine: their held checkpoint is written). Nothing of `step` itself is saved.
absl::Status Run::diverged(int64_t step, double loss, double gnorm, double pnorm,
                           RunCheckpoints* ckpt) {
  const bool bad_gradient = !std::isfinite(loss) || !std::isfinite(gnorm);
  std::ostringstream os;
  os << "training diverged at step " << step << ": loss " << loss << ", grad norm " << gnorm;
  if (!bad_gradient) os << ", and the update made the params non-finite (norm " << pnorm << ")";
  if (ckpt != nullptr) {
    std::optional<int64_t> dropped;
    absl::Status s = absl::OkStatus();
    if (bad_gradient) {
      dropped = ckpt->discard();
    } else {
      s = ckpt->confirm();
    }
    if (absl::Status f = ckpt->finish(); s.ok()) s = f;
    if (!s.ok()) os << "; saving the last good step failed: " << s;
    os << "; nothing of step " << step;
    if (dropped) os << " or of step " << *dropped << " (whose params gave this)";
    os << " was saved";
    if (std::optional<int64_t> latest = ckpt->latest_step()) {
      os << "; the latest checkpoint is step " << *latest << " in " << ckpt->directory();
      if (bad_gradient && *latest == step - 1) {
        os << " (its own params gave this: resume from an earlier step with "
              "checkpoint.load_step)";
      }
    } else {
      os << "; there is no checkpoint yet";
    }
  }
  os << ". Lower optimizer.lr (now " << config_.optimizer.lr
     << ") or raise lr_scheduler.warmup_steps (now " << config_.lr_scheduler.warmup_steps
     << "), then rerun (a checkpoint resumes)";
  return absl::InternalError(os.str());
}

// A signal asked the run to stop after `step` (its checkpoint, if any, is being written).
absl::StatusOr<TrainResult> Run::stopped(int64_t step, int sig, RunCheckpoints* ckpt) {
  out_ << "stopped by " << signal_name(sig) << " after step " << step;
  if (ckpt != nullptr) {
    if (auto s = ckpt->finish(); !s.ok()) return s;
    std::optional<int64_t> latest = ckpt->latest_step();
    if (latest) {
      out_ << ": checkpoint of step " << *latest << " committed in " << ckpt->directory()
           << "; run the same command again to resume from it";
    }
  } else {
    out_ << " (checkpoint.enable is false: nothing was saved)";
  }
  out_ << "\n";
  out_.flush();
  result_.steps_done = step;
  result_.stop_signal = sig;
  return result_;
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
    if (process_index() == 0) {
      if (auto s = check_export_hf_path(config_); !s.ok()) return s;
    }
  }
  out_ << "model: " << model.describe() << "\n";
  // The checkpoint plan is checked before anything big is allocated or measured.
  auto checkpoints = RunCheckpoints::open(config_, out_);
  if (!checkpoints.ok()) return checkpoints.status();
  RunCheckpoints* ckpt = checkpoints->get();
  if (ckpt != nullptr) {
    auto resume = ckpt->resume_step();
    if (!resume.ok()) return resume.status();
    result_.first_step = *resume;
  }
  out_.flush();

  peak_.emplace(train::MfuPeak::for_training(
      config_.metrics.peak_flops,
      config_.model.compute_dtype == "bfloat16" ? DType::kBF16 : DType::kF32,
      model.flops_per_token(t.seq_len), out_));

  optim::Schedule schedule = make_schedule(config_);
  optim::GradientTransformation opt = make_optimizer(config_, schedule);
  Params params = model.init(random::key(t.seed));
  optim::State opt_state = opt.init(params);
  if (result_.first_step > 0) {
    if (auto s = ckpt->restore(result_.first_step, params, opt_state, *data_.train); !s.ok()) {
      return s;
    }
  }
  if (result_.first_step == 0 && !config_.checkpoint.initial_load_hf.empty()) {
    if (auto s = load_hf(model, params); !s.ok()) return s;
  }
  const std::vector<Device> gpus = t.device == "cuda" ? devices("cuda") : std::vector<Device>{};
  if (t.device == "cuda" && gpus.empty()) {
    return absl::FailedPreconditionError(
        "training.device = \"cuda\": no GPU (graft was built without --config=cuda, or no "
        "device is visible)");
  }
  if (result_.first_step > 0 && result_.first_step == t.steps) {
    out_ << "training.steps = " << t.steps << " is reached already: nothing to train\n";
  }
  const int64_t dp = config_.parallelism.data_parallel_replicate_degree;
  // On "cuda" the mesh is over the first GPUs and the placement below puts each block in its
  // GPU's memory (core/backend/device_shards.h); jit and eval run where their operands live.
  auto mesh = mesh_for(config_.parallelism, t.batch_size / t.gradient_accumulation_steps, out_,
                       t.device);
  if (!mesh.ok()) return mesh.status();
  if (t.device == "cuda" && !*mesh) {  // one GPU
    auto put = [&](const Array& a) { return device_put(a, gpus[0]); };
    params = tree_map(put, params);
    opt_state = tree_map(put, opt_state);
    out_ << "device: " << gpus[0].str() << "\n";
  } else if (t.device == "cuda") {
    out_ << "devices: " << (*mesh)->str() << "\n";
  }
  std::vector<Shape> experts;  // expert parallelism: the leaves split by expert (placement.h)
  if constexpr (std::is_same_v<Model, MoELlama>) {
    if (config_.parallelism.expert_parallel_degree > 1) {
      experts = {params.moe_layers.moe.w1.shape(), params.moe_layers.moe.w2.shape()};
    }
  }
  if (*mesh) {
    opt_state = place_state(opt_state, params, **mesh, experts);
    params = place_params(params, **mesh, experts);
  }
  {
    // What the layouts leave on each device before any step runs (the gradients counted in
    // their params' layouts).
    const double p = bytes_per_device(params), st = bytes_per_device(opt_state);
    out_ << "per device: params " << bytes_str(p) << " + grads " << bytes_str(p)
         << " + optimizer state " << bytes_str(st) << " = " << bytes_str(2 * p + st)
         << ", activations not included\n";
  }
  if (!experts.empty()) {
    out_ << "experts split over the " << config_.parallelism.expert_parallel_degree
         << " dp_shard devices\n";
  }
  auto train_step = make_train_step(model, opt, *mesh ? 1 : dp, *mesh, experts);
  auto eval_step = make_eval_step(model);

  const int64_t k = t.gradient_accumulation_steps;
  const double tokens_per_step = static_cast<double>(t.batch_size * t.seq_len);
  train::Stopwatch interval_clock;
  run_clock_.reset();
  double train_seconds = 0;
  int64_t timed_steps = 0;
  int64_t step = result_.first_step;
  while (step < t.steps) {
    auto [xs, ys] = next_batches(*data_.train, k);
    if (*mesh) {
      xs = place_batch(xs, **mesh);
      ys = place_batch(ys, **mesh);
    }
    auto [new_params, new_state, metrics] = train_step(params, opt_state, xs, ys);
    params = std::move(new_params);
    opt_state = std::move(new_state);
    ++step;
    if (step == result_.first_step + 1) {
      // Once, from the compiled step's buffer plan (a lookup: the same layouts as this call's).
      result_.memory_per_device = step_bytes_per_device(
          train_step.memory_analysis(params, opt_state, xs, ys), params, opt_state, xs, ys);
    }
    // Checked before anything of this step is logged or saved.
    const double loss = metrics.at("loss").template item<float>();
    const double gnorm = metrics.at("grad_norm").template item<float>();
    const double pnorm = metrics.at("param_norm").template item<float>();
    if (!std::isfinite(loss) || !std::isfinite(gnorm) || !std::isfinite(pnorm)) {
      return diverged(step, loss, gnorm, pnorm, ckpt);
    }
    result_.step_losses.push_back(loss);
    interval_loss_ += loss;
    ++interval_steps_;
    const bool last = step == t.steps;
    const auto [sig, out_of_time] = agree_on_stop(
        pending_signal(), t.time_limit_seconds > 0 && run_clock_.seconds() >= t.time_limit_seconds);
    if (step % config_.metrics.log_freq == 0 || last || out_of_time || sig != 0) {
      const double seconds = interval_clock.lap();
      if (step > result_.first_step + interval_steps_) {  // the first interval includes compiling
        train_seconds += seconds;
        timed_steps += interval_steps_;
      }
      log_progress(step, schedule(step - 1), seconds, metrics);
    }
    const bool final_step = last || out_of_time || sig != 0 || step == options_.stop_after_step;
    if (ckpt != nullptr) {
      if (auto s = ckpt->save(step, params, opt_state, *data_.train, loss, final_step); !s.ok()) {
        return s;
      }
    }
    if (sig != 0) return stopped(step, sig, ckpt);
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
  result_.train_step_compiles = train_step.stats().misses;
  result_.param_layouts = layouts(params);
  if (ckpt != nullptr) {
    if (auto s = ckpt->finish(); !s.ok()) return s;
  }
  if (int sig = agree_on_stop(pending_signal(), false).sig; sig != 0) {
    return stopped(step, sig, ckpt);
  }
  if (!config_.checkpoint.export_hf.empty() && process_index() == 0) {
    if (auto s = export_hf(model, params); !s.ok()) return s;
  }
  result_.tokens_per_second = timed_steps > 0 ? tokens_per_step * timed_steps / train_seconds : 0;
  peak_->finish(result_.tokens_per_second / process_count());  // re-measured, the higher kept
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

// Checks that need the tokenizer: sampling draws from the tokenizer's ids only.
absl::Status check_sampling(const train::TrainConfig& config, int64_t tokenizer_vocab) {
  const auto& s = config.sample;
  if (s.max_new_tokens > 0 && s.top_k > tokenizer_vocab) {
    return absl::InvalidArgumentError(
        "sample.top_k = " + std::to_string(s.top_k) + " is larger than the tokenizer's " +
        std::to_string(tokenizer_vocab) + " ids that sampling draws from; use at most " +
        std::to_string(tokenizer_vocab) + ", or 0 for all of them");
  }
  return absl::OkStatus();
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

std::string memory_hint(const std::optional<MemoryEstimate>& m) {
  if (!m) return "";
  std::string s = "; params + grads + optimizer state need an estimated " + bytes_str(m->bytes) +
                  " (" + number(m->bytes) + " bytes)";
  if (m->machine_bytes > 0)
    s += ", this machine has " + bytes_str(m->machine_bytes) + " (RAM + swap)";
  return s + "; make the model smaller ([model] dim, n_layers, ffn_dim, vocab_size)";
}

// A step's activations grow with the micro-batch's tokens: an allocation that fails while
// training names them and the keys that shrink them.
std::string activation_hint(const train::TrainConfig& c) {
  const int64_t k = std::max<int64_t>(1, c.training.gradient_accumulation_steps);
  const int64_t rows = c.training.batch_size / k;
  return absl::StrCat("; a micro-batch holds the activations of training.batch_size / "
                      "training.gradient_accumulation_steps x training.seq_len = ",
                      rows, " x ", c.training.seq_len, " = ", rows * c.training.seq_len,
                      " tokens: lower training.batch_size or training.seq_len, or raise "
                      "training.gradient_accumulation_steps");
}

// Every process of a run must train the same config: the first exchange of a multi-process
// run compares them, so a flag given to one process only is an error naming the key on
// every process, before anything is computed.
absl::Status check_processes_agree(const train::TrainConfig& config) {
  std::vector<distributed::Fact> facts;
  for (auto& [key, value] : train::key_values(config)) facts.push_back({key, value});
  try {
    if (auto why = distributed::disagreement("config", facts)) {
      return absl::InvalidArgumentError(
          *why + " (every process of a run takes the same config file and flags)");
    }
  } catch (const DistributedError& e) {
    return absl::UnavailableError(e.what());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainResult> run_training(const train::TrainConfig& given, std::ostream& out,
                                         const RunOptions& options) {
  // A bad GRAFT_CPU_DEVICES is the user's setting: InvalidArgument naming it, before anything
  // (it would otherwise surface from the first op as an internal error).
  if (auto n = cpu_device_count_from_env(std::getenv("GRAFT_CPU_DEVICES")); !n.ok()) {
    return n.status();
  }
  if (auto s = check_processes_agree(given); !s.ok()) return s;
  train::TrainConfig config = given;
  if (auto s = apply_from_hf_config(config); !s.ok()) return s;  // model.from_hf_config
  if (auto s = train::validate(config); !s.ok()) return s;
  std::optional<MemoryEstimate> memory;
  try {
    // Under mpirun process 0 prepares the data; the others then find it prepared and read it.
    const bool first = process_index() == 0;
    absl::Status prepared = first ? absl::OkStatus() : distributed::barrier("data prepared");
    if (!prepared.ok()) return prepared;
    auto data = setup_data(config, out);
    if (first && process_count() > 1) {
      if (absl::Status s = distributed::barrier("data prepared"); !s.ok()) return s;
    }
    if (!data.ok()) return data.status();
    const int64_t vocab = data->tokenizer->vocab_size();
    if (auto s = check_sampling(config, vocab); !s.ok()) return s;
    const int64_t model_vocab = config.model.vocab_size == 0 ? vocab : config.model.vocab_size;
    memory = estimate_memory(config, model_vocab);
    out << describe(*memory, config) << std::endl;
    if (memory->too_big() || memory->params >= 0x1p63) {
      return absl::ResourceExhaustedError(
          "the model is too big for this machine: " + number(memory->params) + " parameters" +
          memory_hint(memory));
    }
    Run run(config, *data, out, options);
    if (config.model.n_routed_experts > 0) {
      if (!config.checkpoint.initial_load_hf.empty()) {
        return absl::InvalidArgumentError("checkpoint.initial_load_hf: dense Llama only");
      }
      auto moe = moe_llama_config(config.model, vocab);
      if (!moe.ok()) return moe.status();
      const auto& par = config.parallelism;
      if (par.expert_parallel_degree > 1) {  // validate() made it data_parallel_shard_degree
        moe->moe.sharding = nn::MoESharding{
            fsdp_mesh(par.data_parallel_replicate_degree, par.data_parallel_shard_degree),
            "dp_shard"};
      }
      return run.train(MoELlama{*moe});
    }
    auto llama = llama_config(config.model, vocab);
    if (!llama.ok()) return llama.status();
    if (auto s = check_initial_hf_config(config, *llama); !s.ok()) return s;
    return run.train(DenseLlama{*llama});
  } catch (const std::bad_alloc&) {
    out.flush();
    return absl::ResourceExhaustedError("out of memory (std::bad_alloc)" +
                                        activation_hint(config) + memory_hint(memory));
  } catch (const AllocError& e) {  // names the bytes it asked for
    out.flush();
    return absl::ResourceExhaustedError(e.what() + activation_hint(config) + memory_hint(memory));
  } catch (const DistributedError& e) {  // another process died, hangs or runs something else
    out.flush();
    return absl::UnavailableError(e.what());
  } catch (const Error& e) {  // a model or op misuse that slipped past validation: a bug
    out.flush();
    return absl::InternalError(e.what());
  }
}

}  // namespace graft::llama_train
