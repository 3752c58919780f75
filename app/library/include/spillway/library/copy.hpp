#pragma once
// Moving incidents between libraries (SQLite file ↔ PostgreSQL team library): every row of an
// incident — its record blocks and samples byte for byte, dictionaries, sources (so a file
// imported there is still recognised here), annotations, saved runs, tags and notes.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/library/library.hpp"

namespace spillway::library {

struct CopyResult {
  std::vector<std::string> copied;   // incidents now in the target
  std::vector<std::string> present;  // already there under that name: left as they were
};

// Copies the named incidents (all when empty) from `from` into `to`, each in one transaction
// of `to`. An incident the target already holds is skipped and reported, so a copy re-run after
// an interruption completes what is missing. Throws InputError (a missing incident names it).
CopyResult copyIncidents(Library& from, Library& to, const std::vector<std::string>& names = {});

}  // namespace spillway::library
