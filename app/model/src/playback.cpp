#include "spillway/view/playback.hpp"

#include <algorithm>
#include <iterator>

namespace spillway::view {

std::string_view modeName(Mode m) {
  switch (m) {
    case Mode::Empty:
      return "empty";
    case Mode::Simulation:
      return "simulation";
    case Mode::Replay:
      return "replay";
    case Mode::Live:
      return "live";
  }
  return "?";
}

Micros Playback::clamp(Micros t) const {
  return std::min(std::max(t, start_), std::max(start_, end_));
}

void Playback::show(Mode m, Micros start, Micros end, std::optional<Micros> at) {
  mode_ = m;
  start_ = start;
  end_ = end;
  playing_ = false;
  following_ = m == Mode::Live;
  cursor_ = clamp(following_ ? end : at.value_or(cursor_));
}

void Playback::extend(Micros start, Micros end) {
  start_ = start;
  end_ = end;
  cursor_ = clamp(following_ ? end : cursor_);
}

void Playback::clear() {
  mode_ = Mode::Empty;
  start_ = end_ = cursor_ = 0;
  playing_ = following_ = false;
}

void Playback::seek(Micros t) {
  cursor_ = clamp(t);
  if (mode_ == Mode::Live) following_ = cursor_ >= end_;
}

void Playback::togglePlay() {
  if (mode_ == Mode::Live) {
    following_ = true;
    cursor_ = clamp(end_);
    return;
  }
  playing_ = !playing_ && mode_ != Mode::Empty;
}

void Playback::advance(Micros wall) {
  if (!playing_) return;
  const auto dt = static_cast<Micros>(static_cast<double>(wall) * speed());
  if (cursor_ + dt < end_) {
    cursor_ += dt;
  } else if (loop_) {
    cursor_ = start_;
  } else {
    playing_ = false;
  }
}

void Playback::setSpeed(int index) {
  speed_ = std::clamp(index, 0, static_cast<int>(std::size(kSpeeds)) - 1);
}

}  // namespace spillway::view
