#pragma once
// One job at a time for its owner, off the UI thread, with one cancel and one progress rule.
// start() cancels the job before it and abandons it: that job stops at its next cancel check on
// its own and whatever it delivers is dropped, so the UI thread never waits for a worker — not
// on a new start, not on cancel, not when the owner is destroyed.
#include <QObject>

#include <atomic>
#include <functional>
#include <memory>

namespace spillway::console {

class BackgroundJob : public QObject {
  Q_OBJECT
 public:
  // What a job sees of its owner; safe to use from the job's thread.
  class Context {
   public:
    bool cancelled() const { return cancel_->load(std::memory_order_relaxed); }
    const std::atomic<bool>& cancelFlag() const { return *cancel_; }
    // Share done, 0…1: emitted as progress(percent) on the UI thread, each percent once.
    void progress(double share) const;
    // Runs `fn` on the UI thread, unless a newer job started, the job was cancelled or the
    // owner is gone by then.
    void post(std::function<void()> fn) const { send(std::move(fn), false); }
    // As post, and the job is over: running() is false when `fn` runs. A job's last word.
    void deliver(std::function<void()> fn) const { send(std::move(fn), true); }

   private:
    friend class BackgroundJob;
    struct Shared;
    void send(std::function<void()> fn, bool last) const;
    std::shared_ptr<Shared> shared_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::uint64_t generation_ = 0;
    std::shared_ptr<std::atomic<int>> lastPercent_;
  };

  explicit BackgroundJob(QObject* parent = nullptr);
  ~BackgroundJob() override;  // cancels the job; never waits for it

  // Runs `work` on a pool thread. `work` reports through its Context and ends with one
  // deliver() (its result, its failure, or that it stopped).
  void start(std::function<void(const Context&)> work);
  void cancel();
  bool running() const { return running_; }
  int started() const { return started_; }

 signals:
  void progress(int percent);

 private:
  std::shared_ptr<Context::Shared> shared_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::uint64_t generation_ = 0;
  bool running_ = false;
  int started_ = 0;
};

}  // namespace spillway::console
