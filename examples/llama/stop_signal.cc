#include "examples/llama/stop_signal.h"

#include <signal.h>
#include <unistd.h>

namespace graft::llama_train {
namespace {

std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free int");

void say(const char* text, size_t n) {
  ssize_t ignored = ::write(STDERR_FILENO, text, n);
  (void)ignored;
}

void on_stop_signal(int sig) {
  int none = 0;
  if (g_stop.compare_exchange_strong(none, sig)) {
    static const char kFirst[] =
        "\nsignal received: stopping after this step (send it again to exit now)\n";
    say(kFirst, sizeof kFirst - 1);
    return;
  }
  static const char kSecond[] = "\nsecond signal: exiting now, without a checkpoint\n";
  say(kSecond, sizeof kSecond - 1);
  ::_exit(128 + sig);
}

}  // namespace

std::atomic<int>& stop_signal() { return g_stop; }

void install_stop_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace graft::llama_train
