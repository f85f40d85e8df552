// SPDX-License-Identifier: Apache-2.0
// The studio's contrast checks on a rendered window or dialog: labels, push buttons, table cells,
// chart tick labels and node cards are measured on the picture against what they are drawn on,
// and every piece under WCAG AA (4.5:1) is named in the failure.
#pragma once

#include <QAbstractItemModel>
#include <QDir>
#include <QFontMetrics>
#include <QGraphicsView>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QStringList>
#include <QTableView>
#include <QTest>
#include <qcustomplot.h>

#include <vector>

#include "tests/ui/contrast.h"
#include "ui/graph_editor/card_detail.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

namespace kiln::test {

constexpr double kAA = 4.5;  // WCAG AA for normal text

// Where a widget's rectangle lies in the window's picture (clipped to what is visible).
inline QRect inWindow(const QWidget* widget, const QWidget* window, const QRect& local) {
    const QRect visible = local.intersected(widget->visibleRegion().boundingRect());
    if (visible.isEmpty()) return {};
    return QRect(widget->mapTo(window, visible.topLeft()), visible.size());
}

// One measured piece of text and what it is.
struct Sample {
    QString what;
    InkMeasure ink;
};

class Checker {
public:
    Checker(const QImage& image, const QWidget* window) : m_image(image), m_window(window) {}

    void measure(const QString& what, const QRect& rect) {
        if (rect.width() < 4 || rect.height() < 6) return;
        const InkMeasure m = measureInk(m_image, rect);
        if (m.inkPixels == 0) return;  // nothing drawn there (an empty cell)
        m_samples.push_back({what, m});
    }

    // Enabled labels with text (disabled controls are exempt from the contrast rule).
    void labels(const QWidget* root) {
        for (const QLabel* label : root->findChildren<QLabel*>()) {
            if (!label->isVisible() || !label->isEnabled() || label->text().trimmed().isEmpty()) continue;
            if (!label->pixmap().isNull()) continue;
            measure(QStringLiteral("label \"%1\"").arg(label->text().left(40)), inWindow(label, m_window, label->contentsRect()));
        }
    }

    // Enabled push buttons: their face, inside the frame.
    void buttons(const QWidget* root) {
        for (const QPushButton* b : root->findChildren<QPushButton*>()) {
            if (!b->isVisible() || !b->isEnabled() || b->text().isEmpty()) continue;
            measure(QStringLiteral("button \"%1\"").arg(b->text()), inWindow(b, m_window, b->rect().adjusted(4, 4, -4, -4)));
        }
    }

    // The visible cells of a table that hold text (pictures are not text).
    void cells(const QTableView* view, int maxCells = 200) {
        if (!view->isVisible() || !view->model()) return;
        const QAbstractItemModel* model = view->model();
        int n = 0;
        for (int r = 0; r < model->rowCount() && n < maxCells; ++r)
            for (int c = 0; c < model->columnCount() && n < maxCells; ++c) {
                const QModelIndex index = model->index(r, c);
                if (model->data(index, Qt::DecorationRole).isValid() || model->data(index).toString().isEmpty()) continue;
                const QRect cell = view->visualRect(index).adjusted(2, 2, -2, -2);
                if (!view->viewport()->rect().contains(cell)) continue;
                measure(QStringLiteral("%1 cell (%2, %3) \"%4\"").arg(view->objectName()).arg(r).arg(c).arg(model->data(index).toString()),
                        inWindow(view->viewport(), m_window, cell));
                ++n;
            }
    }

    // The tick labels below a chart's x axis and left of its y axis.
    void chart(const QCustomPlot* plot) {
        if (!plot->isVisible() || !plot->axisRect()) return;
        const QRect ar = plot->axisRect()->rect();
        const int h = QFontMetrics(plot->xAxis->tickLabelFont()).height();
        measure(QStringLiteral("%1 x tick labels").arg(plot->objectName()),
                inWindow(plot, m_window, QRect(ar.left(), ar.bottom() + 2, ar.width(), h + 6)));
        measure(QStringLiteral("%1 y tick labels").arg(plot->objectName()),
                inWindow(plot, m_window, QRect(ar.left() - 40, ar.top(), 38, ar.height())));
    }

    // The title row of the node cards in view.
    void cards(const kiln::ui::GraphView* view) {
        const qreal scale = view->transform().m11();
        QVERIFY2(kiln::ui::cardDetail(scale) == kiln::ui::CardDetail::Full, "the canvas opens at a readable zoom");
        const auto& st = kiln::ui::NodeCardStyle::get();
        for (QGraphicsItem* item : view->items(view->viewport()->rect())) {
            if (item->type() != kiln::ui::NodeItemType) continue;
            auto* node = static_cast<kiln::ui::NodeItem*>(item);
            const QRectF title(node->scenePos() + QPointF(12, st.margin), QSizeF(kiln::ui::nodeWidth() - 20, st.titleLine));
            const QRect r = view->mapFromScene(title).boundingRect();
            if (!view->viewport()->rect().contains(r)) continue;
            measure(QStringLiteral("card \"%1\"").arg(node->opLabel()), inWindow(view->viewport(), m_window, r));
        }
    }

    // Every sample under AA, one per line ("" when all pass).
    QString failures() const {
        QStringList bad;
        for (const Sample& s : m_samples)
            if (s.ink.ratio < kAA)
                bad << QStringLiteral("%1: %2 on %3 = %4:1")
                           .arg(s.what, s.ink.ink.name(), s.ink.background.name())
                           .arg(s.ink.ratio, 0, 'f', 2);
        return bad.join(QLatin1Char('\n'));
    }

    // Fails with every sample under AA, and saves the picture for a look.
    void verify(const QString& workspace, int minimumSamples) {
        QString bad = failures();
        if (!bad.isEmpty()) {
            const QString file = QDir::temp().filePath(QStringLiteral("kiln_contrast_%1.png").arg(workspace));
            m_image.save(file);
            bad += QStringLiteral("\n(picture: %1)").arg(file);
        }
        QVERIFY2(bad.isEmpty(), qPrintable(workspace + QStringLiteral(": text under 4.5:1:\n") + bad));
        QVERIFY2(int(m_samples.size()) >= minimumSamples,
                 qPrintable(QStringLiteral("%1: only %2 pieces of text measured").arg(workspace).arg(m_samples.size())));
    }

    int count() const { return int(m_samples.size()); }

private:
    QImage m_image;
    const QWidget* m_window;
    std::vector<Sample> m_samples;
};

}  // namespace kiln::test
