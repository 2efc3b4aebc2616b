// The payoff of passes inside bodies, on the real model: Jitted::as_text of grad of the Llama
// loss (nn/llama.h, the tiny config, layers run by one scan) shows fused_elementwise groups
// inside the scan bodies (the forward layer and its backward), which the traced program does
// not have, and one forward scan where the traced program has two; jit(grad) equals grad.
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/llama.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"

namespace graft {
namespace {

// Lines with `what` inside the bodies of scan instructions (any depth) of a printed program.
int count_in_scan_bodies(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  std::vector<size_t> scans;  // indents of the scan instructions we are inside
  int n = 0;
  while (std::getline(in, line)) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    while (!scans.empty() && indent <= scans.back()) {
      bool closes = line.compare(indent, 1, "]") == 0 && indent == scans.back();
      scans.pop_back();
      if (closes) break;
    }
    if (!scans.empty() && line.find(what) != std::string::npos) ++n;
    if (line.find("= scan[") != std::string::npos) scans.push_back(indent);
  }
  return n;
}

// Scan instructions at the top level of a printed program.
int top_level_scans(const std::string& text) {
  int n = 0;
  for (size_t at = text.find("\n    "); at != std::string::npos; at = text.find("\n    ", at + 1)) {
    size_t end = text.find('\n', at + 1);
    std::string line = text.substr(at + 1, end - at - 1);
    if (line[4] != ' ' && line.find("= scan[") != std::string::npos) ++n;
  }
  return n;
}

TEST(JitLlamaTextTest, GradOfLlamaLossFusesInsideTheScanBodies) {
  nn::LlamaConfig c = nn::LlamaConfig::tiny();
  nn::LlamaParams params = nn::llama_init(c, random::key(0));
  Array tokens = random::randint(random::key(1), {2, 8}, 0, c.vocab_size);
  Array targets = random::randint(random::key(2), {2, 8}, 0, c.vocab_size);
  auto g = grad([c](const nn::LlamaParams& p, const Array& x, const Array& y) {
    return nn::llama_loss(p, x, y, c);
  });
  auto jg = jit(g);
  std::string text = jg.as_text(params, tokens, targets);
  int fused = count_in_scan_bodies(text, "fused_elementwise");
  EXPECT_GT(fused, 4) << text;
  std::cout << "fused groups in scan bodies: " << fused << "\n";
  std::string traced = make_graph(g)(params, tokens, targets).str();
  EXPECT_GT(count_in_scan_bodies(traced, "dot_general"), 4);  // the layer bodies are there
  EXPECT_EQ(count_in_scan_bodies(traced, "fused_elementwise"), 0);
  // One forward and one backward scan each for the layers and the loss's chunks. The loss's
  // forward scan stays under grad alone (its value is not returned): it computes each token's
  // max logit and sum of exponentials, which the backward scan reads instead of recomputing.
  int before = top_level_scans(traced), after = top_level_scans(text);
  std::cout << "top-level scans: traced " << before << ", optimized " << after << "\n";
  EXPECT_GE(before, 4);
  EXPECT_EQ(after, 4);
  std::vector<Array> got = tree_flatten(jg(params, tokens, targets)).first,
                     want = tree_flatten(g(params, tokens, targets)).first;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<double> u = got[i].to_vector<double>(), v = want[i].to_vector<double>();
    for (size_t k = 0; k < u.size(); ++k) ASSERT_NEAR(u[k], v[k], 1e-5 + 1e-3 * std::abs(v[k]));
  }
}

// The counter itself: only lines inside a scan's brackets count, at any depth; a fused
// group's body prints nested under it, but only the group's own line names it.
TEST(JitLlamaTextTest, CountsOnlyInsideScanBodies) {
  std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = fused_elementwise[\n"
      "      body={ lambda ; c:f32[3]. let\n"
      "          d:f32[3] = exp c\n"
      "        in (d) }\n"
      "    ] a\n"
      "    e:f32[3] = scan[length=2\n"
      "      body={ lambda ; f:f32[3]. let\n"
      "          g:f32[3] = fused_elementwise[\n"
      "            body={ lambda ; h:f32[3]. let\n"
      "                i:f32[3] = exp h\n"
      "              in (i) }\n"
      "          ] f\n"
      "          j:f32[3] = exp g\n"
      "        in (j) }\n"
      "    ] b\n"
      "    k:f32[3] = fused_elementwise[\n"
      "      body={ lambda ; l:f32[3]. let\n"
      "          m:f32[3] = exp l\n"
      "        in (m) }\n"
      "    ] e\n"
      "  in (k) }";
  EXPECT_EQ(count_in_scan_bodies(text, "fused_elementwise"), 1);
  EXPECT_EQ(count_in_scan_bodies(text, "exp"), 2);  // the fused body's and the scan's own
}

}  // namespace
}  // namespace graft
