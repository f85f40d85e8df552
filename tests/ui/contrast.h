// SPDX-License-Identifier: Apache-2.0
// Contrast for the theme tests: the studio's WCAG 2 ratio of two colours, and the contrast of what
// a widget really drew, measured on its rendered pixels (the strongest ink against the most
// common colour).
#pragma once

#include <QColor>
#include <QHash>
#include <QImage>
#include <QRect>

#include "ui/common/contrast.h"

namespace kiln::test {

// The studio's own WCAG 2 formulas (ui/common/contrast.h).
inline double luminance(const QColor& c) { return ui::relativeLuminance(c); }
inline double contrast(const QColor& a, const QColor& b) { return ui::contrastRatio(a, b); }

// A translucent colour as it shows over an opaque one.
inline QColor over(const QColor& top, const QColor& below) {
    const double a = top.alphaF();
    return QColor::fromRgbF(float(top.redF() * a + below.redF() * (1 - a)), float(top.greenF() * a + below.greenF() * (1 - a)),
                            float(top.blueF() * a + below.blueF() * (1 - a)));
}

// What a rectangle of a rendered image shows: its background (the most common colour) and its
// ink (the pixel that differs most from the background), with their contrast. Text drawn with
// antialiasing reaches its full colour in the cores of its strokes, so for a rectangle holding
// text and nothing else the ink is the text colour.
struct InkMeasure {
    QColor background;
    QColor ink;
    double ratio = 1;
    int inkPixels = 0;  // pixels that differ from the background at all
};

inline InkMeasure measureInk(const QImage& image, const QRect& rect) {
    InkMeasure m;
    const QRect r = rect.intersected(image.rect());
    if (r.isEmpty()) return m;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    QHash<QRgb, int> counts;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) ++counts[img.pixel(x, y) & 0xffffffu];
    int most = 0;
    QRgb background = 0;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        if (it.value() > most) most = it.value(), background = it.key();
    m.background = QColor(background);
    m.ink = m.background;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        if (it.key() == background) continue;
        m.inkPixels += it.value();
        const double c = contrast(QColor(it.key()), m.background);
        if (c > m.ratio) m.ratio = c, m.ink = QColor(it.key());
    }
    return m;
}

}  // namespace kiln::test
