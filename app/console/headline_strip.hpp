#pragma once
// The decision first: a strip of the headline KPIs over the KPI table, each with its target
// and a PASS / FAIL badge, and its change against the reference run in the KPI's own terms
// (pp for shares); tiles wrap onto more rows when the window is narrow. Targets are edited in place
// (Targets…) and kept with the session.
#include <QWidget>

#include "spillway/view/headline.hpp"

class QLabel;

namespace spillway::console {

class FlowLayout;

class HeadlineStrip : public QWidget {
  Q_OBJECT
 public:
  explicit HeadlineStrip(QWidget* parent = nullptr);
  void setTiles(std::vector<view::HeadlineTile> tiles, const QString& referenceName);
  const std::vector<view::HeadlineTile>& tiles() const { return tiles_; }
  // For tests: the badge text ("PASS", "FAIL", "—") and the value text of a tile by key.
  QString badge(const QString& key) const;
  QString valueText(const QString& key) const;
  const view::HeadlineTargets& targets() const { return targets_; }
  void setTargets(const view::HeadlineTargets& t);  // emits targetsChanged

 signals:
  void targetsChanged(const spillway::view::HeadlineTargets& targets);

 private:
  void editTargets();
  QWidget* makeTile(const view::HeadlineTile& t, const QString& referenceName);

  std::vector<view::HeadlineTile> tiles_;
  view::HeadlineTargets targets_ = view::HeadlineTargets::defaults();
  FlowLayout* row_;  // wraps onto a second row in a narrow window
  std::vector<QWidget*> tileWidgets_;
};

}  // namespace spillway::console
