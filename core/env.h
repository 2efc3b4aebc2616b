// Reading graft's GRAFT_* environment switches, spelled the same way everywhere.
#pragma once

namespace graft {

// Whether an environment value spells "off": 0, false, off or no (any case).
bool env_value_is_off(const char* value);

// An on/off environment variable: unset or empty -> fallback; a value that spells off ->
// false; anything else -> true.
bool env_flag(const char* name, bool fallback);

}  // namespace graft
