// SPDX-License-Identifier: Apache-2.0
// The plugin list and checker dialog.
#include "ui/plugins/plugins_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QMessageBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "app/common/plugin_check_text.h"
#include "engine/api/plugins.h"
#include "ui/common/app_settings.h"
#include "ui/common/theme.h"

namespace kiln::ui {
namespace {

constexpr int kPathRole = Qt::UserRole + 1;

QString kindText(engine::api::PluginCheckKind k) {
    using K = engine::api::PluginCheckKind;
    switch (k) {
    case K::Shape: return PluginsDialog::tr("Shape");
    case K::Forward: return PluginsDialog::tr("Forward vs reference");
    case K::Gradient: return PluginsDialog::tr("Gradient vs finite differences");
    case K::Value: return PluginsDialog::tr("Loss values");
    }
    return {};
}

QString outcomeText(engine::api::PluginCheckOutcome o) {
    using O = engine::api::PluginCheckOutcome;
    switch (o) {
    case O::Passed: return PluginsDialog::tr("passed");
    case O::Failed: return PluginsDialog::tr("FAILED");
    case O::Skipped: return PluginsDialog::tr("skipped");
    }
    return {};
}

}  // namespace

PluginsDialog::PluginsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Plugins"));
    setObjectName(QStringLiteral("pluginsDialog"));
    resize(820, 560);
    auto* layout = new QVBoxLayout(this);
    const QString folder = QString::fromStdString(engine::api::userPluginFolder());
    m_folder = new QLabel(tr("Plugins load at start from %1, from the folders and files in KILN_PLUGIN_PATH, and from "
                             "--plugin options of the command-line programs.")
                              .arg(folder.isEmpty() ? tr("the user's plugin folder") : folder),
                          this);
    m_folder->setWordWrap(true);
    m_folder->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_folder);

    m_plugins = new QTreeWidget(this);
    m_plugins->setObjectName(QStringLiteral("pluginList"));
    m_plugins->setHeaderLabels({tr("Plugin or operation"), tr("ABI version"), tr("Path or description")});
    m_plugins->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_plugins->setSelectionMode(QAbstractItemView::SingleSelection);
    layout->addWidget(m_plugins, 2);

    auto* row = new QHBoxLayout;
    m_check = new QPushButton(tr("Check plugin"), this);
    m_check->setObjectName(QStringLiteral("checkPlugin"));
    m_check->setToolTip(tr(
        "Runs the selected plugin's check cases: shapes, forward against its reference, and "
        "gradients against finite differences; its losses' values and gradients on cases made "
        "from their defaults"));
    row->addWidget(m_check);
    m_load = new QPushButton(tr("Load Plugin…"), this);
    m_load->setObjectName(QStringLiteral("loadPlugin"));
    m_load->setToolTip(tr("Loads a plugin library now and at every start of the studio"));
    row->addWidget(m_load);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("checkSummary"));
    m_summary->setWordWrap(true);
    row->addWidget(m_summary, 1);
    layout->addLayout(row);

    m_results = new QTreeWidget(this);
    m_results->setObjectName(QStringLiteral("checkResults"));
    m_results->setHeaderLabels({tr("Operation or loss"), tr("Case"), tr("Check"), tr("Result"), tr("Detail")});
    m_results->setRootIsDecorated(false);
    // Names and case labels at their full width; the detail takes what is left.
    for (int c = 0; c < 4; ++c) m_results->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    layout->addWidget(m_results, 3);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);

    connect(m_check, &QPushButton::clicked, this, &PluginsDialog::startCheck);
    connect(m_load, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Load Plugin"), QString(),
                                                          tr("Plugin libraries (*.so);;All files (*)"));
        if (path.isEmpty()) return;
        if (auto st = loadPlugin(path); !st.ok())
            QMessageBox::warning(this, tr("Load Plugin"), QString::fromStdString(st.error().message));
    });
    connect(m_plugins, &QTreeWidget::itemSelectionChanged, this,
            [this] { m_check->setEnabled(!selectedPluginPath().isEmpty() && !m_watcher.isRunning()); });
    connect(&m_watcher, &QFutureWatcher<std::vector<PluginCheckRun>>::finished, this, &PluginsDialog::showResults);
    refresh();
}

PluginsDialog::~PluginsDialog() {
    m_watcher.waitForFinished();
}

void PluginsDialog::refresh() {
    m_plugins->clear();
    const auto plugins = engine::api::loadedPlugins();
    auto doc = [](const std::optional<engine::api::PluginEntry>& e) {
        return e ? QString::fromStdString(e->doc) : QString();
    };
    for (const auto& p : plugins) {
        const QString path = QString::fromStdString(p.path);
        auto* item = new QTreeWidgetItem(m_plugins, {QString::fromStdString(p.name + " " + p.version).trimmed(),
                                                     QString::fromStdString(p.abiVersion), path});
        item->setData(0, kPathRole, path);
        item->setToolTip(2, path);
        for (const auto& name : p.ops) {
            auto* child = new QTreeWidgetItem(item, {QString::fromStdString(name), QString(),
                                                     doc(engine::api::findPluginOp(name))});
            child->setData(0, kPathRole, path);
        }
        // Losses and metrics, as a training config names them.
        for (const auto& name : p.losses) {
            auto* child = new QTreeWidgetItem(item, {QStringLiteral("plugin:") + QString::fromStdString(name), QString(),
                                                     tr("Loss: %1").arg(doc(engine::api::findPluginLoss(name)))});
            child->setData(0, kPathRole, path);
        }
        for (const auto& name : p.metrics) {
            auto* child = new QTreeWidgetItem(item, {QStringLiteral("plugin:") + QString::fromStdString(name), QString(),
                                                     tr("Metric: %1").arg(doc(engine::api::findPluginMetric(name)))});
            child->setData(0, kPathRole, path);
        }
    }
    for (const auto& e : engine::api::pluginLoadFailures()) {
        auto* item = new QTreeWidgetItem(m_plugins, {tr("Not loaded"), QString(), QString::fromStdString(e.message)});
        item->setForeground(0, Theme::instance().colors().errorText);
        item->setToolTip(2, QString::fromStdString(e.message));
    }
    if (m_plugins->topLevelItemCount() == 0)
        new QTreeWidgetItem(m_plugins, {tr("No plugins are loaded"), QString(), QString()});
    m_plugins->expandAll();
    if (!plugins.empty()) m_plugins->setCurrentItem(m_plugins->topLevelItem(0));
    m_check->setEnabled(!selectedPluginPath().isEmpty() && !m_watcher.isRunning());
}

engine::Status PluginsDialog::loadPlugin(const QString& path) {
    auto info = engine::api::loadPlugin(path.toStdString());
    refresh();
    if (!info.ok()) return info.error();
    AppSettings::addPluginPath(QString::fromStdString(info->path));
    emit pluginLoaded(QString::fromStdString(info->path));
    return {};
}

QString PluginsDialog::selectedPluginPath() const {
    const auto items = m_plugins->selectedItems();
    return items.isEmpty() ? QString() : items.first()->data(0, kPathRole).toString();
}

void PluginsDialog::startCheck() {
    const std::string path = selectedPluginPath().toStdString();
    if (path.empty() || m_watcher.isRunning()) return;
    int count = 0;
    for (const auto& op : engine::api::pluginOps()) count += op.pluginPath == path;
    for (const auto& loss : engine::api::pluginLosses()) count += loss.pluginPath == path;
    m_check->setEnabled(false);
    m_results->clear();
    m_summary->setText(tr("Checking %n operation(s) and loss(es)…", nullptr, count));
    m_watcher.setFuture(QtConcurrent::run([path] { return engine::api::checkPlugin(path, 2); }));
}

void PluginsDialog::showResults() {
    const auto runs = m_watcher.result();
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& run : runs) {
        if (run.checks.empty())
            new QTreeWidgetItem(m_results, {QString::fromStdString(run.op), QString(), QString(),
                                            outcomeText(engine::api::PluginCheckOutcome::Skipped),
                                            tr("The plugin declares no check cases for this operation")});
        for (const auto& c : run.checks) {
            using O = engine::api::PluginCheckOutcome;
            (c.outcome == O::Passed ? passed : c.outcome == O::Failed ? failed
                                                                      : skipped)++;
            // The words come from the check's finding, in the user's language.
            const QString detail = app::PluginCheckText::detail(c);
            auto* item = new QTreeWidgetItem(m_results, {QString::fromStdString(run.op), app::PluginCheckText::caseText(c),
                                                         kindText(c.kind), outcomeText(c.outcome), detail});
            if (c.outcome == O::Failed) item->setForeground(3, Theme::instance().colors().errorText);
            item->setToolTip(4, detail);
        }
    }
    for (int c = 0; c < 4; ++c) m_results->resizeColumnToContents(c);
    m_summary->setText(tr("%1 passed, %2 failed, %3 skipped").arg(passed).arg(failed).arg(skipped));
    m_check->setEnabled(!selectedPluginPath().isEmpty());
    emit checkFinished(failed);
}

}  // namespace kiln::ui
