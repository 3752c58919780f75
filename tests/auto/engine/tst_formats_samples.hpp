#pragma once
#include <string>
#include <vector>

struct ImporterCase {
  std::string name, format, input, map, canonical;
  int ignored;
};
struct BadCase {
  std::string name, format, input, map, error;  // error: the whole message of the first bad record
  int good, skipped;                            // records read / skipped with skipBadLines
};
std::vector<ImporterCase> importerCases();
std::vector<BadCase> badCases();
// A query_range response of `series` calls series with `points` points in all, each [k,"1"].
std::string denseProm(std::size_t points, std::size_t series);
