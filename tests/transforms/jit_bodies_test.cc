// jit's passes inside scan / cond / while_loop bodies: golden printed IR before and after
// optimize (fusion, CSE, simplification and DCE inside a body; scan DCE of unused carries, ys
// and xs; hoisting of loop invariants; a body's debug_print kept), and on each program
// jit == eager and grad(jit(f)) == grad(f) (while_loop: values only).
#include <cmath>
#include <string>

#include "core/backend/backend.h"
#include "core/ops.h"
#include "core/primitives/control.h"
#include "core/ir/effects.h"
#include "core/primitives/debug.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "tests/transforms/pass_test_util.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using pass_test::count;
using pass_test::expect_close;
using pass_test::f32;
using pass_test::program_of;
using pass_test::randn;

const ScanPrimitive& only_scan(const Program& p) {
  const ScanPrimitive* s = nullptr;
  for (const Instr& instr : p.instrs) {
    if (instr.prim->id() == PrimitiveId::kScan) {
      EXPECT_EQ(s, nullptr) << "more than one scan";
      s = static_cast<const ScanPrimitive*>(instr.prim.get());
    }
  }
  EXPECT_NE(s, nullptr);
  return *s;
}

// jit(f) == f and grad(jit(f)) == grad(f) (sum of the outputs) in both arguments.
template <typename F>
void expect_jit_matches(F f, const Array& a, const Array& b, bool differentiate = true) {
  std::vector<Array> want = f(a, b), got = jit(f)(a, b);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
  if (!differentiate) return;
  auto loss = [f](const Array& a, const Array& b) {
    Array s = Array(0.0f);
    for (const Array& o : f(a, b)) s = s + sum(o * o);
    return s;
  };
  auto [ga, gb] = grad(jit(loss), argnums<0, 1>)(a, b);
  auto [ea, eb] = grad(loss, argnums<0, 1>)(a, b);
  expect_close(ga, ea);
  expect_close(gb, eb);
  auto [ja, jb] = jit(grad(loss, argnums<0, 1>))(a, b);
  expect_close(ja, ea);
  expect_close(jb, eb);
}

// c <- tanh(c) + tanh(c) scaled by x; y = c * 2.
std::vector<Array> fuse_cse_dce(const Array& c0, const Array& xs) {
  auto [c, ys] = scan(
      [](const Array& c, const Array& x) {
        Array t = tanh(c) + tanh(c);    // CSE: one tanh
        Array n = (t * 1.0) * x + 0.5;  // x * 1 goes, and its broadcast of 1 with it (DCE)
        return std::pair{n, n * 2.0};
      },
      c0, xs);
  return {c, ys};
}

TEST(JitBodiesTest, FusionCseAndDceInsideAScanBody) {
  Program p = program_of([](const std::vector<Array>& in) { return fuse_cse_dce(in[0], in[1]); },
                         {f32({3}), f32({5, 3})});
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[3] b:f32[5,3]. let\n"
            "    c:f32[3] d:f32[5,3] = scan[length=5 reverse=false num_consts=0 num_carry=1\n"
            "      body={ lambda e:f32[3] f:f32[3] g:f32[3] ; h:f32[3] i:f32[3]. let\n"
            "          j:f32[3] = tanh h\n"
            "          k:f32[3] = tanh h\n"
            "          l:f32[3] = add j k\n"
            "          m:f32[3] = mul l e\n"
            "          n:f32[3] = mul m i\n"
            "          o:f32[3] = add n f\n"
            "          p:f32[3] = mul o g\n"
            "        in (o, p) }\n"
            "    ] a b\n"
            "  in (c, d) }");
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda ; a:f32[3] b:f32[5,3]. let\n"
            "    c:f32[3] d:f32[5,3] = scan[length=5 reverse=false num_consts=0 num_carry=1\n"
            "      body={ lambda e:f32[3] f:f32[3] ; g:f32[3] h:f32[3]. let\n"
            "          i:f32[3] j:f32[3] = fused_elementwise[\n"
            "            body={ lambda ; k:f32[3] l:f32[3] m:f32[3] n:f32[3]. let\n"
            "                o:f32[3] = tanh k\n"
            "                p:f32[3] = add o o\n"
            "                q:f32[3] = mul p l\n"
            "                r:f32[3] = add q m\n"
            "                s:f32[3] = mul r n\n"
            "              in (r, s) }\n"
            "          ] g h e f\n"
            "        in (i, j) }\n"
            "    ] a b\n"
            "  in (c, d) }");
  expect_jit_matches(fuse_cse_dce, randn({3}, 1), randn({5, 3}, 2));
}

// carries (a, b, d) over xs (x1, x2): a <- a + b * x1 reads b, so b stays although its final
// value is unused; d <- d + x2 is not read by anything used, so it goes, and x2 with it; of the
// ys (a * 2, d * 3), the second goes.
std::vector<Array> dead_carries(const Array& init, const Array& xs) {
  using Carry = std::tuple<Array, Array, Array>;
  auto [carry, ys] = scan(
      [](const Carry& c, const std::pair<Array, Array>& x) {
        auto [a, b, d] = c;
        Array a2 = a + b * x.first, b2 = b * 0.5, d2 = d + x.second;
        return std::pair{Carry{a2, b2, d2}, std::pair{a2 * 2.0, d2 * 3.0}};
      },
      Carry{init, init + 1.0, init * 2.0}, std::pair{xs, exp(xs)});
  return {std::get<0>(carry), ys.first};
}

TEST(JitBodiesTest, ScanDceDropsUnusedCarriesYsAndXs) {
  Program p = program_of([](const std::vector<Array>& in) { return dead_carries(in[0], in[1]); },
                         {f32({3}), f32({4, 3})});
  EXPECT_EQ(only_scan(p).num_carry(), 3);
  EXPECT_EQ(only_scan(p).num_xs(), 2);
  EXPECT_EQ(only_scan(p).num_ys(), 2);
  Program q = optimize(p);
  EXPECT_EQ(
      print_program(q),
      "{ lambda a:f32[3] ; b:f32[3] c:f32[4,3]. let\n"
      "    d:f32[3] = add b a\n"
      "    e:f32[3] f:f32[3] g:f32[4,3] = scan[length=4 reverse=false num_consts=0 num_carry=2\n"
      "      body={ lambda h:f32[3] i:f32[3] ; j:f32[3] k:f32[3] l:f32[3]. let\n"
      "          m:f32[3] n:f32[3] = fused_elementwise[\n"
      "            body={ lambda ; o:f32[3] p:f32[3] q:f32[3] r:f32[3]. let\n"
      "                s:f32[3] = mul o p\n"
      "                t:f32[3] = add q s\n"
      "                u:f32[3] = mul t r\n"
      "              in (t, u) }\n"
      "          ] k l j i\n"
      "          v:f32[3] = mul k h\n"
      "        in (m, v, n) }\n"
      "    ] b d c\n"
      "  in (e, g) }");
  EXPECT_EQ(only_scan(q).num_carry(), 2);
  EXPECT_EQ(only_scan(q).num_xs(), 1);
  EXPECT_EQ(only_scan(q).num_ys(), 1);
  expect_jit_matches(dead_carries, randn({3}, 3), randn({4, 3}, 4));
}

// Values a body computes from outer values alone are computed outside at trace time (the
// body closes over their results), so invariant instructions in a body come from bodies that
// take their consts as inputs, as the bodies grad and vmap build do. Here w is such a const:
// exp(w) and sum(w) * 2 are the same on every iteration and move out; the broadcast of the
// sum to [3] (size-inflating) stays in the body.
std::vector<Array> invariants(const Array& w, const Array& xs) {
  FlatFn body = [](const std::vector<Array>& in) {  // [w, c, x]
    Array n = in[1] * exp(in[0]) + sum(in[0]) * 2.0 + in[2];
    return std::vector<Array>{n, sin(n)};
  };
  return detail::bind_scan(body, {w}, {zeros({3})}, {xs}, 4, false);
}

TEST(JitBodiesTest, HoistsScanInvariants) {
  Program p = program_of([](const std::vector<Array>& in) { return invariants(in[0], in[1]); },
                         {f32({3}), f32({4, 3})});
  EXPECT_EQ(print_program(p),
            "{ lambda a:f32[3] ; b:f32[3] c:f32[4,3]. let\n"
            "    d:f32[3] e:f32[4,3] = scan[length=4 reverse=false num_consts=1 num_carry=1\n"
            "      body={ lambda ; f:f32[3] g:f32[3] h:f32[3]. let\n"
            "          i:f32[3] = exp f\n"
            "          j:f32[3] = mul g i\n"
            "          k:f32[] = reduce_sum[axes=(0,)] f\n"
            "          l:f32[] = mul k 2.0:f32[]\n"
            "          m:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] l\n"
            "          n:f32[3] = add j m\n"
            "          o:f32[3] = add n h\n"
            "          p:f32[3] = sin o\n"
            "        in (o, p) }\n"
            "    ] b a c\n"
            "  in (d, e) }");
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda a:f32[3] ; b:f32[3] c:f32[4,3]. let\n"
            "    d:f32[] = reduce_sum[axes=(0,)] b\n"
            "    e:f32[3] = exp b\n"
            "    f:f32[] = mul d 2.0:f32[]\n"
            "    g:f32[3] h:f32[4,3] = scan[length=4 reverse=false num_consts=2 num_carry=1\n"
            "      body={ lambda ; i:f32[3] j:f32[] k:f32[3] l:f32[3]. let\n"
            "          m:f32[3] n:f32[3] = fused_elementwise[\n"
            "            body={ lambda ; o:f32[3] p:f32[3] q:f32[] r:f32[3]. let\n"
            "                s:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] q\n"
            "                t:f32[3] = mul o p\n"
            "                u:f32[3] = add t s\n"
            "                v:f32[3] = add u r\n"
            "                w:f32[3] = sin v\n"
            "              in (v, w) }\n"
            "          ] k i j l\n"
            "        in (m, n) }\n"
            "    ] e f a c\n"
            "  in (g, h) }");
  expect_jit_matches(invariants, randn({3}, 5), randn({4, 3}, 6));
}

// while sum(c) < 2 * limit: c = c * exp(|w| / 10 + 0.1) + 1, with explicit consts: limit * 2
// moves out of the predicate, exp(...) out of the body (after it, so the body's consts shift);
// then DCE drops the consts the bodies no longer read (limit and w).
std::vector<Array> while_invariant(const Array& w, const Array& c0) {
  FlatFn cond = [](const std::vector<Array>& in) {  // [limit, c]
    return std::vector<Array>{sum(in[1]) < in[0] * 2.0};
  };
  FlatFn body = [](const std::vector<Array>& in) {  // [w, c]
    return std::vector<Array>{in[1] * exp(abs(in[0]) * 0.1 + 0.1) + 1.0};
  };
  return detail::bind_while(cond, body, {Array(10.0f) + sum(w) * 0.0f}, {w}, {c0});
}

TEST(JitBodiesTest, HoistsWhileInvariants) {
  Program p = program_of([](const std::vector<Array>& in) { return while_invariant(in[0], in[1]); },
                         {f32({3}), f32({3})});
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[] = convert_element_type[new_dtype=f32] 10.0:f32[]{weak}\n"
            "    d:f32[] = reduce_sum[axes=(0,)] a\n"
            "    e:f32[] = convert_element_type[new_dtype=f32] 0.0:f32[]{weak}\n"
            "    f:f32[] = mul d e\n"
            "    g:f32[] = add c f\n"
            "    h:f32[3] = while_loop[cond_consts=1 body_consts=1\n"
            "      cond={ lambda ; i:f32[] j:f32[3]. let\n"
            "          k:f32[] = reduce_sum[axes=(0,)] j\n"
            "          l:f32[] = mul i 2.0:f32[]\n"
            "          m:bool[] = lt k l\n"
            "        in (m) }\n"
            "      body={ lambda n:f32[3] o:f32[3] p:f32[3] ; q:f32[3] r:f32[3]. let\n"
            "          s:f32[3] = abs q\n"
            "          t:f32[3] = mul s n\n"
            "          u:f32[3] = add t o\n"
            "          v:f32[3] = exp u\n"
            "          w:f32[3] = mul r v\n"
            "          x:f32[3] = add w p\n"
            "        in (x) }\n"
            "    ] g a b\n"
            "  in (h) }");
  EXPECT_EQ(
      print_program(optimize(p)),
      "{ lambda a:f32[3] ; b:f32[3] c:f32[3]. let\n"
      "    d:f32[] = reduce_sum[axes=(0,)] b\n"
      "    e:f32[] = fused_elementwise[\n"
      "      body={ lambda ; f:f32[] g:f32[] h:f32[] i:f32[]. let\n"
      "          j:f32[] = mul f g\n"
      "          k:f32[] = add h j\n"
      "          l:f32[] = mul k i\n"
      "        in (l) }\n"
      "    ] d 0.0:f32[] 10.0:f32[] 2.0:f32[]\n"
      "    m:f32[3] = fused_elementwise[\n"
      "      body={ lambda ; n:f32[3] o:f32[3]. let\n"
      "          p:f32[3] = abs n\n"
      "          q:f32[3] = mul p o\n"
      "          r:f32[3] = add q o\n"
      "          s:f32[3] = exp r\n"
      "        in (s) }\n"
      "    ] b a\n"
      "    t:f32[3] = while_loop[cond_consts=1 body_consts=1\n"
      "      cond={ lambda ; u:f32[] v:f32[3]. let\n"
      "          w:f32[] = reduce_sum[axes=(0,)] v\n"
      "          x:bool[] = lt w u\n"
      "        in (x) }\n"
      "      body={ lambda y:f32[3] ; z:f32[3] ba:f32[3]. let\n"
      "          bb:f32[3] = fused_elementwise[\n"
      "            body={ lambda ; bc:f32[3] bd:f32[3] be:f32[3]. let\n"
      "                bf:f32[3] = mul bc bd\n"
      "                bg:f32[3] = add bf be\n"
      "              in (bg) }\n"
      "          ] ba z y\n"
      "        in (bb) }\n"
      "    ] e m c\n"
      "  in (t) }");
  expect_jit_matches(while_invariant, randn({3}, 7), randn({3}, 8), false);
}

// exp(k) of a constant const k moves out and then folds; the body keeps what depends on its
// inputs: tanh of the carry, and x * w (w closed over, a const; x an x).
std::vector<Array> fold_after_hoist(const Array& w, const Array& xs) {
  FlatFn body = [w](const std::vector<Array>& in) {  // [k, c, x]
    return std::vector<Array>{tanh(in[1]) * exp(in[0]) + in[2] * w};
  };
  return detail::bind_scan(body, {array<float>({1, 2, 3})}, {zeros({3})}, {xs}, 4, false);
}

TEST(JitBodiesTest, FoldsHoistedConstantsNotBodyInputs) {
  Program p =
      program_of([](const std::vector<Array>& in) { return fold_after_hoist(in[0], in[1]); },
                 {f32({3}), f32({4, 3})});
  Program q = optimize(p);
  EXPECT_EQ(print_program(q),
            "{ lambda a:f32[3] b:f32[3] ; c:f32[3] d:f32[4,3]. let\n"
            "    e:f32[3] = scan[length=4 reverse=false num_consts=2 num_carry=1\n"
            "      body={ lambda ; f:f32[3] g:f32[3] h:f32[3] i:f32[3]. let\n"
            "          j:f32[3] = fused_elementwise[\n"
            "            body={ lambda ; k:f32[3] l:f32[3] m:f32[3] n:f32[3]. let\n"
            "                o:f32[3] = tanh k\n"
            "                p:f32[3] = mul o l\n"
            "                q:f32[3] = mul m n\n"
            "                r:f32[3] = add p q\n"
            "              in (r) }\n"
            "          ] h g i f\n"
            "        in (j) }\n"
            "    ] c b a d\n"
            "  in (e) }");
  // The scan's inputs: [w, exp(k)] (k itself is no longer read), the carry, the xs.
  const Instr& scan = q.instrs.back();
  ASSERT_EQ(scan.in.size(), 4u);
  const Array* k = q.constant(scan.in[1]);
  ASSERT_NE(k, nullptr);
  std::vector<float> v = k->to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(v[i], std::exp(float(i + 1)));
  expect_jit_matches(fold_after_hoist, randn({3}, 9), randn({4, 3}, 10));
}

// Passes reach every depth: a scan whose body holds a cond whose branch holds a scan.
std::vector<Array> nested(const Array& c0, const Array& xs) {
  auto [c, ys] = scan(
      [](const Array& c, const Array& x) {
        Array n = cond(
            sum(x) > 0.0,
            [](const Array& c, const Array& x) {
              auto [d, unused] = scan(
                  [&](const Array& d, const Array& t) {
                    Array e = tanh(d) * x + (t * 1.0) * tanh(d);
                    return std::pair{e, e * 2.0};  // y unused: goes
                  },
                  c, x);
              return d;
            },
            [](const Array& c, const Array& x) { return exp(c) + exp(c) - x; }, c, x);
        return std::pair{n, std::tuple<>{}};
      },
      c0, xs);
  return {c};
}

TEST(JitBodiesTest, PassesReachNestedBodies) {
  Program p = program_of([](const std::vector<Array>& in) { return nested(in[0], in[1]); },
                         {f32({3}), f32({4, 3})});
  EXPECT_EQ(
      print_program(p),
      "{ lambda ; a:f32[3] b:f32[4,3]. let\n"
      "    c:f32[3] = scan[length=4 reverse=false num_consts=0 num_carry=1\n"
      "      body={ lambda ; d:f32[3] e:f32[3]. let\n"
      "          f:f32[] = reduce_sum[axes=(0,)] e\n"
      "          g:bool[] = gt f 0.0:f32[]\n"
      "          h:i32[] = convert_element_type[new_dtype=i32] g\n"
      "          i:f32[3] = cond[branches=2\n"
      "            branch0={ lambda ; j:f32[3] k:f32[3]. let\n"
      "                l:f32[3] = exp j\n"
      "                m:f32[3] = exp j\n"
      "                n:f32[3] = add l m\n"
      "                o:f32[3] = sub n k\n"
      "              in (o) }\n"
      "            branch1={ lambda ; p:f32[3] q:f32[3]. let\n"
      "                r:f32[3] s:f32[3,3] = scan[length=3 reverse=false num_consts=1 num_carry=1\n"
      "                  body={ lambda t:f32[3] ; u:f32[3] v:f32[3] w:f32[]. let\n"
      "                      x:f32[3] = tanh v\n"
      "                      y:f32[3] = mul x u\n"
      "                      z:f32[] = mul w 1.0:f32[]\n"
      "                      ba:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] z\n"
      "                      bb:f32[3] = tanh v\n"
      "                      bc:f32[3] = mul ba bb\n"
      "                      bd:f32[3] = add y bc\n"
      "                      be:f32[3] = mul bd t\n"
      "                    in (bd, be) }\n"
      "                ] q p q\n"
      "              in (r) }\n"
      "          ] h d e\n"
      "        in (i) }\n"
      "    ] a b\n"
      "  in (c) }");
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda ; a:f32[3] b:f32[4,3]. let\n"
            "    c:f32[3] = scan[length=4 reverse=false num_consts=0 num_carry=1\n"
            "      body={ lambda ; d:f32[3] e:f32[3]. let\n"
            "          f:f32[] = reduce_sum[axes=(0,)] e\n"
            "          g:bool[] = gt f 0.0:f32[]\n"
            "          h:i32[] = convert_element_type[new_dtype=i32] g\n"
            "          i:f32[3] = cond[branches=2\n"
            "            branch0={ lambda ; j:f32[3] k:f32[3]. let\n"
            "                l:f32[3] = fused_elementwise[\n"
            "                  body={ lambda ; m:f32[3] n:f32[3]. let\n"
            "                      o:f32[3] = exp m\n"
            "                      p:f32[3] = add o o\n"
            "                      q:f32[3] = sub p n\n"
            "                    in (q) }\n"
            "                ] j k\n"
            "              in (l) }\n"
            "            branch1={ lambda ; r:f32[3] s:f32[3]. let\n"
            "                t:f32[3] = scan[length=3 reverse=false num_consts=1 num_carry=1\n"
            "                  body={ lambda ; u:f32[3] v:f32[3] w:f32[]. let\n"
            "                      x:f32[3] = fused_elementwise[\n"
            "                        body={ lambda ; y:f32[3] z:f32[3] ba:f32[]. let\n"
            "                            bb:f32[3] = broadcast_in_dim[shape=(3,) "
            "broadcast_dimensions=()] ba\n"
            "                            bc:f32[3] = tanh y\n"
            "                            bd:f32[3] = mul bc z\n"
            "                            be:f32[3] = mul bb bc\n"
            "                            bf:f32[3] = add bd be\n"
            "                          in (bf) }\n"
            "                      ] v u w\n"
            "                    in (x) }\n"
            "                ] s r s\n"
            "              in (t) }\n"
            "          ] h d e\n"
            "        in (i) }\n"
            "    ] a b\n"
            "  in (c) }");
  expect_jit_matches(nested, randn({3}, 11), randn({4, 3}, 12));
}

// The indentation of the line defining a `prim` value in `text`: 4 at the top level, 10 in
// a body (-1 if there is none, -2 if there are several).
int indent_of(const std::string& text, const std::string& prim) {
  int found = -1;
  size_t at = 0;
  while ((at = text.find("= " + prim + " ", at)) != std::string::npos) {
    size_t line = text.rfind('\n', at) + 1;
    found = found == -1 ? int(text.find_first_not_of(' ', line) - line) : -2;
    ++at;
  }
  return found;
}

// grad of a scan of tanh(c / w): the backward body computes square(w) for w's cotangent, the
// same on every iteration; jit moves it out of the loop.
TEST(JitBodiesTest, HoistsInvariantsOutOfBackwardScan) {
  auto loss = [](const Array& w, const Array& xs) {
    auto [c, ys] = scan(
        [&](const Array& c, const Array& x) {
          return std::pair{tanh(c / w) + x, std::tuple<>{}};
        },
        zeros({3}), xs);
    return sum(c * c);
  };
  auto g = grad(loss);
  Program traced =
      program_of([&](const std::vector<Array>& in) { return std::vector<Array>{g(in[0], in[1])}; },
                 {f32({3}), f32({4, 3})});
  EXPECT_EQ(indent_of(print_program(traced), "square"), 10);
  Array w = abs(randn({3}, 13)) + 2.0f, xs = randn({4, 3}, 14);
  EXPECT_EQ(indent_of(jit(g).as_text(w, xs), "square"), 4) << jit(g).as_text(w, xs);
  expect_close(jit(g)(w, xs), g(w, xs));
}

// grad of a scan whose final carry the loss reads: reverse mode's forward pass is one scan
// that also stacks what the body's pullback reads, so the backward scan does not run the
// body's matmul again (elementwise values are recomputed from the saved matmul output: cheaper
// than storing them). dot_general: 1 in the forward body, 2 in the backward one (the
// cotangents of c and w), not 3.
TEST(JitBodiesTest, GradSavesTheScanBodysResidualsInsteadOfRecomputing) {
  auto loss = [](const Array& w, const Array& xs) {
    auto [c, ys] = scan(
        [&](const Array& c, const Array& x) {
          Array n = tanh(matmul(c, w)) + x;
          return std::pair{n, sin(n)};
        },
        zeros({3}), xs);
    return sum(c * c) + sum(ys);
  };
  auto g = grad(loss);
  Program traced =
      program_of([&](const std::vector<Array>& in) { return std::vector<Array>{g(in[0], in[1])}; },
                 {f32({3, 3}), f32({4, 3})});
  EXPECT_EQ(count(print_program(traced), "= scan["), 2);
  Program q = optimize(traced);
  EXPECT_EQ(count(print_program(q), "= scan["), 2) << print_program(q);
  EXPECT_EQ(count(print_program(q), "dot_general"), 3) << print_program(q);
  Array w = randn({3, 3}, 15), xs = randn({4, 3}, 16);
  expect_close(jit(g)(w, xs), g(w, xs));
  expect_jit_matches([&](const Array& w, const Array& xs) { return std::vector<Array>{g(w, xs)}; },
                     w, xs);
  // The same gradient by central differences (an f64 loop, independent of the scan rules).
  std::vector<float> wv = w.to_vector<float>(), xv = xs.to_vector<float>();
  auto plain = [&](const std::vector<double>& wd) {
    double c[3] = {0, 0, 0}, total = 0;
    for (int t = 0; t < 4; ++t) {
      double m[3] = {0, 0, 0};
      for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) m[j] += c[i] * wd[i * 3 + j];
      }
      for (int j = 0; j < 3; ++j) {
        c[j] = std::tanh(m[j]) + xv[t * 3 + j];
        total += std::sin(c[j]);
      }
    }
    for (double v : c) total += v * v;
    return total;
  };
  std::vector<float> gv = g(w, xs).to_vector<float>();
  for (int k = 0; k < 9; ++k) {
    std::vector<double> hi(wv.begin(), wv.end()), lo = hi;
    hi[k] += 1e-5;
    lo[k] -= 1e-5;
    EXPECT_NEAR(gv[k], (plain(hi) - plain(lo)) / 2e-5, 1e-3) << k;
  }
}

// A program that computes the loop and its gradient runs the forward pass twice as traced (the
// primal scan, and reverse mode's forward scan that also saves residuals); CSE merges them into
// one scan computing both, so the optimized program has two scans, not three.
TEST(JitBodiesTest, MergesThePrimalScanWithReverseModesForwardScan) {
  auto loss = [](const Array& w, const Array& xs) {
    auto [c, ys] = scan(
        [&](const Array& c, const Array& x) {
          Array n = tanh(c * w) + x;
          return std::pair{n, sin(n)};
        },
        zeros({3}), xs);
    return sum(c * c) + sum(ys);
  };
  auto both = [&](const Array& w, const Array& xs) {
    return std::vector<Array>{loss(w, xs), grad(loss)(w, xs)};
  };
  Program traced = program_of(
      [&](const std::vector<Array>& in) { return both(in[0], in[1]); }, {f32({3}), f32({4, 3})});
  EXPECT_EQ(count(print_program(traced), "= scan["), 3);
  Program q = optimize(traced);
  EXPECT_EQ(count(print_program(q), "= scan["), 2) << print_program(q);
  Array w = randn({3}, 15), xs = randn({4, 3}, 16);
  expect_jit_matches(both, w, xs);
}

class JitBodiesPrintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = set_debug_print_sink([this](const std::string& s) { lines_.push_back(s); });
  }
  void TearDown() override { set_debug_print_sink(prev_); }
  std::vector<std::string> lines_;
  DebugSink prev_;
};

// c <- print(c) + t over ts = (1, 1, 1): prints c, c + 1, c + 2.
std::vector<Array> printing_scan(const Array& c0) {
  auto [c, ys] = scan(
      [](const Array& c, const Array& t) {
        return std::pair{debug_print("c = {}", c)[0] + t, std::tuple<>{}};
      },
      c0, ones({3}));
  return {c};
}

// A print in the body of a scan whose result is unused: the scan is an effect (traced and
// kept); CSE does not merge two applications of it, nor does folding run one at compile time.
TEST_F(JitBodiesPrintTest, BodyPrintsSurviveDceCseAndFolding) {
  auto f = jit([](const Array& x) {
    printing_scan(x);
    return x * 2.0f;
  });
  Array x = array<float>({5});
  EXPECT_EQ(f.as_text(x),
            "{ lambda a:f32[3] b:f32[1] ; c:f32[1]. let\n"
            "    d:f32[1] = scan[length=3 reverse=false num_consts=0 num_carry=1\n"
            "      body={ lambda ; e:f32[1] f:f32[]. let\n"
            "          g:f32[1] = debug_print[fmt=\"c = {}\"] e\n"
            "          h:f32[1] = fused_elementwise[\n"
            "            body={ lambda ; i:f32[1] j:f32[]. let\n"
            "                k:f32[1] = broadcast_in_dim[shape=(1,) broadcast_dimensions=()] j\n"
            "                l:f32[1] = add i k\n"
            "              in (l) }\n"
            "          ] g f\n"
            "        in (h) }\n"
            "    ] c a\n"
            "    m:f32[1] = mul c b\n"
            "  in (m) }");
  EXPECT_TRUE(lines_.empty());
  for (int call = 0; call < 2; ++call) {
    lines_.clear();
    EXPECT_EQ(f(x).to_vector<float>(), std::vector<float>{10});
    ASSERT_EQ(lines_.size(), 3u);
    EXPECT_EQ(lines_[0], "c = " + to_string(array<float>({5})));
    EXPECT_EQ(lines_[2], "c = " + to_string(array<float>({7})));
  }
  // The same scan instruction twice on the input, and once on a constant.
  std::vector<Array> effects;
  std::vector<Array>* prev = set_effect_collector(&effects);
  Graph g =
      trace_avals([](const std::vector<Array>& in) { return printing_scan(in[0]); }, {f32({1})});
  set_effect_collector(prev);
  Program p = *lower(g, effects);
  ASSERT_EQ(p.instrs.size(), 1u);
  Instr again = p.instrs[0], on_const = p.instrs[0];
  again.out = {p.add_value(p.avals[again.out[0]])};
  on_const.out = {p.add_value(p.avals[on_const.out[0]])};
  on_const.in[0] = p.add_constant(array<float>({1}));
  p.instrs.push_back(again);
  p.instrs.push_back(on_const);
  lines_.clear();
  Program q = optimize(p);
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(q.instrs.size(), 3u) << print_program(q);
  lines_.clear();
  default_backend().compile(std::make_shared<const Program>(q))->run({array<float>({5})});
  EXPECT_EQ(lines_.size(), 9u);
}

}  // namespace
}  // namespace graft
