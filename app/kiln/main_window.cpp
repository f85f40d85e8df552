// SPDX-License-Identifier: Apache-2.0
// Main window: panels, menus, the file workflow, autosave/recovery and language changes.
#include "app/kiln/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDebug>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSet>
#include <QShowEvent>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QUuid>
#include <QVBoxLayout>

#include <algorithm>

#include "app/common/error_text.h"
#include "app/kiln/welcome_page.h"
#include "engine/api/training_setup.h"
#include "ui/common/app_settings.h"
#include "ui/common/log_panel.h"
#include "ui/common/notice_area.h"
#include "ui/common/resources.h"
#include "ui/common/settings_dialog.h"
#include "ui/common/theme_menu.h"
#include "ui/common/themed_icon.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/evaluate/explanation_dialog.h"
#include "ui/export/export_dialog.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/training/sweep_dialog.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/inspector_widget.h"
#include "ui/graph_editor/layer_library.h"
#include "ui/graph_editor/node_preview_panel.h"
#include "ui/graph_editor/palette_widget.h"
#include "ui/graph_editor/summary_widget.h"
#include "ui/import/import_dialog.h"
#include "ui/import/pretrained_dialog.h"
#include "ui/plugins/plugins_dialog.h"
#include "ui/training/preflight_panel.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"

namespace kiln::app {

namespace {
const QString kFileFilter = QStringLiteral("*.kiln");

QString errorText(const engine::Error& e, const QString& path) {
    engine::Error located = e;
    if (located.file.empty()) located.file = path.toStdString();
    return ErrorText::describe(located);
}

}  // namespace

MainWindow::MainWindow(const QString& recoveryDirectory, QWidget* parent)
    : QMainWindow(parent),
      m_recovery(recoveryDirectory.isEmpty() ? ui::RecoveryStore::defaultDirectory() : recoveryDirectory),
      m_sessionKey(QUuid::createUuid().toString(QUuid::WithoutBraces)) {
    ui::initCommonResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/kiln.svg")));
    setDockNestingEnabled(true);
    setDockOptions(AnimatedDocks | AllowNestedDocks | AllowTabbedDocks);

    m_log = ui::MessageLog::instance();
    if (!m_log) m_log = new ui::MessageLog(this);
    ui::MessageLog::installMessageHandler();

    m_document = new ui::EditorDocument(this);
    m_editor = new ui::GraphEditorWidget(m_document);
    m_editor->setObjectName(QStringLiteral("graphEditor"));
    m_notices = new ui::NoticeArea;
    auto* central = new QWidget;
    central->setObjectName(QStringLiteral("canvas"));
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_notices);
    m_stack = new QStackedWidget;
    m_stack->setObjectName(QStringLiteral("workspaceStack"));
    m_stack->addWidget(m_editor);
    centralLayout->addWidget(m_stack, 1);
    setCentralWidget(central);

    createActions();
    createMenus();
    createPanels();
    createWorkspaces();
    statusBar();

    connect(m_document, &ui::EditorDocument::modifiedChanged, this, [this](bool modified) {
        setWindowModified(modified);
        if (!modified) discardOwnRecovery();
    });
    connect(m_document, &ui::EditorDocument::filePathChanged, this, [this] { updateTitle(); });
    connect(m_document, &ui::EditorDocument::changed, this, [this] { m_changedSinceAutosave = true; });
    // Undo/redo of a data or training edit: the panels show the document's sections again.
    connect(m_document, &ui::EditorDocument::sectionsChanged, this, [this] { syncPanels(); });
    connect(m_editor, &ui::GraphEditorWidget::statusMessage, this, [this](const QString& t) { statusBar()->showMessage(t, 6000); });
    connect(m_inspector, &ui::InspectorWidget::statusMessage, this, [this](const QString& t) { statusBar()->showMessage(t, 6000); });
    connect(m_editor, &ui::GraphEditorWidget::currentNodeChanged, m_inspector, &ui::InspectorWidget::setNode);
    // Preview: the current node's output on a sample, with the run selected in Runs (if any).
    auto previewNodeName = [this] {
        const ui::EditorNode* n = m_previewNode ? m_document->node(m_previewNode) : nullptr;
        return n ? QString::fromStdString(n->node.name) : QString();
    };
    connect(m_editor, &ui::GraphEditorWidget::currentNodeChanged, this, [this, previewNodeName](ui::ItemId id) {
        m_previewNode = id;
        m_preview->setNode(previewNodeName());
    });
    connect(m_document, &ui::EditorDocument::changed, this, [this, previewNodeName] {
        m_preview->setProject(m_document->project(), m_document->filePath());
        m_preview->setNode(previewNodeName());  // follows a rename
    });
    connect(m_training, &ui::training::TrainingPanel::selectedRunChanged, this,
            [this](const QString& runDir, const QString& name) { m_preview->setWeights(runDir, name); });
    connect(m_editor, &ui::GraphEditorWidget::analysisUpdated, m_summary, &ui::SummaryWidget::setAnalysis);
    connect(m_palette, &ui::PaletteWidget::opActivated, m_editor, &ui::GraphEditorWidget::addOpAtCenter);
    // Composite layers: the project's and the user's library in the palette; "Save Layer to
    // Library" writes to <AppDataLocation>/layers.
    auto* layerLibrary = new ui::UserLayerLibrary({}, this);
    for (const QString& problem : layerLibrary->problems()) qWarning().noquote() << problem;
    m_palette->setUserLibrary(layerLibrary);
    m_palette->setProjectLayers(m_document->content().layers);
    m_editor->setUserLibrary(layerLibrary);
    connect(m_document, &ui::EditorDocument::layersChanged, this,
            [this] { m_palette->setProjectLayers(m_document->content().layers); });
    connect(m_palette, &ui::PaletteWidget::layerActivated, m_editor, &ui::GraphEditorWidget::addLayerAtCenter);
    // Training takes the open document as it is when Train is pressed.
    m_training->setProjectProvider([this](engine::io::Project& project, QString& path) {
        project = m_document->project();
        path = trainingProjectPath();
        return true;
    });
    connect(m_training, &ui::training::TrainingPanel::trainingConfigChanged, this, [this](const nlohmann::json& training) {
        replaceSection([&training](engine::io::Project& p) { p.training = training; });
    });
    connect(m_training, &ui::training::TrainingPanel::lrMultipliersRequested, this,
            [this](const QHash<QString, double>& multipliers) {
                m_document->setLrMultipliers(multipliers);
                statusBar()->showMessage(tr("Learning-rate multipliers set on %n node(s): earlier layers learn slower.",
                                            nullptr, int(multipliers.size())),
                                         6000);
            });
    connect(m_training, &ui::training::TrainingPanel::runFinished, this, [this](qint64, const QString& runDir, bool ok) {
        if (ok) m_lastRunDir = runDir;
        refreshWorkspacePage(m_workspace);
    });
    connect(m_training, &ui::training::TrainingPanel::notice, this, [this](const QString& text, int severity) {
        reportProblem(severity >= 2 ? ui::Severity::Error : severity == 1 ? ui::Severity::Warning : ui::Severity::Info, text);
    });
    connect(m_datasets, &ui::DatasetBrowserWidget::explainRequested, this, &MainWindow::explainPicture);
    connect(m_datasets, &ui::DatasetBrowserWidget::explainSampleRequested, this, &MainWindow::explainDataSample);
    connect(m_datasets, &ui::DatasetBrowserWidget::dataSectionChanged, this, [this] {
        const nlohmann::json data = m_datasets->dataSection();
        replaceSection([&data](engine::io::Project& p) { p.data = data; });
    });
    connect(m_notices, &ui::NoticeArea::detailsRequested, this, [this](int, const QString& text) { showLogEntry(text); });
    // Background problems reported in the notice category surface above the canvas.
    connect(m_log, &ui::MessageLog::entryAdded, this, [this](const ui::LogEntry& e, int) {
        if (e.category == QLatin1String(ui::lcNotice().categoryName()) && e.severity >= ui::Severity::Warning)
            m_notices->post(e.severity, e.text);
    });

    m_autosaveTimer = new QTimer(this);
    connect(m_autosaveTimer, &QTimer::timeout, this, [this] { autosaveNow(); });

    retranslateUi();
    updateTitle();
    applySettings();

    resize(1400, 900);
    m_defaultLayout = saveState(kLayoutVersion);
    restoreGeometry(ui::AppSettings::windowGeometry());
    // The studio opens on Design; each workspace gets back the layout the user left it in.
    for (int i = 0; i < kWorkspaceCount; ++i)
        m_workspaceStates[size_t(i)] = ui::AppSettings::workspaceState(workspaceId(Workspace(i)));
    QByteArray design = m_workspaceStates[size_t(Workspace::Design)];
    if (design.isEmpty()) design = ui::AppSettings::windowState();  // saved before there were workspaces
    m_layoutRestored = !design.isEmpty() && restoreState(design, kLayoutVersion);
    if (!m_layoutRestored) applyWorkspaceDefaults(Workspace::Design);

    offerRecovery();
}

MainWindow::~MainWindow() {
    // The canvas finishes its pending analysis on the way out and reads the document then: it goes
    // before the document, which (as a plain QObject child created first) would otherwise go first.
    delete m_editor;
    m_editor = nullptr;
}

// ---- panels -------------------------------------------------------------------------------

QDockWidget* MainWindow::addPanel(const QString& id, const QString& title, QWidget* widget, Qt::DockWidgetArea area) {
    if (m_panels.contains(id)) return nullptr;
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(QStringLiteral("dock_") + id);
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    // A panel from outside names itself: its title follows the widget's (retranslated) title.
    if (builtInPanelTitle(id).isEmpty()) connect(widget, &QWidget::windowTitleChanged, dock, &QDockWidget::setWindowTitle);
    m_panels.insert(id, dock);
    m_panelOrder << id;
    QAction* toggle = dock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("view_") + id);
    if (m_viewMenu) m_viewMenu->insertAction(m_panelSeparator, toggle);
    // A panel added after the layout was restored takes its saved place (if any).
    if (!m_defaultLayout.isEmpty()) restoreDockWidget(dock);
    return dock;
}

QDockWidget* MainWindow::panel(const QString& id) const { return m_panels.value(id); }

QStringList MainWindow::panelIds() const { return m_panelOrder; }

void MainWindow::resetLayout() {
    // Every workspace goes back to its default layout; the one shown is laid out now.
    for (QByteArray& state : m_workspaceStates) state.clear();
    ui::AppSettings::clearWorkspaceStates();
    applyWorkspaceDefaults(m_workspace);
    if (m_welcomeShown && m_workspace == Workspace::Design) coverDesignWithWelcome();
}

void MainWindow::applyDefaultPanelSizes() {
    // The canvas gets most of the room: side panels about a sixth of the width each (within
    // sensible bounds), the bottom panels a fifth of the height.
    const int w = width(), h = height();
    resizeDocks({m_panels.value(QStringLiteral("palette")), m_panels.value(QStringLiteral("inspector"))},
                {std::clamp(w * 15 / 100, 200, 280), std::clamp(w * 17 / 100, 240, 320)}, Qt::Horizontal);
    resizeDocks({m_panels.value(QStringLiteral("summary"))}, {std::clamp(h * 20 / 100, 150, 260)}, Qt::Vertical);
    // The inspector over the node's preview, which gets about two fifths of the column.
    resizeDocks({m_panels.value(QStringLiteral("inspector")), m_panels.value(QStringLiteral("preview"))},
                {h * 33 / 100, h * 27 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (m_shownOnce) return;
    m_shownOnce = true;
    // Sizes of the docks saved before the window was ever laid out are not kept: size them now
    // that the window has its size, unless the user's own layout was restored.
    if (!m_layoutRestored) applyDefaultPanelSizes();
}

QString MainWindow::builtInPanelTitle(const QString& id) const {
    if (id == QLatin1String("palette")) return tr("Palette");
    if (id == QLatin1String("inspector")) return tr("Inspector");
    if (id == QLatin1String("preview")) return tr("Preview");
    if (id == QLatin1String("summary")) return tr("Summary");
    if (id == QLatin1String("datasets")) return tr("Dataset browser");
    if (id == QLatin1String("training")) return tr("Training");
    if (id == QLatin1String("log")) return tr("Log");
    return {};  // a panel added from outside: its widget's own window title
}

void MainWindow::createPanels() {
    m_palette = new ui::PaletteWidget;
    m_palette->setObjectName(QStringLiteral("palette"));
    m_inspector = new ui::InspectorWidget(m_document);
    m_inspector->setObjectName(QStringLiteral("inspector"));
    m_summary = new ui::SummaryWidget;
    m_summary->setObjectName(QStringLiteral("summary"));
    m_logPanel = new ui::LogPanel(m_log);

    addPanel(QStringLiteral("palette"), builtInPanelTitle(QStringLiteral("palette")), m_palette, Qt::LeftDockWidgetArea);
    m_datasets = new ui::DatasetBrowserWidget;
    m_datasets->setObjectName(QStringLiteral("datasetBrowser"));
    m_training = new ui::training::TrainingPanel;
    m_training->setObjectName(QStringLiteral("trainingPanel"));
    // The browser needs about 480 px; in a scroll area it does not widen the palette it shares
    // its dock area with (and so narrow the canvas) when it is not the tab on top.
    auto* datasetScroll = new QScrollArea;
    datasetScroll->setObjectName(QStringLiteral("datasetBrowserScroll"));
    datasetScroll->setFrameShape(QFrame::NoFrame);
    datasetScroll->setWidgetResizable(true);
    datasetScroll->setWidget(m_datasets);
    addPanel(QStringLiteral("datasets"), builtInPanelTitle(QStringLiteral("datasets")), datasetScroll, Qt::LeftDockWidgetArea);
    m_hostable.insert(QStringLiteral("datasets"), datasetScroll);
    m_hostable.insert(QStringLiteral("training"), m_training);
    addPanel(QStringLiteral("inspector"), builtInPanelTitle(QStringLiteral("inspector")), m_inspector, Qt::RightDockWidgetArea);
    m_preview = new ui::NodePreviewPanel;
    m_preview->setObjectName(QStringLiteral("nodePreview"));
    // Scrolled, so that its wrapped texts and pictures never make the window taller.
    auto* previewScroll = new QScrollArea;
    previewScroll->setObjectName(QStringLiteral("nodePreviewScroll"));
    previewScroll->setFrameShape(QFrame::NoFrame);
    previewScroll->setWidgetResizable(true);
    previewScroll->setWidget(m_preview);
    addPanel(QStringLiteral("preview"), builtInPanelTitle(QStringLiteral("preview")), previewScroll, Qt::RightDockWidgetArea);
    addPanel(QStringLiteral("summary"), builtInPanelTitle(QStringLiteral("summary")), m_summary, Qt::BottomDockWidgetArea);
    addPanel(QStringLiteral("training"), builtInPanelTitle(QStringLiteral("training")), m_training, Qt::BottomDockWidgetArea);
    addPanel(QStringLiteral("log"), builtInPanelTitle(QStringLiteral("log")), m_logPanel, Qt::BottomDockWidgetArea);
    tabifyDockWidget(m_panels.value(QStringLiteral("palette")), m_panels.value(QStringLiteral("datasets")));
    tabifyDockWidget(m_panels.value(QStringLiteral("summary")), m_panels.value(QStringLiteral("training")));
    tabifyDockWidget(m_panels.value(QStringLiteral("summary")), m_panels.value(QStringLiteral("log")));
    m_panels.value(QStringLiteral("palette"))->raise();
    m_panels.value(QStringLiteral("summary"))->raise();
    applyDefaultPanelSizes();
}

// ---- workspaces ---------------------------------------------------------------------------

QString MainWindow::workspaceId(Workspace w) {
    switch (w) {
    case Workspace::Design: return QStringLiteral("design");
    case Workspace::Data: return QStringLiteral("data");
    case Workspace::Train: return QStringLiteral("train");
    case Workspace::Evaluate: return QStringLiteral("evaluate");
    case Workspace::Deploy: return QStringLiteral("deploy");
    }
    return {};
}

std::optional<MainWindow::Workspace> MainWindow::workspaceFromId(const QString& id) {
    for (int i = 0; i < kWorkspaceCount; ++i)
        if (workspaceId(Workspace(i)) == id) return Workspace(i);
    return std::nullopt;
}

void MainWindow::createWorkspaces() {
    // Pages of the central area, in the order of Workspace (Design's is the canvas).
    auto page = [this](const char* name) {
        auto* w = new QWidget;
        w->setObjectName(QString::fromLatin1(name));
        auto* layout = new QVBoxLayout(w);
        layout->setContentsMargins(0, 0, 0, 0);
        m_stack->addWidget(w);
        return w;
    };
    page("dataWorkspace");
    // Train: the training view, and beside it what to know before pressing Train.
    QWidget* trainPage = page("trainWorkspace");
    auto* trainSplit = new QSplitter(Qt::Horizontal, trainPage);
    auto* trainHost = new QWidget(trainSplit);
    auto* trainHostLayout = new QVBoxLayout(trainHost);
    trainHostLayout->setContentsMargins(0, 0, 0, 0);
    m_preflight = new ui::training::PreflightPanel;
    auto* preflightScroll = new QScrollArea(trainSplit);
    preflightScroll->setObjectName(QStringLiteral("preflightScroll"));
    preflightScroll->setWidgetResizable(true);
    preflightScroll->setFrameShape(QFrame::NoFrame);
    preflightScroll->setWidget(m_preflight);
    preflightScroll->setMinimumWidth(260);
    trainSplit->addWidget(trainHost);
    trainSplit->addWidget(preflightScroll);
    trainSplit->setStretchFactor(0, 4);
    trainSplit->setStretchFactor(1, 1);
    trainSplit->setSizes({1200, 330});
    trainPage->layout()->addWidget(trainSplit);
    m_hostLayouts.insert(int(Workspace::Train), trainHostLayout);
    connect(m_preflight, &ui::training::PreflightPanel::batchSizeRequested, this, [this](qint64 batch) {
        // The batch training uses: the data section's when streamed data sets one there.
        replaceSection([batch](engine::io::Project& p) {
            if (engine::api::streamedDataBatchSize(p.data) > 0) p.data["batch_size"] = batch;
            else p.training["batch_size"] = batch;
        });
        syncPanels();
        refreshWorkspacePage(Workspace::Train);
        statusBar()->showMessage(tr("Batch size set to %1.").arg(batch), 6000);
    });
    connect(m_document, &ui::EditorDocument::changed, this, [this] {
        if (m_workspace == Workspace::Train) refreshWorkspacePage(Workspace::Train);
    });
    QWidget* evaluatePage = page("evaluateWorkspace");
    m_evaluateHint = new QLabel;
    m_evaluateHint->setObjectName(QStringLiteral("evaluateHint"));
    m_evaluateHint->setWordWrap(true);
    m_evaluateHint->setContentsMargins(12, 8, 12, 8);
    m_evaluate = new ui::evaluate::EvaluateView;
    m_evaluate->setObjectName(QStringLiteral("evaluateView"));
    evaluatePage->layout()->addWidget(m_evaluateHint);
    evaluatePage->layout()->addWidget(m_evaluate);
    // The Evaluate view reopens at the tab last used.
    m_evaluate->showTab(QSettings().value(QStringLiteral("evaluate/tab")).toString());
    connect(m_evaluate, &ui::evaluate::EvaluateView::tabChanged, this,
            [](const QString& name) { QSettings().setValue(QStringLiteral("evaluate/tab"), name); });
    m_deployPage = page("deployWorkspace");
    auto* deployTop = new QWidget;
    auto* deployTopLayout = new QHBoxLayout(deployTop);
    deployTopLayout->setContentsMargins(12, 8, 12, 8);
    m_deployHint = new QLabel;
    m_deployHint->setObjectName(QStringLiteral("deployHint"));
    m_deployHint->setWordWrap(true);
    m_deploySave = new QPushButton;
    m_deploySave->setObjectName(QStringLiteral("deploySave"));
    deployTopLayout->addWidget(m_deployHint, 1);
    deployTopLayout->addWidget(m_deploySave);
    deployTop->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    m_evaluateHint->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    m_deployPage->layout()->addWidget(deployTop);
    static_cast<QVBoxLayout*>(m_deployPage->layout())->addStretch(1);  // until the form is there
    connect(m_deploySave, &QPushButton::clicked, this, [this] {
        save();
        refreshWorkspacePage(Workspace::Deploy);
    });
    connect(m_document, &ui::EditorDocument::modifiedChanged, this, [this] {
        if (m_workspace == Workspace::Deploy) refreshWorkspacePage(Workspace::Deploy);
    });

    // The switch: a bar on the left, Ctrl+1 to Ctrl+5, and the View menu.
    m_workspaceBar = new QToolBar;
    m_workspaceBar->setObjectName(QStringLiteral("workspaceBar"));
    m_workspaceBar->setMovable(false);
    m_workspaceBar->setFloatable(false);
    m_workspaceBar->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
    m_workspaceBar->setIconSize(QSize(28, 28));
    m_workspaceBar->toggleViewAction()->setVisible(false);
    addToolBar(Qt::LeftToolBarArea, m_workspaceBar);
    m_workspaceGroup = new QActionGroup(this);
    m_workspaceGroup->setExclusive(true);
    static constexpr const char* kIcons[kWorkspaceCount] = {"design", "data", "train", "evaluate", "deploy"};
    for (int i = 0; i < kWorkspaceCount; ++i) {
        const auto w = Workspace(i);
        auto* a = new QAction(ui::themedIcon(QStringLiteral("workspace-%1").arg(QLatin1String(kIcons[i]))), QString(), this);
        a->setObjectName(QStringLiteral("workspace_") + workspaceId(w));
        a->setCheckable(true);
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        a->setShortcutContext(Qt::WindowShortcut);
        m_workspaceGroup->addAction(a);
        m_workspaceBar->addAction(a);
        m_viewMenu->insertAction(m_workspaceMenuEnd, a);
        addAction(a);
        connect(a, &QAction::triggered, this, [this, w] { setWorkspace(w); });
        m_workspaceActions[size_t(i)] = a;
    }
    m_workspaceActions[size_t(Workspace::Design)]->setChecked(true);

    m_welcome = new WelcomePage;
    m_stack->addWidget(m_welcome);
    connect(m_welcome, &WelcomePage::newProjectRequested, this, [this] { newProject(); });
    connect(m_welcome, &WelcomePage::openRequested, m_openAction, &QAction::trigger);
    connect(m_welcome, &WelcomePage::importRequested, this, [this] { openImportDialog(); });
    connect(m_welcome, &WelcomePage::pretrainedRequested, this, [this] { openPretrainedDialog(); });
    connect(m_welcome, &WelcomePage::projectChosen, this, [this](const QString& path) {
        if (maybeSave()) openProject(path);
    });
    connect(m_welcome, &WelcomePage::exampleChosen, this, [this](const QString& path) { openExample(path); });
    connect(m_welcome, &WelcomePage::tourStepRequested, this, &MainWindow::tourStep);
}

QWidget* MainWindow::workspacePage(Workspace w) const {
    if (w == Workspace::Design && m_welcomeShown) return m_welcome;
    return m_stack->widget(int(w));
}

QByteArray MainWindow::currentLayout() const {
    // While the welcome page hides Design's panels, Design's layout is the one it hid.
    if (m_welcomeShown && m_workspace == Workspace::Design) return m_welcomeLayout;
    return saveState(kLayoutVersion);
}

void MainWindow::coverDesignWithWelcome() {
    m_welcomeLayout = saveState(kLayoutVersion);
    for (QDockWidget* dock : std::as_const(m_panels)) dock->hide();
    m_stack->setCurrentWidget(m_welcome);
}

void MainWindow::showWelcome() {
    m_welcome->refresh(ui::AppSettings::recentProjects(), exampleProjects());
    setWorkspace(Workspace::Design);
    if (!m_welcomeShown) coverDesignWithWelcome();
    m_welcomeShown = true;
}

void MainWindow::tourStep(int step) {
    // Every step works on the Fashion-MNIST MLP example: it is opened first when nothing is open.
    const QString example = QDir(examplesDirectory()).filePath(QStringLiteral("fashion_mlp.kiln"));
    if (step == 0 || m_welcomeShown) {
        if (!QFileInfo::exists(example)) {
            reportProblem(ui::Severity::Warning, tr("The Fashion-MNIST example is not installed."), example);
            return;
        }
        if (!openExample(example)) return;
    }
    static constexpr Workspace kSteps[] = {Workspace::Design, Workspace::Design, Workspace::Data, Workspace::Train,
                                           Workspace::Evaluate};
    setWorkspace(kSteps[std::clamp(step, 0, 4)]);
}

QDialog* MainWindow::showShortcuts() {
    auto* dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("shortcutsDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Keyboard Shortcuts"));
    auto* layout = new QVBoxLayout(dialog);
    auto* table = new QTableWidget(dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({tr("Action"), tr("Shortcut")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionMode(QAbstractItemView::NoSelection);
    QList<QPair<QString, QString>> rows;
    QSet<QString> seen;
    for (QAction* a : findChildren<QAction*>()) {
        if (a->shortcut().isEmpty() || a->text().isEmpty()) continue;
        QString text = a->text();
        text.remove(QRegularExpression(QStringLiteral("\\(&.\\)")));  // "文件(&F)"
        text.remove(QLatin1Char('&'));
        const QString keys = a->shortcut().toString(QKeySequence::NativeText);
        if (seen.contains(text + keys)) continue;
        seen.insert(text + keys);
        rows.append({text, keys});
    }
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.first.localeAwareCompare(y.first) < 0; });
    table->setRowCount(int(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(rows[i].first));
        table->setItem(i, 1, new QTableWidgetItem(rows[i].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(520, 560);
    dialog->show();
    return dialog;
}

void MainWindow::retranslateWorkspaces() {
    static const char* const kNames[kWorkspaceCount] = {
        QT_TR_NOOP("Design"), QT_TR_NOOP("Data"), QT_TR_NOOP("Train"), QT_TR_NOOP("Evaluate"), QT_TR_NOOP("Deploy")};
    static const char* const kTips[kWorkspaceCount] = {
        QT_TR_NOOP("Design the network on the canvas"),
        QT_TR_NOOP("Choose and browse the project's data"),
        QT_TR_NOOP("Train, watch the curves and compare runs"),
        QT_TR_NOOP("Evaluate a trained run: confusion matrix, per-class figures, samples"),
        QT_TR_NOOP("Export the trained model and serve it locally")};
    for (int i = 0; i < kWorkspaceCount; ++i) {
        QAction* a = m_workspaceActions[size_t(i)];
        if (!a) continue;
        a->setText(tr(kNames[i]));
        a->setToolTip(tr("%1 (%2)").arg(tr(kTips[i]), a->shortcut().toString(QKeySequence::NativeText)));
        a->setStatusTip(tr(kTips[i]));
    }
    if (m_workspaceBar) m_workspaceBar->setWindowTitle(tr("Workspaces"));
    if (m_deploySave) m_deploySave->setText(tr("Save Project"));
    refreshWorkspacePage(m_workspace);
}

QString MainWindow::hostedPanel(Workspace w) const {
    if (w == Workspace::Data) return QStringLiteral("datasets");
    if (w == Workspace::Train) return QStringLiteral("training");
    return {};
}

void MainWindow::hostPanel(Workspace w, bool host) {
    const QString id = hostedPanel(w);
    QDockWidget* dock = m_panels.value(id);
    QWidget* content = m_hostable.value(id);
    if (!dock || !content) return;
    if (host) {
        // The panel's content moves to the central page; its empty dock stays hidden meanwhile.
        QLayout* host = m_hostLayouts.value(int(w), nullptr);
        (host ? host : m_stack->widget(int(w))->layout())->addWidget(content);
        content->show();
        dock->hide();
        dock->toggleViewAction()->setEnabled(false);
    } else {
        dock->setWidget(content);
        dock->toggleViewAction()->setEnabled(true);
    }
}

void MainWindow::applyWorkspaceDefaults(Workspace w) {
    // Which built-in panels each workspace shows at first; panels added from outside keep their
    // place. The canvas keeps the editing panels; the other phases give the centre all the room.
    static const QStringList kBuiltIn = {QStringLiteral("palette"), QStringLiteral("inspector"), QStringLiteral("preview"),
                                         QStringLiteral("summary"), QStringLiteral("datasets"), QStringLiteral("training"),
                                         QStringLiteral("log")};
    QStringList shown;
    if (w == Workspace::Design)
        shown = {QStringLiteral("palette"), QStringLiteral("inspector"), QStringLiteral("preview"), QStringLiteral("summary"),
                 QStringLiteral("log")};
    else if (w == Workspace::Deploy) shown = {QStringLiteral("log")};
    restoreState(m_defaultLayout, kLayoutVersion);
    for (QDockWidget* dock : std::as_const(m_panels)) dock->setFloating(false);
    for (const QString& id : kBuiltIn)
        if (QDockWidget* dock = m_panels.value(id)) dock->setVisible(shown.contains(id) && id != hostedPanel(w));
    if (QDockWidget* palette = m_panels.value(QStringLiteral("palette")); palette && palette->isVisible()) palette->raise();
    if (QDockWidget* summary = m_panels.value(QStringLiteral("summary")); summary && summary->isVisible()) summary->raise();
    applyDefaultPanelSizes();
}

void MainWindow::setWorkspace(Workspace w) {
    if (w == m_workspace) {
        m_workspaceActions[size_t(w)]->setChecked(true);
        refreshWorkspacePage(w);
        return;
    }
    m_workspaceStates[size_t(m_workspace)] = currentLayout();
    hostPanel(m_workspace, false);
    m_workspace = w;
    hostPanel(w, true);
    m_stack->setCurrentWidget(workspacePage(w));
    const QByteArray& state = m_workspaceStates[size_t(w)];
    if (state.isEmpty() || !restoreState(state, kLayoutVersion)) applyWorkspaceDefaults(w);
    if (w == Workspace::Design && m_welcomeShown) coverDesignWithWelcome();
    // A restored layout may show the dock whose content is in the centre now.
    if (QDockWidget* dock = m_panels.value(hostedPanel(w))) dock->hide();
    m_workspaceActions[size_t(w)]->setChecked(true);
    refreshWorkspacePage(w);
    emit workspaceChanged(w);
}

QString MainWindow::currentRunDir() const {
    const QString run = m_training ? m_training->runForEvaluation() : QString();
    return run.isEmpty() ? m_lastRunDir : run;
}

void MainWindow::refreshWorkspacePage(Workspace w) {
    if (!m_evaluate || !m_deployHint) return;
    if (w == Workspace::Train) {
        m_preflight->setProject(m_document->project(), m_document->filePath().isEmpty() ? QString() : trainingProjectPath());
        return;
    }
    if (w == Workspace::Evaluate) {
        if (m_evaluate->busy()) return;
        const QString path = m_document->filePath().isEmpty() ? QString() : trainingProjectPath();
        m_evaluate->setProject(m_document->project(), path);
        // The newest run (or the one selected in the run history); a file the user chose stays
        // until the project changes or a newer run finishes.
        const QString run = currentRunDir();
        if (m_evaluateProject != path || run != m_evaluateRun) {
            m_evaluate->setWeights(run);
            m_evaluateRun = run;
            // A run not evaluated here yet: its figures come without a click (off the GUI thread).
            if (!run.isEmpty()) m_evaluate->evaluate();
        }
        m_evaluateProject = path;
        const bool none = m_evaluate->weights().isEmpty();
        m_evaluateHint->setVisible(none);
        m_evaluateHint->setText(tr("No trained run yet: train the project in the Train workspace, or choose a weights file "
                                   "or run folder below."));
        return;
    }
    if (w != Workspace::Deploy) return;
    const QString path = m_document->filePath();
    const bool busy = m_deploy && (m_deploy->isExporting() || m_deploy->isServing());
    if (path.isEmpty()) {
        m_deployHint->setText(tr("Save the project to export it and serve it locally."));
        m_deploySave->setVisible(true);
    } else if (m_document->isModified()) {
        m_deployHint->setText(tr("The export reads the saved project file: save the project to include its unsaved changes."));
        m_deploySave->setVisible(true);
    } else {
        m_deployHint->setText(tr("Export “%1” to ONNX, SavedModel and a model repository, then serve it and send a test request.")
                                  .arg(projectName()));
        m_deploySave->setVisible(false);
    }
    if (busy) return;  // an export or a local server keeps its form until it is done
    auto* layout = static_cast<QVBoxLayout*>(m_deployPage->layout());
    if (m_deploy && m_deployProject != path) {
        delete m_deploy;
        m_deploy = nullptr;
        m_deployRun.clear();
        layout->addStretch(1);
    }
    if (!m_deploy && !path.isEmpty()) {
        m_deploy = new ui::ExportDialog(path);
        m_deploy->setObjectName(QStringLiteral("deployForm"));
        m_deploy->setWindowFlags(Qt::Widget);
        // Embedded, the form has no window to close: Escape (which rejects a dialog) leaves it shown.
        connect(m_deploy, &QDialog::finished, m_deploy, &QWidget::show);
        delete layout->takeAt(layout->count() - 1);  // the stretch: the form takes the room
        layout->addWidget(m_deploy, 1);
        m_deployProject = path;
    }
    if (m_deploy) {
        const QString run = currentRunDir();
        const QString weights = run.isEmpty() ? QString() : QDir(run).filePath(QStringLiteral("weights.safetensors"));
        if (run != m_deployRun && QFile::exists(weights)) {
            m_deploy->setWeightsPath(weights);
            m_deployRun = run;
        }
    }
}

// ---- actions and menus --------------------------------------------------------------------

void MainWindow::createActions() {
    auto make = [this](const char* name, const char* icon, QKeySequence key, auto slot) {
        auto* a = new QAction(this);
        a->setObjectName(QString::fromLatin1(name));
        if (icon) a->setIcon(ui::themedIcon(QLatin1String(icon)));
        if (!key.isEmpty()) a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    m_newAction = make("actionNew", "new", QKeySequence::New, [this] { newProject(); });
    m_openAction = make("actionOpen", "open", QKeySequence::Open, [this] {
        if (!maybeSave()) return;
        const QString start = m_document->filePath().isEmpty() ? QDir::homePath() : QFileInfo(m_document->filePath()).absolutePath();
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Project"), start, tr("Kiln projects (%1)").arg(kFileFilter));
        if (!path.isEmpty()) openProject(path);
    });
    m_saveAction = make("actionSave", "save", QKeySequence::Save, [this] { save(); });
    m_saveAsAction = make("actionSaveAs", "save-as", QKeySequence::SaveAs, [this] { saveAs(); });
    m_settingsAction = make("actionSettings", "settings", QKeySequence::Preferences, [this] { openSettings(); });
    m_settingsAction->setMenuRole(QAction::PreferencesRole);
    m_exportModelAction = make("actionExportModel", "export", QKeySequence(), [this] { openExportDialog(); });
    m_importModelAction = make("actionImportModel", "open", QKeySequence(), [this] { openImportDialog(); });
    m_pretrainedAction = make("actionNewFromPretrained", "new", QKeySequence(), [this] { openPretrainedDialog(); });
    m_sweepAction = make("actionSweep", nullptr, QKeySequence(), [this] { openSweepDialog(); });
    m_quitAction = make("actionQuit", "quit", QKeySequence::Quit, [this] { close(); });
    m_quitAction->setMenuRole(QAction::QuitRole);
    m_clearRecentAction = make("actionClearRecent", "clear", {}, [this] { ui::AppSettings::clearRecentProjects(); });
    m_resetLayoutAction = make("actionResetLayout", nullptr, {}, [this] { resetLayout(); });
    m_showLogAction = make("actionShowLog", "log", {}, [this] { showLogEntry({}); });
    m_aboutAction = make("actionAbout", "about", {}, [this] {
        QMessageBox::about(this, tr("About Kiln"),
                           tr("<h3>Kiln %1</h3><p>Design, train, export and serve neural networks.</p>")
                               .arg(QApplication::applicationVersion()));
    });
    m_aboutAction->setMenuRole(QAction::AboutRole);
    m_welcomeAction = make("actionWelcome", "kiln", {}, [this] { showWelcome(); });
    m_shortcutsAction = make("actionShortcuts", nullptr, {}, [this] { showShortcuts(); });
    m_pluginsAction = make("actionPlugins", nullptr, {}, [this] {
        // A plugin loaded here reaches the palette, canvas, inspector and training form through
        // PluginNotifier.
        ui::PluginsDialog dialog(this);
        dialog.exec();
    });
}

void MainWindow::createMenus() {
    m_fileMenu = menuBar()->addMenu(QString());
    m_fileMenu->setObjectName(QStringLiteral("menuFile"));
    m_fileMenu->addAction(m_newAction);
    m_fileMenu->addAction(m_openAction);
    m_recentMenu = m_fileMenu->addMenu(QString());
    m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    m_examplesMenu = m_fileMenu->addMenu(ui::themedIcon(QStringLiteral("example")), QString());
    m_examplesMenu->setObjectName(QStringLiteral("menuExamples"));
    connect(m_examplesMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildExamplesMenu);
    m_fileMenu->addAction(m_importModelAction);
    m_fileMenu->addAction(m_pretrainedAction);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_saveAction);
    m_fileMenu->addAction(m_saveAsAction);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_editor->action(ui::GraphEditorWidget::StandardAction::ExportPng));
    m_fileMenu->addAction(m_editor->action(ui::GraphEditorWidget::StandardAction::ExportSvg));
    m_fileMenu->addAction(m_exportModelAction);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_settingsAction);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_quitAction);

    m_editMenu = menuBar()->addMenu(QString());
    m_editMenu->setObjectName(QStringLiteral("menuEdit"));
    for (QAction* a : m_editor->editActions()) {
        if (!a) continue;
        m_editMenu->addAction(a);
        addAction(a);  // shortcuts work wherever the focus is in the window
    }

    m_viewMenu = menuBar()->addMenu(QString());
    m_viewMenu->setObjectName(QStringLiteral("menuView"));
    m_workspaceMenuEnd = m_viewMenu->addSeparator();
    m_panelSeparator = m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_showLogAction);
    m_viewMenu->addAction(m_resetLayoutAction);
    m_viewMenu->addMenu(new ui::ThemeMenu(m_viewMenu));

    m_trainMenu = menuBar()->addMenu(QString());
    m_trainMenu->setObjectName(QStringLiteral("menuTrain"));
    m_trainMenu->addAction(m_sweepAction);

    m_helpMenu = menuBar()->addMenu(QString());
    m_helpMenu->setObjectName(QStringLiteral("menuHelp"));
    m_helpMenu->addAction(m_welcomeAction);
    m_helpMenu->addAction(m_shortcutsAction);
    m_helpMenu->addAction(m_pluginsAction);
    m_helpMenu->addSeparator();
    m_helpMenu->addAction(m_aboutAction);

    auto* bar = addToolBar(QString());
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->addAction(m_newAction);
    bar->addAction(m_openAction);
    bar->addAction(m_saveAction);
    bar->addSeparator();
    for (auto [which, icon] : {std::pair{ui::GraphEditorWidget::StandardAction::Undo, "undo"},
                               std::pair{ui::GraphEditorWidget::StandardAction::Redo, "redo"}}) {
        QAction* a = m_editor->action(which);
        if (!a) continue;
        if (a->icon().isNull()) a->setIcon(ui::themedIcon(QLatin1String(icon)));
        bar->addAction(a);
    }
}

void MainWindow::retranslateUi() {
    m_fileMenu->setTitle(tr("&File"));
    m_recentMenu->setTitle(tr("Open &Recent"));
    m_examplesMenu->setTitle(tr("E&xamples"));
    m_editMenu->setTitle(tr("&Edit"));
    m_viewMenu->setTitle(tr("&View"));
    m_helpMenu->setTitle(tr("&Help"));
    m_trainMenu->setTitle(tr("&Train"));
    m_sweepAction->setText(tr("S&weep…"));
    m_sweepAction->setToolTip(tr("Train the project with several settings and compare the results"));
    m_newAction->setText(tr("&New Project"));
    m_newAction->setToolTip(tr("Start a new project"));
    m_openAction->setText(tr("&Open…"));
    m_openAction->setToolTip(tr("Open a project file"));
    m_saveAction->setText(tr("&Save"));
    m_saveAction->setToolTip(tr("Save the project"));
    m_saveAsAction->setText(tr("Save &As…"));
    m_settingsAction->setText(tr("Se&ttings…"));
    m_importModelAction->setText(tr("&Import Model…"));
    m_importModelAction->setToolTip(tr("Import an ONNX or Keras model as an editable project with its weights"));
    m_pretrainedAction->setText(tr("New from &Pretrained…"));
    m_pretrainedAction->setToolTip(tr("Start a classifier from a pretrained backbone: new head, frozen backbone, two training stages"));
    m_exportModelAction->setText(tr("Export &Model…"));
    m_exportModelAction->setToolTip(tr("Export the trained model to ONNX, SavedModel and a model repository, and serve it locally"));
    m_quitAction->setText(tr("&Quit"));
    m_clearRecentAction->setText(tr("&Clear List"));
    m_resetLayoutAction->setText(tr("&Reset Layout"));
    m_showLogAction->setText(tr("Show &Log"));
    m_aboutAction->setText(tr("&About Kiln"));
    m_welcomeAction->setText(tr("&Welcome"));
    m_shortcutsAction->setText(tr("&Keyboard Shortcuts"));
    retranslateWorkspaces();
    m_pluginsAction->setText(tr("&Plugins…"));
    m_pluginsAction->setToolTip(tr("List the loaded plugin operations and check them"));
    if (auto* bar = findChild<QToolBar*>(QStringLiteral("mainToolBar"))) bar->setWindowTitle(tr("Main Toolbar"));
    for (auto it = m_panels.cbegin(); it != m_panels.cend(); ++it) {
        QString title = builtInPanelTitle(it.key());
        if (title.isEmpty() && it.value()->widget() && !it.value()->widget()->windowTitle().isEmpty()) title = it.value()->widget()->windowTitle();
        if (!title.isEmpty()) it.value()->setWindowTitle(title);
    }
    updateTitle();
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange && m_fileMenu) retranslateUi();
    QMainWindow::changeEvent(event);
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = ui::AppSettings::recentProjects();
    for (int i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        QAction* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QFileInfo(path).fileName()));
        a->setToolTip(path);
        a->setStatusTip(path);
        a->setData(path);
        connect(a, &QAction::triggered, this, [this, path] {
            if (maybeSave()) openProject(path);
        });
    }
    if (recent.isEmpty()) m_recentMenu->addAction(tr("No recent projects"))->setEnabled(false);
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(m_clearRecentAction);
    m_clearRecentAction->setEnabled(!recent.isEmpty());
}

void MainWindow::rebuildExamplesMenu() {
    m_examplesMenu->clear();
    for (const QString& path : exampleProjects()) {
        QString name = QFileInfo(path).completeBaseName();
        QString description;
        QFile f(path);
        if (f.open(QIODevice::ReadOnly)) {
            const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
            description = o.value(QStringLiteral("description")).toString();
        }
        QAction* a = m_examplesMenu->addAction(ui::themedIcon(QStringLiteral("example")), name);
        a->setToolTip(description);
        a->setStatusTip(description);
        a->setData(path);
        connect(a, &QAction::triggered, this, [this, path] { openExample(path); });
    }
    if (m_examplesMenu->isEmpty()) m_examplesMenu->addAction(tr("No examples found"))->setEnabled(false);
}

QString MainWindow::examplesDirectory() {
    const QString env = qEnvironmentVariable("KILN_EXAMPLES");
    if (!env.isEmpty()) return env;
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/kiln/examples");
    if (QFileInfo(installed).isDir()) return QDir::cleanPath(installed);
    return QStringLiteral(KILN_EXAMPLES_DIR);
}

QStringList MainWindow::exampleProjects() {
    QStringList out;
    const QDir dir(examplesDirectory());
    for (const QString& f : dir.entryList({kFileFilter}, QDir::Files, QDir::Name)) out << dir.absoluteFilePath(f);
    return out;
}

// ---- file workflow ------------------------------------------------------------------------

QString MainWindow::projectName() const {
    if (!m_cachedName.isEmpty()) return m_cachedName;
    if (!m_document->filePath().isEmpty()) return QFileInfo(m_document->filePath()).completeBaseName();
    return tr("Untitled");
}

void MainWindow::updateTitle() {
    m_cachedName.clear();
    if (m_document) {
        const std::string name = m_document->project().name;
        if (!name.empty() && !m_document->filePath().isEmpty()) m_cachedName = QString::fromStdString(name);
    }
    // "[*]" is where Qt shows the modified mark (setWindowModified).
    setWindowTitle(tr("%1[*] — Kiln").arg(projectName()));
    if (m_document) setWindowModified(m_document->isModified());
}

bool MainWindow::maybeSave() {
    if (!m_document->isModified()) return true;
    QMessageBox box(QMessageBox::Warning, tr("Unsaved Changes"),
                    tr("The project “%1” has unsaved changes. Save them?").arg(projectName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("unsavedChangesBox"));
    box.setInformativeText(tr("If you discard them, the changes since the last save are lost."));
    box.button(QMessageBox::Save)->setText(tr("Save"));
    box.button(QMessageBox::Discard)->setText(tr("Discard"));
    box.button(QMessageBox::Cancel)->setText(tr("Cancel"));
    box.setDefaultButton(QMessageBox::Save);
    box.setEscapeButton(QMessageBox::Cancel);
    switch (box.exec()) {
    case QMessageBox::Save: return save();
    case QMessageBox::Discard: discardOwnRecovery(); return true;
    default: return false;
    }
}

bool MainWindow::newProject() {
    if (!maybeSave()) return false;
    const QString previous = recoveryFile();
    m_document->newDocument();
    m_isExample = false;
    documentReplaced(previous);
    return true;
}

bool MainWindow::showOpenError(const QString& path, const QString& text) {
    QMessageBox box(QMessageBox::Critical, tr("Cannot Open Project"), tr("Kiln could not open “%1”.").arg(QDir::toNativeSeparators(path)),
                    QMessageBox::Ok, this);
    box.setObjectName(QStringLiteral("openErrorBox"));
    box.setInformativeText(text);
    box.button(QMessageBox::Ok)->setText(tr("OK"));
    m_log->append(ui::Severity::Error, text, QStringLiteral("kiln.file"));
    box.exec();
    return false;
}

bool MainWindow::openProject(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    if (!QFileInfo::exists(abs)) {
        ui::AppSettings::removeRecentProject(abs);
        return showOpenError(abs, tr("The file does not exist."));
    }
    // Load into a fresh document first, so that a bad file leaves the open one untouched.
    auto* probe = new ui::EditorDocument(this);
    const engine::Status st = probe->load(abs);
    delete probe;
    if (!st.ok()) return showOpenError(abs, errorText(st.error(), abs));
    const QString previous = recoveryFile();
    const engine::Status again = m_document->load(abs);
    if (!again.ok()) return showOpenError(abs, errorText(again.error(), abs));
    m_isExample = false;
    ui::AppSettings::addRecentProject(abs);
    documentReplaced(previous);
    m_log->append(ui::Severity::Info, tr("Opened %1").arg(QDir::toNativeSeparators(abs)), QStringLiteral("kiln.file"));
    return true;
}

bool MainWindow::openExample(const QString& path) {
    if (!maybeSave()) return false;
    const QString previous = recoveryFile();
    const engine::Status st = m_document->load(path);
    if (!st.ok()) return showOpenError(path, errorText(st.error(), path));
    m_isExample = true;
    documentReplaced(previous);
    return true;
}

void MainWindow::documentReplaced(const QString& previousRecovery) {
    if (!m_writtenRecovery.isEmpty() && m_writtenRecovery == previousRecovery) discardOwnRecovery();
    m_changedSinceAutosave = false;
    m_inspector->setNode(0);
    updateTitle();
    syncPanels();
    // A project is open or started: the canvas takes the welcome page's place.
    if (m_welcomeShown) {
        m_welcomeShown = false;
        if (m_workspace == Workspace::Design) {
            m_stack->setCurrentWidget(m_editor);
            restoreState(m_welcomeLayout, kLayoutVersion);
        }
    }
    // Readable text, starting at the inputs; it follows the window's size until the user moves it.
    m_editor->showStart();
    refreshWorkspacePage(m_workspace);
}

void MainWindow::syncPanels() {
    if (m_syncingPanels) return;
    m_syncingPanels = true;
    const engine::io::Project project = m_document->project();
    // A shipped example has no run history of its own until it is trained (see trainingProjectPath).
    m_training->setProject(project, m_isExample ? QString() : m_document->filePath(), m_document->filePath());
    m_datasets->setProjectPath(m_document->filePath());
    m_preview->setProject(project, m_document->filePath());
    if (!project.data.empty()) m_datasets->setDataSection(project.data);
    m_syncingPanels = false;
}

ui::ImportDialog* MainWindow::openImportDialog() {
    auto* dialog = new ui::ImportDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ui::ImportDialog::openRequested, this, [this](const QString& path) {
        if (!maybeSave()) return;
        if (openProject(path))
            m_log->append(ui::Severity::Info, tr("Imported model opened: %1").arg(QDir::toNativeSeparators(path)), QStringLiteral("kiln.import"));
    });
    dialog->open();
    return dialog;
}

ui::PretrainedDialog* MainWindow::openPretrainedDialog() {
    auto* dialog = new ui::PretrainedDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ui::PretrainedDialog::projectCreated, this, [this](const QString& path) {
        if (!maybeSave()) return;
        if (openProject(path))
            m_log->append(ui::Severity::Info, tr("Project from a pretrained backbone opened: %1").arg(QDir::toNativeSeparators(path)),
                          QStringLiteral("kiln.pretrained"));
    });
    dialog->open();
    return dialog;
}

void MainWindow::openExportDialog() {
    // The exporter reads the project from its file: unsaved edits are saved first (asked).
    if (m_document->filePath().isEmpty()) {
        if (!saveAs()) return;
    } else if (m_document->isModified() && !m_isExample && !maybeSave()) {
        return;
    }
    setWorkspace(Workspace::Deploy);
}

QString MainWindow::trainingProjectPath() const {
    if (!m_isExample) return m_document->filePath();
    // Examples may sit in a read-only folder: their runs are kept in the user's data folder.
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/examples");
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + QFileInfo(m_document->filePath()).fileName();
}

QDialog* MainWindow::pictureExplanation() const { return m_pictureExplanation.data(); }

void MainWindow::explainPicture(const QString& picturePath) {
    engine::api::EvaluationOptions options;
    options.imageFiles = {picturePath.toStdString()};
    explainSample(options, 0, QDir::toNativeSeparators(picturePath));
}

void MainWindow::explainDataSample(const QString& dataPath, qint64 sample) {
    engine::api::EvaluationOptions options;
    options.split = dataPath.toStdString();
    explainSample(options, sample, tr("sample %1 of %2").arg(sample).arg(QDir::toNativeSeparators(dataPath)));
}

void MainWindow::explainSample(engine::api::EvaluationOptions options, qint64 sample, const QString& source) {
    const QString run = currentRunDir();
    if (run.isEmpty()) {
        QMessageBox box(QMessageBox::Information, tr("Explain with run"),
                        tr("No trained run yet: train the project in the Train workspace, then explain its pictures."),
                        QMessageBox::Ok, this);
        box.setObjectName(QStringLiteral("noRunToExplainBox"));
        box.exec();
        return;
    }
    if (m_pictureExplanation) m_pictureExplanation->close();
    options.weights = run.toStdString();
    const QString projectPath = m_document->filePath().isEmpty() ? QString() : trainingProjectPath();
    // The class names come with the sample, read the project's way.
    auto* dialog = new ui::evaluate::ExplanationDialog(m_document->project(), projectPath, options, sample, source, {}, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setToolTip(tr("Explained with the run in %1").arg(QDir::toNativeSeparators(run)));
    m_pictureExplanation = dialog;
    dialog->show();
}

void MainWindow::openSweepDialog() {
    auto* dialog = new ui::training::SweepDialog(m_document->project(), trainingProjectPath(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ui::training::SweepDialog::applyBestRequested, this, &MainWindow::applySweepResult);
    dialog->show();
}

void MainWindow::applySweepResult(const engine::io::Project& applied, const nlohmann::json& params) {
    // Node attributes and the training section change together: one step of Edit > Undo.
    m_document->undoStack()->beginMacro(tr("Apply the sweep's best parameters"));
    for (const auto& [path, value] : params.items()) {
        if (path.rfind("nodes.", 0) != 0) continue;
        const size_t dot = path.find('.', 6);
        if (dot == std::string::npos) continue;
        const std::string node = path.substr(6, dot - 6), attr = path.substr(dot + 1);
        const engine::Node* n = applied.graph.node(node);
        const ui::ItemId id = m_document->idOf(node);
        if (!n || !id || !n->attrs.has(attr)) continue;
        if (auto set = m_document->setAttribute(id, attr, n->attrs.values().at(attr)); !set.ok())
            reportProblem(ui::Severity::Warning, app::ErrorText::describe(set.error()));
    }
    if (applied.training != m_document->project().training) {
        const nlohmann::json data = m_document->project().data;
        m_document->setSections(data, applied.training);
        m_changedSinceAutosave = true;
    }
    m_document->undoStack()->endMacro();
    syncPanels();
}

void MainWindow::replaceSection(const std::function<void(engine::io::Project&)>& edit) {
    if (m_syncingPanels) return;
    // One undoable step in the document (Edit > Undo puts the panels back too); the panel that
    // made the edit is not reloaded from it.
    m_syncingPanels = true;
    engine::io::Project project = m_document->project();
    const nlohmann::json data = project.data, training = project.training;
    edit(project);
    if (project.data != data || project.training != training) {
        m_document->setSections(project.data, project.training);
        m_changedSinceAutosave = true;
    }
    m_syncingPanels = false;
}

QString MainWindow::askSavePath() {
    QString start = m_document->filePath();
    if (start.isEmpty() || m_isExample)
        start = QDir::homePath() + QLatin1Char('/') + (start.isEmpty() ? tr("untitled") + QStringLiteral(".kiln") : QFileInfo(start).fileName());
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), start, tr("Kiln projects (%1)").arg(kFileFilter));
    if (!path.isEmpty() && QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".kiln");
    return path;
}

bool MainWindow::save() {
    if (m_document->filePath().isEmpty() || m_isExample) return saveAs();
    return writeTo(m_document->filePath());
}

bool MainWindow::saveAs(const QString& path) {
    const QString target = path.isEmpty() ? askSavePath() : path;
    if (target.isEmpty()) return false;
    return writeTo(target);
}

bool MainWindow::writeTo(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    const QString previous = recoveryFile();
    const bool moved = m_isExample || abs != m_document->filePath();
    const engine::Status st = m_document->save(abs);
    if (!st.ok()) {
        const QString text = errorText(st.error(), abs);
        m_log->append(ui::Severity::Error, text, QStringLiteral("kiln.file"));
        QMessageBox box(QMessageBox::Critical, tr("Cannot Save Project"), tr("Kiln could not save “%1”.").arg(QDir::toNativeSeparators(abs)),
                        QMessageBox::Ok, this);
        box.setObjectName(QStringLiteral("saveErrorBox"));
        box.setInformativeText(text);
        box.button(QMessageBox::Ok)->setText(tr("OK"));
        box.exec();
        return false;
    }
    m_isExample = false;
    // The run history lives next to the project file: follow it to its new place.
    if (moved) {
        m_syncingPanels = true;
        m_training->setProject(m_document->project(), abs);
        m_syncingPanels = false;
    }
    // The document is clean now: no recovery file for the old or the new name.
    if (previous != recoveryFile()) ui::RecoveryStore::discard(previous);
    discardOwnRecovery();
    m_changedSinceAutosave = false;
    ui::AppSettings::addRecentProject(abs);
    updateTitle();
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(abs)), 4000);
    return true;
}

// ---- autosave and recovery ----------------------------------------------------------------

QString MainWindow::recoveryFile() const { return m_recovery.fileFor(m_document->filePath(), m_sessionKey); }

int MainWindow::autosaveIntervalMs() const { return m_autosaveTimer->isActive() ? m_autosaveTimer->interval() : 0; }

bool MainWindow::autosaveNow() {
    if (!m_document->isModified()) return false;
    const QString target = recoveryFile();
    if (!m_changedSinceAutosave && target == m_writtenRecovery && QFileInfo::exists(target)) return true;
    QString error;
    if (!m_recovery.write(m_document->filePath(), m_sessionKey, projectName(), m_document->toJson(), &error)) {
        reportProblem(ui::Severity::Warning, tr("Autosave failed: unsaved changes are not protected against a crash."), error);
        return false;
    }
    if (!m_writtenRecovery.isEmpty() && m_writtenRecovery != target) ui::RecoveryStore::discard(m_writtenRecovery);
    m_writtenRecovery = target;
    m_changedSinceAutosave = false;
    return true;
}

void MainWindow::discardOwnRecovery() {
    if (m_writtenRecovery.isEmpty()) return;
    ui::RecoveryStore::discard(m_writtenRecovery);
    m_writtenRecovery.clear();
}

int MainWindow::offerRecovery() {
    const QList<ui::RecoveryEntry> orphans = m_recovery.orphans();
    for (const ui::RecoveryEntry& e : orphans) {
        const QString what = e.projectPath.isEmpty() ? tr("an untitled project") : QStringLiteral("“%1”").arg(QDir::toNativeSeparators(e.projectPath));
        const QString when = QLocale().toString(e.savedAt.toLocalTime(), QLocale::ShortFormat);
        const QString text = tr("Kiln found unsaved changes to %1 from %2 that were not saved before Kiln stopped.").arg(what, when);
        const QString file = e.file;
        m_log->append(ui::Severity::Warning, text + QStringLiteral(" (") + QDir::toNativeSeparators(file) + QLatin1Char(')'),
                      QStringLiteral("kiln.recovery"));
        m_notices->post(ui::Severity::Warning, text,
                        {{tr("Restore"), [this, file] { restoreRecovery(file); }, QStringLiteral("restoreButton")},
                         {tr("Discard"), [file] { ui::RecoveryStore::discard(file); }, QStringLiteral("discardButton")}});
    }
    return orphans.size();
}

bool MainWindow::restoreRecovery(const QString& file) {
    ui::RecoveryEntry entry;
    QByteArray json;
    QString error;
    if (!ui::RecoveryStore::read(file, &entry, &json, &error)) {
        reportProblem(ui::Severity::Error, tr("The recovery file could not be read."), QDir::toNativeSeparators(file) + QStringLiteral(": ") + error);
        return false;
    }
    if (!maybeSave()) return false;
    const QString previous = recoveryFile();
    const engine::Status st = m_document->fromJson(json, entry.projectPath);
    if (!st.ok()) {
        reportProblem(ui::Severity::Error, tr("The recovered project could not be loaded."), errorText(st.error(), file));
        return false;
    }
    m_isExample = false;
    documentReplaced(previous);
    m_changedSinceAutosave = true;
    // Take the recovered content over: our own recovery file now protects it.
    if (autosaveNow() && file != m_writtenRecovery) ui::RecoveryStore::discard(file);
    m_log->append(ui::Severity::Info, tr("Restored unsaved changes of %1").arg(projectName()), QStringLiteral("kiln.recovery"));
    return true;
}

// ---- notices, log, settings ---------------------------------------------------------------

int MainWindow::reportProblem(ui::Severity severity, const QString& summary, const QString& details) {
    m_log->append(severity, details.isEmpty() ? summary : summary + QStringLiteral(" — ") + details, QStringLiteral("kiln.app"));
    return m_notices->post(severity, summary);
}

void MainWindow::showLogEntry(const QString& text) {
    QDockWidget* dock = panel(QStringLiteral("log"));
    dock->show();
    dock->raise();
    if (text.isEmpty()) return;
    if (!m_logPanel->revealEntry(text)) {
        m_logPanel->setMinimumSeverity(ui::Severity::Debug);
        m_logPanel->revealEntry(text);
    }
}

void MainWindow::openSettings() {
    ui::SettingsDialog dialog(this);
    connect(&dialog, &ui::SettingsDialog::settingsApplied, this, &MainWindow::applySettings);
    dialog.exec();
}

void MainWindow::applySettings() {
    const int seconds = ui::AppSettings::autosaveSeconds();
    if (seconds > 0) m_autosaveTimer->start(seconds * 1000);
    else m_autosaveTimer->stop();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    discardOwnRecovery();
    ui::AppSettings::setWindowGeometry(saveGeometry());
    m_workspaceStates[size_t(m_workspace)] = currentLayout();
    for (int i = 0; i < kWorkspaceCount; ++i)
        if (!m_workspaceStates[size_t(i)].isEmpty())
            ui::AppSettings::setWorkspaceState(workspaceId(Workspace(i)), m_workspaceStates[size_t(i)]);
    ui::AppSettings::setWindowState(m_workspaceStates[size_t(Workspace::Design)].isEmpty()
                                        ? saveState(kLayoutVersion) : m_workspaceStates[size_t(Workspace::Design)]);
    event->accept();
}

}  // namespace kiln::app
