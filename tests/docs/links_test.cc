// Every relative link of README.md and docs/*.md resolves: the linked file or folder exists,
// and a "#anchor" names a heading of the linked markdown page, by GitHub's rule for heading
// ids (lowercase; punctuation but '-' and '_' dropped; spaces become '-'; a repeated heading
// gets "-1", "-2", ...). Links inside code (fenced blocks, `spans`) are text, not links.
//
// A target is looked up in the runfiles (the pages and the files tests/docs:links_test lists as
// data), then in the source tree that the runfiles' README.md is a link to, for folders Bazel
// does not see (examples/external_workspace/ is in .bazelignore).
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

fs::path runfiles_root() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir != nullptr && fs::exists(fs::path(srcdir) / "graft" / "README.md")) {
    return fs::path(srcdir) / "graft";
  }
  return fs::current_path();
}

// The source tree: the folder of the file the runfiles' README.md links to (empty if unknown).
fs::path source_root() {
  std::error_code ec;
  const fs::path real = fs::canonical(runfiles_root() / "README.md", ec);
  return ec ? fs::path() : real.parent_path();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Where `rel` (relative to the workspace root) is: in the runfiles, else in the source tree;
// empty when neither has it.
fs::path locate(const fs::path& rel) {
  for (const fs::path& root : {runfiles_root(), source_root()}) {
    if (root.empty()) continue;
    std::error_code ec;
    if (fs::exists(root / rel, ec)) return root / rel;
  }
  return {};
}

// The text with fenced code blocks, HTML comments and inline code spans blanked out (newlines
// kept, so offsets still give line numbers).
std::string prose(const std::string& text) {
  std::string out = text;
  // Fenced code blocks: from a line starting with ``` (or ~~~) to the next such line.
  bool fenced = false;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (eol == std::string::npos) eol = out.size();
    size_t first = out.find_first_not_of(' ', pos);
    const bool fence =
        first < eol && (out.compare(first, 3, "```") == 0 || out.compare(first, 3, "~~~") == 0);
    if (fence || fenced) {
      for (size_t i = pos; i < eol; ++i) out[i] = ' ';
    }
    if (fence) fenced = !fenced;
    pos = eol + 1;
  }
  // HTML comments.
  for (size_t b = out.find("<!--"); b != std::string::npos; b = out.find("<!--", b)) {
    size_t e = out.find("-->", b);
    e = e == std::string::npos ? out.size() : e + 3;
    for (size_t i = b; i < e; ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  }
  // Code spans: a run of n backticks up to the next run of exactly n.
  for (size_t i = 0; i < out.size();) {
    if (out[i] != '`') {
      ++i;
      continue;
    }
    size_t n = 0;
    while (i + n < out.size() && out[i + n] == '`') ++n;
    size_t j = i + n, close = std::string::npos;
    while (j < out.size()) {
      if (out[j] == '`') {
        size_t m = 0;
        while (j + m < out.size() && out[j + m] == '`') ++m;
        if (m == n) {
          close = j;
          break;
        }
        j += m;
      } else {
        ++j;
      }
    }
    if (close == std::string::npos) {
      i += n;
      continue;
    }
    for (size_t k = i; k < close + n; ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
    i = close + n;
  }
  return out;
}

struct Link {
  int line;
  std::string target;
};

int line_of(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

// Inline links and images "[text](target)" and reference definitions "[label]: target".
std::vector<Link> links_of(const std::string& markdown) {
  const std::string text = prose(markdown);
  std::vector<Link> links;
  for (size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
    // The "[" that opens this link text, on the same paragraph.
    int depth = 0;
    bool opened = false;
    for (size_t i = at; i-- > 0;) {
      if (text[i] == ']') ++depth;
      if (text[i] == '[') {
        if (depth == 0) {
          opened = true;
          break;
        }
        --depth;
      }
      if (text[i] == '\n' && i > 0 && text[i - 1] == '\n') break;
    }
    if (!opened) continue;
    size_t b = at + 2, e = b;
    while (e < text.size() && text[e] != ')' &&
           !std::isspace(static_cast<unsigned char>(text[e]))) {
      ++e;
    }
    links.push_back({line_of(text, at), text.substr(b, e - b)});
  }
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    size_t i = line.find_first_not_of(' ');
    if (i == std::string::npos || line[i] != '[') continue;
    size_t close = line.find("]:", i);
    if (close == std::string::npos || line.find(']', i) != close) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string target;
    if (rest >> target) links.push_back({n, target});
  }
  return links;
}

// GitHub's id of a heading: its text lowercased, with everything but letters, digits, spaces,
// '-' and '_' dropped and spaces turned into '-' (bytes of other scripts kept).
std::string slug(const std::string& heading) {
  std::string s;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) {
      s += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      s += '-';
    }
  }
  return s;
}

// The ids of a page's headings ("#" to "######" lines outside code blocks).
std::set<std::string> anchors_of(const std::string& markdown) {
  std::set<std::string> ids;
  std::map<std::string, int> seen;
  std::istringstream lines(markdown);
  bool fenced = false;
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos &&
        (line.compare(first, 3, "```") == 0 || line.compare(first, 3, "~~~") == 0)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    size_t hashes = 0;
    while (hashes < line.size() && line[hashes] == '#') ++hashes;
    if (hashes == 0 || hashes > 6 || hashes >= line.size() || line[hashes] != ' ') continue;
    std::string text = line.substr(hashes + 1);
    while (!text.empty() && (text.back() == '#' || text.back() == ' ')) text.pop_back();
    const std::string base = slug(text);
    const int k = seen[base]++;
    ids.insert(k == 0 ? base : base + "-" + std::to_string(k));
  }
  return ids;
}

// What is wrong with `target`, linked from the page `page` (relative to the workspace root);
// empty when it resolves.
std::string check(const fs::path& page, const std::string& target) {
  if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) return "";
  const size_t hash = target.find('#');
  const std::string path = target.substr(0, hash);
  const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
  if (!path.empty() && path[0] == '/') return "an absolute path";
  const fs::path rel = path.empty() ? page : (page.parent_path() / path).lexically_normal();
  if (rel.empty() || *rel.begin() == "..") return "a path outside the repository";
  const fs::path found = locate(rel);
  if (found.empty()) return "no such file or folder: " + rel.string();
  if (!path.empty() && path.back() == '/' && !fs::is_directory(found)) {
    return "not a folder: " + rel.string();
  }
  if (anchor.empty()) return "";
  if (rel.extension() != ".md") return "an anchor into a file that is not markdown";
  if (anchors_of(read_file(found)).count(anchor) == 0) {
    return "no heading of " + rel.string() + " has the id #" + anchor;
  }
  return "";
}

std::vector<fs::path> pages() {
  std::vector<fs::path> out = {"README.md"};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(runfiles_root() / "docs", ec)) {
    if (e.path().extension() == ".md") out.push_back(fs::path("docs") / e.path().filename());
  }
  return out;
}

TEST(DocsLinks, SlugsFollowGitHub) {
  EXPECT_EQ(slug("Where a training step's time goes"), "where-a-training-steps-time-goes");
  EXPECT_EQ(slug("Training a Llama (`examples/llama`): the main job"),
            "training-a-llama-examplesllama-the-main-job");
  EXPECT_EQ(slug("8-bit floats"), "8-bit-floats");
  EXPECT_EQ(slug("Devices, pmap and collectives"), "devices-pmap-and-collectives");
  const std::set<std::string> twice =
      anchors_of("# A\n## Notes\n```\n# not a heading\n```\n## Notes\n");
  EXPECT_EQ(twice, (std::set<std::string>{"a", "notes", "notes-1"}));
}

TEST(DocsLinks, LinksInCodeAreNotLinks) {
  const std::vector<Link> links =
      links_of("[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n<!-- [d](w.md) -->\n[e]: v.md\n");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].target, "x.md");
  EXPECT_EQ(links[1].target, "v.md");
}

TEST(DocsLinks, EveryRelativeLinkResolves) {
  const std::vector<fs::path> all = pages();
  ASSERT_GE(all.size(), 10u) << "README.md and docs/*.md not found in the runfiles";
  int checked = 0;
  std::string failures;
  for (const fs::path& page : all) {
    const fs::path file = locate(page);
    ASSERT_FALSE(file.empty()) << page;
    for (const Link& l : links_of(read_file(file))) {
      ++checked;
      const std::string why = check(page, l.target);
      if (!why.empty()) {
        failures +=
            page.string() + ":" + std::to_string(l.line) + ": (" + l.target + ") " + why + "\n";
      }
    }
  }
  std::printf("%d links checked in %zu pages\n", checked, all.size());
  EXPECT_GT(checked, 50);
  EXPECT_EQ(failures, "") << "broken links:\n" << failures;
}

}  // namespace
