// SPDX-License-Identifier: Apache-2.0
// An icon engine that renders one SVG with the ink colours of the theme shown at paint time.
#include "ui/common/themed_icon.h"

#include <QFile>
#include <QIconEngine>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>

#include <memory>

#include "ui/common/theme.h"

namespace kiln::ui {

namespace {

// The inks the icons are drawn with on light backgrounds and what they become on dark ones.
// Accents (green plus, red cross, blue info) read on both and stay.
constexpr struct {
    const char* light;
    const char* dark;
} kInks[] = {{"#3a4a5c", "#c3ccd6"}, {"#2b3a4f", "#d0d8e2"}};

class ThemedSvgIconEngine : public QIconEngine {
public:
    explicit ThemedSvgIconEngine(QString path) : m_path(std::move(path)) {}

    void paint(QPainter* painter, const QRect& rect, QIcon::Mode mode, QIcon::State) override {
        QSvgRenderer* svg = renderer(Theme::instance().isDark());
        if (!svg) return;
        QSizeF size = svg->defaultSize();
        size.scale(rect.size(), Qt::KeepAspectRatio);
        QRectF target(QPointF(), size);
        target.moveCenter(QRectF(rect).center());
        painter->save();
        if (mode == QIcon::Disabled) painter->setOpacity(0.4);
        svg->render(painter, target);
        painter->restore();
    }

    QPixmap pixmap(const QSize& size, QIcon::Mode mode, QIcon::State state) override {
        QPixmap pm(size);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        paint(&p, QRect(QPoint(), size), mode, state);
        return pm;
    }

    QIconEngine* clone() const override { return new ThemedSvgIconEngine(m_path); }
    QString key() const override { return QStringLiteral("KilnThemedSvgIconEngine"); }
    bool isNull() override { return !renderer(false); }

private:
    // One parsed picture per theme, made the first time it is painted in that theme.
    QSvgRenderer* renderer(bool dark) {
        std::unique_ptr<QSvgRenderer>& slot = dark ? m_dark : m_light;
        if (!slot) {
            QFile file(m_path);
            if (!file.open(QIODevice::ReadOnly)) return nullptr;
            QByteArray svg = file.readAll();
            if (dark)
                for (const auto& ink : kInks) svg.replace(ink.light, ink.dark);
            slot = std::make_unique<QSvgRenderer>(svg);
        }
        return slot->isValid() ? slot.get() : nullptr;
    }

    QString m_path;
    std::unique_ptr<QSvgRenderer> m_light;
    std::unique_ptr<QSvgRenderer> m_dark;
};

}  // namespace

QIcon themedIcon(const QString& name) {
    return QIcon(new ThemedSvgIconEngine(QStringLiteral(":/icons/%1.svg").arg(name)));
}

}  // namespace kiln::ui
