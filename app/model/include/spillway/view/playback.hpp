#pragma once
// What the console shows and where its cursor is: the mode (where the data on screen comes
// from) and the playback clock, toolkit-neutral. The Qt layer owns the play timer and the
// widgets and asks this what to do; tests drive it without widgets.
#include <optional>
#include <string_view>

#include "spillway/time.hpp"

namespace spillway::view {

// One source at a time: a simulated run, a replayed incident or Live mode replaces what was
// on screen.
enum class Mode { Empty, Simulation, Replay, Live };
std::string_view modeName(Mode m);

class Playback {
 public:
  // Play speeds offered (× real time); `setSpeed` takes an index into them.
  static constexpr double kSpeeds[] = {0.5, 1, 5, 20, 100};

  // New data on screen over [start, end]: the cursor goes to `at` (clamped), else stays where
  // it was (clamped). Playing stops; Live mode starts following the newest data.
  void show(Mode m, Micros start, Micros end, std::optional<Micros> at = {});
  // The same source with new data (a what-if, a Live snapshot): the cursor stays (clamped), a
  // following one goes to the new end; playing goes on.
  void extend(Micros start, Micros end);
  void clear();  // nothing on screen; speed and loop stay as chosen

  // The user moved the cursor (scrubber, keys, a click): clamped to the range. In Live mode the
  // cursor follows again only when moved to the newest data.
  void seek(Micros t);
  void step(Micros dt) { seek(cursor_ + dt); }
  // The Play button: play / pause; in Live mode it is Follow.
  void togglePlay();
  void pause() { playing_ = false; }
  // One tick of the play timer, `wall` of real time: the cursor moves wall × speed. Reaching
  // the end it wraps to the start when looping, else it stops (and stays).
  void advance(Micros wall);
  void setSpeed(int index);
  void setLoop(bool on) { loop_ = on; }

  Mode mode() const { return mode_; }
  Micros cursor() const { return cursor_; }
  Micros start() const { return start_; }
  Micros end() const { return end_; }
  bool playing() const { return playing_; }
  bool following() const { return following_; }
  double speed() const { return kSpeeds[speed_]; }

 private:
  Micros clamp(Micros t) const;

  Mode mode_ = Mode::Empty;
  Micros start_ = 0, end_ = 0, cursor_ = 0;
  bool playing_ = false, loop_ = false, following_ = false;
  int speed_ = 1;
};

}  // namespace spillway::view
