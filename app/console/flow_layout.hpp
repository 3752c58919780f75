#pragma once
// Items left to right, wrapping onto the next row when the width runs out (Qt's own flow
// layout pattern): a strip of tiles that fits a 1280 px laptop as well as a wide monitor.
// Its minimum width is its widest item, its height follows the width.
#include <QLayout>
#include <QList>

namespace spillway::console {

class FlowLayout final : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr, int spacing = 6);
  ~FlowLayout() override;
  void addItem(QLayoutItem* item) override;
  int count() const override { return static_cast<int>(items_.size()); }
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override { return {}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;
  QSize sizeHint() const override;
  void setGeometry(const QRect& rect) override;

 private:
  int arrange(const QRect& rect, bool apply) const;  // returns the height used
  QList<QLayoutItem*> items_;
  int spacing_;
};

}  // namespace spillway::console
