#include "navigation.hpp"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace spillway::console {

std::optional<NavKey> navKeyOf(const QKeyEvent& e) {
  using A = NavKey::Action;
  const Qt::KeyboardModifiers mods =
      e.modifiers() & (Qt::ShiftModifier | Qt::ControlModifier | Qt::AltModifier);
  const int step = mods & Qt::ControlModifier ? 60 : mods & Qt::ShiftModifier ? 10 : 1;
  if ((mods & Qt::AltModifier) != 0) return std::nullopt;
  switch (e.key()) {
    case Qt::Key_Space:
      return mods ? std::nullopt : std::optional<NavKey>({A::PlayPause, 0});
    case Qt::Key_Left:
      return NavKey{A::Step, -step};
    case Qt::Key_Right:
      return NavKey{A::Step, step};
    case Qt::Key_N:
      return mods ? std::nullopt : std::optional<NavKey>({A::Next, 0});
    case Qt::Key_P:
      return mods ? std::nullopt : std::optional<NavKey>({A::Previous, 0});
    case Qt::Key_Home:
      return NavKey{A::Home, 0};
    case Qt::Key_End:
      return NavKey{A::End, 0};
    case Qt::Key_0:
      return mods ? std::nullopt : std::optional<NavKey>({A::ResetZoom, 0});
    default:
      return std::nullopt;
  }
}

bool typingIn(const QWidget* focus, const QKeyEvent& e) {
  if (!focus) return false;
  if (qobject_cast<const QTextEdit*>(focus) || qobject_cast<const QPlainTextEdit*>(focus))
    return true;
  const auto* edit = qobject_cast<const QLineEdit*>(focus);
  const QAbstractSpinBox* spin = qobject_cast<const QAbstractSpinBox*>(focus);
  if (!spin && focus->parentWidget())
    spin = qobject_cast<const QAbstractSpinBox*>(focus->parentWidget());
  if (!spin) return edit != nullptr && !edit->isReadOnly();  // a free-text field
  // A spin box: its own text, once the user has started changing it, and the keys that start
  // a number. Otherwise it only holds focus, and navigation goes on.
  const auto* spinEdit = edit ? edit : spin->findChild<QLineEdit*>();
  if (spinEdit && spinEdit->isModified()) return true;
  return e.key() == Qt::Key_0;
}

NavigationFilter::NavigationFilter(QWidget* window, std::function<void(const NavKey&)> act)
    : QObject(window), window_(window), act_(std::move(act)) {}

bool NavigationFilter::eventFilter(QObject* watched, QEvent* e) {
  if (e->type() != QEvent::KeyPress && e->type() != QEvent::ShortcutOverride) return false;
  auto* w = qobject_cast<QWidget*>(watched);
  if (!w || w->window() != window_) return false;
  const auto& key = static_cast<const QKeyEvent&>(*e);
  const auto nav = navKeyOf(key);
  if (!nav || typingIn(QApplication::focusWidget(), key)) return false;
  if (e->type() == QEvent::ShortcutOverride) {
    e->accept();  // ours: the focused widget's own use of the key does not apply
    return true;
  }
  act_(*nav);
  return true;
}

}  // namespace spillway::console
