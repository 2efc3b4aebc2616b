// The table of TrainConfig keys, shared by the TOML parser, the command-line parser, to_toml
// and usage(): one entry per key, so the four can never disagree on names or types.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "examples/train/train_config.h"

namespace graft::train::internal {

enum class FieldType { kInt, kFloat, kBool, kString };
const char* field_type_name(FieldType type);  // "integer", "float", "boolean", "string"

using FieldValue = std::variant<int64_t, double, bool, std::string>;

struct Field {
  std::string section;
  std::string key;
  FieldType type;
  std::vector<std::string> choices;  // allowed strings; empty = any string
  std::string help;
  std::function<void*(TrainConfig&)> member;  // points at the int64_t/double/bool/string

  std::string name() const { return section + "." + key; }
  FieldValue get(const TrainConfig& config) const;
  // Stores `value` (already of this field's type; ints widen to float). Checks choices.
  absl::Status set(TrainConfig& config, const FieldValue& value, const std::string& where) const;
};

const std::vector<Field>& fields();
const Field* find_field(std::string_view dotted_name);  // nullptr if unknown
bool is_section(std::string_view name);

// For messages: 42, 0.5, true, "text".
std::string value_text(const FieldValue& value);

// Parses command-line text as the field's type ("100", "3e-4", "true", "abc").
absl::Status parse_text_value(const Field& field, const std::string& text, const std::string& where,
                              FieldValue* out);

// Cross-key and range checks. `where(key)` says where a key's value came from, for messages.
absl::Status check_ranges(const TrainConfig& config,
                          const std::function<std::string(const std::string&)>& where);

// "where: key = value: message" as InvalidArgumentError.
absl::Status key_error(const std::string& where, const std::string& key, const std::string& value,
                       const std::string& message);

}  // namespace graft::train::internal
