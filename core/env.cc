#include "core/env.h"

#include <strings.h>

#include <cstdlib>
#include <initializer_list>

namespace graft {

bool env_value_is_off(const char* value) {
  for (const char* off : {"0", "false", "off", "no"}) {
    if (strcasecmp(value, off) == 0) return true;
  }
  return false;
}

bool env_flag(const char* name, bool fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  return !env_value_is_off(env);
}

}  // namespace graft
