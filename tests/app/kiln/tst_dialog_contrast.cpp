// SPDX-License-Identifier: Apache-2.0
// The studio's dialogs in the dark and in the light theme: each is opened the way a user opens it
// (its menu action, or Explain with run on a picture), rendered, and its labels, buttons and table
// cells are measured against what they are drawn on; every piece of text must reach WCAG AA (4.5:1). Modal
// dialogs are measured from inside their own event loop and then closed. Qt's own dialogs (the file
// dialog, the About box) are checked too: they follow the studio's palette. With
// KILN_SCREENSHOT_DIR set, each dialog's picture is saved there as dialog_<name>_<theme>.png.
// The light theme is measured again in Chinese (dialog_<name>_light_zh_CN.png): other words,
// other widths, the same rule.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
// kiln-test-timeout: 600
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QPointer>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "app/kiln/main_window.h"
#include "tests/app/kiln/contrast_checker.h"
#include "tests/app/kiln/trained_project.h"
#include "ui/common/language.h"
#include "ui/common/theme.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/graph_editor/editor_document.h"

using kiln::app::MainWindow;
using kiln::test::Checker;
using kiln::ui::Language;
using kiln::ui::Theme;
using kiln::ui::ThemeChoice;
using nlohmann::json;

Q_DECLARE_METATYPE(ThemeChoice)

namespace {

// Two classes of 16x16 pictures (bright left half, bright top half) with noise, 12 of each.
bool writePictures(const QString& root) {
    std::mt19937 gen(7);
    std::uniform_int_distribution<int> noise(0, 50);
    const char* classes[] = {"left", "top"};
    for (int c = 0; c < 2; ++c) {
        const QString dir = root + QLatin1Char('/') + QLatin1String(classes[c]);
        if (!QDir().mkpath(dir)) return false;
        for (int i = 0; i < 12; ++i) {
            QImage img(16, 16, QImage::Format_Grayscale8);
            for (int y = 0; y < 16; ++y)
                for (int x = 0; x < 16; ++x) img.scanLine(y)[x] = uchar(((c == 0 ? x : y) < 8 ? 180 : 20) + noise(gen));
            if (!img.save(QStringLiteral("%1/%2.png").arg(dir).arg(i, 2, 10, QLatin1Char('0')))) return false;
        }
    }
    return true;
}

json projectJson(const QString& pictures) {
    return {{"format", "kiln-project"},
            {"version", 2},
            {"name", "halves"},
            {"graph",
             {{"nodes", json::array({{{"name", "image"}, {"op", "Input"}, {"attrs", {{"shape", {16, 16, 1}}}}},
                                     {{"name", "conv"}, {"op", "Conv2D"}, {"inputs", {"image"}},
                                      {"attrs", {{"filters", 4}, {"kernel_size", {3, 3}}, {"padding", "same"}, {"activation", "relu"}}}},
                                     {{"name", "flatten"}, {"op", "Flatten"}, {"inputs", {"conv"}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"flatten"}}, {"attrs", {{"units", 2}}}}})},
              {"outputs", {"logits"}}}},
            {"data",
             {{"format", "folder"},
              {"path", pictures.toStdString()},
              {"split", {{"validation", 0.25}, {"test", 0.25}}},
              {"transforms", json::array({{{"type", "decode"}, {"channels", 1}}, {{"type", "normalize"}, {"preset", "unit"}}})},
              {"inputs", {{"image", "image"}}}}},
            {"training",
             {{"epochs", 1},
              {"batch_size", 4},
              {"seed", 3},
              {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
              {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
              {"metrics", {"accuracy"}}}}};
}

void settle(int rounds = 5) {
    for (int i = 0; i < rounds; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

// A visible top-level dialog other than those in `before`.
QDialog* newDialog(const QList<QWidget*>& before) {
    for (QWidget* w : QApplication::topLevelWidgets()) {
        auto* d = qobject_cast<QDialog*>(w);
        if (d && d->isVisible() && !before.contains(w)) return d;
    }
    return nullptr;
}

// What was found in one dialog: its failures and how much text was measured.
struct Finding {
    bool opened = false;
    QString failures;
    int measured = 0;
};

// Opens a dialog with `open` (which may block in the dialog's own loop), waits for it, measures it
// and closes it. A timer does the measuring, so it runs inside a modal dialog's loop as well.
Finding measureDialog(const QString& name, const QString& theme, const std::function<void()>& open) {
    Finding finding;
    const QList<QWidget*> before = QApplication::topLevelWidgets();
    QTimer poll;
    poll.setInterval(50);
    int waited = 0;
    QObject::connect(&poll, &QTimer::timeout, [&] {
        QDialog* dialog = newDialog(before);
        if (!dialog) {
            if (++waited > 200) poll.stop();  // 10 s: it never opened
            return;
        }
        if (!QTest::qWaitForWindowExposed(dialog)) return;
        poll.stop();
        finding.opened = true;
        QTest::qWait(200);  // what the dialog fills in after showing lands in later turns
        QCoreApplication::processEvents();
        const QImage picture = dialog->grab().toImage();
        const QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
        if (!dir.isEmpty()) picture.save(QDir(dir).filePath(QStringLiteral("dialog_%1_%2.png").arg(name, theme)));
        Checker check(picture, dialog);
        check.labels(dialog);
        check.buttons(dialog);
        for (const QTableView* table : dialog->findChildren<QTableView*>()) check.cells(table, 40);
        finding.measured = check.count();
        finding.failures = check.failures();
        if (!finding.failures.isEmpty()) {
            const QString file = QDir::temp().filePath(QStringLiteral("kiln_contrast_dialog_%1_%2.png").arg(name, theme));
            picture.save(file);
            finding.failures += QStringLiteral("\n(picture: %1)").arg(file);
        }
        dialog->reject();
    });
    poll.start();
    open();
    QElapsedTimer waiting;
    waiting.start();
    while (poll.isActive() && waiting.elapsed() < 15000) QTest::qWait(20);
    settle();
    return finding;
}

}  // namespace

class TestDialogContrast : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_picture;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_dialog_contrast"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        const QString pictures = m_dir.filePath(QStringLiteral("pictures"));
        QVERIFY(writePictures(pictures));
        m_picture = pictures + QStringLiteral("/left/03.png");
        QDir(m_dir.path()).mkpath(QStringLiteral("project"));
        m_project = m_dir.filePath(QStringLiteral("project/halves.kiln"));
        // A trained run: the sweep dialog, the export form and Explain with run have one to show.
        const QString trained = kiln::test::saveAndTrain(projectJson(pictures), m_project);
        QVERIFY2(trained.isEmpty(), qPrintable(trained));
    }

    void cleanupTestCase() {
        Theme::instance().apply(ThemeChoice::Light);
        Language::apply(QStringLiteral("en"));
    }

    void dialogsMeetAA_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::addColumn<QString>("language");
        QTest::newRow("dark") << ThemeChoice::Dark << QStringLiteral("en");
        QTest::newRow("light") << ThemeChoice::Light << QStringLiteral("en");
        QTest::newRow("light_zh_CN") << ThemeChoice::Light << QStringLiteral("zh_CN");
    }

    void dialogsMeetAA() {
        QFETCH(ThemeChoice, theme);
        QFETCH(QString, language);
        Theme::instance().apply(theme);
        QVERIFY(Language::apply(language));
        const QString themeName =
            language == QLatin1String("en") ? Theme::id(theme) : Theme::id(theme) + QLatin1Char('_') + language;
        MainWindow w(m_dir.filePath(QStringLiteral("recovery-") + themeName));
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(m_project));
        settle();
        // The Data workspace scans the project's picture folder; that must not edit the project
        // (it once rewrote the split, batch size and seed with the browser's own).
        QTRY_VERIFY_WITH_TIMEOUT(!w.datasetBrowser()->isScanning(), 30000);
        settle();
        QVERIFY(!w.isWindowModified());
        QCOMPARE(w.document()->undoStack()->count(), 0);

        // Each dialog a menu action opens (Export Model switches to the Deploy workspace, which
        // the workspace test measures), and the picture explanation from the dataset browser.
        struct Entry {
            const char* name;
            const char* action;  // the action's object name, or nullptr for `other`
            int minimumText;     // labels and buttons that must at least have been measured
        };
        const Entry entries[] = {{"settings", "actionSettings", 4},     {"import_model", "actionImportModel", 3},
                                 {"pretrained", "actionNewFromPretrained", 4}, {"sweep", "actionSweep", 3},
                                 {"plugins", "actionPlugins", 2},       {"shortcuts", "actionShortcuts", 2},
                                 {"about", "actionAbout", 2},           {"open_project", "actionOpen", 4},
                                 {"explain", nullptr, 2}};
        QStringList failures;
        for (const Entry& e : entries) {
            std::function<void()> open;
            if (e.action) {
                auto* action = w.findChild<QAction*>(QLatin1String(e.action));
                QVERIFY2(action, e.action);
                open = [action] { action->trigger(); };
            } else {
                open = [&w, this] { w.explainPicture(m_picture); };
            }
            const Finding f = measureDialog(QLatin1String(e.name), themeName, open);
            QVERIFY2(!w.isWindowModified(), e.name);  // looking at a dialog and closing it changes nothing
            QVERIFY2(f.opened, qPrintable(QStringLiteral("%1 did not open a dialog").arg(QLatin1String(e.name))));
            if (!f.failures.isEmpty()) failures << QStringLiteral("%1: %2").arg(QLatin1String(e.name), f.failures);
            QVERIFY2(f.measured >= e.minimumText,
                     qPrintable(QStringLiteral("%1: only %2 pieces of text measured").arg(QLatin1String(e.name)).arg(f.measured)));
        }
        QVERIFY2(failures.isEmpty(), qPrintable(themeName + QStringLiteral(": text under 4.5:1\n") + failures.join(QLatin1Char('\n'))));
    }
};

QTEST_MAIN(TestDialogContrast)
#include "tst_dialog_contrast.moc"
