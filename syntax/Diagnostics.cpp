// Diagnostics: collection, rendering with the source line and a caret, and
// the `expected-error {{...}}` checker behind `tkc check --verify-diagnostics`.
#include "syntax/Diagnostics.h"

#include <algorithm>

namespace tk::lang {

// ---------------------------------------------------------------- sources

const std::string &SourceManager::add(const std::string &path, std::string text) {
  auto &slot = files_[path];
  slot = std::make_unique<std::string>(std::move(text));
  return *slot;
}

const std::string *SourceManager::text(const std::string &path) const {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : it->second.get();
}

std::string SourceManager::line(const std::string &path, int line) const {
  const std::string *t = text(path);
  if (!t || line <= 0) return {};
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = t->find('\n', pos);
    if (pos == std::string::npos) return {};
    ++pos;
  }
  size_t end = t->find('\n', pos);
  return t->substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

std::vector<std::string> SourceManager::files() const {
  std::vector<std::string> out;
  for (const auto &[path, text] : files_) out.push_back(path);
  return out;
}

// ---------------------------------------------------------------- engine

std::string quoted(const std::string &name) {
  return "'" + (name.size() > 64 ? name.substr(0, 60) + "..." : name) + "'";
}

void DiagnosticEngine::add(Diagnostic::Severity s, tk::Location loc, std::string message) {
  // A safety net for messages that quote huge input.
  if (message.size() > 1000) message = message.substr(0, 1000) + "...";
  if (s == Diagnostic::Severity::Note) {
    if (!droppingNotes_) diags_.push_back({s, std::move(loc), std::move(message)});
    return;
  }
  if (s == Diagnostic::Severity::Error) {
    ++errorCount_;
    if (errorCount_ == kMaxErrors + 1) {
      diags_.push_back({s, std::move(loc), "too many errors; stopping here"});
      droppingNotes_ = true;
      return;
    }
  }
  droppingNotes_ = errorCount_ > kMaxErrors;
  if (droppingNotes_) return;
  diags_.push_back({s, std::move(loc), std::move(message)});
}

void DiagnosticEngine::error(tk::Location loc, std::string message) {
  add(Diagnostic::Severity::Error, std::move(loc), std::move(message));
}
void DiagnosticEngine::warning(tk::Location loc, std::string message) {
  add(Diagnostic::Severity::Warning, std::move(loc), std::move(message));
}
void DiagnosticEngine::note(tk::Location loc, std::string message) {
  add(Diagnostic::Severity::Note, std::move(loc), std::move(message));
}

void DiagnosticEngine::clear() {
  diags_.clear();
  errorCount_ = 0;
  droppingNotes_ = false;
}

void DiagnosticEngine::rewind(size_t count) {
  if (count >= diags_.size()) return;
  diags_.resize(count);
  errorCount_ = int(std::count_if(diags_.begin(), diags_.end(),
                                  [](const Diagnostic &d) { return d.severity == Diagnostic::Severity::Error; }));
  droppingNotes_ = errorCount_ > kMaxErrors;
}

static const char *severityName(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::Error: return "error";
    case Diagnostic::Severity::Warning: return "warning";
    case Diagnostic::Severity::Note: return "note";
  }
  return "error";
}

std::string DiagnosticEngine::renderOne(const Diagnostic &d, const SourceManager &sm) {
  std::string out;
  if (d.loc.known())
    out = d.loc.file + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": ";
  else if (!d.loc.file.empty())
    out = d.loc.file + ": ";
  out += severityName(d.severity);
  out += ": " + d.message + "\n";
  if (!d.loc.known()) return out;
  std::string line = sm.line(d.loc.file, d.loc.line);
  if (line.empty() && !sm.text(d.loc.file)) return out;
  // Show a window of the line around the caret when it is long.
  constexpr size_t kWidth = 100;
  size_t caret = static_cast<size_t>(std::max(d.loc.col, 1) - 1);
  caret = std::min(caret, line.size());
  size_t begin = 0, end = line.size();
  std::string prefix, suffix;
  if (line.size() > kWidth) {
    begin = caret > kWidth / 2 ? caret - kWidth / 2 : 0;
    end = std::min(line.size(), begin + kWidth);
    if (begin > 0) prefix = "...";
    if (end < line.size()) suffix = "...";
  }
  std::string shown = line.substr(begin, end - begin);
  std::string marker(prefix.size(), ' ');
  for (size_t i = 0; i < shown.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(shown[i]);
    // Keep tabs (so the caret lines up) but no other control bytes.
    if (c != '\t' && (c < 0x20 || c == 0x7f)) shown[i] = ' ';
    if (begin + i < caret) marker += shown[i] == '\t' ? '\t' : ' ';
  }
  out += prefix + shown + suffix + "\n" + marker + "^\n";
  return out;
}

std::string DiagnosticEngine::render() const {
  std::string out;
  for (const Diagnostic &d : diags_) out += renderOne(d, sources_);
  return out;
}

// ---------------------------------------------------------------- verifier

namespace {
struct Expectation {
  Diagnostic::Severity severity;
  int line;
  std::string text;
  bool met = false;
  std::string file;  // empty: any file (the single-text verifier)
};

// Parses the expected-* comments of `text`; malformed ones go to `report`.
std::vector<Expectation> parseExpectations(const std::string &text, std::string &report) {
  std::vector<Expectation> out;
  static const std::pair<const char *, Diagnostic::Severity> kinds[] = {
      {"expected-error", Diagnostic::Severity::Error},
      {"expected-warning", Diagnostic::Severity::Warning},
      {"expected-note", Diagnostic::Severity::Note}};
  int lineNo = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    ++lineNo;
    for (auto &[word, sev] : kinds) {
      size_t at = 0;
      while ((at = line.find(word, at)) != std::string::npos) {
        size_t p = at + std::string(word).size();
        at = p;
        int target = lineNo;
        if (p < line.size() && line[p] == '@') {
          size_t q = p + 1;
          int sign = 0;  // no sign: an absolute line number
          if (q < line.size() && (line[q] == '+' || line[q] == '-')) sign = line[q++] == '-' ? -1 : 1;
          size_t digits = q;
          while (q < line.size() && isdigit(static_cast<unsigned char>(line[q]))) ++q;
          if (digits == q || q - digits > 6) {
            report += "line " + std::to_string(lineNo) + ": malformed '@' offset in " + word + "\n";
            continue;
          }
          int n = std::stoi(line.substr(digits, q - digits));
          target = sign == 0 ? n : lineNo + sign * n;
          p = q;
        }
        while (p < line.size() && line[p] == ' ') ++p;
        size_t close = line.find("}}", p);
        if (line.compare(p, 2, "{{") != 0 || close == std::string::npos) {
          report += "line " + std::to_string(lineNo) + ": " + word + " without {{text}}\n";
          continue;
        }
        out.push_back({sev, target, line.substr(p + 2, close - p - 2), false, {}});
        at = close + 2;
      }
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}
}  // namespace

namespace {
bool verify(std::vector<Expectation> expected, const std::vector<Diagnostic> &diags, bool withFiles,
            std::string &report) {
  bool ok = report.empty();
  for (const Diagnostic &d : diags) {
    bool matched = false;
    for (Expectation &e : expected) {
      if (!e.met && e.severity == d.severity && e.line == d.loc.line && (e.file.empty() || e.file == d.loc.file) &&
          d.message.find(e.text) != std::string::npos) {
        e.met = matched = true;
        break;
      }
    }
    if (!matched) {
      ok = false;
      report += "unexpected " + std::string(severityName(d.severity)) + " at " +
                (withFiles ? d.loc.file + " " : "") + "line " + std::to_string(d.loc.line) + ": " +
                d.message + "\n";
    }
  }
  for (const Expectation &e : expected) {
    if (e.met) continue;
    ok = false;
    report += "expected " + std::string(severityName(e.severity)) + " at " + (e.file.empty() ? "" : e.file + " ") +
              "line " + std::to_string(e.line) + " not produced: " + e.text + "\n";
  }
  return ok;
}
}  // namespace

bool verifyDiagnostics(const std::string &sourceText, const std::vector<Diagnostic> &diags,
                       std::string &report) {
  report.clear();
  std::vector<Expectation> expected = parseExpectations(sourceText, report);
  return verify(std::move(expected), diags, false, report);
}

bool verifyDiagnostics(const SourceManager &sources, const std::vector<Diagnostic> &diags, std::string &report) {
  report.clear();
  std::vector<Expectation> expected;
  for (const std::string &f : sources.files()) {
    for (Expectation &e : parseExpectations(*sources.text(f), report)) {
      e.file = f;
      expected.push_back(std::move(e));
    }
  }
  return verify(std::move(expected), diags, true, report);
}

}  // namespace tk::lang
