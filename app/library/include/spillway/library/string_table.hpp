#pragma once
// Strings by id, 0 = absent (the empty string) and 1 + index otherwise: an incident's string
// dictionary and a recording block's own table.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace spillway::library {

class StringTable {
 public:
  // Lookups by string_view without building a std::string.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Index = std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>>;

  // The id of `s`, added if new; 0 for the empty string.
  std::uint32_t intern(std::string_view s) {
    if (s.empty()) return 0;
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    return append(s);
  }
  // Adds `s` as the next id (a stored table read back in order; the first of equal strings
  // keeps the lookup). `indexed` false: a slot of its own that intern() never returns.
  std::uint32_t append(std::string_view s, bool indexed = true) {
    strings_.emplace_back(s);
    const auto id = static_cast<std::uint32_t>(strings_.size());
    if (indexed) index_.emplace(strings_.back(), id);
    return id;
  }
  std::string_view at(std::uint32_t id) const {
    return id == 0 ? std::string_view() : std::string_view(strings_[id - 1]);
  }
  const std::vector<std::string>& strings() const { return strings_; }
  std::size_t size() const { return strings_.size(); }
  void clear() {
    strings_.clear();
    index_.clear();
  }

 private:
  std::vector<std::string> strings_;
  Index index_;
};

}  // namespace spillway::library
