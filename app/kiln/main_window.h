// SPDX-License-Identifier: Apache-2.0
// The studio's main window: the graph canvas in the middle, dockable panels around it, the file
// workflow (new/open/save, recent projects, examples), autosave with crash recovery, settings,
// notices and the log.
#pragma once

#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QStringList>

#include <array>
#include <functional>
#include <optional>

#include "engine/api/evaluation.h"
#include "engine/io/project.h"

#include "ui/common/message_log.h"
#include "ui/common/recovery_store.h"

class QAction;
class QDockWidget;
class QLabel;
class QActionGroup;
class QDialog;
class QLayout;
class QMenu;
class QPushButton;
class QStackedWidget;
class QTimer;
class QToolBar;

namespace kiln::ui {
class ImportDialog;
class PretrainedDialog;
class EditorDocument;
class GraphEditorWidget;
class InspectorWidget;
class NodePreviewPanel;
class LogPanel;
class NoticeArea;
class PaletteWidget;
class SummaryWidget;
class DatasetBrowserWidget;
class ExportDialog;
namespace training {
class PreflightPanel;
class TrainingPanel;
}
namespace evaluate {
class EvaluateView;
}
}  // namespace kiln::ui

namespace kiln::app {

class WelcomePage;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    // Version of the saved dock layout; a layout saved by another version is ignored.
    static constexpr int kLayoutVersion = 1;

    // `recoveryDirectory` empty: RecoveryStore::defaultDirectory(). The constructor offers the
    // recovery files left by a crashed session as notices (Restore / Discard).
    explicit MainWindow(const QString& recoveryDirectory = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // ---- panels -------------------------------------------------------------------------------
    // Adds a dockable panel (object name "dock_<id>", so the layout is saved and restored). The
    // title follows `widget->windowTitle()` on language changes when the widget sets one. The
    // panel gets a View-menu entry. Returns the dock.
    QDockWidget* addPanel(const QString& id, const QString& title, QWidget* widget,
                          Qt::DockWidgetArea area = Qt::RightDockWidgetArea);
    QDockWidget* panel(const QString& id) const;
    QStringList panelIds() const;
    void resetLayout();

    // ---- workspaces ---------------------------------------------------------------------------
    // The phases of the job. Each owns the central area and its own dock layout (saved per user):
    // Design: the canvas; Data: the dataset browser; Train: the training view (charts first);
    // Evaluate: the evaluation of a run; Deploy: export and local serving. The dataset browser and
    // the training view live in their docks in the other workspaces.
    enum class Workspace { Design, Data, Train, Evaluate, Deploy };
    static constexpr int kWorkspaceCount = 5;
    static QString workspaceId(Workspace w);  // "design", "data", "train", "evaluate", "deploy"
    static std::optional<Workspace> workspaceFromId(const QString& id);
    Workspace workspace() const { return m_workspace; }
    void setWorkspace(Workspace w);
    QAction* workspaceAction(Workspace w) const { return m_workspaceActions[size_t(w)]; }
    ui::evaluate::EvaluateView* evaluateView() const { return m_evaluate; }
    // A picture explained with the run selected in the run history, else the newest one (the
    // dataset browser's "Explain with run…"): the explanation dialog, or a message when the
    // project has no trained run. The dialog opened last (null when closed):
    void explainPicture(const QString& picturePath);
    // Sample `sample` of a CSV index or TFRecord file in the project's format (the dataset
    // browser's overview), explained with the current run as explainPicture does.
    void explainDataSample(const QString& dataPath, qint64 sample);
    QDialog* pictureExplanation() const;
    // The export form of the Deploy workspace (null until the project has a file).
    ui::ExportDialog* deployView() const { return m_deploy; }
    ui::training::PreflightPanel* preflightPanel() const { return m_preflight; }
    // The welcome page (recent projects, examples, the five-step tour) in Design's place until a
    // project is opened or started; Help > Welcome shows it again.
    void showWelcome();
    bool welcomeShown() const { return m_welcomeShown; }
    WelcomePage* welcomePage() const { return m_welcome; }
    // Help > Keyboard Shortcuts: every action of the window that has one.
    QDialog* showShortcuts();

    // ---- document -----------------------------------------------------------------------------
    ui::EditorDocument* document() const { return m_document; }
    ui::GraphEditorWidget* editor() const { return m_editor; }
    ui::PaletteWidget* palette() const { return m_palette; }
    ui::InspectorWidget* inspector() const { return m_inspector; }
    QAction* pluginsAction() const { return m_pluginsAction; }
    ui::NoticeArea* notices() const { return m_notices; }
    ui::LogPanel* logPanel() const { return m_logPanel; }
    ui::DatasetBrowserWidget* datasetBrowser() const { return m_datasets; }
    ui::training::TrainingPanel* trainingPanel() const { return m_training; }
    ui::MessageLog* messageLog() const { return m_log; }
    QMenu* fileMenu() const { return m_fileMenu; }
    QMenu* viewMenu() const { return m_viewMenu; }

    // Each asks about unsaved changes first (Save / Discard / Cancel) and returns false when the
    // user cancelled or the action failed (an error dialog names the file and line).
    bool newProject();
    bool openProject(const QString& path);
    bool openExample(const QString& path);
    // Save writes to the current file (or asks like Save As for untitled documents and examples).
    bool save();
    bool saveAs(const QString& path = {});  // empty: a file dialog
    // Save / Discard / Cancel when the document has unsaved changes; true to go on.
    bool maybeSave();

    QString projectName() const;  // the project's name, or "Untitled"

    // ---- autosave and recovery ----------------------------------------------------------------
    bool autosaveNow();  // writes the recovery file when the document has unsaved changes
    QString recoveryFile() const;  // where this window's document is autosaved
    int autosaveIntervalMs() const;
    // Posts one notice per orphaned recovery file; returns how many.
    int offerRecovery();
    bool restoreRecovery(const QString& file);

    // ---- notices and log ----------------------------------------------------------------------
    // A non-modal notice above the canvas plus a log entry (`details` goes to the log too).
    int reportProblem(ui::Severity severity, const QString& summary, const QString& details = {});
    void showLogEntry(const QString& text);

    static QString examplesDirectory();
    static QStringList exampleProjects();

public slots:
    void openSettings();
    void openExportDialog();
    // File > Import Model: the import dialog (non-modal to the program, closed by itself); its
    // Open Project button opens the imported project here.
    ui::ImportDialog* openImportDialog();
    // File > New from Pretrained: the backbone catalogue; the project it makes opens here.
    ui::PretrainedDialog* openPretrainedDialog();
    void applySettings();

signals:
    void workspaceChanged(kiln::app::MainWindow::Workspace workspace);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Opens the explanation dialog for sample `sample` of `options`' data with the current run
    // (its weights are filled in here); without a trained run, a message says to train first.
    void explainSample(engine::api::EvaluationOptions options, qint64 sample, const QString& source);
    void applyDefaultPanelSizes();
    void createWorkspaces();
    void retranslateWorkspaces();
    QString hostedPanel(Workspace w) const;  // the panel shown in the central area ("" for none)
    void hostPanel(Workspace w, bool host);
    void applyWorkspaceDefaults(Workspace w);
    void refreshWorkspacePage(Workspace w);  // Evaluate and Deploy follow the project and its runs
    QString currentRunDir() const;
    void createActions();
    void createMenus();
    void createPanels();
    QString builtInPanelTitle(const QString& id) const;
    void retranslateUi();
    void updateTitle();
    void rebuildRecentMenu();
    void rebuildExamplesMenu();
    void documentReplaced(const QString& previousRecovery);
    void syncPanels();  // the dataset browser and training view follow the open document
    QString trainingProjectPath() const;
    // Train > Sweep…: the sweep dialog on the open document; its "Apply best" is one undo step.
    void openSweepDialog();
    void applySweepResult(const engine::io::Project& applied, const nlohmann::json& params);
    void replaceSection(const std::function<void(engine::io::Project&)>& edit);
    void discardOwnRecovery();
    bool writeTo(const QString& path);
    bool showOpenError(const QString& path, const QString& text);
    QString askSavePath();

    ui::MessageLog* m_log = nullptr;
    ui::EditorDocument* m_document = nullptr;
    ui::GraphEditorWidget* m_editor = nullptr;
    ui::NoticeArea* m_notices = nullptr;
    ui::LogPanel* m_logPanel = nullptr;
    ui::PaletteWidget* m_palette = nullptr;
    ui::InspectorWidget* m_inspector = nullptr;
    ui::NodePreviewPanel* m_preview = nullptr;
    quint64 m_previewNode = 0;  // the editor's current node, shown in Preview
    ui::SummaryWidget* m_summary = nullptr;
    ui::DatasetBrowserWidget* m_datasets = nullptr;
    ui::training::TrainingPanel* m_training = nullptr;
    bool m_syncingPanels = false;
    QHash<QString, QDockWidget*> m_panels;
    QStringList m_panelOrder;
    QByteArray m_defaultLayout;

    QMenu* m_fileMenu = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_examplesMenu = nullptr;
    QMenu* m_editMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_helpMenu = nullptr;
    QMenu* m_trainMenu = nullptr;
    QAction* m_sweepAction = nullptr;
    QAction* m_newAction = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QAction* m_settingsAction = nullptr;
    QAction* m_exportModelAction = nullptr;
    QAction* m_importModelAction = nullptr;
    QAction* m_pretrainedAction = nullptr;
    QString m_lastRunDir;  // the last run trained in this window (its weights are exported)
    QAction* m_quitAction = nullptr;
    QAction* m_clearRecentAction = nullptr;
    QAction* m_resetLayoutAction = nullptr;
    QAction* m_showLogAction = nullptr;
    QAction* m_aboutAction = nullptr;
    QAction* m_pluginsAction = nullptr;
    QAction* m_panelSeparator = nullptr;
    QAction* m_workspaceMenuEnd = nullptr;  // the workspace entries of the View menu go before it
    QString m_deployRun;  // the run whose weights the Deploy form was given

    Workspace m_workspace = Workspace::Design;
    WelcomePage* m_welcome = nullptr;
    bool m_welcomeShown = false;
    QAction* m_welcomeAction = nullptr;
    QAction* m_shortcutsAction = nullptr;
    void tourStep(int step);
    QByteArray currentLayout() const;  // the current workspace's dock layout, to keep
    void coverDesignWithWelcome();
    QByteArray m_welcomeLayout;  // Design's layout under the welcome page
    QWidget* workspacePage(Workspace w) const;
    QStackedWidget* m_stack = nullptr;
    QToolBar* m_workspaceBar = nullptr;
    QActionGroup* m_workspaceGroup = nullptr;
    std::array<QAction*, kWorkspaceCount> m_workspaceActions{};
    std::array<QByteArray, kWorkspaceCount> m_workspaceStates;  // dock layouts of the workspaces not shown
    QHash<QString, QWidget*> m_hostable;  // panel id -> its content (moves between dock and centre)
    ui::evaluate::EvaluateView* m_evaluate = nullptr;
    QPointer<QDialog> m_pictureExplanation;
    ui::training::PreflightPanel* m_preflight = nullptr;
    QHash<int, QLayout*> m_hostLayouts;  // where a workspace's hosted panel goes (default: its page)
    QLabel* m_evaluateHint = nullptr;
    QString m_evaluateProject;  // project path the Evaluate view was set up for
    QString m_evaluateRun;      // the run whose weights it was given
    QWidget* m_deployPage = nullptr;
    QLabel* m_deployHint = nullptr;
    QPushButton* m_deploySave = nullptr;
    ui::ExportDialog* m_deploy = nullptr;
    QString m_deployProject;  // project file the Deploy form reads

    QTimer* m_autosaveTimer = nullptr;
    ui::RecoveryStore m_recovery;
    QString m_sessionKey;        // names the recovery file of an untitled document
    QString m_writtenRecovery;   // the recovery file this window wrote last (removed when clean)
    bool m_changedSinceAutosave = false;
    bool m_layoutRestored = false;  // the user's saved dock layout was restored at start
    bool m_shownOnce = false;
    bool m_isExample = false;    // Save goes to Save As: shipped examples are not overwritten
    QString m_cachedName;
};

}  // namespace kiln::app
