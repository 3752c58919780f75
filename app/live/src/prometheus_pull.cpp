// The Prometheus puller: a poll timer, one POST /api/v1/query_range per role, the answers
// joined by formats::PromMatrixJoin. Steps are aligned to multiples of the step since the
// epoch, so every poll asks for whole steps and the next poll starts where the last one ended.
#include "spillway/live/prometheus_pull.hpp"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include "spillway/input_error.hpp"
#include "spillway/live/shadow.hpp"

namespace spillway::live {
namespace {

Micros floorTo(Micros t, Micros step) {
  const Micros q = t / step;
  return (t % step < 0 ? q - 1 : q) * step;
}

std::uint32_t toCount(double v) {
  return static_cast<std::uint32_t>(std::min(std::llround(std::max(v, 0.0)), 4000000000LL));
}

QByteArray seconds3(Micros t) {
  return QByteArray::number(static_cast<double>(t) / 1e6, 'f', 3);
}

// A short, printable excerpt of an answer that is not Prometheus JSON (a proxy's error page).
QString excerpt(const QByteArray& body) {
  QString s = QString::fromUtf8(body.left(160)).simplified();
  return body.size() > 160 ? s + "…" : s;
}

PromSample toSample(formats::PromPoint&& pt) {
  PromSample s;
  s.end = pt.end;
  s.step = pt.step;
  s.instance = std::move(pt.instance);
  s.model = std::move(pt.model);
  s.calls = toCount(pt.calls);
  s.failures = pt.failures < 0 ? 0 : toCount(pt.failures);  // no 5xx series yet: none
  s.slow = pt.slow < 0 ? -1 : static_cast<std::int64_t>(toCount(pt.slow));
  s.p99Ms = pt.p99;
  return s;
}

}  // namespace

formats::AggregateSample PromSample::view() const {
  formats::AggregateSample s;
  s.end = end;
  s.step = step;
  s.instance = instance;
  s.model = model;
  s.calls = calls;
  s.failures = failures;
  s.slow = slow;
  return s;
}

PrometheusPuller::PrometheusPuller(PullerOptions opt, Sink sink, QObject* parent)
    : QObject(parent),
      opt_(std::move(opt)),
      sink_(std::move(sink)),
      clock_(wallClockMicros),
      nam_(new QNetworkAccessManager(this)),
      timer_(new QTimer(this)),
      timeout_(new QTimer(this)) {
  timeout_->setSingleShot(true);
  connect(timer_, &QTimer::timeout, this, &PrometheusPuller::pollNow);
  // One timer for the whole poll: whichever query is still out when it fires is abandoned,
  // and the poll counts as failed.
  connect(timeout_, &QTimer::timeout, this, [this] {
    timedOut_ = true;
    // abort() finishes a reply at once, and the last one ends the poll (pending_ is cleared):
    // collect first.
    std::vector<QNetworkReply*> out;
    for (const Pending& p : pending_)
      if (!p.done) out.push_back(p.reply);
    for (QNetworkReply* r : out) r->abort();
  });
}

PrometheusPuller::~PrometheusPuller() {
  for (Pending& p : pending_) {
    p.reply->disconnect(this);
    p.reply->abort();
  }
}

QUrl PrometheusPuller::queryUrl() const {
  QUrl u = opt_.server;
  QString path = u.path();
  while (path.endsWith('/')) path.chop(1);
  u.setPath(path + "/api/v1/query_range");
  return u;
}

void PrometheusPuller::start() {
  const Micros every = opt_.poll > 0 ? opt_.poll : opt_.step;
  timer_->start(static_cast<int>(std::max<Micros>(every / 1000, 10)));
  pollNow();
}

void PrometheusPuller::stop() {
  timer_->stop();
  timeout_->stop();
  for (Pending& p : pending_) {
    p.reply->disconnect(this);
    p.reply->abort();
    p.reply->deleteLater();
  }
  pending_.clear();
}

QString PrometheusPuller::roleText(formats::PromRole r) const {
  return QString::fromUtf8(formats::promRoleName(r).data(),
                           static_cast<qsizetype>(formats::promRoleName(r).size()));
}

void PrometheusPuller::pollNow() {
  if (!pending_.empty()) {
    ++stats_.busy;
    return;
  }
  if (!opt_.queries.count(formats::PromRole::Calls)) {
    fail("prometheus: no PromQL for the calls role: nothing to ask");
    emit polled(0);
    return;
  }
  const Micros step = opt_.step;
  const Micros newest = floorTo(clock_() - opt_.delay, step);  // the last complete step's end
  Micros from = lastEnd_ == kNever ? newest - floorTo(opt_.backfill, step) : lastEnd_ + step;
  if (newest < from) {
    emit polled(0);
    return;
  }
  const auto maxSteps = static_cast<Micros>(std::max<std::size_t>(opt_.maxSteps, 1));
  if ((newest - from) / step + 1 > maxSteps) {
    const Micros keep = newest - (maxSteps - 1) * step;
    const auto skipped = static_cast<std::uint64_t>((keep - from) / step);
    stats_.skippedSteps += skipped;
    emit warning(QString("prometheus %1: %2 steps before %3 skipped: more than %4 steps behind")
                     .arg(queryUrl().toString())
                     .arg(skipped)
                     .arg(QString::fromStdString(clockTime(keep)))
                     .arg(opt_.maxSteps));
    from = keep;
  }
  queryStart_ = from;
  queryEnd_ = newest;
  timedOut_ = false;
  ++stats_.polls;
  const QUrl url = queryUrl();
  for (const auto& [role, query] : opt_.queries) {
    QByteArray form;
    auto add = [&form](const char* key, const QByteArray& value) {
      if (!form.isEmpty()) form += '&';
      form += key;
      form += '=';
      // Form encoding: everything but unreserved characters, so '+' in PromQL stays a plus.
      form += QUrl::toPercentEncoding(QString::fromUtf8(value));
    };
    add("query", QByteArray::fromStdString(query));
    add("start", seconds3(from));
    add("end", seconds3(newest));
    add("step", seconds3(step));
    add("timeout", seconds3(static_cast<Micros>(opt_.timeoutMs) * 1000));
    QNetworkRequest rq(url);
    rq.setHeader(QNetworkRequest::ContentTypeHeader, "application/x-www-form-urlencoded");
    rq.setRawHeader("Accept", "application/json");
    QNetworkReply* reply = nam_->post(rq, form);
    pending_.push_back(Pending{role, reply, {}, {}, false});
  }
  for (const Pending& p : pending_) {
    QNetworkReply* reply = p.reply;
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onFinished(reply); });
    connect(reply, &QNetworkReply::downloadProgress, this, [this, reply](qint64 got, qint64) {
      Pending* q = find(reply);
      if (q && !q->done && got > opt_.maxBodyBytes) {
        q->error = QString("answer larger than %1 bytes").arg(opt_.maxBodyBytes);
        reply->abort();
      }
    });
  }
  timeout_->start(opt_.timeoutMs);
}

PrometheusPuller::Pending* PrometheusPuller::find(QNetworkReply* reply) {
  for (Pending& p : pending_)
    if (p.reply == reply) return &p;
  return nullptr;
}

void PrometheusPuller::onFinished(QNetworkReply* reply) {
  Pending* found = find(reply);
  if (!found || found->done) return;
  Pending& p = *found;
  p.done = true;
  const int status = p.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (p.error.isEmpty()) {
    if (timedOut_ && p.reply->error() == QNetworkReply::OperationCanceledError) {
      p.error = QString("no answer within %1 ms").arg(opt_.timeoutMs);
    } else if (status == 0) {
      p.error = p.reply->errorString();
    } else {
      p.body = p.reply->readAll();
      if (status < 200 || status > 299) {
        // Prometheus explains 400 / 422 / 503 in a JSON body; anything else is shown as it is.
        QString why = QString("HTTP %1").arg(status);
        try {
          formats::PromMatrixJoin probe(opt_.labels);
          probe.add(p.body.toStdString(), "", p.role);
        } catch (const InputError& e) {
          if (e.field() == "status")
            why += QString(": %1 (query: %2)")
                       .arg(QString::fromStdString(e.detail()),
                            QString::fromStdString(opt_.queries.at(p.role)));
          else if (!p.body.isEmpty())
            why += ": " + excerpt(p.body);
        }
        p.error = why;
      }
    }
  }
  p.reply->deleteLater();
  if (std::all_of(pending_.begin(), pending_.end(), [](const Pending& q) { return q.done; }))
    finishPoll();
}

void PrometheusPuller::fail(const QString& message) {
  ++stats_.failedPolls;
  ++failuresInARow_;
  if (message != lastFailure_) emit failed(message);
  lastFailure_ = message;
}

void PrometheusPuller::warnOnce(const std::string& key, const QString& message) {
  // The keys hold details from the server's answers: bounded, like everything it can grow.
  constexpr std::size_t kMaxWarned = 256;
  if (warned_.size() >= kMaxWarned) return;
  if (!warned_.insert(key).second) return;
  emit warning(warned_.size() < kMaxWarned
                   ? message
                   : message + " (further distinct warnings are not shown)");
}

void PrometheusPuller::finishPoll() {
  timeout_->stop();
  std::vector<Pending> done;
  done.swap(pending_);
  const QString url = queryUrl().toString();
  for (const Pending& p : done)
    if (!p.error.isEmpty() && p.role != formats::PromRole::P99) {
      fail(QString("prometheus POST %1 (role %2): %3; asking again at the next poll")
               .arg(url, roleText(p.role), p.error));
      emit polled(0);
      return;
    }
  // Every role answered: join them. A malformed answer fails the whole poll, so that the steps
  // are asked again rather than handed on without one of their roles.
  formats::PromMatrixJoin join(opt_.labels);
  std::map<std::string, std::uint64_t> bad;  // role + what → series
  if (!joinAnswers(done, url, join, bad)) {
    emit polled(0);
    return;
  }
  if (failuresInARow_) {
    emit warning(QString("prometheus %1 answers again after %2 failed poll(s)")
                     .arg(url)
                     .arg(failuresInARow_));
    failuresInARow_ = 0;
    lastFailure_.clear();
  }
  warnBadSeries(bad);
  const int handed = handOn(join);
  stats_.steps += static_cast<std::uint64_t>((queryEnd_ - queryStart_) / opt_.step + 1);
  lastEnd_ = queryEnd_;
  emit polled(handed);
}

bool PrometheusPuller::joinAnswers(const std::vector<Pending>& done, const QString& url,
                                   formats::PromMatrixJoin& join,
                                   std::map<std::string, std::uint64_t>& bad) {
  for (const Pending& p : done) {
    const std::string role(formats::promRoleName(p.role));
    // p99 is for display: without it the counts still go on (said once per distinct error).
    if (p.role == formats::PromRole::P99 && !p.error.isEmpty()) {
      warnOnce(
          "p99\t" + p.error.toStdString(),
          QString("prometheus POST %1 (role p99): %2; going on without p99").arg(url, p.error));
      continue;
    }
    try {
      join.add(p.body.toStdString(), role, p.role, [&](const InputError& e) {
        ++stats_.badSeries;
        ++bad[role + "\t" + e.detail()];
      });
    } catch (const InputError& e) {
      const std::string what = e.field().empty() ? e.detail() : e.field() + ": " + e.detail();
      if (p.role == formats::PromRole::P99) {
        warnOnce("p99\t" + what, QString("prometheus POST %1 (role p99): %2; going on without p99")
                                     .arg(url, QString::fromStdString(what)));
        continue;
      }
      fail(QString("prometheus POST %1 (role %2): %3; asking again at the next poll")
               .arg(url, roleText(p.role), QString::fromStdString(what)));
      return false;
    }
  }
  return true;
}

void PrometheusPuller::warnBadSeries(const std::map<std::string, std::uint64_t>& bad) {
  for (const auto& [key, n] : bad) {
    const std::string role = key.substr(0, key.find('\t'));
    const std::string what = key.substr(key.find('\t') + 1);
    const bool noInstance = what.rfind("missing label", 0) == 0;
    warnOnce("bad\t" + key,
             noInstance
                 ? QString("prometheus role %1: %2 series without the instance label '%3' "
                           "skipped (the metric may not carry it; see --prom-instance-label, "
                           "--prom-query %1=...)")
                       .arg(QString::fromStdString(role))
                       .arg(n)
                       .arg(QString::fromStdString(opt_.labels.count("instance")
                                                       ? opt_.labels.at("instance")
                                                       : std::string("instance")))
                 : QString("prometheus role %1: %2 series skipped: %3")
                       .arg(QString::fromStdString(role))
                       .arg(n)
                       .arg(QString::fromStdString(what)));
  }
}

int PrometheusPuller::handOn(formats::PromMatrixJoin& join) {
  const bool wantSlow = opt_.queries.count(formats::PromRole::Slow) > 0;
  int handed = 0;
  for (formats::PromPoint& pt : join.take(opt_.step)) {
    // Each step once: never one already handed on, never one newer than asked for.
    if ((lastEnd_ != kNever && pt.end <= lastEnd_) || pt.end < queryStart_ || pt.end > queryEnd_)
      continue;
    if (pt.calls < 0) {
      warnOnce(
          "nocalls\t" + pt.instance,
          QString("prometheus: instance '%1' has failures/slow/p99 values but no calls "
                  "value at %2 (do the queries group by the same labels?)")
              .arg(QString::fromStdString(pt.instance), QString::fromStdString(clockTime(pt.end))));
      continue;
    }
    if (wantSlow && pt.slow < 0 && pt.calls > 0)
      warnOnce(
          "noslow\t" + pt.instance,
          QString("prometheus role slow: no value for instance '%1' at %2: slow calls "
                  "count as unknown (is --prom-slow-le a bucket bound of the histogram?)")
              .arg(QString::fromStdString(pt.instance), QString::fromStdString(clockTime(pt.end))));
    else if (pt.slow >= 0)
      warned_.erase("noslow\t" + pt.instance);  // warn again should it go missing again
    const PromSample s = toSample(std::move(pt));
    ++handed;
    ++stats_.samples;
    if (sink_) sink_(s);
  }
  return handed;
}

}  // namespace spillway::live
