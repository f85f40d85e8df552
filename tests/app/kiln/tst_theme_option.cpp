// SPDX-License-Identifier: Apache-2.0
// The studio's theme at start-up, through the real program: `kiln --theme dark|light` paints the
// window in that theme without changing the stored setting, the stored setting applies when no
// option is given, and an unknown theme name is refused with exit status 2 and a message naming it.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common
#include <QImage>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/common/theme.h"

using namespace kiln::ui;

namespace {

QString studio() { return QStringLiteral(KILN_BINARY_DIR "/app/kiln/kiln"); }

struct Run {
    int exitCode = -1;
    QString errors;
    QImage shot;
};

// Starts the studio with its own settings folder, lets it grab its window and quit.
Run runStudio(const QTemporaryDir& home, const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("HOME"), home.path());
    p.setProcessEnvironment(env);
    const QString png = home.filePath(QStringLiteral("shot.png"));
    QFile::remove(png);
    p.start(studio(), QStringList{QStringLiteral("--screenshot"), png, QStringLiteral("--screenshot-delay"), QStringLiteral("400"),
                                  QStringLiteral("--size"), QStringLiteral("900x600"), QStringLiteral("--lang"), QStringLiteral("en")}
                          + args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.errors = QStringLiteral("timed out");
        return r;
    }
    r.exitCode = p.exitCode();
    r.errors = QString::fromLocal8Bit(p.readAllStandardError());
    r.shot = QImage(png);
    return r;
}

// Mean lightness (0..255) of the picture: a dark window is far below the middle, a light one far above.
int meanLightness(const QImage& image) {
    qint64 sum = 0, n = 0;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3, ++n) sum += image.pixelColor(x, y).lightness();
    return n ? int(sum / n) : -1;
}

QColor commonest(const QImage& image) {
    QHash<QRgb, int> counts;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) ++counts[image.pixel(x, y) | 0xff000000u];
    QRgb best = 0;
    int n = -1;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        if (it.value() > n) best = it.key(), n = it.value();
    return QColor::fromRgb(best);
}

QString settingsFile(const QTemporaryDir& home) { return home.filePath(QStringLiteral("config/Kiln/Kiln.conf")); }

}  // namespace

class TestThemeOption : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFileInfo::exists(studio()), "build the kiln target first"); }

    void optionPaintsTheWindow() {
        QTemporaryDir home;
        const Run dark = runStudio(home, {QStringLiteral("--theme"), QStringLiteral("dark")});
        QVERIFY2(dark.exitCode == 0, qPrintable(dark.errors));
        QVERIFY(!dark.shot.isNull());
        const int darkLightness = meanLightness(dark.shot);
        QVERIFY2(darkLightness < 90, qPrintable(QString::number(darkLightness)));
        // The commonest colour is a background of the dark palette (the window's or the lists').
        const QPalette palette = Theme::palette(ThemeKind::Dark);
        const QColor common = commonest(dark.shot);
        QVERIFY2(common == palette.color(QPalette::Window) || common == palette.color(QPalette::Base), qPrintable(common.name()));
        // The option is for this session only.
        QVERIFY(!QSettings(settingsFile(home), QSettings::IniFormat).contains(QStringLiteral("ui/theme")));

        const Run light = runStudio(home, {QStringLiteral("--theme"), QStringLiteral("light")});
        QVERIFY2(light.exitCode == 0, qPrintable(light.errors));
        const int lightLightness = meanLightness(light.shot);
        QVERIFY2(lightLightness > 170, qPrintable(QString::number(lightLightness)));
    }

    void storedSettingApplies() {
        QTemporaryDir home;
        {
            QDir().mkpath(home.filePath(QStringLiteral("config/Kiln")));
            QSettings s(settingsFile(home), QSettings::IniFormat);
            s.setValue(QStringLiteral("ui/theme"), QStringLiteral("dark"));
        }
        const Run stored = runStudio(home, {});
        QVERIFY2(stored.exitCode == 0, qPrintable(stored.errors));
        QVERIFY(meanLightness(stored.shot) < 90);
        // The option wins over the setting.
        const Run light = runStudio(home, {QStringLiteral("--theme=light")});
        QVERIFY2(light.exitCode == 0, qPrintable(light.errors));
        QVERIFY(meanLightness(light.shot) > 170);
        QCOMPARE(QSettings(settingsFile(home), QSettings::IniFormat).value(QStringLiteral("ui/theme")).toString(),
                 QStringLiteral("dark"));
    }

    void unknownThemeIsRefused() {
        QTemporaryDir home;
        const Run bad = runStudio(home, {QStringLiteral("--theme"), QStringLiteral("purple")});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.errors.contains(QStringLiteral("\"purple\"")), qPrintable(bad.errors));
        QVERIFY(bad.errors.contains(QStringLiteral("system, light or dark")));
        QVERIFY(bad.shot.isNull());  // refused before any window
    }
};

QTEST_MAIN(TestThemeOption)
#include "tst_theme_option.moc"
