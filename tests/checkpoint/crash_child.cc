// Saves crash_items(step) for step = latest + 1, latest + 2, ... until it is killed.
// Usage: crash_child <dir> <async 0|1>
#include <cstdio>
#include <cstdlib>

#include "checkpoint/manager.h"
#include "tests/checkpoint/crash_common.h"

int main(int argc, char** argv) {
  using namespace graft::checkpoint;
  if (argc != 3) {
    std::fprintf(stderr, "usage: crash_child <dir> <async>\n");
    return 2;
  }
  auto mgr =
      CheckpointManager::open(argv[1], {.max_to_keep = 3, .enable_async = argv[2][0] == '1'});
  if (!mgr.ok()) {
    std::fprintf(stderr, "crash_child: %s\n", std::string(mgr.status().message()).c_str());
    return 1;
  }
  int64_t step = (*mgr)->latest_step().value_or(0) + 1;
  std::fputs("R", stdout);  // the parent starts its random delay now
  std::fflush(stdout);
  for (;; ++step) {
    absl::Status s = (*mgr)->save(step, testing::crash_items(step));
    if (!s.ok()) {
      std::fprintf(stderr, "crash_child: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
}
