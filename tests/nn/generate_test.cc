// Sampling: greedy decoding equals an argmax loop over llama_logits on the growing context
// (checks the fixed-buffer jitted step), top_k = 1 equals greedy, a fixed key is
// deterministic, top-k restricts the support, and bad arguments are errors.
#include "nn/generate.h"

#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/llama.h"

namespace graft::nn {
namespace {

struct Fixture {
  LlamaConfig c = LlamaConfig::tiny();
  LlamaParams p;
  Array prompt;
  Fixture() {
    // Larger weights than the default init so the logits are far from uniform.
    c.init_std = 0.2;
    p = llama_init(c, random::key(11));
    prompt = random::randint(random::key(12), {2, 5}, 0, c.vocab_size);
  }
};

TEST(GenerateTest, GreedyEqualsArgmaxLoop) {
  Fixture f;
  Array got = generate(f.p, f.c, f.prompt, 6, 0.0, 0, random::key(0));
  ASSERT_EQ(got.shape(), (Shape{2, 11}));
  Array ctx = f.prompt;
  for (int i = 0; i < 6; ++i) {
    Array logits = llama_logits(f.p, ctx, f.c);
    int64_t T = ctx.shape()[1];
    Array next = argmax(
        reshape(slice(logits, {0, T - 1, 0}, {2, T, f.c.vocab_size}), {2, f.c.vocab_size}), -1);
    ctx = concatenate({ctx, reshape(astype(next, DType::kI32), {2, 1})}, 1);
  }
  EXPECT_EQ(got.to_vector<int32_t>(), ctx.to_vector<int32_t>());
}

TEST(GenerateTest, TopK1IsGreedyAndAFixedKeyIsDeterministic) {
  Fixture f;
  Array greedy = generate(f.p, f.c, f.prompt, 5, 0.0, 0, random::key(0));
  Array top1 = generate(f.p, f.c, f.prompt, 5, 1.0, 1, random::key(3));
  EXPECT_EQ(top1.to_vector<int32_t>(), greedy.to_vector<int32_t>());
  Array a = generate(f.p, f.c, f.prompt, 5, 1.5, 0, random::key(4));
  Array b = generate(f.p, f.c, f.prompt, 5, 1.5, 0, random::key(4));
  EXPECT_EQ(a.to_vector<int32_t>(), b.to_vector<int32_t>());
  // The prompt is kept.
  EXPECT_EQ(slice(a, {0, 0}, {2, 5}).to_vector<int32_t>(), f.prompt.to_vector<int32_t>());
  // High temperature over 256 tokens: another key gives another sample.
  Array d = generate(f.p, f.c, f.prompt, 5, 1.5, 0, random::key(5));
  EXPECT_NE(a.to_vector<int32_t>(), d.to_vector<int32_t>());
}

TEST(GenerateTest, TopKRestrictsTheSupport) {
  // Logits 0..9: with top_k 3 only ids 7, 8, 9 may appear.
  Array logits = broadcast_to(reshape(arange(10.0, 0.0, -1.0, DType::kF32), {1, 10}), {500, 10});
  logits = flip(logits, {1});  // 1..10, largest at 9
  Array s = sample_logits(logits, 2.0, 3, random::key(7));
  std::vector<int32_t> v = s.to_vector<int32_t>();
  std::vector<int> seen(10, 0);
  for (int32_t t : v) seen[t]++;
  for (int i = 0; i < 7; ++i) EXPECT_EQ(seen[i], 0) << i;
  for (int i = 7; i < 10; ++i) EXPECT_GT(seen[i], 0) << i;
  EXPECT_EQ(sample_logits(logits, 0.0, 0, random::key(0)).to_vector<int32_t>()[0], 9);
}

TEST(GenerateTest, Errors) {
  Fixture f;
  EXPECT_THROW(generate(f.p, f.c, zeros({5}, DType::kI32), 2, 0.0, 0, random::key(0)), Error);
  EXPECT_THROW(generate(f.p, f.c, f.prompt, -1, 0.0, 0, random::key(0)), Error);
  EXPECT_THROW(generate(f.p, f.c, f.prompt, 2, -1.0, 0, random::key(0)), Error);
  EXPECT_THROW(generate(f.p, f.c, f.prompt, 2, 1.0, 1000, random::key(0)), Error);
  EXPECT_EQ(generate(f.p, f.c, f.prompt, 0, 0.0, 0, random::key(0)).shape(), (Shape{2, 5}));
}

}  // namespace
}  // namespace graft::nn
