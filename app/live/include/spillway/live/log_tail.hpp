#pragma once
// Follows a growing log file like `tail -F`: new complete lines as they are appended; survives
// rotation by rename + new file (the inode at the path changes: the old file is read to its
// end, then the new one from its start) and copytruncate (the file shrinks: restart from 0).
// A partial last line waits in a buffer until its newline arrives. Poll-based (POSIX stat and
// read: the inode is what tells a rotation), with QFileSystemWatcher as a hint to poll early.
#include <QObject>
#include <QString>
#include <QTimer>

#include <sys/types.h>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "spillway/input_limits.hpp"

class QFileSystemWatcher;

namespace spillway::live {

struct TailOptions {
  int pollMs = 200;
  bool fromStart = false;  // the file's existing content too (else only what is appended)
  // A longer line is dropped (counted); the importers' own limit, so that a line `import`
  // reads is never lost here.
  std::size_t maxLineBytes = input_limits::kLine;
};

class LogTail : public QObject {
  Q_OBJECT
 public:
  using LineFn = std::function<void(std::string_view line)>;

  LogTail(QString path, TailOptions opt, LineFn onLine, QObject* parent = nullptr);
  ~LogTail() override;

  void start();  // polls until stop() or destruction
  void stop();
  // Reads whatever is new now (also what the timer does); public for tests and for a final
  // drain before a summary.
  void poll();

  std::uint64_t lines() const { return lines_; }
  std::uint64_t droppedLongLines() const { return dropped_; }
  std::uint64_t rotations() const { return rotations_; }
  std::uint64_t truncations() const { return truncations_; }

 signals:
  void opened(const QString& path);  // the file (or its rotated successor) was opened
  void rotated();                    // a new file appeared at the path (rename rotation)
  void truncated();                  // the file shrank (copytruncate)

 private:
  bool openFile(bool atEnd);
  void closeFile();
  void drain();  // read from the offset to the end of the open file
  void emitLines(const char* data, std::size_t n);

  QString path_;
  std::string cpath_;
  TailOptions opt_;
  LineFn onLine_;
  QTimer timer_;
  QFileSystemWatcher* watcher_ = nullptr;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  off_t offset_ = 0;
  std::string partial_;
  bool skipping_ = false;  // inside an overlong line: drop until its newline
  bool started_ = false;
  std::uint64_t lines_ = 0, dropped_ = 0, rotations_ = 0, truncations_ = 0;
};

}  // namespace spillway::live
