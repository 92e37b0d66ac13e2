// Diagnostics of the front end: the source text of each loaded file, the
// errors and notes found in it, and their rendering as
// "file:line:col: error: message", the source line and a caret.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "syntax/Location.h"

namespace tk::lang {

// The text of every file the front end has read, so diagnostics can quote it.
class SourceManager {
 public:
  // Stores (or replaces) the text of `path`; returns the stored copy.
  const std::string &add(const std::string &path, std::string text);
  const std::string *text(const std::string &path) const;
  // The 1-based line `line` of `path` without its newline; empty if unknown.
  std::string line(const std::string &path, int line) const;
  // The paths of every stored file, sorted.
  std::vector<std::string> files() const;

 private:
  std::map<std::string, std::unique_ptr<std::string>> files_;
};

struct Diagnostic {
  enum class Severity { Error, Warning, Note } severity = Severity::Error;
  tk::Location loc;
  std::string message;
};

// Collects diagnostics. After kMaxErrors errors it records one last error
// saying it stopped, and drops the rest, so garbage input stays cheap.
class DiagnosticEngine {
 public:
  static constexpr int kMaxErrors = 50;

  void error(tk::Location loc, std::string message);
  void warning(tk::Location loc, std::string message);
  // A note belongs to the error or warning reported just before it.
  void note(tk::Location loc, std::string message);

  bool hasErrors() const { return errorCount_ > 0; }
  int errorCount() const { return errorCount_; }
  // True once the error limit was reached: callers may stop early.
  bool tooManyErrors() const { return errorCount_ > kMaxErrors; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  void clear();
  // Drops every diagnostic after the first `count` (a checkpoint taken as
  // diagnostics().size()): a file loaded once can be lowered again after a
  // lowering that failed, its errors gone and the load's warnings kept.
  void rewind(size_t count);

  SourceManager &sources() { return sources_; }
  const SourceManager &sources() const { return sources_; }

  // Each diagnostic as "file:line:col: error: message\n<source line>\n   ^\n";
  // lines longer than ~100 columns are shown as a window around the caret.
  std::string render() const;
  static std::string renderOne(const Diagnostic &d, const SourceManager &sm);

 private:
  void add(Diagnostic::Severity s, tk::Location loc, std::string message);

  std::vector<Diagnostic> diags_;
  SourceManager sources_;
  int errorCount_ = 0;
  bool droppingNotes_ = false;
};

// `name` in quotes for a message, cut short when it is very long.
std::string quoted(const std::string &name);

// For `tkc check --verify-diagnostics`: compares `diags` with the
// `// expected-error {{text}}` (expected-warning, expected-note) comments of
// `sourceText`, which apply to their own line, or to a line relative to it
// with `expected-error@+1 {{...}}` / `@-1`, or to line N with `@N`. A diagnostic matches when its
// line is the expected one and its message contains the text. Returns true
// when every expectation is met and no other diagnostic was produced;
// otherwise `report` lists the mismatches.
bool verifyDiagnostics(const std::string &sourceText, const std::vector<Diagnostic> &diags,
                       std::string &report);
// The same over several files (a file and its imports): the comments of
// every file in `sources` apply to that file's lines only.
bool verifyDiagnostics(const SourceManager &sources, const std::vector<Diagnostic> &diags, std::string &report);

}  // namespace tk::lang
