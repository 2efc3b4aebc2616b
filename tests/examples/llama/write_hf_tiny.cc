// Writes the Hugging Face folders of hf_tiny.h with the exporter the training program uses:
//
//   bazel run //tests/examples/llama:write_hf_tiny -- $PWD/tests/examples/llama/testdata
//   python3 tools/make_hf_llama_vectors.py   # then records transformers' logits for them
#include <iostream>

#include "examples/llama/hf_config.h"
#include "tests/examples/llama/hf_tiny.h"

int main(int argc, char** argv) {
  using namespace graft::llama_train;
  if (argc != 2) {
    std::cerr << "usage: write_hf_tiny <testdata folder>\n";
    return 2;
  }
  for (bool tied : {false, true}) {
    const graft::nn::LlamaConfig c = hf_tiny_config(tied);
    const std::string dir = std::string(argv[1]) + "/" + hf_tiny_name(tied);
    absl::Status s =
        export_llama_hf(dir, hf_tiny_params(c), c, hf_tiny_extras(), hf_tiny_options(tied));
    if (!s.ok()) {
      std::cerr << "error: " << s << "\n";
      return 1;
    }
    std::cout << "wrote " << dir << "\n";
  }
  return 0;
}
