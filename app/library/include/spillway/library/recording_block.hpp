#pragma once
// A block of a live recording: up to kBlockCalls calls, or aggregate samples, with the block's
// own string table. An incident's blocks share the incident's dictionaries; a recording's
// cannot, because retention deletes its oldest blocks and a shared dictionary would keep every
// session id ever seen, growing without bound. A self-contained block takes its strings with
// it when it is dropped; the table costs a few percent of the block (docs/library.md, "Live
// recording").
//
// Layout: kind byte (0 calls, 1 samples), string count, strings as <length><bytes>, then for
// calls an incident block (block_codec.hpp) whose string columns index this table, for samples
// the count and seven columns as <length><bytes>. Every string id is 0 = absent or 1 + index.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/formats/source.hpp"
#include "spillway/library/block_codec.hpp"
#include "spillway/library/recording.hpp"
#include "spillway/library/string_table.hpp"

namespace spillway::library {

struct SampleColumns {
  std::vector<std::uint32_t> instance, model;  // string ids
  std::vector<Micros> end, step;
  std::vector<std::uint32_t> calls, failures;
  std::vector<std::int64_t> slow;  // -1: not known

  std::size_t size() const { return end.size(); }
  void clear();
};

// Accumulates one block in memory; encodeTo() writes it and starts the next.
class RecordingBlockBuilder {
 public:
  explicit RecordingBlockBuilder(RecordKind kind) : kind_(kind) {}
  void add(const CallRecord& r);
  void add(const formats::AggregateSample& s);

  RecordKind kind() const { return kind_; }
  std::size_t size() const { return kind_ == RecordKind::Calls ? calls_.size() : samples_.size(); }
  bool full() const { return size() >= kBlockCalls; }
  Micros tMin() const { return tMin_; }  // earliest start (sample: end - step)
  Micros tMax() const { return tMax_; }  // latest end
  // Appends the encoded block to `out` and empties the builder.
  void encodeTo(std::string& out);

 private:
  void span(Micros start, Micros end);

  RecordKind kind_;
  StringTable strings_;
  BlockColumns calls_;
  SampleColumns samples_;
  std::uint32_t emptyInstance_ = 0;  // the slot of an empty instance name, once one was seen
  Micros tMin_ = 0, tMax_ = 0;
};

// A decoded block. Views handed out by call()/sample() point into `strings`.
struct RecordingBlock {
  RecordKind kind = RecordKind::Calls;
  std::vector<std::string> strings;
  BlockColumns calls;
  SampleColumns samples;

  std::size_t size() const { return kind == RecordKind::Calls ? calls.size() : samples.size(); }
  std::string_view str(std::uint32_t id) const {
    return id == 0 ? std::string_view() : std::string_view(strings[id - 1]);
  }
  void call(std::size_t i, CallRecord& out) const;
  void sample(std::size_t i, formats::AggregateSample& out) const;
};

// False when the bytes are not a well-formed block (a damaged library), including string ids
// past the table; `b` is then unusable.
bool decodeRecordingBlock(const unsigned char* data, std::size_t size, RecordingBlock& b);

}  // namespace spillway::library
