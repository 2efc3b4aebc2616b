// Compile-time argument selection for transforms: graft::argnums<0, 2>.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace graft {

template <size_t... I>
struct Argnums {
  static constexpr size_t size = sizeof...(I);
};
template <size_t... I>
inline constexpr Argnums<I...> argnums{};

namespace detail {

// Position of K in I..., or -1.
template <size_t K, size_t... I>
constexpr int position_of() {
  int pos = -1, i = 0;
  ((pos = (pos < 0 && I == K) ? i : pos, ++i), ...);
  return pos;
}

// Args with the selected ones (I...) replaced by the elements of `replacement`, in order.
template <size_t... I, typename ArgTuple, typename Repl, size_t... K>
auto substitute_impl(const ArgTuple& args, const Repl& replacement, std::index_sequence<K...>) {
  auto pick = [&](auto k) -> decltype(auto) {
    constexpr size_t kk = decltype(k)::value;
    constexpr int pos = position_of<kk, I...>();
    if constexpr (pos >= 0) {
      return std::get<pos>(replacement);
    } else {
      return std::get<kk>(args);
    }
  };
  return std::tuple<std::decay_t<std::tuple_element_t<K, ArgTuple>>...>(
      pick(std::integral_constant<size_t, K>{})...);
}

template <size_t... I, typename ArgTuple, typename Repl>
auto substitute(const ArgTuple& args, const Repl& replacement) {
  return substitute_impl<I...>(args, replacement,
                               std::make_index_sequence<std::tuple_size_v<ArgTuple>>{});
}

}  // namespace detail
}  // namespace graft
