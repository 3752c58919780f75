#pragma once
// The console's navigation keys, window-wide: whatever has focus — a slider, a button, a spin
// box — Space plays, arrows step (Shift 10 s, Ctrl 1 min), N / P jump to the next / previous
// transition or fault, Home / End, 0 resets the zoom. Only typing wins: a text field, or a
// spin box whose text the user has started to change (and digits, which start that).
#include <QObject>

#include <functional>
#include <optional>

class QKeyEvent;
class QWidget;

namespace spillway::console {

struct NavKey {
  enum class Action { PlayPause, Step, Next, Previous, Home, End, ResetZoom };
  Action action = Action::Step;
  int seconds = 0;  // Step: signed
};

// The navigation a key means, if any (regardless of focus).
std::optional<NavKey> navKeyOf(const QKeyEvent& e);
// True when `focus` is a field being typed in, where `e` must reach it.
bool typingIn(const QWidget* focus, const QKeyEvent& e);

// Installed on the application; acts on keys for `window`'s widgets only (not its dialogs).
class NavigationFilter : public QObject {
 public:
  NavigationFilter(QWidget* window, std::function<void(const NavKey&)> act);
  bool eventFilter(QObject* watched, QEvent* e) override;

 private:
  QWidget* window_;
  std::function<void(const NavKey&)> act_;
};

}  // namespace spillway::console
