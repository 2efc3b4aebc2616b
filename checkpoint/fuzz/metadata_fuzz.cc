// libFuzzer target: the checkpoint metadata parser on arbitrary text (tools/fuzz_checkpoint.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checkpoint/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = graft::checkpoint::parse_metadata(text);
  if (m.ok()) {
    // Accepted documents are self-consistent and survive a round trip.
    for (const auto& item : m->items) {
      if (!item.is_json && static_cast<int64_t>(item.leaves.size()) != item.treedef.num_leaves) {
        __builtin_trap();
      }
    }
    auto again = graft::checkpoint::parse_metadata(graft::checkpoint::metadata_to_json(*m));
    if (!again.ok() || again->items.size() != m->items.size()) __builtin_trap();
  }
  return 0;
}
