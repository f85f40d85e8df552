// SPDX-License-Identifier: Apache-2.0
// The themes: every text/background pair of both themes meets WCAG AA (4.5:1), applying a theme
// replaces the application's palette and tells listeners once, the choice persists in the
// settings, and View > Theme and the Settings dialog set it live and agree with each other.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common kiln_app_common
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "ui/common/app_settings.h"
#include "ui/common/resources.h"
#include "ui/common/settings_dialog.h"
#include "ui/common/theme.h"
#include "ui/common/theme_menu.h"
#include "ui/common/themed_icon.h"
#include "tests/ui/contrast.h"

using namespace kiln::ui;
using kiln::test::contrast;
using kiln::test::over;

namespace {

// Mean lightness of the drawn (mostly opaque) pixels of an icon.
int inkLightness(const QIcon& icon) {
    const QImage img = icon.pixmap(48, 48).toImage().convertToFormat(QImage::Format_ARGB32);
    qint64 sum = 0, n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if (qAlpha(img.pixel(x, y)) > 200) sum += QColor(img.pixel(x, y)).lightness(), ++n;
    return n ? int(sum / n) : -1;
}

struct Pair {
    const char* what;
    QColor text;
    QColor background;
};

QList<Pair> textPairs(ThemeKind kind) {
    const QPalette p = Theme::palette(kind);
    const ThemeColors& c = Theme::colors(kind);
    QList<Pair> pairs = {
        {"window text on window", p.color(QPalette::WindowText), p.color(QPalette::Window)},
        {"text on base", p.color(QPalette::Text), p.color(QPalette::Base)},
        {"text on alternate base", p.color(QPalette::Text), p.color(QPalette::AlternateBase)},
        {"placeholder on base", p.color(QPalette::PlaceholderText), p.color(QPalette::Base)},
        {"button text on button", p.color(QPalette::ButtonText), p.color(QPalette::Button)},
        {"highlighted text on highlight", p.color(QPalette::HighlightedText), p.color(QPalette::Highlight)},
        {"tooltip text on tooltip", p.color(QPalette::ToolTipText), p.color(QPalette::ToolTipBase)},
        {"link on base", p.color(QPalette::Link), p.color(QPalette::Base)},
        {"link on window", p.color(QPalette::Link), p.color(QPalette::Window)},
        {"node text on node", c.nodeText, c.nodeBody},
        {"node secondary text on node", c.nodeTextDim, c.nodeBody},
        {"error text on node", c.errorText, c.nodeBody},
        {"error text on window", c.errorText, p.color(QPalette::Window)},
        {"error text on base", c.errorText, p.color(QPalette::Base)},
        {"warning text on window", c.warningText, p.color(QPalette::Window)},
        {"badge text on badge", c.badgeText, c.error},
        {"block title on canvas", c.nodeText, c.canvasBackground},
        {"edge label on canvas", c.edgeLabelText, over(c.edgeLabelBackground, c.canvasBackground)},
        {"comment text on comment", c.noteText, c.noteBody},
        {"chart text on chart", c.chartText, c.chartBackground},
        {"chart text on legend", c.chartText, over(c.chartLegendBackground, c.chartBackground)},
        {"chart marker label on chart", c.chartMarker, c.chartBackground},
        {"notice text on error notice", c.noticeText, c.noticeBackground[0]},
        {"notice text on warning notice", c.noticeText, c.noticeBackground[1]},
        {"notice text on info notice", c.noticeText, c.noticeBackground[2]},
    };
    return pairs;
}

}  // namespace

class TestTheme : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_theme"));
        QSettings().clear();
        initCommonResources();  // the icons
    }

    void cleanup() { QSettings().clear(); }

    void contrastFormula() {
        // The two ends of the WCAG scale, and a published mid value (#777 on white is 4.48:1).
        QCOMPARE(qRound(contrast(Qt::black, Qt::white) * 100), 2100);
        QCOMPARE(contrast(QColor(0x12, 0x34, 0x56), QColor(0x12, 0x34, 0x56)), 1.0);
        QCOMPARE(qRound(contrast(QColor(0x77, 0x77, 0x77), Qt::white) * 100), 448);
    }

    void textMeetsWcagAA_data() {
        QTest::addColumn<QColor>("text");
        QTest::addColumn<QColor>("background");
        for (ThemeKind kind : {ThemeKind::Light, ThemeKind::Dark}) {
            const char* name = kind == ThemeKind::Dark ? "dark" : "light";
            for (const Pair& p : textPairs(kind))
                QTest::addRow("%s: %s", name, p.what) << p.text << p.background;
        }
    }

    void textMeetsWcagAA() {
        QFETCH(QColor, text);
        QFETCH(QColor, background);
        const double ratio = contrast(text, background);
        QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 on %2: %3:1, below 4.5:1")
                                              .arg(text.name(), background.name())
                                              .arg(ratio, 0, 'f', 2)));
    }

    void themesDiffer() {
        // Dark really is dark and Light light: backgrounds on either side of the middle.
        QVERIFY(Theme::palette(ThemeKind::Dark).color(QPalette::Window).lightness() < 80);
        QVERIFY(Theme::palette(ThemeKind::Light).color(QPalette::Window).lightness() > 200);
        QVERIFY(Theme::colors(ThemeKind::Dark).canvasBackground.lightness() < 80);
        QVERIFY(Theme::colors(ThemeKind::Light).canvasBackground.lightness() > 200);
        QVERIFY(Theme::colors(ThemeKind::Dark).chartBackground.lightness() < 80);
        QVERIFY(Theme::colors(ThemeKind::Light).chartBackground.lightness() > 200);
    }

    void idsRoundTrip() {
        for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark})
            QCOMPARE(Theme::fromId(Theme::id(c)), std::optional<ThemeChoice>(c));
        QCOMPARE(Theme::fromId(QStringLiteral(" Dark ")), std::optional<ThemeChoice>(ThemeChoice::Dark));
        QVERIFY(!Theme::fromId(QStringLiteral("purple")));
        QVERIFY(!Theme::fromId(QString()));
    }

    void applySwitchesPaletteAndStyle() {
        Theme& theme = Theme::instance();
        QSignalSpy spy(&theme, &Theme::changed);
        theme.apply(ThemeChoice::Dark);
        QCOMPARE(spy.count(), 1);
        QVERIFY(theme.isDark());
        QCOMPARE(QApplication::palette().color(QPalette::Window), Theme::palette(ThemeKind::Dark).color(QPalette::Window));
        QCOMPARE(QApplication::palette().color(QPalette::Text), Theme::palette(ThemeKind::Dark).color(QPalette::Text));
        QCOMPARE(QApplication::style()->name().toLower(), QStringLiteral("fusion"));
        // Windows shown before the switch, and the widgets inside them, get the new palette too.
        QLabel label(QStringLiteral("text"));
        label.show();
        QWidget window;
        auto* child = new QLabel(QStringLiteral("child"), &window);
        window.show();
        QCOMPARE(child->palette().color(QPalette::WindowText), Theme::palette(ThemeKind::Dark).color(QPalette::WindowText));
        theme.apply(ThemeChoice::Light);
        QCOMPARE(spy.count(), 2);
        QVERIFY(!theme.isDark());
        QCOMPARE(label.palette().color(QPalette::Window), Theme::palette(ThemeKind::Light).color(QPalette::Window));
        QCOMPARE(window.palette().color(QPalette::Window), Theme::palette(ThemeKind::Light).color(QPalette::Window));
        QCOMPARE(child->palette().color(QPalette::WindowText), Theme::palette(ThemeKind::Light).color(QPalette::WindowText));
        QCOMPARE(&theme.colors(), &Theme::colors(ThemeKind::Light));
    }

    void errorMarkFollowsTheTheme() {
        Theme& theme = Theme::instance();
        theme.apply(ThemeChoice::Light);
        QLabel label(QStringLiteral("bad value"));
        Theme::markAsError(&label);
        QVERIFY(label.styleSheet().contains(Theme::colors(ThemeKind::Light).errorText.name()));
        theme.apply(ThemeChoice::Dark);
        QVERIFY(label.styleSheet().contains(Theme::colors(ThemeKind::Dark).errorText.name()));
        Theme::clearErrorMark(&label);
        theme.apply(ThemeChoice::Light);
        QVERIFY(label.styleSheet().isEmpty());  // a cleared mark stays cleared
    }

    void iconsFollowTheTheme() {
        Theme& theme = Theme::instance();
        const QIcon save = themedIcon(QStringLiteral("save"));
        QVERIFY(!save.isNull());
        theme.apply(ThemeChoice::Light);
        const int light = inkLightness(save);
        theme.apply(ThemeChoice::Dark);
        const int dark = inkLightness(save);  // the same QIcon, painted again
        QVERIFY2(light >= 0 && light < 110, qPrintable(QString::number(light)));
        QVERIFY2(dark > 160, qPrintable(QString::number(dark)));
        QVERIFY(themedIcon(QStringLiteral("no-such-icon")).isNull());
        theme.apply(ThemeChoice::Light);
    }

    void settingPersists() {
        QCOMPARE(AppSettings::theme(), QStringLiteral("system"));  // the default
        AppSettings::setTheme(QStringLiteral("dark"));
        QCOMPARE(QSettings().value(QStringLiteral("ui/theme")).toString(), QStringLiteral("dark"));
        QCOMPARE(AppSettings::theme(), QStringLiteral("dark"));
        AppSettings::setTheme(QStringLiteral("light"));
        QCOMPARE(AppSettings::theme(), QStringLiteral("light"));
        // A hand-edited value Kiln does not know reads as the default.
        QSettings().setValue(QStringLiteral("ui/theme"), QStringLiteral("neon"));
        QCOMPARE(AppSettings::theme(), QStringLiteral("system"));
    }

    void menuAppliesAndStores() {
        Theme& theme = Theme::instance();
        theme.apply(ThemeChoice::Light);
        ThemeMenu menu;
        QVERIFY(menu.action(ThemeChoice::Light)->isChecked());
        QSignalSpy spy(&theme, &Theme::changed);
        menu.action(ThemeChoice::Dark)->trigger();
        QCOMPARE(spy.count(), 1);
        QCOMPARE(theme.choice(), ThemeChoice::Dark);
        QCOMPARE(AppSettings::theme(), QStringLiteral("dark"));
        QVERIFY(menu.action(ThemeChoice::Dark)->isChecked());
        QVERIFY(!menu.action(ThemeChoice::Light)->isChecked());
        QCOMPARE(QApplication::palette().color(QPalette::Base), Theme::palette(ThemeKind::Dark).color(QPalette::Base));
        // Choosing the theme already shown stores it and repaints nothing.
        menu.action(ThemeChoice::Dark)->trigger();
        QCOMPARE(spy.count(), 1);
    }

    void settingsDialogAppliesAndMenuFollows() {
        Theme& theme = Theme::instance();
        theme.apply(ThemeChoice::Dark);
        AppSettings::setTheme(QStringLiteral("dark"));
        ThemeMenu menu;
        SettingsDialog dialog;
        auto* combo = dialog.findChild<QComboBox*>(QStringLiteral("settingsTheme"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 3);
        QCOMPARE(dialog.theme(), QStringLiteral("dark"));  // shows the stored setting
        combo->setCurrentIndex(combo->findData(QStringLiteral("light")));
        dialog.accept();
        QCOMPARE(AppSettings::theme(), QStringLiteral("light"));
        QCOMPARE(theme.choice(), ThemeChoice::Light);
        QVERIFY(!theme.isDark());
        QVERIFY(menu.action(ThemeChoice::Light)->isChecked());
        // System resolves to what the platform reports; the offscreen platform has no dark scheme.
        SettingsDialog again;
        again.setTheme(QStringLiteral("system"));
        again.accept();
        QCOMPARE(theme.choice(), ThemeChoice::System);
        QCOMPARE(theme.kind(), Theme::systemKind());
        QVERIFY(menu.action(ThemeChoice::System)->isChecked());
    }
};

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
