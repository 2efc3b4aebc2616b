// bazel run //data:prepare -- --input=<file|dir|default> --out_dir=<dir>
//     --tokenizer=byte|bpe|hf:<tokenizer.json> [--eot_token=<token>] --vocab_size=4096
//     --val_fraction=0.05 --seed=0 [--paragraphs=true] [--force]
// Relative paths are taken from the directory bazel run was called in. Progress lines of the
// tokenizing pass go to stderr.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "data/prepare.h"

namespace {

constexpr char kUsage[] =
    "usage: prepare --out_dir=<dir> [--input=default|<file>|<dir>]\n"
    "               [--tokenizer=bpe|byte|hf:<tokenizer.json>] [--eot_token=<token>]\n"
    "               [--vocab_size=4096] [--val_fraction=0.05] [--seed=0]\n"
    "               [--paragraphs=true|false] [--force]\n"
    "input: the default corpus, a text file or directory of .txt files, or a JSON Lines file\n"
    "       (.jsonl / .json, optionally .gz / .zst) or directory of them\n";

std::string resolve(const std::string& p) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (p.empty() || p == "default" || wd == nullptr || std::filesystem::path(p).is_absolute()) {
    return p;
  }
  return (std::filesystem::path(wd) / p).string();
}

bool parse_bool(const std::string& v, bool& out) {
  if (v == "true" || v == "1" || v.empty()) return out = true, true;
  if (v == "false" || v == "0") return out = false, true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  graft::data::PrepareOptions o;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      }
      if (a.rfind("--", 0) != 0) throw std::invalid_argument(a);
      const size_t eq = a.find('=');
      const std::string key = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const std::string val = eq == std::string::npos ? "" : a.substr(eq + 1);
      if (key == "input") {
        o.input = resolve(val);
      } else if (key == "out_dir") {
        o.out_dir = resolve(val);
      } else if (key == "tokenizer") {
        o.tokenizer = val.rfind("hf:", 0) == 0 ? "hf:" + resolve(val.substr(3)) : val;
      } else if (key == "eot_token") {
        o.eot_token = val;
      } else if (key == "vocab_size") {
        o.vocab_size = std::stoi(val);
      } else if (key == "val_fraction") {
        o.val_fraction = std::stod(val);
      } else if (key == "seed") {
        o.seed = std::stoll(val);
      } else if (key == "paragraphs") {
        if (!parse_bool(val, o.paragraphs)) throw std::invalid_argument(a);
      } else if (key == "force") {
        if (!parse_bool(val, o.force)) throw std::invalid_argument(a);
      } else {
        throw std::invalid_argument(a);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "prepare: bad argument " << e.what() << "\n" << kUsage;
    return 2;
  }
  o.progress = &std::cerr;
  auto r = graft::data::prepare(o);
  if (!r.ok()) {
    std::cerr << "prepare: " << r.status() << "\n";
    return 1;
  }
  std::cout << (r->reused ? "up to date: " : "wrote: ") << r->meta_path << "\n"
            << "  source        " << r->source << "\n"
            << "  vocab_size    " << r->vocab_size << "\n"
            << "  train         " << r->train_docs << " docs, " << r->train_bytes << " bytes, "
            << r->train_tokens << " tokens ("
            << static_cast<double>(r->train_bytes) / static_cast<double>(r->train_tokens)
            << " bytes/token)\n"
            << "  val           " << r->val_docs << " docs, " << r->val_bytes << " bytes, "
            << r->val_tokens << " tokens\n"
            << "  unigram       " << r->unigram_nats << " nats/token on val\n";
  if (!r->reused && r->tokenizer_seconds > 0) {
    std::cout << "  bpe training  " << r->tokenizer_seconds << " s\n";
  }
  return 0;
}
