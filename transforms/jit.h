// jit: compile a function once per argument signature, like jax.jit.
//
//   auto f = graft::jit([](const Array& x, const Array& y) { return sum(exp(x) * y); });
//   Array r = f(x, y);          // traces, optimizes and caches; runs; r is evaluated
//   r = f(x2, y2);              // same shapes and dtypes: runs the cached program
//   auto g = graft::jit(h, {.static_argnums = {1}});   // h(const Array&, int n)
//
// The returned Jitted object owns its cache (copies share it). The key is, per argument, its
// C++ type and pytree structure; per leaf, its shape, dtype and weak flag; and the value of
// each static argument. The cache is LRU, bounded by `cache_size`; stats() counts hits, misses,
// evictions and compile time; explain_miss() (and, with `explain_misses` or the environment
// variable GRAFT_JIT_EXPLAIN=1, a line on stderr) says why the last call missed.
//
// Static arguments: every argument that is not a pytree of Arrays (an int, a string, an enum,
// a config struct) must be listed in static_argnums (negative indices count from the end),
// and every listed one must not contain Arrays. A static argument is part of the key by value:
// the key holds a copy and compares it with operator== (which it must have); its std::hash
// (else the hash of its operator<< text, else nothing) only picks the bucket, so values whose
// hashes collide still get programs of their own. Its operator<< text, if any, explains
// misses. The function sees it as is, so it may branch on it.
//
// Compiling traces f on placeholders (reading their values is an error: use static_argnums,
// or cond / while_loop) and runs the passes of transforms/passes/passes.h. Arrays f closes over
// are baked into the program as constants, like JAX. If any argument is a tracer (jit called
// inside grad, vmap or another jit's trace), f is called inline: the outer transform sees its
// operations, so grad(jit(f)), vmap(jit(f)), jit(grad(f)) and nested jits all compose.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/backend/backend.h"
#include "core/error.h"
#include "core/ir/graph.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "transforms/passes/passes.h"

namespace graft {

struct JitOptions {
  std::vector<int> static_argnums;
  // Arguments (all leaves of each) whose buffers the call may reuse for outputs; afterwards
  // they can no longer be used (an error says so). Like jax.jit's donate_argnums. A call
  // that throws gives back every donated argument it had not written yet.
  std::vector<int> donate_argnums;
  size_t cache_size = 64;
  bool explain_misses = false;  // also on with GRAFT_JIT_EXPLAIN=1
  // Shardings (core/sharding/device_put.h), as jax.jit's. in_shardings: empty (each leaf keeps the
  // sharding it has: device_put's, or a previous jit's output's), or one per argument (for
  // every leaf of it; nullopt: the leaves' own; static arguments take nullopt).
  // out_shardings: empty (what propagation gives), one for all outputs, or one per output
  // leaf (nullopt: propagation's). When one of them splits an array, the program is
  // partitioned over their mesh (core/interpreters/spmd.h) and runs on its devices, and the outputs
  // carry their shardings. The shardings are part of the cache key.
  std::vector<std::optional<NamedSharding>> in_shardings;
  std::vector<std::optional<NamedSharding>> out_shardings;
};

// The planned memory of one compiled program (the backend's buffer plan):
// bytes of values the program defines, arguments and constants excluded.
struct MemoryAnalysis {
  int64_t peak_bytes = 0;   // max over the schedule of live bytes, with in-place reuse
  int64_t total_bytes = 0;  // sum over all defined values (no freeing, no reuse)
  // A program partitioned over a mesh (jit with shardings): what one device holds at its
  // peak, its blocks of the arguments included (the per-device program's planned peak plus
  // its inputs). 0 for a program that is not partitioned.
  int64_t per_device_peak_bytes = 0;
  // A program that is not partitioned but holds shard_maps (pmap, a shard_map written by
  // hand): the largest of their per-device bodies' planned peaks, with the blocks a device
  // cuts out of its split inputs (what one device adds to the program's own values while
  // the shard_map runs). 0 when it holds none.
  int64_t mapped_body_peak_bytes = 0;
};

struct JitStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t evictions = 0;
  double compile_seconds = 0;  // tracing and passes, all misses together
};

namespace detail {

// Whether T is a pytree of Arrays (what tree_flatten accepts).
template <typename T, typename = void>
struct IsPytree : std::false_type {};
template <>
struct IsPytree<Array> : std::true_type {};
template <typename T>
struct IsPytree<std::vector<T>> : IsPytree<T> {};
template <typename T, size_t N>
struct IsPytree<std::array<T, N>> : IsPytree<T> {};
template <typename T>
struct IsPytree<std::optional<T>> : IsPytree<T> {};
template <typename T>
struct IsPytree<std::map<std::string, T>> : IsPytree<T> {};
template <typename... T>
struct IsPytree<std::tuple<T...>> : std::bool_constant<(IsPytree<T>::value && ...)> {};
template <typename A, typename B>
struct IsPytree<std::pair<A, B>> : std::bool_constant<IsPytree<A>::value && IsPytree<B>::value> {};
template <typename T>
struct IsPytree<T, std::void_t<decltype(FieldsOf<T>::name)>> : std::true_type {};

// A static argument held by value in a JitKey: keys are equal only if the values are
// (operator==, same C++ type); the hash only picks the bucket and the text only explains.
class StaticArg {
 public:
  StaticArg() = default;  // the slot of a pytree argument
  template <typename T>
  explicit StaticArg(const T& v) : holder_(std::make_shared<const Typed<T>>(v)) {
    static_assert(
        requires { static_cast<bool>(v == v); },
        "a static argument must be equality-comparable (operator==)");
    constexpr bool printable = requires(std::ostream & os) { os << v; };
    if constexpr (printable) {
      std::ostringstream s;
      s << v;
      text_ = s.str();
    }
    if constexpr (requires { std::hash<T>{}(v); }) {
      hash_ = std::hash<T>{}(v);
    } else {
      hash_ = std::hash<std::string>{}(text_);
    }
    if constexpr (!printable) text_ = "a value with hash " + std::to_string(hash_);
  }
  bool operator==(const StaticArg& o) const {
    if (holder_ == o.holder_) return true;
    return holder_ != nullptr && o.holder_ != nullptr && holder_->equals(*o.holder_);
  }
  size_t hash() const { return hash_; }
  const std::string& text() const { return text_; }

 private:
  struct Holder {
    virtual ~Holder() = default;
    virtual bool equals(const Holder& o) const = 0;
  };
  template <typename T>
  struct Typed : Holder {
    explicit Typed(const T& v) : value(v) {}
    bool equals(const Holder& o) const override {
      auto* t = dynamic_cast<const Typed*>(&o);
      return t != nullptr && static_cast<bool>(value == t->value);
    }
    T value;
  };
  std::shared_ptr<const Holder> holder_;
  size_t hash_ = 0;
  std::string text_;
};

struct JitKey {
  std::vector<std::type_index> types;  // per argument
  std::vector<TreeDef> defs;           // per argument (empty for static ones)
  std::vector<StaticArg> statics;      // per argument (empty for pytree ones)
  std::vector<Aval> avals;             // per leaf
  std::vector<int> leaf_arg;           // per leaf: its argument (not part of equality)
  // Per leaf: the sharding it is given or has (null: none, device 0).
  std::vector<std::shared_ptr<const NamedSharding>> shardings;
  size_t hash = 0;
  void finish();  // computes hash
  bool same_shardings(const JitKey& o) const;
  bool operator==(const JitKey& o) const {
    return hash == o.hash && types == o.types && avals == o.avals && statics == o.statics &&
           defs == o.defs && same_shardings(o);
  }
};

struct JitEntry {
  std::shared_ptr<const Executable> executable;  // the optimized program, compiled
  // The same program compiled by the device backend, on the first call whose arguments live
  // in a GPU's memory (then the whole program runs there).
  mutable std::once_flag on_device_once;
  mutable std::shared_ptr<const Executable> on_device;
  TreeDef out_def;
  // Per output, when the program was partitioned: the sharding its result carries.
  std::vector<std::shared_ptr<const NamedSharding>> out_shardings;
};

// The non-template part of Jitted: the LRU cache, stats and miss explanations.
class JitCache {
 public:
  explicit JitCache(JitOptions options);
  bool is_static(size_t arg, size_t num_args) const;
  bool is_donated(size_t arg, size_t num_args) const;
  const JitOptions& options() const { return options_; }
  // Counts a hit or a miss; on a miss, records (and maybe logs) why.
  std::shared_ptr<const JitEntry> lookup(const JitKey& key);
  void insert(const JitKey& key, std::shared_ptr<const JitEntry> entry, double compile_seconds);
  JitStats stats() const;
  std::string explain_miss() const;
  size_t size() const;
  void clear();

 private:
  std::string explain(const JitKey& key) const;  // with mu_ held
  JitOptions options_;
  bool log_ = false;
  mutable std::mutex mu_;
  using Lru = std::list<std::pair<JitKey, std::shared_ptr<const JitEntry>>>;
  Lru lru_;  // most recent first
  std::unordered_multimap<size_t, Lru::iterator> index_;
  JitStats stats_;
  std::string last_miss_;
};

// Traces fn on placeholders with `avals`, partitions it when shardings split something
// (in_shardings: per leaf; out_shardings: as JitOptions has them) and optimizes the program.
// Returns null when fn closes over a value traced by an outer transform (then it must run
// inline).
std::shared_ptr<JitEntry> compile(const FlatFn& fn, const std::vector<Aval>& avals,
                                  std::vector<bool> donated,
                                  const std::vector<std::shared_ptr<const NamedSharding>>& in_shardings,
                                  const std::vector<std::optional<NamedSharding>>& out_shardings);
// The SPMD-partitioned form of `p` (a shard_map over the shardings' mesh whose body is the
// per-device program), and each output's sharding; p itself (and no shardings) when no
// sharding splits anything.
Program partition_for_jit(const Program& p,
                          const std::vector<std::shared_ptr<const NamedSharding>>& in_shardings,
                          const std::vector<std::optional<NamedSharding>>& out_shardings,
                          std::vector<std::shared_ptr<const NamedSharding>>* out);
// The key's per-leaf shardings: in_shardings (one per argument) or the leaves' own.
void add_shardings(JitKey& key, const std::vector<Array>& leaves,
                   const std::vector<std::optional<NamedSharding>>& in_shardings);
MemoryAnalysis memory_of(const JitEntry& e);
std::vector<Array> run(const JitEntry& e, const std::vector<Array>& leaves);

}  // namespace detail

template <typename F>
class Jitted {
 public:
  Jitted(F f, JitOptions options)
      : f_(std::move(f)), cache_(std::make_shared<detail::JitCache>(std::move(options))) {}

  template <typename... Args>
  auto operator()(const Args&... args) const {
    using Result = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    static_assert(detail::IsPytree<Result>::value, "a jitted function must return a pytree");
    std::vector<Array> leaves;
    std::shared_ptr<const detail::JitEntry> entry = entry_for(leaves, args...);
    if (entry == nullptr) return f_(args...);  // inside another transform's trace
    return tree_unflatten<Result>(entry->out_def, detail::run(*entry, leaves));
  }

  // The planned memory of the program compiled for these arguments (compiles on a miss;
  // runs nothing). All zeros when the call would run inline (tracer arguments).
  template <typename... Args>
  MemoryAnalysis memory_analysis(const Args&... args) const {
    std::vector<Array> leaves;
    auto entry = entry_for(leaves, args...);
    return entry == nullptr ? MemoryAnalysis{} : detail::memory_of(*entry);
  }

  // The optimized program compiled for these arguments as text (print_program's format,
  // bodies nested under their instruction; what jax's jit(f).lower(...).compile().as_text()
  // shows). Compiles on a miss; runs nothing. Empty when the call would run inline.
  template <typename... Args>
  std::string as_text(const Args&... args) const {
    std::vector<Array> leaves;
    auto entry = entry_for(leaves, args...);
    return entry == nullptr ? std::string() : print_program(entry->executable->program());
  }

  JitStats stats() const { return cache_->stats(); }
  // Why the last miss missed ("" before any miss).
  std::string explain_miss() const { return cache_->explain_miss(); }
  size_t cache_entries() const { return cache_->size(); }
  void clear_cache() const { cache_->clear(); }

 private:
  // The cached (or freshly compiled) program for args, with their leaves in `leaves`; null
  // when f must run inline.
  template <typename... Args>
  std::shared_ptr<const detail::JitEntry> entry_for(std::vector<Array>& leaves,
                                                    const Args&... args) const {
    using Result = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    detail::JitKey key;
    key.types = {std::type_index(typeid(Args))...};
    key.defs.resize(sizeof...(Args));
    key.statics.resize(sizeof...(Args));
    size_t k = 0;
    (add_arg(k++, sizeof...(Args), args, key, leaves), ...);
    for (const Array& l : leaves) {
      if (l.is_tracer()) return nullptr;
    }
    detail::add_shardings(key, leaves, cache_->options().in_shardings);
    key.finish();
    std::shared_ptr<const detail::JitEntry> entry = cache_->lookup(key);
    if (entry != nullptr) return entry;
    auto start = std::chrono::steady_clock::now();
    TreeDef out_def;
    FlatFn fn = [&](const std::vector<Array>& ph) {
      std::vector<size_t> offsets(sizeof...(Args) + 1, 0);
      for (size_t i = 0; i < sizeof...(Args); ++i) {
        offsets[i + 1] = offsets[i] + static_cast<size_t>(key.defs[i].num_leaves);
      }
      auto call = rebuild_all(std::index_sequence_for<Args...>{}, key, ph, offsets, args...);
      auto [out_leaves, def] = tree_flatten(Result(std::apply(f_, call)));
      out_def = def;
      return out_leaves;
    };
    std::vector<bool> donated;
    for (int a : key.leaf_arg) donated.push_back(cache_->is_donated(a, sizeof...(Args)));
    std::shared_ptr<detail::JitEntry> fresh = detail::compile(
        fn, key.avals, std::move(donated), key.shardings, cache_->options().out_shardings);
    if (fresh == nullptr) return nullptr;
    fresh->out_def = std::move(out_def);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cache_->insert(key, fresh, secs);
    return fresh;
  }

  template <typename T>
  void add_arg(size_t k, size_t n, const T& arg, detail::JitKey& key,
               std::vector<Array>& leaves) const {
    bool is_static = cache_->is_static(k, n);
    if constexpr (detail::IsPytree<T>::value) {
      if (is_static) {
        fail("jit", "argument ", k, " is in static_argnums but holds Arrays; static arguments ",
             "are keyed by value and must not be arrays");
      }
      size_t before = leaves.size();
      TreeNode<T>::flatten(arg, leaves, key.defs[k]);
      for (size_t i = before; i < leaves.size(); ++i) {
        if (!leaves[i].valid()) fail("jit", "argument ", k, " holds an empty Array handle");
        key.avals.push_back(leaves[i].aval());
        key.leaf_arg.push_back(static_cast<int>(k));
      }
    } else {
      if (!is_static) {
        fail("jit", "argument ", k, " is not a pytree of Arrays: list it in static_argnums");
      }
      key.statics[k] = detail::StaticArg(arg);
    }
  }

  // The arguments with each pytree's leaves taken from the placeholders.
  template <size_t... I, typename... Args>
  static std::tuple<Args...> rebuild_all(std::index_sequence<I...>, const detail::JitKey& key,
                                         const std::vector<Array>& ph,
                                         const std::vector<size_t>& offsets, const Args&... args) {
    return std::tuple<Args...>(rebuild(I, args, key, ph, offsets[I])...);
  }
  template <typename T>
  static T rebuild(size_t k, const T& arg, const detail::JitKey& key, const std::vector<Array>& ph,
                   size_t offset) {
    if constexpr (detail::IsPytree<T>::value) {
      const TreeDef& def = key.defs[k];
      std::vector<Array> mine(ph.begin() + offset, ph.begin() + offset + def.num_leaves);
      return tree_unflatten<T>(def, mine);
    } else {
      return arg;
    }
  }

  F f_;
  std::shared_ptr<detail::JitCache> cache_;
};

template <typename F>
Jitted<F> jit(F f, JitOptions options = {}) {
  return Jitted<F>(std::move(f), std::move(options));
}

}  // namespace graft
