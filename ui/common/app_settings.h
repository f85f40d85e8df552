// SPDX-License-Identifier: Apache-2.0
// The studio's persistent settings (QSettings, per user): language, theme, autosave interval, default
// device, recent projects and the window layout. One place for the keys and their defaults.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace kiln::ui {

class AppSettings {
public:
    static constexpr int kMaxRecentProjects = 10;
    static constexpr int kDefaultAutosaveSeconds = 60;
    static constexpr int kMinAutosaveSeconds = 5;
    static constexpr int kMaxAutosaveSeconds = 3600;

    // "" means the system's language; otherwise a code of Language::available() ("en", "zh_CN").
    static QString language();
    static void setLanguage(const QString& code);

    // The colour theme: "system" (the default), "light" or "dark" (Theme::fromId); anything else
    // stored reads as "system".
    static QString theme();
    static void setTheme(const QString& id);

    // Seconds between autosaves of a modified document; 0 turns autosave off.
    static int autosaveSeconds();
    static void setAutosaveSeconds(int seconds);

    // Device new trainings use: "cpu" or "cuda:N".
    static QString defaultDevice();
    static void setDefaultDevice(const QString& device);

    // Most recent first, at most kMaxRecentProjects, absolute paths; files that no longer exist
    // are pruned (and the pruned list is written back).
    static QStringList recentProjects();
    static void addRecentProject(const QString& path);
    static void removeRecentProject(const QString& path);
    static void clearRecentProjects();

    // Plugin libraries loaded with Help > Plugins > Load Plugin…, loaded again at every start
    // (after the user's plugin folder and KILN_PLUGIN_PATH); absolute paths, in order.
    static QStringList pluginPaths();
    static void addPluginPath(const QString& path);

    static QByteArray windowGeometry();
    static void setWindowGeometry(const QByteArray& geometry);
    static QByteArray windowState();
    static void setWindowState(const QByteArray& state);
    // The dock layout of one workspace of the main window ("design", "data", ...): empty when the
    // user has not laid it out yet. Clearing forgets every workspace's layout.
    static QByteArray workspaceState(const QString& workspace);
    static void setWorkspaceState(const QString& workspace, const QByteArray& state);
    static void clearWorkspaceStates();
};

}  // namespace kiln::ui
