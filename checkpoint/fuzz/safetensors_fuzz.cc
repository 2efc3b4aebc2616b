// libFuzzer target: the safetensors header parser on arbitrary bytes (tools/fuzz_checkpoint.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checkpoint/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto h = graft::checkpoint::parse_safetensors_bytes(bytes);
  if (h.ok()) {
    // Whatever the parser accepts must lie inside the input.
    for (const auto& t : h->tensors) {
      if (h->data_start + t.end > size || t.begin > t.end) __builtin_trap();
    }
  }
  return 0;
}
