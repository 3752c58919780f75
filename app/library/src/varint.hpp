#pragma once
// Private: LEB128 varints and zigzag, shared by the incident block codec and the recording
// block codec so both read and write integers the same way.
#include <cstdint>
#include <string>

namespace spillway::library::detail {

inline void putVar(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline std::uint64_t zig(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzig(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Writes a block's columns, each as <length><bytes> so a reader can tell a truncated block from
// a good one.
struct ColumnWriter {
  std::string& out;
  std::string col;
  template <typename V>
  void vars(const V& v) {
    for (auto x : v) putVar(col, static_cast<std::uint64_t>(x));
    end();
  }
  template <typename V>
  void zigs(const V& v) {
    for (auto x : v) putVar(col, zig(x));
    end();
  }
  // Times, each as its difference from the one before (the first from 0).
  template <typename V>
  void deltas(const V& v) {
    std::int64_t prev = 0;
    for (std::int64_t t : v) {
      putVar(col, zig(t - prev));
      prev = t;
    }
    end();
  }
  void bytes(const void* p, std::size_t n) {
    col.append(static_cast<const char*>(p), n);
    end();
  }
  void end() {
    putVar(out, col.size());
    out.append(col);
    col.clear();
  }
};

// Reads varints from [p, end); `ok` turns false on a truncated or overlong one and stays false,
// so a decoder checks once per column instead of once per value.
struct Cursor {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;
  std::uint64_t var() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      const unsigned char c = *p++;
      v |= static_cast<std::uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  std::size_t left() const { return static_cast<std::size_t>(end - p); }
};

}  // namespace spillway::library::detail
