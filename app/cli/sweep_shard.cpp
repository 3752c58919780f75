#include "sweep_shard.hpp"

#include <QCryptographicHash>
#include <QFile>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "spillway/input_error.hpp"
#include "spillway/special_file.hpp"

namespace spillway::cli {
namespace {

using nlohmann::json;

constexpr int kFormat = 1;
constexpr std::uint32_t kMaxShards = 100000;
constexpr std::size_t kMaxLine = std::size_t{1} << 20;  // a row is well under 1 KiB

// Every field SweepScore::add(SweepScore) sums, so a merged score is the score itself.
json rawScore(const SweepScore& s) {
  return {{"records", s.records},
          {"succeeded", s.succeeded},
          {"rejected", s.rejected},
          {"blocked_would_succeed", s.blockedWouldSucceed},
          {"blocks", s.blocks.blocks},
          {"blocks_would_succeed", s.blocks.wouldSucceed},
          {"episodes", s.blocks.episodes},
          {"false_trip_episodes", s.blocks.falseTripEpisodes},
          {"false_trips_by_rule", s.blocks.falseTripsByRule},
          {"traffic_us", s.traffic},
          {"faults", s.faults},
          {"detected", s.detected},
          {"restored", s.restored},
          {"ttd_sum_us", s.ttdSum},
          {"mttr_sum_us", s.mttrSum},
          {"ttd_max_us", s.ttdMax},
          {"simulated", s.simulated},
          {"costed", s.costed},
          {"limit_refusals", s.limitRefusals},
          {"mis_kills", s.misKills},
          {"slot_time_us", s.slotTime},
          {"wasted_slot_time_us", s.wastedSlotTime},
          {"originals", s.originals},
          {"cost", s.cost}};
}

// One line of a shard file, with where it came from for every error.
struct Line {
  const std::string& path;
  long number;
  json value;

  template <class T>
  void read(const json& obj, const char* key, T& out) const {
    const auto it = obj.find(key);
    if (it == obj.end()) throw InputError(path, number, key, "missing");
    try {
      out = it->template get<T>();
    } catch (const json::exception&) {
      throw InputError(path, number, key, "a value of another type than a shard row holds");
    }
  }
};

SweepScore scoreFrom(const Line& l, const json& j) {
  if (!j.is_object()) throw InputError(l.path, l.number, "score", "not an object");
  SweepScore s;
  l.read(j, "records", s.records);
  l.read(j, "succeeded", s.succeeded);
  l.read(j, "rejected", s.rejected);
  l.read(j, "blocked_would_succeed", s.blockedWouldSucceed);
  l.read(j, "blocks", s.blocks.blocks);
  l.read(j, "blocks_would_succeed", s.blocks.wouldSucceed);
  l.read(j, "episodes", s.blocks.episodes);
  l.read(j, "false_trip_episodes", s.blocks.falseTripEpisodes);
  l.read(j, "false_trips_by_rule", s.blocks.falseTripsByRule);
  l.read(j, "traffic_us", s.traffic);
  l.read(j, "faults", s.faults);
  l.read(j, "detected", s.detected);
  l.read(j, "restored", s.restored);
  l.read(j, "ttd_sum_us", s.ttdSum);
  l.read(j, "mttr_sum_us", s.mttrSum);
  l.read(j, "ttd_max_us", s.ttdMax);
  l.read(j, "simulated", s.simulated);
  l.read(j, "costed", s.costed);
  l.read(j, "limit_refusals", s.limitRefusals);
  l.read(j, "mis_kills", s.misKills);
  l.read(j, "slot_time_us", s.slotTime);
  l.read(j, "wasted_slot_time_us", s.wastedSlotTime);
  l.read(j, "originals", s.originals);
  l.read(j, "cost", s.cost);
  return s;
}

json headerJson(const SweepIdentity& id, Shard shard) {
  return {{"spillway_sweep_shard", kFormat},
          {"version", id.version},
          {"space", id.space},
          {"bench", id.bench},
          {"judgement", id.judgement},
          {"candidates", id.candidates},
          {"shard", shard.index},
          {"shards", shard.count}};
}

std::size_t rowsOf(Shard s, std::size_t candidates) {
  return candidates > s.index ? (candidates - s.index - 1) / s.count + 1 : 0;
}

// One shard file, read whole and checked on its own.
struct ShardFile {
  SweepIdentity id;
  Shard shard;
  std::vector<std::pair<std::size_t, SweepCandidate>> candidates;
  std::vector<SweepScore> scores;
};

void readHeader(const Line& l, ShardFile& f) {
  int format = 0;
  l.read(l.value, "spillway_sweep_shard", format);
  if (format != kFormat)
    throw InputError(
        l.path, l.number, "spillway_sweep_shard",
        "format " + std::to_string(format) + ", this Spillway reads " + std::to_string(kFormat));
  l.read(l.value, "version", f.id.version);
  l.read(l.value, "space", f.id.space);
  l.read(l.value, "bench", f.id.bench);
  l.read(l.value, "judgement", f.id.judgement);
  l.read(l.value, "candidates", f.id.candidates);
  l.read(l.value, "shard", f.shard.index);
  l.read(l.value, "shards", f.shard.count);
  if (f.shard.count == 0 || f.shard.count > kMaxShards || f.shard.index >= f.shard.count)
    throw InputError(l.path, l.number, "shard", "not a shard I of N (0 <= I < N <= 100000)");
  if (f.id.candidates > 100000)
    throw InputError(l.path, l.number, "candidates", "more than a sweep holds (100000)");
}

void readRow(const Line& l, ShardFile& f) {
  std::size_t index = 0;
  l.read(l.value, "candidate", index);
  if (index >= f.id.candidates || !f.shard.holds(index))
    throw InputError(l.path, l.number, "candidate",
                     std::to_string(index) + " is not a candidate of shard " +
                         std::to_string(f.shard.index) + "/" + std::to_string(f.shard.count));
  if (!f.candidates.empty() && index <= f.candidates.back().first)
    throw InputError(l.path, l.number, "candidate", "out of order or repeated");
  SweepCandidate c;
  l.read(l.value, "values", c.values);
  const auto score = l.value.find("score");
  if (score == l.value.end()) throw InputError(l.path, l.number, "score", "missing");
  f.scores.push_back(scoreFrom(l, *score));
  f.candidates.emplace_back(index, std::move(c));
}

// std::getline that stops at kMaxLine: a file without newlines (/dev/zero) grew one line
// without bound (7.8 GB in 12 s) before its length was checked.
bool boundedLine(std::istream& in, std::string& line, const std::string& path, long number) {
  std::streambuf* sb = in.rdbuf();
  line.clear();
  for (int c = sb->sbumpc(); c != std::char_traits<char>::eof(); c = sb->sbumpc()) {
    if (c == '\n') return true;
    if (line.size() >= kMaxLine) throw InputError(path, number, "", "line longer than 1 MiB");
    line.push_back(static_cast<char>(c));
  }
  in.setstate(std::ios::eofbit);
  return !line.empty();
}

// A shard's rows from `in`; `path` names them in errors (a file, or a shard in a library).
ShardFile readShard(const std::string& path, std::istream& in) {
  ShardFile f;
  std::optional<std::size_t> trailer;
  std::string text;
  long number = 0;
  while (boundedLine(in, text, path, number + 1)) {
    ++number;
    Line l{path, number, json::parse(text, nullptr, false)};
    if (l.value.is_discarded()) throw InputError(path, number, "", "not JSON");
    if (!l.value.is_object()) throw InputError(path, number, "", "not a JSON object");
    if (trailer) throw InputError(path, number, "", "a line after the trailer");
    if (number == 1)
      readHeader(l, f);
    else if (l.value.contains("candidate"))
      readRow(l, f);
    else
      l.read(l.value, "rows", trailer.emplace());
  }
  if (number == 0) throw InputError(path, 0, "", "empty: not a sweep shard");
  const std::size_t want = rowsOf(f.shard, f.id.candidates);
  if (!trailer || *trailer != f.candidates.size() || f.candidates.size() != want)
    throw InputError(path, number, "rows",
                     "cut short: " + std::to_string(f.candidates.size()) + " of " +
                         std::to_string(want) + " rows (a task that died? run it again)");
  return f;
}

ShardFile readShardFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open (its task never ran, or is still running?)");
  return readShard(path, in);
}

// Which input two shards disagree on, in the words of the identity's fields.
std::optional<std::string> difference(const SweepIdentity& a, const SweepIdentity& b) {
  if (a.version != b.version) return "computed by Spillway " + b.version + ", not " + a.version;
  if (a.space != b.space) return "another candidate space (base policy or sweep spec)";
  if (a.bench != b.bench) return "other incidents (or another scenario or seed count)";
  if (a.judgement != b.judgement) return "another replay seed or SLO";
  if (a.candidates != b.candidates) return "another number of candidates";
  return std::nullopt;
}

std::string missingList(const std::vector<bool>& seen) {
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (!seen[i]) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string quoted(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += " " + shellQuote(a);
  return out;
}

}  // namespace

Shard parseShard(std::string_view text, const std::string& source) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view s) -> std::optional<std::uint32_t> {
    if (s.empty() || s.size() > 6) return std::nullopt;
    std::uint32_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return v;
  };
  const auto i = number(text.substr(0, slash));
  const auto n = slash == std::string_view::npos ? std::nullopt : number(text.substr(slash + 1));
  if (!i || !n || *n == 0 || *n > kMaxShards || *i >= *n)
    throw InputError(source, 0, std::string(text),
                     "expected I/N, shard I of N with 0 <= I < N <= 100000 (e.g. 3/8)");
  return {*i, *n};
}

std::string sha256Hex(std::string_view bytes) {
  return QCryptographicHash::hash(
             QByteArrayView(bytes.data(), static_cast<qsizetype>(bytes.size())),
             QCryptographicHash::Sha256)
      .toHex()
      .toStdString();
}

// The calls and faults as replay reads them; not the names or paths, which differ between the
// machines of one sweep.
std::string incidentsDigest(const std::vector<IncidentTrace>& incidents) {
  QCryptographicHash h(QCryptographicHash::Sha256);
  auto add = [&](const auto& v) {
    h.addData(QByteArrayView(reinterpret_cast<const char*>(&v), sizeof v));
  };
  auto text = [&](std::string_view s) {
    add(s.size());
    h.addData(QByteArrayView(s.data(), static_cast<qsizetype>(s.size())));
  };
  for (const IncidentTrace& inc : incidents) {
    add(inc.calls().size());
    for (const CallRecord& r : inc.calls()) {
      add(r.ts), add(r.latency), add(r.status), add(r.outcome), add(r.hasOutcome);
      add(r.critical.value_or(false)), add(r.critical.has_value());
      add(r.tokensIn), add(r.tokensOut);
      for (std::string_view s : {r.instance, r.model, r.tenant, r.route, r.session}) text(s);
    }
    add(inc.faults().size());
    for (const NamedFault& f : inc.faults()) {
      text(f.instance), text(f.kind);
      add(f.start), add(f.end), add(f.benign);
    }
  }
  return h.result().toHex().toStdString();
}

std::string sweepKey(const SweepIdentity& id) {
  return sha256Hex(id.version + "\n" + id.space + "\n" + id.bench + "\n" + id.judgement + "\n" +
                   std::to_string(id.candidates))
      .substr(0, 16);
}

std::string shardRowsText(const SweepIdentity& id, Shard shard,
                          const std::vector<std::size_t>& indices, const SweepResult& rows) {
  std::string out = headerJson(id, shard).dump() + '\n';
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const json row{{"candidate", indices[k]},
                   {"values", rows.candidates[k].values},
                   {"score", rawScore(rows.scores[k])}};
    out += row.dump() + '\n';
  }
  return out + json{{"rows", indices.size()}}.dump() + '\n';
}

void writeShardRows(const std::string& path, const SweepIdentity& id, Shard shard,
                    const std::vector<std::size_t>& indices, const SweepResult& rows) {
  if (isSpecialFile(path)) {  // /dev/null, a FIFO: written as it is
    std::ofstream out(path, std::ios::binary);
    out << shardRowsText(id, shard, indices, rows);
    out.close();
    if (!out) throw InputError(path, 0, "", "cannot write");
    return;
  }
  const std::string part = path + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, "", "cannot write");
    out << shardRowsText(id, shard, indices, rows);
    out.flush();
    if (!out) throw InputError(path, 0, "", "cannot write (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(part, path, ec);
  if (ec) throw InputError(path, 0, "", "cannot rename " + part + ": " + ec.message());
}

namespace {

// The shards, each read by `read(k)` and named `names[k]` in errors, as one sweep.
SweepResult mergeShards(const std::vector<std::string>& paths,
                        const std::function<ShardFile(std::size_t)>& read) {
  std::optional<SweepIdentity> id;
  std::vector<bool> seen;
  std::map<std::uint32_t, std::string> from;  // shard → its file, for "given twice"
  SweepResult r;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    const std::string& path = paths[k];
    ShardFile f = read(k);
    if (!id) {
      id = f.id;
      seen.assign(f.shard.count, false);
      r.candidates.resize(id->candidates);
      r.scores.resize(id->candidates);
    } else if (const auto why = difference(*id, f.id)) {
      throw InputError(path, 1, "", "not the sweep of " + paths.front() + ": " + *why);
    }
    if (f.shard.count != seen.size())
      throw InputError(path, 1, "shards",
                       "cut into " + std::to_string(f.shard.count) + " shards, " + paths.front() +
                           " into " + std::to_string(seen.size()));
    if (seen[f.shard.index])
      throw InputError(path, 1, "shard",
                       "shard " + std::to_string(f.shard.index) + " given twice (also " +
                           from[f.shard.index] + ")");
    seen[f.shard.index] = true;
    from[f.shard.index] = path;
    for (std::size_t k = 0; k < f.candidates.size(); ++k) {
      r.candidates[f.candidates[k].first] = std::move(f.candidates[k].second);
      r.scores[f.candidates[k].first] = f.scores[k];
    }
  }
  if (const std::string missing = missingList(seen); !missing.empty())
    throw InputError("sweep merge", 0, "",
                     "missing shards " + missing + " of " + std::to_string(seen.size()) +
                         ": no partial front is printed (run those tasks again)");
  r.pareto = paretoFront(r.scores);
  return r;
}

}  // namespace

SweepResult mergeShardRows(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("sweep merge", 0, "", "no shard files given");
  return mergeShards(paths, [&](std::size_t k) { return readShardFile(paths[k]); });
}

SweepResult mergeShardTexts(const std::vector<std::pair<std::string, std::string>>& shards) {
  std::vector<std::string> names;
  for (const auto& s : shards) names.push_back(s.first);
  return mergeShards(names, [&](std::size_t k) {
    std::istringstream in(shards[k].second);
    return readShard(shards[k].first, in);
  });
}

// The packaging/slurm scripts, compiled in (one copy: what a site installs is what --emit
// submits).
std::string batchResource(const char* name) {
  QFile f(QString(":/spillway/batch/") + name);
  if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error(std::string("no resource ") + name);
  return f.readAll().toStdString();
}

std::string slurmScript(std::uint32_t shards, const std::vector<std::string>& sweepArgs,
                        const std::vector<std::string>& mergeArgs) {
  const std::string n = std::to_string(shards);
  return "#!/bin/bash\n"
         "# A Spillway sweep on Slurm (docs/scale-out.md): an array job of " +
         n +
         " tasks, then a merge\n# that runs when all of them succeeded. Generated by "
         "spillway-cli " SPILLWAY_VERSION
         "; run it with bash on a\n# submit host, from the directory the sweep's "
         "paths are relative to.\n"
         "set -euo pipefail\n"
         "rows=${SPILLWAY_ROWS:-$PWD/spillway-sweep-rows}\n"
         "mkdir -p \"$rows\"\n"
         "cat > \"$rows/sweep.sbatch\" <<'SBATCH'\n" +
         batchResource("sweep.sbatch") +
         "SBATCH\n"
         "cat > \"$rows/merge.sbatch\" <<'SBATCH'\n" +
         batchResource("merge.sbatch") +
         "SBATCH\n"
         "array=$(sbatch --parsable --array=0-" +
         std::to_string(shards - 1) +
         " --output=\"$rows/task-%a.log\" \\\n  \"$rows/sweep.sbatch\" \"$rows\"" +
         quoted(sweepArgs) +
         ")\n"
         "array=${array%%;*}\n"
         "merge=$(sbatch --parsable --dependency=afterok:\"$array\" --output=\"$rows/merge.out\" "
         "\\\n"
         "  \"$rows/merge.sbatch\" \"$rows\" " +
         n + quoted(mergeArgs) +
         ")\n"
         "echo \"spillway sweep: array job $array (" +
         n + " tasks), merge job ${merge%%;*}; the result in $rows/merge.out\"\n";
}

}  // namespace spillway::cli
