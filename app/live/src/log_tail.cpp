#include "spillway/live/log_tail.hpp"

#include <QFileInfo>
#include <QFileSystemWatcher>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstring>

namespace spillway::live {

LogTail::LogTail(QString path, TailOptions opt, LineFn onLine, QObject* parent)
    : QObject(parent),
      path_(std::move(path)),
      cpath_(path_.toStdString()),
      opt_(opt),
      onLine_(std::move(onLine)) {
  timer_.setInterval(opt_.pollMs);
  connect(&timer_, &QTimer::timeout, this, &LogTail::poll);
}

LogTail::~LogTail() {
  closeFile();
}

void LogTail::start() {
  if (started_) return;
  started_ = true;
  // The watcher only makes polls come sooner; the timer alone is correct (watchers miss
  // events on some file systems and lose a path that is renamed away).
  watcher_ = new QFileSystemWatcher(this);
  const QString dir = QFileInfo(path_).absolutePath();
  watcher_->addPath(dir);
  if (QFileInfo::exists(path_)) watcher_->addPath(path_);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, &LogTail::poll);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, &LogTail::poll);
  openFile(!opt_.fromStart);
  drain();
  timer_.start();
}

void LogTail::stop() {
  timer_.stop();
  if (watcher_) {
    delete watcher_;
    watcher_ = nullptr;
  }
  started_ = false;
}

bool LogTail::openFile(bool atEnd) {
  const int fd = ::open(cpath_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  offset_ = atEnd ? st.st_size : 0;
  if (watcher_ && !watcher_->files().contains(path_)) watcher_->addPath(path_);
  emit opened(path_);
  return true;
}

void LogTail::closeFile() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void LogTail::poll() {
  if (fd_ < 0) {
    // Not there yet (or gone after a rotation): a file that appears later is new, read whole.
    if (!openFile(false)) return;
  }
  drain();
  struct stat cur {};
  if (::fstat(fd_, &cur) == 0 && cur.st_size < offset_) {
    // copytruncate: the same file, shorter than what was read. What is buffered of a partial
    // line belonged to the old content.
    ++truncations_;
    offset_ = 0;
    partial_.clear();
    skipping_ = false;
    emit truncated();
    drain();
  }
  struct stat atPath {};
  const bool exists = ::stat(cpath_.c_str(), &atPath) == 0;
  if (exists && (atPath.st_dev != dev_ || atPath.st_ino != ino_)) {
    // Rename rotation: the old file was read to its end above (a writer may have added a last
    // line after the rename: drain once more). A partial last line of it is complete now.
    drain();
    if (!partial_.empty() && !skipping_) {
      ++lines_;
      onLine_(partial_);
    }
    partial_.clear();
    skipping_ = false;
    closeFile();
    ++rotations_;
    emit rotated();
    if (openFile(false)) drain();
  }
}

void LogTail::drain() {
  if (fd_ < 0) return;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::pread(fd_, buf, sizeof buf, offset_);
    if (n <= 0) break;  // end of file (or an error: try again at the next poll)
    offset_ += n;
    emitLines(buf, static_cast<std::size_t>(n));
  }
}

void LogTail::emitLines(const char* data, std::size_t n) {
  std::size_t pos = 0;
  while (pos < n) {
    const void* nl = std::memchr(data + pos, '\n', n - pos);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) : n;
    const std::size_t len = end - pos;
    if (!skipping_) {
      if (partial_.size() + len > opt_.maxLineBytes) {
        ++dropped_;
        partial_.clear();
        skipping_ = true;
      } else {
        partial_.append(data + pos, len);
      }
    }
    if (!nl) break;
    if (!skipping_) {
      std::string_view line(partial_);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++lines_;
      onLine_(line);
    }
    partial_.clear();
    skipping_ = false;
    pos = end + 1;
  }
}

}  // namespace spillway::live
