#pragma once
// Outputs written through a temporary and a rename must not be renamed over a device or a
// pipe: a rename over /dev/null replaced it with a regular file for the whole machine.
#include <filesystem>
#include <string>

namespace spillway {

// True when `path` exists and is not a regular file (a device, a FIFO, a socket): write to it
// as it is, never through a temporary renamed over it.
inline bool isSpecialFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
}

}  // namespace spillway
