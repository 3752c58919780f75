#include "background_job.hpp"

#include <QCoreApplication>
#include <QMetaObject>
#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace spillway::console {

// What a job's thread holds of its owner. It lives on the UI thread and is deleted there
// (deleteLater) when the last job lets go, so a job can always post to it; `job` is null once
// the owner is gone, and only the UI thread reads or writes it.
struct BackgroundJob::Context::Shared : QObject {
  BackgroundJob* job = nullptr;
};

namespace {

// Abandoned jobs finish in the background; the pool is static so that the process waits for
// them at exit (QThreadPool's destructor) instead of tearing their data down under them.
QThreadPool& jobPool() {
  static QThreadPool pool;
  return pool;
}

}  // namespace

void BackgroundJob::Context::progress(double share) const {
  const int pct = static_cast<int>(std::clamp(share, 0.0, 1.0) * 100);
  if (lastPercent_->exchange(pct) == pct) return;
  QMetaObject::invokeMethod(
      shared_.get(),
      [shared = shared_, gen = generation_, pct] {
        if (shared->job && shared->job->generation_ == gen) emit shared->job->progress(pct);
      },
      Qt::QueuedConnection);
}

void BackgroundJob::Context::send(std::function<void()> fn, bool last) const {
  QMetaObject::invokeMethod(
      shared_.get(),
      [shared = shared_, gen = generation_, cancel = cancel_, fn = std::move(fn), last] {
        BackgroundJob* job = shared->job;
        if (!job || job->generation_ != gen || cancel->load()) return;  // stale
        if (last) job->running_ = false;
        fn();
      },
      Qt::QueuedConnection);
}

namespace {

// Normally deleteLater, on the UI thread. While the application is being torn down the last
// reference can go with a queued call that Qt discards under its posted-event lock: posting
// then would wait on that lock for ever (the console hung at exit with a sensitivity job in
// flight), and there is no later to delete at — so it is deleted at once, on its own thread.
void releaseShared(QObject* s) {
  if (QCoreApplication::closingDown() && s->thread() == QThread::currentThread())
    delete s;
  else
    s->deleteLater();
}

}  // namespace

BackgroundJob::BackgroundJob(QObject* parent)
    : QObject(parent), shared_(new Context::Shared, [](Context::Shared* s) { releaseShared(s); }) {
  shared_->job = this;
  jobPool().setMaxThreadCount(std::max(4, QThread::idealThreadCount()));
}

BackgroundJob::~BackgroundJob() {
  cancel();
  shared_->job = nullptr;
}

void BackgroundJob::cancel() {
  if (cancel_) cancel_->store(true);
  running_ = false;
}

void BackgroundJob::start(std::function<void(const Context&)> work) {
  cancel();  // the job before stops at its next check; nobody waits for it
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  running_ = true;
  ++started_;
  Context ctx;
  ctx.shared_ = shared_;
  ctx.cancel_ = cancel_;
  ctx.generation_ = ++generation_;
  ctx.lastPercent_ = std::make_shared<std::atomic<int>>(-1);
  jobPool().start([ctx = std::move(ctx), work = std::move(work)] { work(ctx); });
}

}  // namespace spillway::console
