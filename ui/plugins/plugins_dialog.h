// SPDX-License-Identifier: Apache-2.0
// Help > Plugins…: the loaded plugin libraries (path, ABI version, operations), the ones that
// failed to load and why, and "Check plugin", which runs the plugin checker (shapes, forward
// against the plugin's reference, gradients against finite differences) on the selected
// plugin's operations off the GUI thread.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include <vector>

#include "engine/ops/plugin_check.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace kiln::ui {

struct PluginCheckRun {
    std::string op;
    std::vector<engine::ops::PluginCheck> checks;
};

class PluginsDialog : public QDialog {
    Q_OBJECT

public:
    explicit PluginsDialog(QWidget* parent = nullptr);
    ~PluginsDialog() override;

    QTreeWidget* pluginList() const { return m_plugins; }
    QTreeWidget* resultList() const { return m_results; }
    QPushButton* checkButton() const { return m_check; }
    // Re-reads the registry (plugins and failures).
    void refresh();

signals:
    void checkFinished(int failed);

private:
    void startCheck();
    void showResults();
    QString selectedPluginPath() const;

    QTreeWidget* m_plugins = nullptr;
    QTreeWidget* m_results = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_folder = nullptr;
    QPushButton* m_check = nullptr;
    QFutureWatcher<std::vector<PluginCheckRun>> m_watcher;
};

}  // namespace kiln::ui
