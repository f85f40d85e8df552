// SPDX-License-Identifier: Apache-2.0
// The studio's colour themes: a Fusion palette for Light and Dark, and the colours Kiln paints
// itself (canvas, node cards, ports, edges, minimap, charts, notices, error text). One place
// defines them; custom-painted widgets read them here and repaint on Theme::changed.
#pragma once

#include <QColor>
#include <QObject>
#include <QPalette>
#include <QString>

#include <optional>

class QWidget;

namespace kiln::ui {

// What the user chose: System follows the platform's colour scheme where Qt reports one.
enum class ThemeChoice { System, Light, Dark };
// What is shown.
enum class ThemeKind { Light, Dark };

// The colours Kiln draws with its own painters. Text colours meet WCAG AA (4.5:1) on the
// backgrounds they are drawn on (tests/ui/common/tst_theme.cpp checks every pair).
struct ThemeColors {
    ThemeKind kind = ThemeKind::Light;

    // Node editor canvas.
    QColor canvasBackground;
    QColor canvasGrid;
    QColor selection;  // selected node/edge outline, rubber band, viewport frame of the minimap

    // Node cards.
    QColor nodeBody;
    QColor nodeText;
    QColor nodeTextDim;  // op name, cost line, flags
    QColor nodeBorder;
    QColor groupStack;  // the box behind a collapsed block
    int categoryLightness = 170;  // HSL lightness of the category band and output port

    // Ports and edges.
    QColor portFill;
    QColor portOutline;
    QColor edge;
    QColor edgeLabelBackground;
    QColor edgeLabelText;

    // Problems: the badge and border of a node with an error, error text on cards and in forms.
    QColor error;
    QColor errorText;       // on nodeBody and on the window background
    QColor badgeText;       // on error
    QColor warning;
    QColor warningText;     // on the window background

    // Comments (sticky notes) on the canvas.
    QColor noteBody;
    QColor noteText;

    // Minimap.
    QColor minimapBackground;
    QColor minimapNode;
    QColor minimapEdge;
    QColor minimapNote;
    QColor minimapFrame;

    // Charts (QCustomPlot).
    QColor chartBackground;
    QColor chartAxis;
    QColor chartGrid;
    QColor chartSubGrid;
    QColor chartText;
    QColor chartLegendBackground;
    QColor chartLegendBorder;
    QColor chartMarker;

    // Notices above the canvas: background and border per severity (error, warning, info),
    // one text colour on all three.
    QColor noticeBackground[3];
    QColor noticeBorder[3];
    QColor noticeText;

    // Thumbnails of example graphs on the welcome page.
    QColor thumbnailBackground;
    QColor thumbnailLine;
};

class Theme : public QObject {
    Q_OBJECT

public:
    // The one theme of the process (created on first use, parented to nothing).
    static Theme& instance();

    ThemeChoice choice() const { return m_choice; }
    ThemeKind kind() const { return m_kind; }
    const ThemeColors& colors() const;
    bool isDark() const { return m_kind == ThemeKind::Dark; }

    // Applies a choice now: the application's style is Fusion, its palette the theme's, and
    // changed() tells custom-painted widgets to repaint. Needs a QApplication.
    void apply(ThemeChoice choice);

    // Resolves System: the platform's colour scheme where Qt reports one, else the lightness
    // of the platform's own palette; Light when neither says dark.
    static ThemeKind systemKind();
    static ThemeKind resolve(ThemeChoice choice);

    static QPalette palette(ThemeKind kind);
    static const ThemeColors& colors(ThemeKind kind);

    // "system", "light", "dark" (settings and command line) and back; nullopt for other text.
    static QString id(ThemeChoice choice);
    static std::optional<ThemeChoice> fromId(const QString& id);

    // Gives a label (or any widget with text) the theme's error text colour, now and after
    // every theme change.
    static void markAsError(QWidget* widget);
    // Takes the mark off again (the label goes back to the palette's text colour).
    static void clearErrorMark(QWidget* widget);

signals:
    void changed();

private:
    Theme() = default;
    ThemeChoice m_choice = ThemeChoice::Light;
    ThemeKind m_kind = ThemeKind::Light;
    QPalette m_systemPalette;
    bool m_systemPaletteKnown = false;
};

}  // namespace kiln::ui
