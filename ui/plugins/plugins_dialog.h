// SPDX-License-Identifier: Apache-2.0
// Help > Plugins…: the loaded plugin libraries (path, ABI version, operations, losses and
// metrics), the ones that failed to load and why, "Load Plugin…", which loads a library now and
// every start after, and "Check plugin", which runs the plugin checker (shapes, forward against
// the plugin's reference, gradients against finite differences) on the selected plugin's
// operations, and the loss checker (values, gradients against finite differences) on its
// losses, off the GUI thread.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include <vector>

#include "engine/api/plugins.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace kiln::ui {

using PluginCheckRun = engine::api::PluginCheckRun;

class PluginsDialog : public QDialog {
    Q_OBJECT

public:
    explicit PluginsDialog(QWidget* parent = nullptr);
    ~PluginsDialog() override;

    QTreeWidget* pluginList() const { return m_plugins; }
    QTreeWidget* resultList() const { return m_results; }
    QPushButton* checkButton() const { return m_check; }
    QPushButton* loadButton() const { return m_load; }
    // Loads a plugin library as Load Plugin… does after its file dialog: on success the path is
    // remembered for the next starts and pluginLoaded() is emitted; the error is returned (and
    // listed) otherwise.
    engine::Status loadPlugin(const QString& path);
    // Re-reads the registry (plugins and failures).
    void refresh();

signals:
    void checkFinished(int failed);
    // A library was loaded: its operations, losses and metrics can be offered now.
    void pluginLoaded(const QString& path);

private:
    void startCheck();
    void showResults();
    QString selectedPluginPath() const;

    QTreeWidget* m_plugins = nullptr;
    QTreeWidget* m_results = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_folder = nullptr;
    QPushButton* m_check = nullptr;
    QPushButton* m_load = nullptr;
    QFutureWatcher<std::vector<PluginCheckRun>> m_watcher;
};

}  // namespace kiln::ui
