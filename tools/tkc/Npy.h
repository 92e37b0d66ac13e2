// NumPy .npy files for `tkc run` / `tkc tune`: read formats 1.0, 2.0 and 3.0
// (little-endian, C order), write 1-D format 1.0 through a temporary file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tkc {

// Bytes per element of a tk scalar type ("f32" -> 4, "bool" -> 1), 0 for a
// name that is not one.
size_t scalarBytes(const std::string &dtype);

// The .npy descr for a tk scalar type: "f32" -> "<f4", "i8" -> "|i1",
// "bool" -> "|b1". NumPy has no bfloat16, so bf16 is its raw bits, "<u2".
// "" for a name that is not a tk scalar type.
std::string npyDescr(const std::string &dtype);

// An array as a .npy file holds it.
struct NpyArray {
  std::string descr;            // as written in the header: "<f4", "|b1", ...
  std::vector<uint64_t> shape;  // empty for a 0-d array (one element)
  bool fortranOrder = false;
  std::vector<char> data;  // the element bytes, in file order
  uint64_t count() const;  // the product of `shape`
};

// Reads any .npy file of format 1.0, 2.0 or 3.0 whose dtype is a plain
// (non-structured) one. Throws tk::Error naming `path` and what is wrong: not
// a .npy file, a corrupt header, a version it does not know, data shorter or
// longer than the header says.
NpyArray readNpy(const std::string &path);

// Reads `path` as exactly `count` elements of tk scalar type `dtype`, in C
// order: the file's descr must be npyDescr(dtype) (byte order '<', or '|' /
// '=' where it makes no difference), its element count `count` in any shape,
// and its order C (Fortran order is accepted only where the two agree: at
// most one dimension above 1). bool elements are normalised to 0 / 1.
// Throws tk::Error naming `path` and the mismatch.
std::vector<char> readNpyAs(const std::string &path, const std::string &dtype, uint64_t count);

// The bytes of `count` elements of tk scalar type `dtype` at `data` as a .npy
// (format 1.0) of `shape` (their product is `count`; empty: 1-D); for
// outputs written together (tk::files::OutputSet).
std::string npyBytes(const std::string &dtype, const void *data, uint64_t count,
                     const std::vector<uint64_t> &shape = {});

// Writes `count` elements of tk scalar type `dtype` at `data` to `path` as a
// 1-D .npy (format 1.0), through the one output writer (runtime/OutputFiles.h),
// so a failure leaves no partial file. Throws tk::Error naming `path`.
void writeNpy(const std::string &path, const std::string &dtype, const void *data, uint64_t count);

// Writes `bytes` to `path` through the one output writer
// (runtime/OutputFiles.h). Throws tk::Error naming `path`; leaves no
// temporary behind.
void writeFileAtomic(const std::string &path, const std::string &bytes);

// The bytes of a .npy file with any header fields, for writers of unusual
// files (tests of the reader): format 1.0 unless the header needs more.
std::string encodeNpy(const std::string &descr, const std::vector<uint64_t> &shape, bool fortranOrder, const void *data,
                      size_t bytes);

}  // namespace tkc
