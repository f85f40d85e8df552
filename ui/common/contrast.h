// SPDX-License-Identifier: Apache-2.0
// WCAG 2 contrast between two colours: for choosing a text colour that reads on a background
// Kiln computes (heat maps), and for the tests that check the themes.
#pragma once

#include <QColor>

#include <algorithm>
#include <cmath>

namespace kiln::ui {

// WCAG 2 relative luminance of an sRGB colour, 0 (black) to 1 (white).
inline double relativeLuminance(const QColor& c) {
    auto channel = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

// WCAG 2 contrast ratio, 1 (the same colour) to 21 (black on white); AA asks 4.5 for text.
inline double contrastRatio(const QColor& a, const QColor& b) {
    const double la = relativeLuminance(a), lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

}  // namespace kiln::ui
