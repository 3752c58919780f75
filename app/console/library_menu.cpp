#include "library_menu.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>

#include "spillway/library/library.hpp"

namespace spillway::console {

LibraryMenu::LibraryMenu(QMenu* file, QWidget* parent, OpenFn open,
                         std::function<QString()> current)
    : QObject(parent), parent_(parent), open_(std::move(open)), current_(std::move(current)) {
  file->addAction(tr("Open &library…"), this, &LibraryMenu::openFile);
  file->addAction(tr("Open &team library (PostgreSQL)…"), this, &LibraryMenu::openUrl);
  recentMenu_ = file->addMenu(tr("Recent li&braries"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &LibraryMenu::fillRecent);
  fillRecent();
}

void LibraryMenu::remember(const QString& location) {
  QSettings settings;
  QStringList list = settings.value("library/recent").toStringList();
  list.removeAll(location);
  list.prepend(location);
  while (list.size() > kRecent) list.removeLast();
  settings.setValue("library/recent", list);
  settings.setValue("library/path", location);
}

QStringList LibraryMenu::recent() {
  return QSettings().value("library/recent").toStringList();
}

bool LibraryMenu::reachable(const QString& location) {
  return library::isDatabaseUrl(location.toStdString()) || QFileInfo::exists(location);
}

void LibraryMenu::openFile() {
  const QString now = current_();
  const QString dir =
      library::isDatabaseUrl(now.toStdString()) ? QString() : QFileInfo(now).absolutePath();
  const QString path =
      QFileDialog::getOpenFileName(parent_, tr("Open incident library"), dir,
                                   tr("Spillway libraries (*.db *.sqlite);;All files (*)"));
  if (!path.isEmpty()) openLocation(path);
}

void LibraryMenu::openUrl() {
  QString last;
  for (const QString& r : recent())
    if (library::isDatabaseUrl(r.toStdString())) {
      last = r;
      break;
    }
  bool ok = false;
  const QString url = QInputDialog::getText(
      parent_, tr("Open team library"),
      tr("PostgreSQL URL, e.g. postgresql://sre@db.internal/spillway?sslmode=verify-full\n"
         "The password comes from ~/.pgpass, PGPASSFILE or a service file — never from here."),
      QLineEdit::Normal, last.isEmpty() ? QStringLiteral("postgresql://") : last, &ok);
  if (ok && !url.trimmed().isEmpty()) openLocation(url.trimmed());
}

void LibraryMenu::openLocation(const QString& location) {
  QString error;
  if (!open_(location, &error)) QMessageBox::warning(parent_, tr("Library"), error);
}

void LibraryMenu::fillRecent() {
  recentMenu_->clear();
  for (const QString& r : recent()) recentMenu_->addAction(r, this, [this, r] { openLocation(r); });
  recentMenu_->setEnabled(!recentMenu_->isEmpty());
}

}  // namespace spillway::console
