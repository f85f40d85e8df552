// SPDX-License-Identifier: Apache-2.0
// Settings keys and defaults.
#include "ui/common/app_settings.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>

namespace kiln::ui {

namespace {
const QString kLanguage = QStringLiteral("ui/language");
const QString kTheme = QStringLiteral("ui/theme");
const QString kAutosave = QStringLiteral("document/autosaveSeconds");
const QString kDevice = QStringLiteral("training/defaultDevice");
const QString kRecent = QStringLiteral("document/recentProjects");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kPlugins = QStringLiteral("plugins/paths");
const QString kState = QStringLiteral("window/state");

QString normalized(const QString& path) { return QDir::cleanPath(QFileInfo(path).absoluteFilePath()); }
}  // namespace

QString AppSettings::language() { return QSettings().value(kLanguage).toString(); }
void AppSettings::setLanguage(const QString& code) { QSettings().setValue(kLanguage, code); }

QString AppSettings::theme() {
    const QString id = QSettings().value(kTheme, QStringLiteral("system")).toString().trimmed().toLower();
    return id == QLatin1String("light") || id == QLatin1String("dark") ? id : QStringLiteral("system");
}
void AppSettings::setTheme(const QString& id) { QSettings().setValue(kTheme, id); }

int AppSettings::autosaveSeconds() {
    bool ok = false;
    int s = QSettings().value(kAutosave, kDefaultAutosaveSeconds).toInt(&ok);
    if (!ok || s < 0) return kDefaultAutosaveSeconds;
    return s == 0 ? 0 : std::clamp(s, kMinAutosaveSeconds, kMaxAutosaveSeconds);
}
void AppSettings::setAutosaveSeconds(int seconds) {
    QSettings().setValue(kAutosave, seconds <= 0 ? 0 : std::clamp(seconds, kMinAutosaveSeconds, kMaxAutosaveSeconds));
}

QString AppSettings::defaultDevice() {
    QString d = QSettings().value(kDevice, QStringLiteral("cpu")).toString();
    static const QRegularExpression valid(QStringLiteral("^(cpu|cuda:\\d+)$"));
    return valid.match(d).hasMatch() ? d : QStringLiteral("cpu");
}
void AppSettings::setDefaultDevice(const QString& device) { QSettings().setValue(kDevice, device); }

QStringList AppSettings::pluginPaths() { return QSettings().value(kPlugins).toStringList(); }
void AppSettings::addPluginPath(const QString& path) {
    QStringList paths = pluginPaths();
    const QString p = normalized(path);
    if (paths.contains(p)) return;
    paths << p;
    QSettings().setValue(kPlugins, paths);
}

QStringList AppSettings::recentProjects() {
    QSettings s;
    const QStringList stored = s.value(kRecent).toStringList();
    QStringList kept;
    for (const QString& p : stored)
        if (!p.isEmpty() && QFileInfo::exists(p) && !kept.contains(p) && kept.size() < kMaxRecentProjects) kept << p;
    if (kept != stored) s.setValue(kRecent, kept);
    return kept;
}

void AppSettings::addRecentProject(const QString& path) {
    const QString p = normalized(path);
    QStringList list = recentProjects();
    list.removeAll(p);
    list.prepend(p);
    while (list.size() > kMaxRecentProjects) list.removeLast();
    QSettings().setValue(kRecent, list);
}

void AppSettings::removeRecentProject(const QString& path) {
    QStringList list = QSettings().value(kRecent).toStringList();
    list.removeAll(normalized(path));
    QSettings().setValue(kRecent, list);
}

void AppSettings::clearRecentProjects() { QSettings().remove(kRecent); }

QByteArray AppSettings::windowGeometry() { return QSettings().value(kGeometry).toByteArray(); }
void AppSettings::setWindowGeometry(const QByteArray& g) { QSettings().setValue(kGeometry, g); }
QByteArray AppSettings::windowState() { return QSettings().value(kState).toByteArray(); }
void AppSettings::setWindowState(const QByteArray& st) { QSettings().setValue(kState, st); }
QByteArray AppSettings::workspaceState(const QString& workspace) {
    return QSettings().value(QStringLiteral("window/workspaces/") + workspace).toByteArray();
}
void AppSettings::setWorkspaceState(const QString& workspace, const QByteArray& state) {
    QSettings().setValue(QStringLiteral("window/workspaces/") + workspace, state);
}
void AppSettings::clearWorkspaceStates() { QSettings().remove(QStringLiteral("window/workspaces")); }

}  // namespace kiln::ui
