#include "core/backend/cpu/device_streams.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/device/device.h"
#include "core/error.h"

namespace graft::cpu {

namespace {

thread_local int this_device = -1;

class Stream {
 public:
  explicit Stream(int device) : thread_([this, device] { loop(device); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void loop(int device) {
    this_device = device;
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

std::mutex streams_mu;  // guards the list and orders submissions (see the header)
std::vector<std::unique_ptr<Stream>>& streams(StreamPool pool) {
  // Threads live to exit.
  static auto* s = new std::vector<std::unique_ptr<Stream>>[2];
  return s[pool == StreamPool::kGpu ? 1 : 0];
}

bool is_abort(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return std::string(x.what()).find("another device of the shard_map failed") !=
           std::string::npos;
  } catch (...) {
    return false;
  }
}

}  // namespace

int current_device() { return this_device; }

void run_on_devices(const std::vector<int>& on, const std::function<void(int)>& fn,
                    StreamPool pool) {
  const int n = static_cast<int>(on.size());
  for (int d : on) {
    if (pool == StreamPool::kCpu && d >= local_device_count()) {
      fail("pmap", "needs device ", d, " of this process, it has ", local_device_count());
    }
  }
  if (this_device >= 0) fail("pmap", "a pmap cannot run on a device stream (pmap inside pmap)");
  struct Join {
    std::mutex mu;
    std::condition_variable cv;
    int left;
    std::vector<std::exception_ptr> errors;
  };
  auto join = std::make_shared<Join>();
  join->left = n;
  join->errors.resize(static_cast<size_t>(n));
  {
    std::lock_guard<std::mutex> lock(streams_mu);
    std::vector<std::unique_ptr<Stream>>& s = streams(pool);
    for (int k = 0; k < n; ++k) {
      while (static_cast<int>(s.size()) <= on[k])
        s.push_back(std::make_unique<Stream>(static_cast<int>(s.size())));
      s[on[k]]->submit([join, k, &fn] {
        try {
          fn(k);
        } catch (...) {
          join->errors[k] = std::current_exception();
        }
        std::lock_guard<std::mutex> l(join->mu);
        if (--join->left == 0) join->cv.notify_all();
      });
    }
  }
  std::unique_lock<std::mutex> lock(join->mu);
  join->cv.wait(lock, [&] { return join->left == 0; });
  std::exception_ptr first;
  for (const std::exception_ptr& e : join->errors) {
    if (!e) continue;
    if (!is_abort(e)) std::rethrow_exception(e);
    if (!first) first = e;
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace graft::cpu
