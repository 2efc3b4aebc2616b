#include "core/distributed/agreement.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/error.h"
#include "core/ir/digest.h"

namespace graft::distributed {
namespace {

constexpr size_t kLongestShown = 240;

// Names and values as length-prefixed bytes, and back.
std::string encode(const std::vector<Fact>& facts) {
  std::string out;
  auto put = [&](const std::string& s) {
    const uint64_t n = s.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += s;
  };
  for (const Fact& f : facts) {
    put(f.name);
    put(f.value);
  }
  return out;
}

std::vector<Fact> decode(const std::string& bytes) {
  std::vector<Fact> facts;
  size_t at = 0;
  auto get = [&](std::string& s) {
    uint64_t n = 0;
    if (bytes.size() - at < sizeof n) return false;
    std::memcpy(&n, bytes.data() + at, sizeof n);
    at += sizeof n;
    if (bytes.size() - at < n) return false;
    s = bytes.substr(at, n);
    at += n;
    return true;
  };
  for (Fact f; at < bytes.size() && get(f.name) && get(f.value);) facts.push_back(f);
  return facts;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string shown(std::string s) {
  if (s.size() > kLongestShown) s = s.substr(0, kLongestShown) + " ...";
  return s;
}

// The first line at which the texts differ (one past the longest when none does).
size_t first_differing_line(const std::vector<std::vector<std::string>>& lines) {
  size_t most = 0;
  for (const auto& l : lines) most = std::max(most, l.size());
  auto at = [](const std::vector<std::string>& l, size_t i) { return i < l.size() ? l[i] : ""; };
  for (size_t i = 0; i < most; ++i) {
    for (const auto& l : lines) {
      if (at(l, i) != at(lines[0], i)) return i;
    }
  }
  return most;
}

// values[p] is process p's value of one fact (nullopt: it has none). Each distinct value with
// the processes that have it: ": process 0 has f32[8,3], process 1 has f32[8,6]"; multi-line
// values by their first line that differs (" (line 3): process 0 has ...").
std::string describe(const std::vector<std::optional<std::string>>& values) {
  std::vector<std::optional<std::string>> shown_values = values;
  std::ostringstream out;
  if (std::any_of(values.begin(), values.end(),
                  [](const auto& v) { return v && v->find('\n') != std::string::npos; })) {
    std::vector<std::vector<std::string>> lines;
    for (const auto& v : values) lines.push_back(v ? lines_of(*v) : std::vector<std::string>{});
    const size_t line = first_differing_line(lines);
    for (size_t p = 0; p < values.size(); ++p) {
      if (!values[p]) continue;
      std::string l = line < lines[p].size() ? lines[p][line] : "(no such line)";
      shown_values[p] = l.erase(0, l.find_first_not_of(' '));
    }
    out << " (line " << line + 1 << ")";
  }
  std::vector<std::pair<std::optional<std::string>, std::vector<int>>> groups;
  for (size_t p = 0; p < values.size(); ++p) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& e) { return e.first == values[p]; });
    if (g == groups.end()) g = groups.emplace(groups.end(), values[p], std::vector<int>{});
    g->second.push_back(static_cast<int>(p));
  }
  out << ":";
  for (size_t k = 0; k < groups.size(); ++k) {
    const std::vector<int>& ps = groups[k].second;
    out << (k ? "," : "") << (ps.size() > 1 ? " processes " : " process ");
    for (size_t j = 0; j < ps.size(); ++j) out << (j ? ", " : "") << ps[j];
    const auto& v = shown_values[ps[0]];
    out << (ps.size() > 1 ? " have " : " has ") << (v ? shown(*v) : "none");
  }
  return out.str();
}

}  // namespace

uint64_t digest(const std::vector<Fact>& facts) {
  uint64_t h = fnv1a64("");
  for (const Fact& f : facts) {
    h = fnv1a64(f.value, fnv1a64(std::string_view(f.name.c_str(), f.name.size() + 1), h));
    h = fnv1a64(std::string_view("\0", 1), h);
  }
  return h;
}

std::optional<std::string> disagreement(const char* op, uint64_t digest_value,
                                        const std::function<std::vector<Fact>()>& facts) {
  if (process_count() == 1) return std::nullopt;
  std::string mine(sizeof digest_value, '\0');
  std::memcpy(mine.data(), &digest_value, sizeof digest_value);
  const std::vector<std::string> digests = mpi::allgather(op, mine);
  if (std::all_of(digests.begin(), digests.end(), [&](const std::string& d) { return d == mine; })) {
    return std::nullopt;
  }
  const std::vector<std::string> all = mpi::allgather(op, encode(facts()));
  std::vector<std::map<std::string, std::string>> by_process;
  std::vector<std::string> names;  // in the order processes list them
  for (const std::string& bytes : all) {
    by_process.emplace_back();
    for (Fact& f : decode(bytes)) {
      if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
      by_process.back()[f.name] = std::move(f.value);
    }
  }
  for (const std::string& name : names) {
    std::vector<std::optional<std::string>> values;
    for (const auto& m : by_process) {
      auto it = m.find(name);
      values.push_back(it == m.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end()) {
      return "processes disagree on " + name + describe(values);
    }
  }
  return "processes disagree on what they run (their digests differ; no listed fact does)";
}

std::optional<std::string> disagreement(const char* op, const std::vector<Fact>& facts) {
  return disagreement(op, digest(facts), [&] { return facts; });
}

}  // namespace graft::distributed
