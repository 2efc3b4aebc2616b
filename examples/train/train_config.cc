// Loading TrainConfig from TOML (toml++) and command-line overrides; printing it back as TOML.
// toml++ is used header-only (its default), so nothing extra is linked; only this file
// includes it, to keep its compile time in one translation unit.
#include "examples/train/train_config.h"

#include <toml++/toml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "examples/train/config_fields.h"

namespace graft::train {
namespace {

using internal::Field;
using internal::FieldType;
using internal::FieldValue;

std::string position(const toml::source_region& region) {
  std::ostringstream os;
  os << (region.path ? *region.path : std::string("<string>")) << ":" << region.begin.line << ":"
     << region.begin.column;
  return os.str();
}

const char* toml_type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    default:
      return "date/time";
  }
}

// The TOML node's value if it has the field's type (an integer is accepted for a float).
absl::Status node_value(const Field& field, const toml::node& node, const std::string& where,
                        FieldValue* out) {
  if (field.type == FieldType::kInt && node.is_integer()) {
    *out = node.as_integer()->get();
  } else if (field.type == FieldType::kFloat && node.is_floating_point()) {
    *out = node.as_floating_point()->get();
  } else if (field.type == FieldType::kFloat && node.is_integer()) {
    *out = static_cast<double>(node.as_integer()->get());
  } else if (field.type == FieldType::kBool && node.is_boolean()) {
    *out = node.as_boolean()->get();
  } else if (field.type == FieldType::kString && node.is_string()) {
    *out = node.as_string()->get();
  } else {
    return internal::key_error(where, field.name(), "",
                               std::string("expected ") + internal::field_type_name(field.type) +
                                   ", got " + toml_type_name(node.type()));
  }
  return absl::OkStatus();
}

absl::Status apply_table(const toml::table& root, TrainConfig& config,
                         std::map<std::string, std::string>& where) {
  for (const auto& [section_key, section_node] : root) {
    std::string section(section_key.str());
    std::string at = position(section_key.source());
    if (!section_node.is_table()) {
      std::string what = internal::is_section(section) ? "must be a [" + section + "] table"
                                                       : "unknown top-level key";
      return internal::key_error(at, section, "", what);
    }
    if (!internal::is_section(section)) {
      return internal::key_error(at, "[" + section + "]", "", "unknown section");
    }
    for (const auto& [key, node] : *section_node.as_table()) {
      std::string name = section + "." + std::string(key.str());
      std::string key_at = position(key.source());
      const Field* field = internal::find_field(name);
      if (field == nullptr) return internal::key_error(key_at, name, "", "unknown key");
      FieldValue value;
      absl::Status s = node_value(*field, node, key_at, &value);
      if (s.ok()) s = field->set(config, value, key_at);
      if (!s.ok()) return s;
      where[name] = key_at;
    }
  }
  return absl::OkStatus();
}

std::string override_where(const std::string& key) { return "command line --" + key; }

absl::Status apply_overrides(const std::vector<Override>& overrides, TrainConfig& config,
                             std::map<std::string, std::string>& where) {
  for (const Override& o : overrides) {
    const Field* field = internal::find_field(o.key);
    if (field == nullptr) {
      return internal::key_error("command line", "--" + o.key, "", "unknown option");
    }
    FieldValue value;
    std::string at = override_where(o.key);
    absl::Status s = internal::parse_text_value(*field, o.value, at, &value);
    if (s.ok()) s = field->set(config, value, at);
    if (!s.ok()) return s;
    where[o.key] = at;
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainConfig> finish(TrainConfig config,
                                   const std::map<std::string, std::string>& where) {
  absl::Status s = internal::check_ranges(config, [&](const std::string& key) {
    auto it = where.find(key);
    return it == where.end() ? std::string("default") : it->second;
  });
  if (!s.ok()) return s;
  return config;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

// Shortest text that parses back to the same double, as a TOML float.
std::string toml_float(double d) {
  char buf[64];
  // Whole numbers in fixed notation (rope_theta = 500000.0, not 5e+05); else shortest.
  bool whole = std::fabs(d) < 1e15 && d == std::floor(d);
  auto [end, ec] = whole ? std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": inf / nan
  return s;
}

std::string toml_value(const FieldValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return toml_float(*d);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return toml_string(std::get<std::string>(v));
}

}  // namespace

absl::StatusOr<TrainConfig> parse_train_config(const std::string& toml_text,
                                               const std::string& source,
                                               const std::vector<Override>& overrides) {
  TrainConfig config;
  std::map<std::string, std::string> where;
  try {
    toml::table root = toml::parse(toml_text, source);
    absl::Status s = apply_table(root, config, where);
    if (!s.ok()) return s;
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(position(e.source()) +
                                      ": TOML syntax error: " + std::string(e.description()));
  }
  absl::Status s = apply_overrides(overrides, config, where);
  if (!s.ok()) return s;
  return finish(std::move(config), where);
}

absl::StatusOr<TrainConfig> load_train_config(const std::string& path,
                                              const std::vector<Override>& overrides) {
  if (path.empty()) {
    TrainConfig config;
    std::map<std::string, std::string> where;
    absl::Status s = apply_overrides(overrides, config, where);
    if (!s.ok()) return s;
    return finish(std::move(config), where);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open config file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError("cannot read config file " + path);
  return parse_train_config(text.str(), path, overrides);
}

absl::StatusOr<TrainConfig> load_train_config(const CommandLine& command_line) {
  return load_train_config(command_line.config_path, command_line.overrides);
}

absl::Status validate(const TrainConfig& config) {
  return internal::check_ranges(config, [](const std::string&) { return std::string(); });
}

absl::StatusOr<CommandLine> parse_command_line(int argc, const char* const* argv) {
  CommandLine out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      continue;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      return absl::InvalidArgumentError("command line: unexpected argument \"" + arg +
                                        "\" (options look like --section.key=value)");
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    bool has_value = eq != std::string::npos;
    std::string value = has_value ? arg.substr(eq + 1) : "";
    const Field* field = name == "config" ? nullptr : internal::find_field(name);
    if (name != "config" && field == nullptr) {
      std::string hint;
      for (const Field& f : internal::fields()) {
        if (f.key == name.substr(name.find('.') + 1)) hint = " (did you mean --" + f.name() + "?)";
      }
      return internal::key_error("command line", "--" + name, "", "unknown option" + hint);
    }
    if (!has_value && field != nullptr && field->type == FieldType::kBool) {
      value = "true";
    } else if (!has_value) {
      if (i + 1 >= argc || argv[i + 1] == nullptr) {
        return internal::key_error("command line", "--" + name, "", "needs a value");
      }
      value = argv[++i];
    }
    if (field == nullptr) {
      out.config_path = value;
      continue;
    }
    // Type and enum checks now, so a typo fails before anything loads.
    FieldValue parsed;
    TrainConfig scratch;
    std::string at = override_where(name);
    absl::Status s = internal::parse_text_value(*field, value, at, &parsed);
    if (s.ok()) s = field->set(scratch, parsed, at);
    if (!s.ok()) return s;
    out.overrides.push_back({name, value});
  }
  return out;
}

std::string to_toml(const TrainConfig& config) {
  std::ostringstream os;
  std::string section;
  for (const Field& f : internal::fields()) {
    if (f.section != section) {
      os << (section.empty() ? "" : "\n") << "[" << f.section << "]\n";
      section = f.section;
    }
    os << f.key << " = " << toml_value(f.get(config)) << "  # " << f.help << "\n";
  }
  return os.str();
}

std::vector<std::pair<std::string, std::string>> key_values(const TrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& f : internal::fields()) out.emplace_back(f.name(), toml_value(f.get(config)));
  return out;
}

std::string usage(const std::string& program) {
  std::ostringstream os;
  os << "usage: " << program << " [--config=file.toml] [--section.key=value ...]\n\n"
     << "Later sources win: defaults, the TOML file, then the options in order.\n";
  TrainConfig defaults;
  std::string section;
  for (const Field& f : internal::fields()) {
    if (f.section != section) {
      os << "\n[" << f.section << "]\n";
      section = f.section;
    }
    os << "  --" << f.name() << "=<" << internal::field_type_name(f.type) << "> (default "
       << toml_value(f.get(defaults)) << ")  " << f.help;
    if (!f.choices.empty()) {
      os << ": ";
      for (size_t i = 0; i < f.choices.size(); ++i) os << (i ? " | " : "") << f.choices[i];
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace graft::train
