// Writes a small TensorBoard event file: tensorboard_demo <logdir>. Scalars follow closed
// forms (loss = 5 exp(-step / 40) + 1, lr = 1e-3 step / 10 then 1e-3) so a reader can check
// them; used with tools/check_tensorboard.py.
#include <cmath>
#include <iostream>

#include "examples/train/tensorboard.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tensorboard_demo <logdir>\n";
    return 2;
  }
  auto writer = graft::train::SummaryWriter::create(argv[1]);
  if (!writer.ok()) {
    std::cerr << writer.status() << "\n";
    return 1;
  }
  for (int step = 0; step <= 100; step += 10) {
    double loss = 5 * std::exp(-step / 40.0) + 1;
    double lr = step < 10 ? 1e-3 * step / 10 : 1e-3;
    auto s = writer->add_scalars({{"train/loss", loss}, {"train/lr", lr}}, step);
    if (!s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  (void)writer->add_scalar("val/loss", 2.5, 100);
  (void)writer->add_text("sample", "Once upon a time, graft wrote an event file.", 100);
  auto s = writer->close();
  if (!s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::cout << writer->path() << "\n";
  return 0;
}
