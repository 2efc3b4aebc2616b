// How much of the JAX API graft provides, in three numbers per module:
//   present  a call of graft's version compiles and runs (the entries of *_entries.cc);
//   checked  present, and the call's result equals JAX's for the same call
//            (testdata/api_coverage_vectors.txt, recorded by tools/make_api_coverage_vectors.py
//            with JAX 0.10.2 / Optax 0.2.8: dtype and shape exactly, values within the
//            entry's tolerance);
//   limited  present, with a documented limitation (limitations.cc, printed in full).
// The universes: jax.numpy / jnp.linalg / jnp.fft, the 275 names an audit of 382 found missing
// or partial (jax_api_checklist.txt, one per line; the audit's other 107 were present then and
// are not listed one by one), and the Optax and jax.nn names below.
// The test fails when a present or checked count drops below its floor (kFloors), when the
// limitations grow past kMostLimited, when a limitation's probe stops failing, when a
// recorded result has no entry, or when docs/arrays-and-ops.md's "JAX API coverage" block is
// not the table and list it prints.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "gtest/gtest.h"
#include "tests/api/api_entry.h"
#include "tests/api/api_vectors.h"
#include "tests/util/doc_block.h"

namespace graft::api {
namespace {

const std::vector<std::string> kOptax = {"rmsprop",
                                         "adagrad",
                                         "lamb",
                                         "lars",
                                         "adamax",
                                         "nadam",
                                         "radam",
                                         "muon",
                                         "clip",
                                         "ema",
                                         "multi_transform",
                                         "inject_hyperparams",
                                         "apply_if_finite",
                                         "zero_nans",
                                         "apply_every",
                                         "exponential_decay",
                                         "piecewise_constant_schedule",
                                         "polynomial_schedule",
                                         "cosine_onecycle_schedule",
                                         "softmax_cross_entropy",
                                         "softmax_cross_entropy_with_integer_labels",
                                         "l2_loss",
                                         "huber_loss",
                                         "sigmoid_binary_cross_entropy",
                                         "kl_divergence"};
const std::vector<std::string> kJaxNn = {"relu",
                                         "relu6",
                                         "softplus",
                                         "log_sigmoid",
                                         "leaky_relu",
                                         "elu",
                                         "celu",
                                         "selu",
                                         "glu",
                                         "mish",
                                         "hard_sigmoid",
                                         "hard_silu",
                                         "hard_tanh",
                                         "squareplus",
                                         "standardize",
                                         "dot_product_attention",
                                         "initializers.lecun_uniform",
                                         "initializers.lecun_normal",
                                         "initializers.orthogonal",
                                         "initializers.uniform"};

const char* const kModules[] = {"jnp", "jnp.linalg", "jnp.fft", "optax", "jax.nn"};

// Counts as of this commit: present and checked may only grow.
struct Floor {
  int present, checked;
};
const std::map<std::string, Floor> kFloors = {{"jnp", {229, 229}},
                                              {"jnp.linalg", {28, 28}},
                                              {"jnp.fft", {18, 18}},
                                              {"optax", {25, 25}},
                                              {"jax.nn", {20, 20}}};
// The documented limitations may only shrink.
constexpr int kMostLimited = 32;

std::vector<std::string> checklist() {
  std::ifstream in("tests/api/jax_api_checklist.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') names.push_back(line);
  }
  return names;
}

std::string module_of(const std::string& checklist_name) {
  if (checklist_name.rfind("linalg.", 0) == 0) return "jnp.linalg";
  if (checklist_name.rfind("fft.", 0) == 0) return "jnp.fft";
  return "jnp";
}

std::vector<Entry> all_entries() {
  std::vector<Entry> all;
  for (auto part : {jnp_entries, linalg_fft_entries, optax_nn_entries}) {
    std::vector<Entry> es = part();
    all.insert(all.end(), es.begin(), es.end());
  }
  return all;
}

using Names = std::map<std::string, std::set<std::string>>;  // module -> names

struct Counts {
  Names present, checked, limited;
};

// Runs every entry and compares it with JAX's recorded result where there is one.
Counts run_entries(const std::map<std::string, std::vector<std::string>>& universe) {
  const std::map<std::string, Recorded> recorded =
      load_recorded("tests/api/testdata/api_coverage_vectors.txt");
  EXPECT_FALSE(recorded.empty()) << "tests/api/testdata/api_coverage_vectors.txt not read";
  Counts c;
  std::set<std::string> keys;
  for (const Entry& e : all_entries()) {
    const std::string key = key_of(e.module, e.name);
    SCOPED_TRACE(key);
    const auto& names = universe.at(e.module);
    EXPECT_NE(std::find(names.begin(), names.end(), e.name), names.end())
        << "not a name of the module's list";
    EXPECT_TRUE(keys.insert(key).second) << "listed twice";
    Array got;
    try {
      got = e.call();
      got.buffer();
    } catch (const std::exception& ex) {
      ADD_FAILURE() << "threw: " << ex.what();
      continue;
    }
    c.present[e.module].insert(e.name);
    auto it = recorded.find(key);
    if (it == recorded.end()) continue;
    const std::string diff = compare(got, it->second, e.tol);
    EXPECT_EQ(diff, "") << "differs from JAX's result";
    if (diff.empty()) c.checked[e.module].insert(e.name);
  }
  for (const auto& [key, r] : recorded) {
    EXPECT_TRUE(keys.count(key)) << key << ": JAX's result recorded, but no entry makes the call";
  }
  return c;
}

TEST(ApiCoverageTest, CountsNeverDropAndTheTableIsPrinted) {
  const std::vector<std::string> listed = checklist();
  ASSERT_EQ(listed.size(), 275u) << "tests/api/jax_api_checklist.txt not read";
  std::map<std::string, std::vector<std::string>> universe;
  for (const std::string& n : listed) universe[module_of(n)].push_back(n);
  universe["optax"] = kOptax;
  universe["jax.nn"] = kJaxNn;

  Counts c = run_entries(universe);

  // The limitations: each of a present name, each probe still refused.
  std::ostringstream limits, refusals;
  int limited_total = 0;
  for (const Limitation& l : limitations()) {
    SCOPED_TRACE(key_of(l.module, l.name));
    EXPECT_TRUE(c.present[l.module].count(l.name)) << "a limitation of a name not present";
    EXPECT_TRUE(c.limited[l.module].insert(l.name).second) << "listed twice";
    if (l.probe) {
      try {
        l.probe();
        ADD_FAILURE() << "the probe runs: the limitation is gone, remove it";
      } catch (const Error& e) {
        refusals << key_of(l.module, l.name) << ": " << e.what() << "\n";
      }
    }
    const std::string prefix = l.module == "jnp.linalg" || l.module == "jnp.fft" ? "jnp" : l.module;
    limits << "- `" << prefix << "." << l.name << "`: " << l.what << "\n";
    ++limited_total;
  }
  EXPECT_LE(limited_total, kMostLimited) << "more documented limitations than before";

  std::ostringstream table, missing;
  table << "| module | present | checked against JAX | with a documented limitation | of |\n"
           "| --- | --- | --- | --- | --- |\n";
  int present_total = 0, checked_total = 0, names_total = 0;
  for (const char* mod : kModules) {
    const auto& names = universe[mod];
    const int have = static_cast<int>(c.present[mod].size());
    const int checked = static_cast<int>(c.checked[mod].size());
    const int limited = static_cast<int>(c.limited[mod].size());
    EXPECT_GE(have, kFloors.at(mod).present) << mod << ": fewer names present than before";
    EXPECT_GE(checked, kFloors.at(mod).checked) << mod << ": fewer names checked than before";
    for (const std::string& n : names) {
      if (!c.present[mod].count(n)) missing << " " << mod << ":" << n;
    }
    present_total += have;
    checked_total += checked;
    names_total += static_cast<int>(names.size());
    table << "| " << mod << " | " << have << " | " << checked << " | " << limited << " | "
          << names.size() << " |\n";
  }
  table << "| all | " << present_total << " | " << checked_total << " | " << limited_total
        << " | " << names_total << " |\n";
  if (!missing.str().empty()) table << "\nStill missing:" << missing.str() << "\n";
  const std::string block = table.str() + "\nThe documented limitations:\n\n" + limits.str();
  std::printf("%s\nThe probes' errors:\n%s", block.c_str(), refusals.str().c_str());
  EXPECT_EQ(graft::testing::doc_block("docs/arrays-and-ops.md", "api_coverage_test"), block)
      << "docs/arrays-and-ops.md's block between the api_coverage_test markers is not the "
         "table above";
}

}  // namespace
}  // namespace graft::api
