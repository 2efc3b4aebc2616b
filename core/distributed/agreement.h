// Agreement between the processes of a multi-process run. Before processes exchange data for
// a program, or a training program starts, they check that they run the same thing: a
// mismatch (another shape, another collective, another config value on one process) is then
// an error naming what differs, on every process, never a crash, a hang or wrong values.
//
// The check is one allgather of a 64-bit digest; only when the digests differ are the facts
// themselves gathered (every process sees the same digests, so all make that second exchange),
// to say which differs and how. Collective: every process calls it, in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace graft::distributed {

// One thing the processes must agree on: "input 0" = "f32[8,3]", "the body" = program text.
struct Fact {
  std::string name;
  std::string value;
};

// The digest of `facts` (names and values), the same in every process.
uint64_t digest(const std::vector<Fact>& facts);

// nullopt when every process passed the same `digest`; else what differs, e.g. "processes
// disagree on input 0: process 0 has f32[8,3], process 1 has f32[8,6]". `facts` is called
// only then. A multi-line value is shown by its first differing line. nullopt at once in a
// one-process run. Throws graft::DistributedError "[op] ..." when the exchange fails.
std::optional<std::string> disagreement(const char* op, uint64_t digest,
                                        const std::function<std::vector<Fact>()>& facts);
std::optional<std::string> disagreement(const char* op, const std::vector<Fact>& facts);

}  // namespace graft::distributed
