#pragma once
// File → Open library… (a file), Open team library… (a postgresql:// URL) and Recent libraries:
// the places a console opens its incident library from, remembered across sessions.
#include <QObject>
#include <QStringList>
#include <functional>

class QMenu;
class QWidget;

namespace spillway::console {

class LibraryMenu : public QObject {
  Q_OBJECT

 public:
  // `open` opens a location (file or URL) and says why not; the menu shows the reason.
  using OpenFn = std::function<bool(const QString& location, QString* error)>;
  LibraryMenu(QMenu* file, QWidget* parent, OpenFn open, std::function<QString()> current);

  // Records a location that opened (newest first, at most kRecent).
  static void remember(const QString& location);
  static QStringList recent();
  // A location worth opening at startup: an existing file, or a URL.
  static bool reachable(const QString& location);

  static constexpr int kRecent = 8;

 private:
  void openFile();
  void openUrl();
  void openLocation(const QString& location);
  void fillRecent();

  QWidget* parent_;
  QMenu* recentMenu_;
  OpenFn open_;
  std::function<QString()> current_;
};

}  // namespace spillway::console
