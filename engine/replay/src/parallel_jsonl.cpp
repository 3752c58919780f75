#include "spillway/parallel_jsonl.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "spillway/formats/jsonl_chunks.hpp"
#include "spillway/input_limits.hpp"

namespace spillway {

namespace {

using formats::JsonlBatch;
using formats::JsonlChunk;
using formats::JsonlLineParser;

// A chunk is parsed in at most this many pieces (ParallelJsonlOptions::piece).
constexpr std::size_t kPiecesPerChunk = 16;

class ParallelJsonlSource final : public formats::RecordSource {
 public:
  ParallelJsonlSource(std::string name, JsonlReader::ReadFn read, bool skipBadLines,
                      const ParallelJsonlOptions& o, unsigned threads, std::FILE* file)
      : RecordSource(std::move(name), skipBadLines),
        splitter_(std::move(read), o.capacity),
        piece_(std::max<std::size_t>(o.piece, 1)),
        ring_((std::max<std::size_t>(o.ahead, 1) + 1) * (kPiecesPerChunk + 1)),
        file_(file) {
    for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ParallelJsonlSource() override {
    {
      const std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    if (file_) std::fclose(file_);
  }

  bool next(CallRecord& rec) override {
    for (;;) {
      if (cur_ && pos_ < cur_->batch.records.size()) {
        rec = cur_->batch.records[pos_++];
        rec.line += base_;
        return true;
      }
      if (cur_) finishBatch();
      if (!takeNext()) return false;
    }
  }

 private:
  enum class State { Free, Ready, Parsing, Parsed };
  // Lines [from, to) of a chunk; the chunk's end (tooLong, error) comes with its last piece.
  struct Slot {
    std::shared_ptr<JsonlChunk> chunk;
    std::size_t from = 0, to = 0;
    bool last = false;
    JsonlBatch batch;
    std::exception_ptr error;  // parsing failed (memory)
    State state = State::Free;
  };

  // A chunk and its pieces fit in the ring.
  bool canRead() const {
    return !reading_ && !readDone_ && read_ + kPiecesPerChunk + 1 <= consumed_ + ring_.size();
  }

  // A chunk buffer no piece holds any more (the pool's own reference only), or a new one.
  std::shared_ptr<JsonlChunk> freeChunk() {
    for (const std::shared_ptr<JsonlChunk>& c : pool_)
      if (c.use_count() == 1) return c;
    return pool_.emplace_back(std::make_shared<JsonlChunk>());
  }

  // Reads the next chunk and queues its pieces; called and returns with `lock` held.
  void read(std::unique_lock<std::mutex>& lock) {
    std::shared_ptr<JsonlChunk> chunk = freeChunk();
    reading_ = true;
    lock.unlock();
    bool got = true;
    try {
      got = splitter_.next(*chunk);
    } catch (...) {  // memory: the trace's own errors come as chunks
      chunk->size = 0;
      chunk->error = std::current_exception();
    }
    std::size_t cuts[kPiecesPerChunk + 1], pieces = 0;
    const std::size_t piece = std::max(piece_, chunk->size / kPiecesPerChunk + 1);
    for (std::size_t at = 0; got && (pieces == 0 || at < chunk->size); ++pieces)
      cuts[pieces] = at = formats::lineBoundary(*chunk, at + piece);
    lock.lock();
    reading_ = false;
    readDone_ = !got;
    for (std::size_t i = 0, from = 0; i < pieces; from = cuts[i++]) {
      Slot& s = ring_[read_++ % ring_.size()];
      s.chunk = chunk;
      s.from = from;
      s.to = cuts[i];
      s.last = i + 1 == pieces;
      s.state = State::Ready;
    }
    cv_.notify_all();
  }

  // Parses the first piece nobody has taken; called and returns with `lock` held.
  void parse(std::unique_lock<std::mutex>& lock, JsonlLineParser& parser) {
    Slot& s = ring_[parsed_++ % ring_.size()];
    s.state = State::Parsing;
    lock.unlock();
    try {
      formats::parseJsonlChunk(parser, *s.chunk, s.from, s.to, skipBad_, s.batch);
    } catch (...) {
      s.batch.clear();
      s.error = std::current_exception();
    }
    lock.lock();
    s.state = State::Parsed;
    cv_.notify_all();
  }

  // One unit of work, parsing before reading; false when there is none.
  bool step(std::unique_lock<std::mutex>& lock, JsonlLineParser& parser) {
    if (parsed_ < read_)
      parse(lock, parser);
    else if (canRead())
      read(lock);
    else
      return false;
    return true;
  }

  void work() {
    JsonlLineParser parser;
    std::unique_lock<std::mutex> lock(m_);
    while (!stop_)
      if (!step(lock, parser)) cv_.wait(lock);
  }

  // The next piece in file order, parsed; this thread reads or parses meanwhile when there is
  // work. False at the end of the trace.
  bool takeNext() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      Slot& s = ring_[consumed_ % ring_.size()];
      if (consumed_ < read_ && s.state == State::Parsed) {
        cur_ = &s;
        pos_ = 0;
        return true;
      }
      if (readDone_ && read_ == consumed_) return false;
      if (!step(lock, parser_)) cv_.wait(lock);
    }
  }

  // After the records of a piece: its bad lines (thrown or counted), what ended the trace
  // there, and the slot handed back.
  void finishBatch() {
    const JsonlBatch& b = cur_->batch;
    if (cur_->error) std::rethrow_exception(cur_->error);
    for (const JsonlBatch::Bad& bad : b.bad)
      reject(InputError(source_, base_ + bad.line, bad.field, bad.err));
    if (cur_->last && cur_->chunk->tooLong)
      throw InputError(source_, base_ + b.lines + 1, "",
                       "line longer than the " + formatByteLimit(input_limits::kLine) +
                           " limit for one record (docs/limits.md)");
    if (cur_->last && cur_->chunk->error) std::rethrow_exception(cur_->chunk->error);
    base_ += b.lines;
    {
      const std::lock_guard<std::mutex> lock(m_);
      cur_->chunk.reset();
      cur_->error = nullptr;
      cur_->state = State::Free;
      ++consumed_;
    }
    cv_.notify_all();
    cur_ = nullptr;
  }

  formats::JsonlSplitter splitter_;  // used by the one thread with reading_ set
  std::size_t piece_;
  std::vector<Slot> ring_;  // piece `seq` in ring_[seq % size]
  std::vector<std::shared_ptr<JsonlChunk>> pool_;
  std::FILE* file_;
  JsonlLineParser parser_;  // the consumer's
  std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t consumed_ = 0;  // the piece the consumer holds or waits for
  std::uint64_t parsed_ = 0;    // pieces taken for parsing
  std::uint64_t read_ = 0;      // pieces queued
  bool reading_ = false, readDone_ = false, stop_ = false;
  std::vector<std::thread> workers_;
  // The consumer's: its piece, the next record in it, lines before it.
  Slot* cur_ = nullptr;
  std::size_t pos_ = 0;
  long base_ = 0;
};

unsigned resolveThreads(unsigned threads) {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::unique_ptr<formats::RecordSource> openJsonlParallel(const std::string& path, bool skipBadLines,
                                                         const ParallelJsonlOptions& options) {
  const unsigned threads = resolveThreads(options.threads);
  std::error_code ec;
  if (threads <= 1 || path == "-" || !std::filesystem::is_regular_file(path, ec))
    return formats::openSource(formats::Format::Jsonl, path, {skipBadLines, {}});
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  return std::make_unique<ParallelJsonlSource>(path, JsonlReader::fileReader(f, path), skipBadLines,
                                               options, threads, f);
}

std::unique_ptr<formats::RecordSource> jsonlParallelFromMemory(
    std::string name, std::string_view data, bool skipBadLines,
    const ParallelJsonlOptions& options) {
  if (resolveThreads(options.threads) <= 1)
    return formats::sourceFromMemory(formats::Format::Jsonl, std::move(name), data,
                                     {skipBadLines, {}});
  return jsonlParallelFromReader(std::move(name), JsonlReader::memoryReader(data), skipBadLines,
                                 options);
}

std::unique_ptr<formats::RecordSource> jsonlParallelFromReader(
    std::string name, JsonlReader::ReadFn read, bool skipBadLines,
    const ParallelJsonlOptions& options) {
  const unsigned threads = resolveThreads(options.threads);
  if (threads <= 1)
    return formats::sourceFromJsonl(std::make_unique<JsonlReader>(std::move(name), std::move(read),
                                                                  skipBadLines, options.capacity));
  return std::make_unique<ParallelJsonlSource>(std::move(name), std::move(read), skipBadLines,
                                               options, threads, nullptr);
}

}  // namespace spillway
