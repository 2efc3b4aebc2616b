#include "core/backend/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace graft::cpu {
namespace {

thread_local bool in_parallel_region = false;

// One parallel region: its own chunk counter and completion count. A worker holds the job it
// woke up for (shared_ptr), so a late worker of a finished region only sees that region's
// exhausted counter and never mixes its state with the next region's (TSan caught a worker
// reading the shared counters while the next region reset them).
struct Job {
  const std::function<void(int64_t)>* fn = nullptr;  // valid while chunks remain undone
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  int64_t pending = 0;       // guarded by Pool::mu_
  std::exception_ptr error;  // guarded by Pool::mu_
};

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(chunk) for chunk in [0, chunks); blocks until all are done.
  void run(int64_t chunks, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> call_lock(call_mu_);  // one parallel region at a time
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->chunks = chunks;
    job->pending = chunks;
    {
      std::lock_guard<std::mutex> l(mu_);
      job_ = job;
      ++generation_;
    }
    cv_.notify_all();
    drain(*job);
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return job->pending == 0; });
    job_.reset();
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void drain(Job& job) {
    in_parallel_region = true;
    for (;;) {
      int64_t c = job.next.fetch_add(1);
      if (c >= job.chunks) break;
      try {
        (*job.fn)(c);
      } catch (...) {
        std::lock_guard<std::mutex> l(mu_);
        if (!job.error) job.error = std::current_exception();
      }
      std::lock_guard<std::mutex> l(mu_);
      if (--job.pending == 0) done_cv_.notify_all();
    }
    in_parallel_region = false;
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      drain(*job);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::shared_ptr<Job> job_;  // the region in progress, if any
  uint64_t generation_ = 0;
  bool stop_ = false;
};

int configured_threads() {
  if (const char* env = std::getenv("GRAFT_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

Pool& pool() {
  static Pool* p = new Pool(configured_threads());  // never destroyed: workers may outlive main
  return *p;
}

}  // namespace

int num_threads() { return pool().size(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for_aligned(n, grain, 1, fn);
}

void parallel_for_aligned(int64_t n, int64_t grain, int64_t align,
                          const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  align = std::max<int64_t>(align, 1);
  int64_t max_chunks = (n + grain - 1) / grain;
  int64_t chunks = std::min<int64_t>(max_chunks, in_parallel_region ? 1 : num_threads());
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  int64_t step = (n + chunks - 1) / chunks;
  step = (step + align - 1) / align * align;
  pool().run(chunks, [&](int64_t c) {
    int64_t begin = c * step;
    int64_t end = std::min(n, begin + step);
    if (begin < end) fn(begin, end);
  });
}

}  // namespace graft::cpu
