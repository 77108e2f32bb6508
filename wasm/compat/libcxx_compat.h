// Force-included into every C++ file of the wasm build (cmake/Dependencies.cmake). Emscripten 3.1.6 on
// Debian ships libc++ 13, which lacks a few C++20 library pieces that GCC 12's libstdc++ has; they are
// provided here when missing, so the core compiles unchanged for both targets. Keep this list short:
// each entry is only for a feature the core already uses.
#pragma once
#ifdef __cplusplus
#include <version>

#if !defined(__cpp_lib_bit_cast)
#include <type_traits>
namespace std {
// C++20 std::bit_cast, on the compiler builtin that libc++ 14 uses for it.
template <class To, class From>
  requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif

#endif  // __cplusplus
