// NumPy .npy reading and writing. The header is a Python dict literal
// ({'descr': '<f4', 'fortran_order': False, 'shape': (781,), }); a small
// parser reads exactly what numpy writes and names anything else.
#include "Npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/OutputFiles.h"
#include "tk/compiler.h"

namespace tkc {
namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct ScalarInfo {
  const char *dtype, *descr, *numpyName;
  size_t bytes;
};
const ScalarInfo kScalars[] = {
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, CLASS, NPY_DESCR, NPY_NAME, ...) {NAME, NPY_DESCR, NPY_NAME, BYTES},
#include "tk/dtype.def"
};

const ScalarInfo *scalarInfo(const std::string &dtype) {
  for (const ScalarInfo &s : kScalars)
    if (dtype == s.dtype) return &s;
  return nullptr;
}

// "<f4" / "=f4" / "|f4" -> "f4" when the bytes are little-endian as stored;
// "" for a big-endian descr.
std::string littleEndianCode(const std::string &descr) {
  if (descr.size() < 2) return "";
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '<' || order == '=') return code;
  if (order == '|') return code;
  return "";
}

std::string shapeText(const std::vector<uint64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// The header dict, read as numpy's safe_eval would: string keys, and values
// that are strings, True/False, or tuples of non-negative integers.
class HeaderParser {
 public:
  HeaderParser(const std::string &text, const std::string &path) : s_(text), path_(path) {}

  NpyArray parse() {
    NpyArray a;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    expect('{');
    for (;;) {
      skipSpace();
      if (peek() == '}') break;
      std::string key = string("a key");
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes are not supported (descr is a list)");
        a.descr = string("the descr");
        haveDescr = true;
      } else if (key == "fortran_order") {
        a.fortranOrder = boolean();
        haveOrder = true;
      } else if (key == "shape") {
        a.shape = tuple();
        haveShape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skipSpace();
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++i_;
    skipSpace();
    if (i_ != s_.size()) fail("unexpected text after the dict");
    if (!haveDescr || !haveOrder || !haveShape)
      fail(std::string("missing key '") + (!haveDescr ? "descr" : !haveOrder ? "fortran_order" : "shape") + "'");
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string &why) const {
    throw tk::Error("'" + path_ + "': corrupt .npy header: " + why + " at offset " + std::to_string(i_) + " of \"" +
                    s_ + "\"");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string(const char *what) {
    char q = peek();
    if (q != '\'' && q != '"') fail(std::string("expected ") + what + " as a quoted string");
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string v = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return v;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) return i_ += 4, true;
    if (s_.compare(i_, 5, "False") == 0) return i_ += 5, false;
    fail("fortran_order must be True or False");
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    for (;;) {
      skipSpace();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("shape must be a tuple of non-negative integers");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        unsigned d = s_[i_++] - '0';
        if (v > (UINT64_MAX - d) / 10) fail("shape dimension too large");
        v = v * 10 + d;
      }
      if (peek() == 'L') ++i_;  // Python 2 longs, as old numpy wrote them
      dims.push_back(v);
      skipSpace();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++i_;
    return dims;
  }

  const std::string &s_;
  const std::string &path_;
  size_t i_ = 0;
};

uint32_t readLE(const unsigned char *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

std::string errnoText() { return std::strerror(errno); }

}  // namespace

size_t scalarBytes(const std::string &dtype) {
  const ScalarInfo *s = scalarInfo(dtype);
  return s ? s->bytes : 0;
}

std::string npyDescr(const std::string &dtype) {
  const ScalarInfo *s = scalarInfo(dtype);
  return s ? s->descr : "";
}

uint64_t NpyArray::count() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

NpyArray readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tk::Error("cannot read '" + path + "': " + errnoText());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw tk::Error("cannot read '" + path + "': " + errnoText());
  const auto *u = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < kMagicLen + 2 || bytes.compare(0, kMagicLen, kMagic) != 0)
    throw tk::Error("'" + path + "' is not a .npy file (no \\x93NUMPY magic)");
  unsigned major = u[6], minor = u[7];
  if (major < 1 || major > 3 || minor != 0)
    throw tk::Error("'" + path + "': unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor) + " (tkc reads 1.0, 2.0 and 3.0)");
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t start = kMagicLen + 2 + lenBytes;
  if (bytes.size() < start) throw tk::Error("'" + path + "': corrupt .npy header: the file ends inside it");
  size_t headerLen = readLE(u + kMagicLen + 2, lenBytes);
  if (bytes.size() - start < headerLen)
    throw tk::Error("'" + path + "': corrupt .npy header: it claims " + std::to_string(headerLen) +
                    " bytes but the file ends after " + std::to_string(bytes.size() - start));
  NpyArray a = HeaderParser(bytes.substr(start, headerLen), path).parse();

  std::string code = littleEndianCode(a.descr);
  if (code.empty())
    throw tk::Error("'" + path + "': dtype '" + a.descr + "' is big-endian or malformed; tkc reads little-endian data");
  size_t item = 0;
  for (char c : code.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || item > 1024)
      throw tk::Error("'" + path + "': corrupt .npy header: dtype '" + a.descr + "' has no element size");
    item = item * 10 + (c - '0');
  }
  if (code.size() < 2 || item == 0)
    throw tk::Error("'" + path + "': corrupt .npy header: dtype '" + a.descr + "' has no element size");
  uint64_t count = 1;
  for (uint64_t d : a.shape) {
    if (d != 0 && count > UINT64_MAX / item / d)
      throw tk::Error("'" + path + "': corrupt .npy header: shape " + shapeText(a.shape) + " is too large");
    count *= d;
  }
  uint64_t want = count * item, have = bytes.size() - start - headerLen;
  if (have != want)
    throw tk::Error("'" + path + "': the header says " + std::to_string(count) + " elements of '" + a.descr + "' (" +
                    std::to_string(want) + " bytes) but the file holds " + std::to_string(have) + " data bytes");
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(start + headerLen), bytes.end());
  return a;
}

std::vector<char> readNpyAs(const std::string &path, const std::string &dtype, uint64_t count) {
  const ScalarInfo *want = scalarInfo(dtype);
  if (!want) throw tk::Error("'" + dtype + "' is not a tk scalar type");
  NpyArray a = readNpy(path);
  std::string code = littleEndianCode(a.descr);
  if (code != std::string(want->descr).substr(1)) {
    std::string got = a.descr;
    for (const ScalarInfo &s : kScalars)
      if (code == std::string(s.descr).substr(1)) got = s.numpyName + (" ('" + a.descr + "')");
    std::string hint = dtype == "bf16"                         ? " (bf16 has no numpy dtype: store its bits as uint16)"
                       : dtype == "f8e4m3" || dtype == "f8e5m2" ? " (fp8 has no numpy dtype: store its bits as uint8)"
                                                                : "";
    throw tk::Error("'" + path + "' holds " + got + ", expected " + want->numpyName + " ('" + want->descr + "') for " +
                    dtype + hint);
  }
  if (a.count() != count)
    throw tk::Error("'" + path + "' holds " + std::to_string(a.count()) + " elements (shape " + shapeText(a.shape) +
                    "), expected " + std::to_string(count) + " for " + dtype + "[" + std::to_string(count) + "]");
  if (a.fortranOrder) {
    size_t big = 0;
    for (uint64_t d : a.shape) big += d > 1;
    if (big > 1)
      throw tk::Error("'" + path + "' is in Fortran order (shape " + shapeText(a.shape) +
                      "); tkc reads C order: save np.ascontiguousarray(a)");
  }
  if (dtype == "bool")
    for (char &c : a.data) c = c != 0;
  return std::move(a.data);
}

std::string encodeNpy(const std::string &descr, const std::vector<uint64_t> &shape, bool fortranOrder, const void *data,
                      size_t bytes) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortranOrder ? "True" : "False") +
                     ", 'shape': " + shapeText(shape) + ", }";
  // numpy pads the header with spaces and a newline so that the data starts
  // on a 64-byte boundary.
  size_t major = dict.size() + 1 + kMagicLen + 4 > 65535 ? 2 : 1;
  size_t pre = kMagicLen + 2 + (major == 1 ? 2 : 4);
  size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - pre - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += char(major);
  out += char(0);
  size_t len = dict.size();
  for (size_t i = 0; i < pre - kMagicLen - 2; ++i) out += char((len >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

void writeFileAtomic(const std::string &path, const std::string &bytes) {
  std::string error;
  if (!tk::files::writeFile(path, bytes, error)) throw tk::Error(error);
}

std::string npyBytes(const std::string &dtype, const void *data, uint64_t count, const std::vector<uint64_t> &shape) {
  const ScalarInfo *s = scalarInfo(dtype);
  if (!s) throw tk::Error("'" + dtype + "' is not a tk scalar type");
  return encodeNpy(s->descr, shape.empty() ? std::vector<uint64_t>{count} : shape, false, data, count * s->bytes);
}

void writeNpy(const std::string &path, const std::string &dtype, const void *data, uint64_t count) {
  if (!scalarInfo(dtype)) throw tk::Error("cannot write '" + path + "': '" + dtype + "' is not a tk scalar type");
  writeFileAtomic(path, npyBytes(dtype, data, count));
}

}  // namespace tkc
