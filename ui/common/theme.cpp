// SPDX-License-Identifier: Apache-2.0
// The Light and Dark palettes, the colours Kiln paints with, and applying a theme to the running
// application (style, palette, then Theme::changed).
#include "ui/common/theme.h"

#include <QApplication>
#include <QGuiApplication>
#include <QPointer>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>
#include <QWidget>

namespace kiln::ui {

namespace {

const char* const kErrorMarkProperty = "kilnErrorMark";
const char* const kErrorMarkFollows = "kilnErrorMarkFollows";

// The palettes are written out role by role (not derived from the platform's palette), so the
// studio looks the same on every desktop and the contrast test checks what users see.
QPalette lightPalette() {
    QPalette p;
    const QColor window(0xef, 0xef, 0xef), text(0x1a, 0x1a, 0x1a), disabled(0x8c, 0x8c, 0x8c);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::AlternateBase, QColor(0xf5, 0xf5, 0xf5));
    p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xff, 0xdc));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x6e, 0x6e, 0x6e));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, Qt::white);
    p.setColor(QPalette::Midlight, QColor(0xca, 0xca, 0xca));
    p.setColor(QPalette::Mid, QColor(0xb8, 0xb8, 0xb8));
    p.setColor(QPalette::Dark, QColor(0x9f, 0x9f, 0x9f));
    p.setColor(QPalette::Shadow, QColor(0x76, 0x76, 0x76));
    p.setColor(QPalette::Highlight, QColor(0x2a, 0x6f, 0xb5));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x00, 0x57, 0xae));
    p.setColor(QPalette::LinkVisited, QColor(0x6a, 0x3d, 0x9a));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x91, 0x91, 0x91));
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    return p;
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), disabled(0x7a, 0x7d, 0x82);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9d, 0xa3));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3b));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    // Fusion draws bevels and frames from these: lighter than the button above, darker below.
    p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x52));
    p.setColor(QPalette::Midlight, QColor(0x3e, 0x41, 0x45));
    p.setColor(QPalette::Mid, QColor(0x5a, 0x5d, 0x63));
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1b, 0x1e));
    p.setColor(QPalette::Shadow, QColor(0x0e, 0x0f, 0x10));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6a, 0xa9, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x8c, 0xff));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x4a, 0x4d, 0x52));
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Button, QColor(0x30, 0x32, 0x35));
    return p;
}

ThemeColors lightColors() {
    ThemeColors c;
    c.kind = ThemeKind::Light;
    c.canvasBackground = QColor(0xef, 0xef, 0xef);
    c.canvasGrid = QColor(0xd6, 0xd6, 0xd6);
    c.selection = QColor(0x2a, 0x6f, 0xb5);
    c.nodeBody = Qt::white;
    c.nodeText = QColor(0x1a, 0x1a, 0x1a);
    c.nodeTextDim = QColor(0x59, 0x59, 0x59);
    c.nodeBorder = QColor(0xa8, 0xa8, 0xa8);
    c.groupStack = QColor(0xf5, 0xf5, 0xf5);
    c.categoryLightness = 170;
    c.portFill = QColor(0xef, 0xef, 0xef);
    c.portOutline = QColor(0x1a, 0x1a, 0x1a);
    c.edge = QColor(0x70, 0x70, 0x70);
    c.edgeLabelBackground = QColor(0xef, 0xef, 0xef, 0xe0);
    c.edgeLabelText = QColor(0x1a, 0x1a, 0x1a);
    c.error = QColor(0xc6, 0x28, 0x28);
    c.errorText = QColor(0xb0, 0x00, 0x20);
    c.badgeText = Qt::white;
    c.warning = QColor(0xe0, 0xa8, 0x00);
    c.warningText = QColor(0x80, 0x4d, 0x00);
    c.noteBody = QColor(0xff, 0xff, 0xdc);
    c.noteText = QColor(0x1a, 0x1a, 0x1a);
    c.minimapBackground = Qt::white;
    c.minimapNode = QColor(0x9a, 0x9a, 0x9a);
    c.minimapEdge = QColor(0xcf, 0xcf, 0xcf);
    c.minimapNote = QColor(0xff, 0xf0, 0xa0);
    c.minimapFrame = QColor(0xb8, 0xb8, 0xb8);
    c.chartBackground = Qt::white;
    c.chartAxis = QColor(0x40, 0x40, 0x40);
    c.chartGrid = QColor(0xd8, 0xd8, 0xd8);
    c.chartSubGrid = QColor(0xee, 0xee, 0xee);
    c.chartText = QColor(0x1a, 0x1a, 0x1a);
    c.chartLegendBackground = QColor(0xff, 0xff, 0xff, 0xe6);
    c.chartLegendBorder = QColor(0xb8, 0xb8, 0xb8);
    c.chartMarker = QColor(0x59, 0x59, 0x59);
    c.noticeBackground[0] = QColor(0xfd, 0xe2, 0xe1);
    c.noticeBackground[1] = QColor(0xff, 0xf4, 0xd6);
    c.noticeBackground[2] = QColor(0xe3, 0xef, 0xff);
    c.noticeBorder[0] = QColor(0xd9, 0x53, 0x4f);
    c.noticeBorder[1] = QColor(0xe0, 0xa8, 0x00);
    c.noticeBorder[2] = QColor(0x4a, 0x90, 0xd9);
    c.noticeText = QColor(0x20, 0x20, 0x20);
    c.thumbnailBackground = Qt::white;
    c.thumbnailLine = QColor(0xc8, 0xcd, 0xd3);
    return c;
}

ThemeColors darkColors() {
    ThemeColors c;
    c.kind = ThemeKind::Dark;
    c.canvasBackground = QColor(0x23, 0x25, 0x28);
    c.canvasGrid = QColor(0x33, 0x36, 0x3a);
    c.selection = QColor(0x5c, 0x9d, 0xff);
    c.nodeBody = QColor(0x31, 0x34, 0x38);
    c.nodeText = QColor(0xe8, 0xe8, 0xe8);
    c.nodeTextDim = QColor(0xb0, 0xb3, 0xb8);
    c.nodeBorder = QColor(0x5a, 0x5d, 0x63);
    c.groupStack = QColor(0x2a, 0x2c, 0x30);
    c.categoryLightness = 100;
    c.portFill = QColor(0x45, 0x48, 0x4d);
    c.portOutline = QColor(0xc8, 0xc8, 0xc8);
    c.edge = QColor(0x9a, 0x9d, 0xa3);
    c.edgeLabelBackground = QColor(0x23, 0x25, 0x28, 0xe0);
    c.edgeLabelText = QColor(0xe0, 0xe0, 0xe0);
    c.error = QColor(0xcf, 0x34, 0x34);
    c.errorText = QColor(0xff, 0x8a, 0x80);
    c.badgeText = Qt::white;
    c.warning = QColor(0xf0, 0xb4, 0x29);
    c.warningText = QColor(0xff, 0xcc, 0x66);
    c.noteBody = QColor(0x4a, 0x45, 0x2a);
    c.noteText = QColor(0xf0, 0xea, 0xc8);
    c.minimapBackground = QColor(0x1e, 0x1f, 0x22);
    c.minimapNode = QColor(0x80, 0x84, 0x8a);
    c.minimapEdge = QColor(0x4a, 0x4d, 0x52);
    c.minimapNote = QColor(0x8a, 0x7d, 0x3a);
    c.minimapFrame = QColor(0x5a, 0x5d, 0x63);
    c.chartBackground = QColor(0x1e, 0x1f, 0x22);
    c.chartAxis = QColor(0xa0, 0xa3, 0xa8);
    c.chartGrid = QColor(0x3a, 0x3d, 0x42);
    c.chartSubGrid = QColor(0x2a, 0x2c, 0x30);
    c.chartText = QColor(0xe0, 0xe0, 0xe0);
    c.chartLegendBackground = QColor(0x2b, 0x2d, 0x30, 0xe6);
    c.chartLegendBorder = QColor(0x5a, 0x5d, 0x63);
    c.chartMarker = QColor(0xb0, 0xb3, 0xb8);
    c.noticeBackground[0] = QColor(0x4a, 0x25, 0x25);
    c.noticeBackground[1] = QColor(0x4a, 0x3d, 0x1c);
    c.noticeBackground[2] = QColor(0x1f, 0x36, 0x52);
    c.noticeBorder[0] = QColor(0xcf, 0x34, 0x34);
    c.noticeBorder[1] = QColor(0xf0, 0xb4, 0x29);
    c.noticeBorder[2] = QColor(0x5c, 0x9d, 0xff);
    c.noticeText = QColor(0xee, 0xee, 0xee);
    c.thumbnailBackground = QColor(0x1e, 0x1f, 0x22);
    c.thumbnailLine = QColor(0x5a, 0x5d, 0x63);
    return c;
}

void applyErrorMark(QWidget* w) {
    w->setStyleSheet(QStringLiteral("color: %1;").arg(Theme::instance().colors().errorText.name()));
}

}  // namespace

Theme& Theme::instance() {
    static Theme* theme = new Theme;  // lives as long as the process; never destroyed after QApplication
    return *theme;
}

const ThemeColors& Theme::colors() const { return colors(m_kind); }

const ThemeColors& Theme::colors(ThemeKind kind) {
    static const ThemeColors light = lightColors();
    static const ThemeColors dark = darkColors();
    return kind == ThemeKind::Dark ? dark : light;
}

QPalette Theme::palette(ThemeKind kind) { return kind == ThemeKind::Dark ? darkPalette() : lightPalette(); }

ThemeKind Theme::systemKind() {
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    if (auto* hints = QGuiApplication::styleHints()) {
        if (hints->colorScheme() == Qt::ColorScheme::Dark) return ThemeKind::Dark;
        if (hints->colorScheme() == Qt::ColorScheme::Light) return ThemeKind::Light;
    }
#endif
    // Qt 6.4 has no colour scheme: the platform theme's palette tells (the one the application
    // started with, before Kiln set its own).
    Theme& t = instance();
    if (!t.m_systemPaletteKnown && qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
        t.m_systemPalette = QGuiApplication::palette();
        t.m_systemPaletteKnown = true;
    }
    if (t.m_systemPaletteKnown) {
        const QPalette& p = t.m_systemPalette;
        if (p.color(QPalette::Window).lightness() < 128 && p.color(QPalette::WindowText).lightness() > 128)
            return ThemeKind::Dark;
    }
    return ThemeKind::Light;
}

ThemeKind Theme::resolve(ThemeChoice choice) {
    switch (choice) {
    case ThemeChoice::Light: return ThemeKind::Light;
    case ThemeChoice::Dark: return ThemeKind::Dark;
    case ThemeChoice::System: break;
    }
    return systemKind();
}

void Theme::apply(ThemeChoice choice) {
    // The platform's palette is read once, before the first theme replaces it.
    if (!m_systemPaletteKnown) {
        m_systemPalette = QGuiApplication::palette();
        m_systemPaletteKnown = true;
    }
    m_choice = choice;
    m_kind = resolve(choice);
    // Fusion draws every control from the palette, so both palettes look as designed.
    if (!QApplication::style() || QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) != 0) {
        if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(fusion);
    }
    QApplication::setPalette(palette(m_kind));
    // Qt hands the new palette to child widgets; windows (a main window, an open dialog) are
    // told here as well, so that they and everything inside them resolve it now.
    for (QWidget* window : QApplication::topLevelWidgets()) {
        QEvent event(QEvent::ApplicationPaletteChange);
        QCoreApplication::sendEvent(window, &event);
    }
    emit changed();
}

QString Theme::id(ThemeChoice choice) {
    switch (choice) {
    case ThemeChoice::System: return QStringLiteral("system");
    case ThemeChoice::Light: return QStringLiteral("light");
    case ThemeChoice::Dark: return QStringLiteral("dark");
    }
    return QStringLiteral("system");
}

std::optional<ThemeChoice> Theme::fromId(const QString& id) {
    const QString s = id.trimmed().toLower();
    for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark})
        if (s == Theme::id(c)) return c;
    return std::nullopt;
}

void Theme::markAsError(QWidget* widget) {
    if (!widget) return;
    widget->setProperty(kErrorMarkProperty, true);
    applyErrorMark(widget);
    if (widget->property(kErrorMarkFollows).toBool()) return;  // already follows theme changes
    widget->setProperty(kErrorMarkFollows, true);
    QPointer<QWidget> guard(widget);
    connect(&instance(), &Theme::changed, widget, [guard] {
        if (guard && guard->property(kErrorMarkProperty).toBool()) applyErrorMark(guard);
    });
}

void Theme::clearErrorMark(QWidget* widget) {
    if (!widget) return;
    widget->setProperty(kErrorMarkProperty, false);
    widget->setStyleSheet(QString());
}

}  // namespace kiln::ui
