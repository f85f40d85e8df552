// SPDX-License-Identifier: Apache-2.0
// The import dialog: paths and time limit, the import in a kiln-import child process with a busy
// dialog and Cancel, the report summary or the error, Open.
#include "ui/import/import_dialog.h"
#include "ui/import/busy_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include "engine/api/plugins.h"

namespace kiln::ui {

QStringList importPluginArguments() {
    QStringList args;
    for (const auto& plugin : engine::api::loadedPlugins())
        if (!plugin.path.empty() && QFileInfo::exists(QString::fromStdString(plugin.path)))
            args << QStringLiteral("--plugin") << QString::fromStdString(plugin.path);
    return args;
}

ImportDialog::ImportDialog(QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("importDialog"));
    setWindowTitle(tr("Import Model"));
    auto* form = new QFormLayout;
    auto pathRow = [this](QLineEdit*& edit, const char* name, const QString& button, void (ImportDialog::*browse)()) {
        edit = new QLineEdit(this);
        edit->setObjectName(QString::fromLatin1(name));
        auto* b = new QPushButton(button, this);
        connect(b, &QPushButton::clicked, this, browse);
        auto* row = new QHBoxLayout;
        row->addWidget(edit, 1);
        row->addWidget(b);
        return row;
    };
    form->addRow(tr("Model file:"), pathRow(m_model, "modelPath", tr("Browse…"), &ImportDialog::browseModel));
    form->addRow(tr("Save project as:"), pathRow(m_project, "projectPath", tr("Browse…"), &ImportDialog::browseProject));
    m_timeLimit = new QSpinBox(this);
    m_timeLimit->setObjectName(QStringLiteral("timeLimit"));
    m_timeLimit->setRange(0, 7 * 24 * 3600);
    m_timeLimit->setValue(300);
    m_timeLimit->setSuffix(tr(" s"));
    m_timeLimit->setSpecialValueText(tr("no limit"));
    m_timeLimit->setToolTip(tr("How long reading the model may take before Kiln counts the file as damaged and stops it."));
    form->addRow(tr("Time limit:"), m_timeLimit);
    connect(m_model, &QLineEdit::textEdited, this, &ImportDialog::proposeProject);
    connect(m_project, &QLineEdit::textEdited, this, [this] {
        m_projectEdited = true;
        updateButtons();
    });

    m_status = new QLabel(tr("Choose an ONNX or Keras model (.onnx, .keras, .h5). Kiln writes an editable project, its weights (.safetensors) and an import report."), this);
    m_status->setObjectName(QStringLiteral("importStatus"));
    m_status->setWordWrap(true);
    m_summary = new QPlainTextEdit(this);
    m_summary->setObjectName(QStringLiteral("importSummary"));
    m_summary->setReadOnly(true);
    m_summary->setMinimumSize(520, 200);

    auto* buttons = new QDialogButtonBox(this);
    m_importButton = buttons->addButton(tr("&Import"), QDialogButtonBox::ActionRole);
    m_importButton->setObjectName(QStringLiteral("importButton"));
    m_openButton = buttons->addButton(tr("&Open Project"), QDialogButtonBox::AcceptRole);
    m_openButton->setObjectName(QStringLiteral("openButton"));
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    close->setText(tr("Close"));
    connect(m_importButton, &QPushButton::clicked, this, &ImportDialog::startImport);
    connect(m_openButton, &QPushButton::clicked, this, [this] {
        emit openRequested(projectPath());
        accept();
    });
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    m_tick = new QTimer(this);
    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, this, &ImportDialog::updateProgress);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addWidget(m_summary, 1);
    layout->addWidget(buttons);
    updateButtons();
}

// A child still running is ended (ImportProcess's destructor).
ImportDialog::~ImportDialog() = default;

void ImportDialog::setTimeLimit(int seconds) { m_timeLimit->setValue(seconds); }
int ImportDialog::timeLimit() const { return m_timeLimit->value(); }
QProgressDialog* ImportDialog::progressDialog() const { return m_progress; }
QMessageBox* ImportDialog::errorBox() const { return m_errorBox; }

void ImportDialog::setModelPath(const QString& path) {
    m_model->setText(path);
    proposeProject();
}

void ImportDialog::proposeProject() {
    // Until the user picks a project path: the model's folder and name, with .kiln.
    if (!m_projectEdited) {
        const QFileInfo fi(modelPath());
        m_project->setText(fi.fileName().isEmpty() ? QString() : fi.absoluteDir().filePath(fi.completeBaseName() + QStringLiteral(".kiln")));
    }
    updateButtons();
}

void ImportDialog::setProjectPath(const QString& path) {
    m_project->setText(path);
    m_projectEdited = true;
    updateButtons();
}

QString ImportDialog::modelPath() const { return m_model->text().trimmed(); }
QString ImportDialog::projectPath() const {
    QString p = m_project->text().trimmed();
    if (!p.isEmpty() && QFileInfo(p).suffix().isEmpty()) p += QStringLiteral(".kiln");
    return p;
}
QString ImportDialog::summaryText() const { return m_summary->toPlainText(); }

void ImportDialog::browseModel() {
    const QString start = modelPath().isEmpty() ? QDir::homePath() : QFileInfo(modelPath()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Import Model"), start, tr("Models (*.onnx *.keras *.h5 *.hdf5);;ONNX models (*.onnx);;Keras models (*.keras *.h5 *.hdf5)"));
    if (!path.isEmpty()) setModelPath(path);
}

void ImportDialog::browseProject() {
    const QString start = projectPath().isEmpty() ? QDir::homePath() : projectPath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Imported Project As"), start, tr("Kiln projects (*.kiln)"));
    if (!path.isEmpty()) setProjectPath(path);
}

void ImportDialog::updateButtons() {
    const bool busy = isImporting();
    m_importButton->setEnabled(!busy && !modelPath().isEmpty() && !projectPath().isEmpty());
    m_openButton->setEnabled(!busy && m_done);
    m_model->setEnabled(!busy);
    m_project->setEnabled(!busy);
    m_timeLimit->setEnabled(!busy);
}

void ImportDialog::startImport() {
    if (isImporting() || modelPath().isEmpty() || projectPath().isEmpty()) return;
    m_done = false;
    if (m_errorBox) m_errorBox->close();
    app::ImportJobRequest req;
    req.model = QDir::cleanPath(modelPath()).toStdString();
    req.project = QDir::cleanPath(projectPath()).toStdString();
    const QFileInfo project(projectPath());
    req.reportOut = project.absoluteDir().filePath(project.completeBaseName() + QStringLiteral(".import.json")).toStdString();
    m_importing = QFileInfo(modelPath()).fileName();
    m_status->setText(tr("Importing %1…").arg(m_importing));
    m_summary->clear();

    m_process = std::make_unique<app::ImportProcess>();
    m_process->setProgram(m_program.isEmpty() ? app::ImportProcess::findProgram() : m_program);
    m_process->setExtraArguments(importPluginArguments());
    // Called from the process's signals; the dialog finishes the import on its next turn of the
    // event loop, outside the process's own signal handling.
    m_process->setOnFinished([this] { QMetaObject::invokeMethod(this, &ImportDialog::finished, Qt::QueuedConnection); });

    m_progress = openBusyDialog(this, QStringLiteral("importProgress"), tr("Import Model"), tr("Cancel"), [this] {
        if (m_process) m_process->cancel();
    });
    m_clock.start();
    updateProgress();
    m_progress->show();
    m_tick->start();
    m_process->start(req, m_timeLimit->value());
    updateButtons();
}

void ImportDialog::updateProgress() {
    if (!m_progress) return;
    const qint64 seconds = m_clock.elapsed() / 1000;
    m_progress->setLabelText(m_timeLimit->value() > 0 ? tr("Importing %1… %2 s (limit %3 s)").arg(m_importing).arg(seconds).arg(m_timeLimit->value())
                                                      : tr("Importing %1… %2 s").arg(m_importing).arg(seconds));
}

void ImportDialog::showError(const QString& text) {
    if (m_errorBox) m_errorBox->close();
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Import Model"), tr("%1 could not be imported.").arg(m_importing),
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("importError"));
    box->setInformativeText(text);
    box->setAttribute(Qt::WA_DeleteOnClose);
    m_errorBox = box;
    box->open();  // not exec(): the event loop keeps running
}

QString ImportDialog::describeReport(const nlohmann::json& report) {
    const auto& s = report["summary"];
    auto n = [&](const char* key) { return QString::number(s[key].get<int64_t>()); };
    const bool keras = report.value("source_format", std::string("onnx")) == "keras";
    QStringList lines;
    if (keras) {
        lines << tr("%1 Keras layers became %2 Kiln nodes.").arg(n("keras_layers"), n("kiln_nodes"));
        lines << tr("Mapped to new nodes: %1; without computation in Kiln (linear activations, nested models): %2.")
                     .arg(n("node"), n("pass_through"));
    } else {
        lines << tr("%1 ONNX nodes became %2 Kiln nodes.").arg(n("onnx_nodes"), n("kiln_nodes"));
        lines << tr("Mapped to new nodes: %1; folded into the node before them: %2; layout changes only: %3; constants: %4.")
                     .arg(n("node"), n("folded"), n("pass_through"), n("constant"));
    }
    lines << tr("Weights: %1 tensors, %2 values.").arg(n("weight_tensors"), n("parameters"));
    QStringList inputs;
    for (const auto& in : report["inputs"]) {
        QStringList dims;
        for (const auto& d : in["shape"]) dims << QString::number(d.get<int64_t>());
        inputs << QStringLiteral("%1 [%2]").arg(QString::fromStdString(in["name"].get<std::string>()), dims.join(QLatin1Char(',')));
    }
    lines << tr("Inputs (channels-last): %1").arg(inputs.join(QStringLiteral(", ")));
    const auto& placeholders = report["placeholders"];
    if (placeholders.empty()) {
        lines << tr("Every operation was mapped: the project can be trained and exported.");
    } else {
        lines << tr("%n operation(s) Kiln cannot compute became placeholder nodes; replace them before training or export:", nullptr,
                    int(placeholders.size()));
        for (const auto& p : placeholders) {
            lines << (keras ? tr("  • %1 (Keras %2)") : tr("  • %1 (ONNX %2)"))
                         .arg(QString::fromStdString(p["kiln_node"].get<std::string>()),
                              QString::fromStdString(p[keras ? "keras_class" : "onnx_op"].get<std::string>()));
            QStringList kept;
            for (const auto& w : p.value("weight_tensors", nlohmann::json::array())) kept << QString::fromStdString(w.get<std::string>());
            if (!kept.isEmpty()) lines << tr("    its weights from the file are kept: %1").arg(kept.join(QStringLiteral(", ")));
        }
    }
    return lines.join(QLatin1Char('\n'));
}

void ImportDialog::finished() {
    if (!m_process || m_process->isRunning()) return;
    m_tick->stop();
    if (m_progress) {
        m_progress->disconnect(this);
        m_progress->close();
        m_progress->deleteLater();
    }
    const std::unique_ptr<app::ImportProcess> process = std::move(m_process);
    const auto& result = process->result();
    if (!result.ok()) {
        const QString text = app::describeImportError(result.error());
        m_summary->setPlainText(text);
        if (result.error().code == engine::ErrorCode::Cancelled) {
            m_status->setText(tr("The import was cancelled."));
        } else {
            m_status->setText(tr("The model could not be imported."));
            showError(text);
        }
        updateButtons();
        return;
    }
    m_done = true;
    m_status->setText(tr("Imported into %1. The report is in %2.")
                          .arg(QDir::toNativeSeparators(QString::fromStdString(result->projectPath)),
                               QDir::toNativeSeparators(QString::fromStdString(result->reportPath))));
    m_summary->setPlainText(describeReport(result->report));
    updateButtons();
    m_openButton->setDefault(true);
}

}  // namespace kiln::ui
