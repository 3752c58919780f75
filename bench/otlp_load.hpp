#pragma once
// OTLP/HTTP load for the benches (bench_otlp, bench_live_console): GenAI span requests encoded
// once (protobuf or JSON) with their times patched per send, and a blocking keep-alive client
// that POSTs them back to back or paced to a rate. Plain POSIX sockets, so the load does not
// share the receiver's event loop.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ctime>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <QCoreApplication>
#include <QTimer>
#include <QtGlobal>

namespace otlp_load {

inline void varint(std::string& o, std::uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<char>(v));
}
inline void len(std::string& o, int f, const std::string& b) {
  varint(o, static_cast<std::uint64_t>(f) << 3 | 2);
  varint(o, b.size());
  o += b;
}
inline void fixed64(std::string& o, int f, std::uint64_t v) {
  varint(o, static_cast<std::uint64_t>(f) << 3 | 1);
  for (int i = 0; i < 8; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A request encoded once, whose span times are patched in place for each send, so the clients
// spend their CPU on sending, not encoding (the receiver is what is measured).
struct Template {
  std::string body;
  std::vector<std::size_t> startAt, endAt;  // offsets of each span's start / end time
  std::vector<std::uint64_t> dur;           // each span's duration (ns)
  bool proto = true;
  // Span i starts at t0 + i × stepNs.
  void stamp(std::uint64_t t0, std::uint64_t stepNs = 1'000'000) {
    for (std::size_t i = 0; i < startAt.size(); ++i) {
      const std::uint64_t st = t0 + i * stepNs, en = st + dur[i];
      if (proto) {
        for (int b = 0; b < 8; ++b) {
          body[startAt[i] + b] = static_cast<char>((st >> (8 * b)) & 0xFF);
          body[endAt[i] + b] = static_cast<char>((en >> (8 * b)) & 0xFF);
        }
      } else {  // 19 decimal digits each
        std::snprintf(body.data() + startAt[i], 20, "%019llu", static_cast<unsigned long long>(st));
        body[startAt[i] + 19] = '"';
        std::snprintf(body.data() + endAt[i], 20, "%019llu", static_cast<unsigned long long>(en));
        body[endAt[i] + 19] = '"';
      }
    }
  }
};
inline std::string kv(const std::string& k, const std::string& v) {
  std::string any, o;
  len(any, 1, v);
  len(o, 1, k);
  len(o, 2, any);
  return o;
}
inline std::string kvInt(const std::string& k, std::uint64_t v) {
  std::string any, o;
  varint(any, 3 << 3);
  varint(any, v);
  len(o, 1, k);
  len(o, 2, any);
  return o;
}

// One request of `n` GenAI spans, 1 ms apart; times are filled in by Template::stamp.
inline Template protoRequest(int n, std::uint64_t startNs, std::uint64_t& seq) {
  Template tp;
  std::string scope;
  std::vector<std::size_t> startIn, endIn;  // offsets inside `s`, then inside the body
  std::vector<std::size_t> spanAt;
  for (int i = 0; i < n; ++i, ++seq) {
    std::string s;
    len(s, 1, std::string(16, '\x07'));
    len(s, 2, std::string(8, '\x09'));
    len(s, 5, "chat chat-72b");
    varint(s, 6 << 3);
    varint(s, 3);
    const std::uint64_t st = startNs + static_cast<std::uint64_t>(i) * 1'000'000;
    fixed64(s, 7, st);
    startIn.push_back(s.size() - 8);
    fixed64(s, 8, st + 200'000'000 + (seq % 97) * 1'000'000);
    endIn.push_back(s.size() - 8);
    tp.dur.push_back(200'000'000 + (seq % 97) * 1'000'000);
    len(s, 9, kv("gen_ai.operation.name", "chat"));
    len(s, 9, kv("gen_ai.request.model", "chat-72b"));
    len(s, 9, kv("server.address", "10.0.0." + std::to_string(seq % 8)));
    len(s, 9, kvInt("server.port", 8000));
    len(s, 9, kvInt("gen_ai.usage.input_tokens", 100 + seq % 50));
    len(s, 9, kvInt("gen_ai.usage.output_tokens", 200 + seq % 70));
    len(s, 9, kvInt("http.response.status_code", seq % 100 == 0 ? 503 : 200));
    len(scope, 2, s);
    spanAt.push_back(scope.size() - s.size());
  }
  // Request = [1: ResourceSpans = [1: resource][2: scope]]: the scope's bytes are the body's
  // last ones, so each span's offset in the body is known from the end.
  std::string res, rs, req;
  len(res, 1, kv("service.name", "bench"));
  len(rs, 1, res);
  len(rs, 2, scope);
  len(req, 1, rs);
  const std::size_t scopeAt = req.size() - scope.size();
  for (std::size_t i = 0; i < spanAt.size(); ++i) {
    tp.startAt.push_back(scopeAt + spanAt[i] + startIn[i]);
    tp.endAt.push_back(scopeAt + spanAt[i] + endIn[i]);
  }
  tp.body = std::move(req);
  return tp;
}

inline Template jsonRequest(int n, std::uint64_t startNs, std::uint64_t& seq) {
  Template tp;
  tp.proto = false;
  std::string spans;
  for (int i = 0; i < n; ++i, ++seq) {
    tp.dur.push_back(200'000'000 + (seq % 97) * 1'000'000);
    const std::uint64_t st = startNs + static_cast<std::uint64_t>(i) * 1'000'000;
    if (i) spans += ',';
    spans += R"({"traceId":"07070707070707070707070707070707","spanId":"0909090909090909",)"
             R"("name":"chat chat-72b","kind":3,"startTimeUnixNano":")" +
             std::to_string(st) + R"(","endTimeUnixNano":")" +
             std::to_string(st + 200'000'000 + (seq % 97) * 1'000'000) +
             R"(","attributes":[)"
             R"({"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},)"
             R"({"key":"gen_ai.request.model","value":{"stringValue":"chat-72b"}},)"
             R"({"key":"server.address","value":{"stringValue":"10.0.0.)" +
             std::to_string(seq % 8) +
             R"("}},)"
             R"({"key":"server.port","value":{"intValue":"8000"}},)"
             R"({"key":"gen_ai.usage.input_tokens","value":{"intValue":")" +
             std::to_string(100 + seq % 50) +
             R"("}},)"
             R"({"key":"gen_ai.usage.output_tokens","value":{"intValue":")" +
             std::to_string(200 + seq % 70) +
             R"("}},)"
             R"({"key":"http.response.status_code","value":{"intValue":")" +
             std::to_string(seq % 100 == 0 ? 503 : 200) + R"("}}]})";
  }
  tp.body = R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
            R"({"stringValue":"bench"}}]},"scopeSpans":[{"spans":[)" +
            spans + "]}]}]}";
  for (std::size_t at = 0; (at = tp.body.find("TimeUnixNano\":\"", at)) != std::string::npos;) {
    at += 15;
    (tp.startAt.size() == tp.endAt.size() ? tp.startAt : tp.endAt).push_back(at);
  }
  return tp;
}

struct ClientResult {
  std::uint64_t ok = 0, shed = 0, other = 0, ackedSpans = 0;
  double cpuSeconds = 0;  // the client thread's own CPU time (user + system)
};

inline double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

inline double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Head and body in one system call, without copying them into one buffer.
inline bool sendAll(int fd, const std::string& head, const std::string& body) {
  std::size_t off = 0;
  const std::size_t total = head.size() + body.size();
  while (off < total) {
    iovec iov[2];
    int n = 0;
    if (off < head.size()) iov[n++] = {const_cast<char*>(head.data()) + off, head.size() - off};
    const std::size_t b = off > head.size() ? off - head.size() : 0;
    iov[n++] = {const_cast<char*>(body.data()) + b, body.size() - b};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t sent = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    off += static_cast<std::size_t>(sent);
  }
  return true;
}

// Reads one HTTP answer; returns its status (0 on a broken connection).
inline int readAnswer(int fd, std::string& buf) {
  for (;;) {
    const auto end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      const int status = std::atoi(buf.c_str() + 9);
      std::size_t clen = 0;
      if (auto p = buf.find("Content-Length: "); p != std::string::npos && p < end)
        clen = std::strtoul(buf.c_str() + p + 16, nullptr, 10);
      if (buf.size() >= end + 4 + clen) {
        buf.erase(0, end + 4 + clen);
        return status;
      }
    }
    char tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return 0;
    buf.append(tmp, static_cast<std::size_t>(n));
  }
}

// One keep-alive connection POSTing `spans`-span requests. Unpaced (ratePerSecond 0): back to
// back, data time advancing 1 ms per span. Paced: one request every spans / ratePerSecond
// seconds, its spans ending over the last such interval of the wall clock (data time = now),
// as a gateway's exporter sends them.
inline void client(quint16 port, int id, int spans, bool proto, std::atomic<bool>& stop,
                   ClientResult& out, double ratePerSecond = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("connect");
    return;
  }
  std::uint64_t seq = static_cast<std::uint64_t>(id) * 1'000'000'000ULL;
  std::uint64_t t = 1'764'480'000'000'000'000ULL + static_cast<std::uint64_t>(id) * 1000;
  std::string buf;
  Template tp = proto ? protoRequest(spans, t, seq) : jsonRequest(spans, t, seq);
  const std::string head = std::string("POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: ") +
                           (proto ? "application/x-protobuf" : "application/json") +
                           "\r\nContent-Length: " + std::to_string(tp.body.size()) + "\r\n\r\n";
  const auto interval = std::chrono::nanoseconds(
      ratePerSecond > 0 ? static_cast<std::int64_t>(spans / ratePerSecond * 1e9) : 0);
  auto next = std::chrono::steady_clock::now();
  while (!stop.load(std::memory_order_relaxed)) {
    if (ratePerSecond > 0) {
      std::this_thread::sleep_until(next);
      next += interval;
      const auto wall =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
      // Ends spread over the last interval; each span ~200-300 ms long.
      const std::uint64_t step = static_cast<std::uint64_t>(interval.count()) / spans;
      tp.stamp(wall - 300'000'000ULL - static_cast<std::uint64_t>(interval.count()), step);
    } else {
      tp.stamp(t);
    }
    if (!sendAll(fd, head, tp.body)) break;
    const int status = readAnswer(fd, buf);
    if (status == 200) {
      ++out.ok;
      out.ackedSpans += static_cast<std::uint64_t>(spans);
      t += static_cast<std::uint64_t>(spans) * 1'000'000;
    } else if (status == 429 || status == 503) {
      ++out.shed;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a short back-off
    } else {
      ++out.other;
      if (status == 0) break;
    }
  }
  ::close(fd);
  out.cpuSeconds = threadCpuSeconds();
}

inline double pct(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))]);
}

// Runs the event loop for `secs` seconds of load, then sets `stop` and keeps serving until
// every client has its last answer (joined off the loop), then returns.
inline void runFor(QCoreApplication& app, int secs, std::atomic<bool>& stop,
                   std::vector<std::thread>& clients) {
  QTimer::singleShot(secs * 1000, &app, [&] {
    stop = true;
    std::thread([&] {
      for (auto& th : clients) th.join();
      QMetaObject::invokeMethod(&app, &QCoreApplication::quit, Qt::QueuedConnection);
    }).detach();
  });
  app.exec();
}

}  // namespace otlp_load
