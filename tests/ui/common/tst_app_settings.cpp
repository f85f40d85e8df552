// SPDX-License-Identifier: Apache-2.0
// Settings persist across QSettings instances; recent projects are capped and pruned; the
// settings dialog stores its values and switching the language retranslates a visible widget.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common kiln_app_common
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLibraryInfo>
#include <QPushButton>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

#include "ui/common/app_settings.h"
#include "ui/common/language.h"
#include "ui/common/log_panel.h"
#include "ui/common/resources.h"
#include "ui/common/settings_dialog.h"

using namespace kiln::ui;

namespace {
// Wraps every Kiln text in <...>, so a test sees which widgets retranslate.
class MarkingTranslator : public QTranslator {
public:
    QString translate(const char* context, const char* source, const char*, int) const override {
        if (!QByteArray(context).startsWith("kiln::")) return {};
        return QLatin1Char('<') + QString::fromUtf8(source) + QLatin1Char('>');
    }
    bool isEmpty() const override { return false; }
};
}  // namespace

class TestAppSettings : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        initCommonResources();
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_app_settings"));
    }
    void init() { QSettings().clear(); }
    void cleanupTestCase() {
        QSettings().clear();
        Language::apply(QStringLiteral("en"));
    }

    void settingsLiveInTheTestLocation() {
        QSettings s;
        QVERIFY2(s.fileName().contains(QLatin1String(".qttest")), qPrintable(s.fileName()));
    }

    void valuesPersistAndAreValidated() {
        QCOMPARE(AppSettings::autosaveSeconds(), AppSettings::kDefaultAutosaveSeconds);
        QCOMPARE(AppSettings::defaultDevice(), QStringLiteral("cpu"));
        QCOMPARE(AppSettings::language(), QString());
        AppSettings::setAutosaveSeconds(42);
        AppSettings::setDefaultDevice(QStringLiteral("cuda:1"));
        AppSettings::setLanguage(QStringLiteral("zh_CN"));
        QSettings().sync();
        // A fresh QSettings reads the file back.
        QSettings reread;
        QCOMPARE(reread.value(QStringLiteral("document/autosaveSeconds")).toInt(), 42);
        QCOMPARE(AppSettings::autosaveSeconds(), 42);
        QCOMPARE(AppSettings::defaultDevice(), QStringLiteral("cuda:1"));
        QCOMPARE(AppSettings::language(), QStringLiteral("zh_CN"));
        AppSettings::setAutosaveSeconds(1);  // clamped to the minimum
        QCOMPARE(AppSettings::autosaveSeconds(), AppSettings::kMinAutosaveSeconds);
        AppSettings::setAutosaveSeconds(0);  // off
        QCOMPARE(AppSettings::autosaveSeconds(), 0);
        QSettings().setValue(QStringLiteral("training/defaultDevice"), QStringLiteral("gpu please"));
        QCOMPARE(AppSettings::defaultDevice(), QStringLiteral("cpu"));
    }

    void recentProjectsCappedAndPruned() {
        QTemporaryDir dir;
        QStringList files;
        for (int i = 0; i < 12; ++i) {
            files << dir.filePath(QStringLiteral("p%1.kiln").arg(i));
            QFile f(files.last());
            QVERIFY(f.open(QIODevice::WriteOnly));
            AppSettings::addRecentProject(files.last());
        }
        QStringList recent = AppSettings::recentProjects();
        QCOMPARE(recent.size(), AppSettings::kMaxRecentProjects);
        QCOMPARE(recent.first(), files[11]);  // most recent first
        QVERIFY(!recent.contains(files[0]) && !recent.contains(files[1]));
        // Re-adding moves it to the front without duplicates.
        AppSettings::addRecentProject(files[5]);
        recent = AppSettings::recentProjects();
        QCOMPARE(recent.first(), files[5]);
        QCOMPARE(recent.count(files[5]), 1);
        // A deleted file disappears from the list (and from the stored value).
        QVERIFY(QFile::remove(files[11]));
        recent = AppSettings::recentProjects();
        QVERIFY(!recent.contains(files[11]));
        QVERIFY(!QSettings().value(QStringLiteral("document/recentProjects")).toStringList().contains(files[11]));
        AppSettings::removeRecentProject(files[5]);
        QVERIFY(!AppSettings::recentProjects().contains(files[5]));
        AppSettings::clearRecentProjects();
        QVERIFY(AppSettings::recentProjects().isEmpty());
    }

    void languageResolution() {
        QCOMPARE(Language::resolve(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        QCOMPARE(Language::resolve(QStringLiteral("en")), QStringLiteral("en"));
        const QString sys = Language::resolve(QString());
        QVERIFY(Language::available().contains(sys));
        QCOMPARE(Language::resolve(QStringLiteral("klingon")), sys);
        QVERIFY(!Language::apply(QStringLiteral("klingon")));
    }

    void dialogStoresValues() {
        SettingsDialog dialog;
        QCOMPARE(dialog.autosaveSeconds(), AppSettings::kDefaultAutosaveSeconds);
        dialog.findChild<QSpinBox*>(QStringLiteral("settingsAutosave"))->setValue(120);
        dialog.findChild<QComboBox*>(QStringLiteral("settingsDevice"))->setCurrentText(QStringLiteral("cuda:0"));
        dialog.setLanguage(QStringLiteral("en"));
        dialog.accept();
        QCOMPARE(AppSettings::autosaveSeconds(), 120);
        QCOMPARE(AppSettings::defaultDevice(), QStringLiteral("cuda:0"));
        QCOMPARE(AppSettings::language(), QStringLiteral("en"));
        SettingsDialog again;
        QCOMPARE(again.autosaveSeconds(), 120);
        again.findChild<QCheckBox*>(QStringLiteral("settingsAutosaveOn"))->setChecked(false);
        again.accept();
        QCOMPARE(AppSettings::autosaveSeconds(), 0);
    }

    void switchingLanguageRetranslatesVisibleWidgets() {
        QVERIFY(Language::apply(QStringLiteral("en")));
        MessageLog log;
        LogPanel panel(&log);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* severity = panel.findChild<QComboBox*>(QStringLiteral("logSeverity"));
        QCOMPARE(severity->itemText(0), QStringLiteral("All messages"));

        // A translator that marks every text: the visible widget must pick it up at once.
        MarkingTranslator marker;
        QCoreApplication::installTranslator(&marker);
        QTRY_COMPARE(severity->itemText(0), QStringLiteral("<All messages>"));
        QCOMPARE(panel.windowTitle(), QStringLiteral("<Log>"));
        QCoreApplication::removeTranslator(&marker);
        QTRY_COMPARE(severity->itemText(0), QStringLiteral("All messages"));

        // The settings dialog applies the chosen language on OK, without a restart.
        SettingsDialog dialog;
        dialog.setLanguage(QStringLiteral("zh_CN"));
        dialog.accept();
        QCOMPARE(Language::current(), QStringLiteral("zh_CN"));
        QCOMPARE(AppSettings::language(), QStringLiteral("zh_CN"));
        QTRY_COMPARE(severity->itemText(0), QCoreApplication::translate("kiln::ui::LogPanel", "All messages"));
        QVERIFY(Language::apply(QStringLiteral("en")));
        QTRY_COMPARE(severity->itemText(0), QStringLiteral("All messages"));
    }

    // Qt's standard buttons follow the language too (Qt's own catalogue, not Kiln's).
    void standardButtonsFollowTheLanguage() {
        const QString dir = QLibraryInfo::path(QLibraryInfo::TranslationsPath);
        if (!QFile::exists(dir + QStringLiteral("/qtbase_zh_CN.qm")))
            QSKIP("Qt's Chinese catalogue (qt6-translations-l10n) is not installed");
        QVERIFY(Language::apply(QStringLiteral("zh_CN")));
        QVERIFY(Language::qtCatalogueLoaded());
        {
            QDialogButtonBox box(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
            const QString cancel = box.button(QDialogButtonBox::Cancel)->text();
            QVERIFY2(!cancel.contains(QLatin1String("Cancel")), qPrintable(cancel));
            QVERIFY2(cancel.contains(QStringLiteral("取消")), qPrintable(cancel));
        }
        QVERIFY(Language::apply(QStringLiteral("en")));
        QVERIFY(!Language::qtCatalogueLoaded());
        QDialogButtonBox box(QDialogButtonBox::Cancel);
        QVERIFY(box.button(QDialogButtonBox::Cancel)->text().contains(QLatin1String("Cancel")));
    }
};

QTEST_MAIN(TestAppSettings)
#include "tst_app_settings.moc"
