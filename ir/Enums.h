// The tile IR's enum-valued attributes (ir/Enums.def) as C++ enums: each
// value's spelling in the text form, the parse back, and the list of choices
// an error message offers. An op's attribute holds the spelling (the text
// form is unchanged); code reads it as the enum (Op::enumAttr) and writes it
// with ir::attrOf.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tk::ir {

#define TK_ENUM_BEGIN(T, WHAT) enum class T {
#define TK_ENUM(T, E, S) E,
#define TK_ENUM_END(T) };
#include "ir/Enums.def"

// EnumInfo<T>::names[v] is value v's spelling; `what` names the set in
// messages ("comparison predicate").
template <class T>
struct EnumInfo;
#define TK_ENUM_BEGIN(T, WHAT) \
  template <>                  \
  struct EnumInfo<T> {         \
    static constexpr const char *what = WHAT; \
    static constexpr const char *names[] = {
#define TK_ENUM(T, E, S) S,
#define TK_ENUM_END(T) }; };
#include "ir/Enums.def"

template <class T>
constexpr std::span<const char *const> enumNames() {
  return EnumInfo<T>::names;
}

template <class T>
const char *enumName(T v) {
  return EnumInfo<T>::names[static_cast<size_t>(v)];
}

template <class T>
std::optional<T> parseEnum(std::string_view s) {
  for (size_t i = 0; i < std::size(EnumInfo<T>::names); ++i)
    if (s == EnumInfo<T>::names[i]) return static_cast<T>(i);
  return std::nullopt;
}

// `"a", "b" or "c"`: the spellings as a message offers them.
std::string choicesText(std::span<const char *const> names);

template <class T>
std::string enumChoices() {
  return choicesText(enumNames<T>());
}

}  // namespace tk::ir
