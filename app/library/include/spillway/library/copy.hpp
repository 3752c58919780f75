#pragma once
// Moving incidents between libraries (SQLite file ↔ PostgreSQL team library): every row of an
// incident — its record blocks and samples byte for byte, dictionaries, sources (so a file
// imported there is still recognised here), annotations, saved runs, tags and notes.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spillway/library/library.hpp"

namespace spillway::library {

struct CopyResult {
  std::vector<std::string> copied;   // incidents now in the target
  std::vector<std::string> present;  // already there under that name: left as they were
  // Incidents that do not read whole in the source (blocks lost or unreadable, a sample naming
  // no instance), each with the reason: nothing of them was copied. Byte for byte, they would
  // have passed their damage on to a library that checks nothing on the way in.
  std::vector<std::pair<std::string, std::string>> damaged;
};

// Copies the named incidents (all when empty) from `from` into `to`, each in one transaction
// of `to`. An incident the target already holds is skipped and reported, so a copy re-run after
// an interruption completes what is missing. Each incident is read back whole (as export would)
// before it is written; a damaged one is left out and reported. Throws InputError (a missing
// incident names it).
CopyResult copyIncidents(Library& from, Library& to, const std::vector<std::string>& names = {});

}  // namespace spillway::library
