// SPDX-License-Identifier: Apache-2.0
// Export dialog: the export job runs on a pool thread (QtConcurrent); its progress comes back as
// queued calls guarded by a QPointer, so the GUI thread never waits on it.
#include "ui/export/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <fstream>

#include "app/common/error_text.h"
#include "engine/core/json_checked.h"
#include "engine/api/run_location.h"
#include "ui/common/theme.h"

namespace kiln::ui {

ExportDialog::ExportDialog(const QString& projectPath, QWidget* parent)
    : QDialog(parent), m_projectPath(projectPath), m_network(new QNetworkAccessManager(this)) {
    setWindowTitle(tr("Export model"));
    auto* layout = new QVBoxLayout(this);

    auto* what = new QGroupBox(tr("Export"), this);
    auto* form = new QFormLayout(what);
    m_weights = new QComboBox(what);
    m_weights->setObjectName(QStringLiteral("weights"));
    m_weights->setEditable(true);
    auto* browseWeights = new QPushButton(tr("Browse…"), what);
    auto* weightsRow = new QHBoxLayout;
    weightsRow->addWidget(m_weights, 1);
    weightsRow->addWidget(browseWeights);
    form->addRow(tr("Run weights:"), weightsRow);
    m_name = new QLineEdit(QFileInfo(projectPath).completeBaseName(), what);
    m_name->setObjectName(QStringLiteral("name"));
    form->addRow(tr("Model name:"), m_name);
    m_base = new QLineEdit(QDir(QFileInfo(projectPath).absolutePath()).filePath(QStringLiteral("models")), what);
    m_base->setObjectName(QStringLiteral("base"));
    auto* browseBase = new QPushButton(tr("Browse…"), what);
    auto* baseRow = new QHBoxLayout;
    baseRow->addWidget(m_base, 1);
    baseRow->addWidget(browseBase);
    form->addRow(tr("Repository folder:"), baseRow);
    m_version = new QSpinBox(what);
    m_version->setObjectName(QStringLiteral("version"));
    m_version->setRange(0, 1000000);
    m_version->setSpecialValueText(tr("automatic (next free)"));
    form->addRow(tr("Version:"), m_version);
    auto* formats = new QHBoxLayout;
    m_onnx = new QCheckBox(tr("ONNX"), what);
    m_savedModel = new QCheckBox(tr("TensorFlow SavedModel"), what);
    m_kiln = new QCheckBox(tr("Kiln"), what);
    // TensorFlow Lite (float32) for phones and microcontroller toolchains; off unless asked for.
    m_tflite = new QCheckBox(tr("TensorFlow Lite"), what);
    m_tflite->setObjectName(QStringLiteral("tflite"));
    for (auto* c : {m_onnx, m_savedModel, m_kiln, m_tflite}) {
        c->setChecked(c != m_tflite);
        formats->addWidget(c);
        connect(c, &QCheckBox::toggled, this, &ExportDialog::updateButtons);
    }
    form->addRow(tr("Formats:"), formats);
    // Int8 post-training quantisation: model.int8.onnx beside model.onnx and model.int8.tflite
    // beside model.tflite, calibrated on training samples and compared with the float model on
    // the validation split (in the export job, off the GUI thread).
    auto* quantRow = new QHBoxLayout;
    m_quantize = new QComboBox(what);
    m_quantize->setObjectName(QStringLiteral("quantize"));
    m_quantize->addItem(tr("none"), QStringLiteral("none"));
    m_quantize->addItem(tr("int8 (ONNX, TensorFlow Lite)"), QStringLiteral("int8"));
    m_calibrationSamples = new QSpinBox(what);
    m_calibrationSamples->setObjectName(QStringLiteral("calibrationSamples"));
    m_calibrationSamples->setRange(1, 1000000);
    m_calibrationSamples->setValue(int(engine::api::kDefaultCalibrationSamples));
    m_calibrationSamples->setSuffix(tr(" calibration samples"));
    m_calibration = new QComboBox(what);
    m_calibration->setObjectName(QStringLiteral("calibration"));
    m_calibration->addItem(tr("min/max ranges"), 0.0);
    m_calibration->addItem(tr("%1th percentile of |x|").arg(engine::api::kDefaultCalibrationPercentile),
                           engine::api::kDefaultCalibrationPercentile);
    m_calibration->setToolTip(tr("How each int8 range is calibrated: the smallest and largest value seen, or clipped "
                                 "so that rare outliers do not coarsen the grid for every other value."));
    m_int8Io = new QCheckBox(tr("int8 inputs and outputs (TensorFlow Lite)"), what);
    m_int8Io->setObjectName(QStringLiteral("int8Io"));
    m_int8Io->setToolTip(tr("model.int8.tflite takes and returns int8 tensors; their scales and zero points are in "
                            "the file and in kiln-model.json."));
    quantRow->addWidget(m_quantize);
    quantRow->addWidget(m_calibrationSamples);
    quantRow->addWidget(m_calibration);
    quantRow->addWidget(m_int8Io);
    quantRow->addStretch(1);
    form->addRow(tr("Quantise:"), quantRow);
    connect(m_quantize, &QComboBox::currentIndexChanged, this, &ExportDialog::updateButtons);
    m_exportButton = new QPushButton(tr("Export"), what);
    m_exportButton->setObjectName(QStringLiteral("export"));
    m_progress = new QProgressBar(what);
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_status = new QLabel(what);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_parity = new QLabel(what);
    m_parity->setObjectName(QStringLiteral("parity"));
    m_parity->setWordWrap(true);
    form->addRow(m_exportButton, m_progress);
    form->addRow(m_status);
    form->addRow(m_parity);
    m_quantReport = new QLabel(what);
    m_quantReport->setObjectName(QStringLiteral("quantization"));
    m_quantReport->setWordWrap(true);
    m_quantReport->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(m_quantReport);
    layout->addWidget(what);

    auto* serve = new QGroupBox(tr("Serve locally"), this);
    auto* sl = new QVBoxLayout(serve);
    auto* serveRow = new QHBoxLayout;
    m_port = new QSpinBox(serve);
    m_port->setRange(1, 65535);
    m_port->setValue(8501);
    m_serveButton = new QPushButton(tr("Serve locally"), serve);
    m_serveButton->setObjectName(QStringLiteral("serve"));
    m_stopButton = new QPushButton(tr("Stop"), serve);
    serveRow->addWidget(new QLabel(tr("REST port:"), serve));
    serveRow->addWidget(m_port);
    serveRow->addWidget(m_serveButton);
    serveRow->addWidget(m_stopButton);
    serveRow->addStretch(1);
    sl->addLayout(serveRow);
    m_request = new QPlainTextEdit(serve);
    m_request->setObjectName(QStringLiteral("request"));
    m_request->setPlaceholderText(tr("Request body for :predict, e.g. {\"instances\": [...]}"));
    m_request->setMaximumHeight(90);
    sl->addWidget(m_request);
    auto* reqRow = new QHBoxLayout;
    m_imageButton = new QPushButton(tr("Pick image…"), serve);
    m_sendButton = new QPushButton(tr("Send request"), serve);
    m_sendButton->setObjectName(QStringLiteral("send"));
    reqRow->addWidget(m_imageButton);
    reqRow->addWidget(m_sendButton);
    reqRow->addStretch(1);
    sl->addLayout(reqRow);
    m_prediction = new QLabel(serve);
    m_prediction->setObjectName(QStringLiteral("prediction"));
    m_prediction->setWordWrap(true);
    m_prediction->setTextInteractionFlags(Qt::TextSelectableByMouse);
    sl->addWidget(m_prediction);
    m_serverLog = new QPlainTextEdit(serve);
    m_serverLog->setReadOnly(true);
    m_serverLog->setMaximumBlockCount(500);
    m_serverLog->setMaximumHeight(90);
    sl->addWidget(m_serverLog);
    layout->addWidget(serve);

    connect(browseWeights, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getOpenFileName(this, tr("Run weights"), QFileInfo(m_projectPath).absolutePath(),
                                                 tr("Weights (*.safetensors)"));
        if (!f.isEmpty()) setWeightsPath(f);
    });
    connect(browseBase, &QPushButton::clicked, this, [this] {
        QString d = QFileDialog::getExistingDirectory(this, tr("Repository folder"), m_base->text());
        if (!d.isEmpty()) m_base->setText(d);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &ExportDialog::startExport);
    connect(m_serveButton, &QPushButton::clicked, this, &ExportDialog::startServing);
    connect(m_stopButton, &QPushButton::clicked, this, &ExportDialog::stopServing);
    connect(m_imageButton, &QPushButton::clicked, this, &ExportDialog::pickImage);
    connect(m_sendButton, &QPushButton::clicked, this, &ExportDialog::sendRequest);
    connect(&m_watcher, &QFutureWatcher<engine::Result<app::ExportJobResult>>::finished, this, &ExportDialog::onExportDone);
    connect(m_name, &QLineEdit::textChanged, this, &ExportDialog::updateButtons);
    connect(m_weights, &QComboBox::currentTextChanged, this, &ExportDialog::updateButtons);
    refreshWeightsChoices();
    updateButtons();
}

ExportDialog::~ExportDialog() {
    stopServing();
    m_watcher.waitForFinished();
}

void ExportDialog::setWeightsPath(const QString& path) {
    if (m_weights->findText(path) < 0) m_weights->insertItem(0, path);
    m_weights->setCurrentText(path);
}
void ExportDialog::setBasePath(const QString& path) { m_base->setText(path); }
void ExportDialog::setModelName(const QString& name) { m_name->setText(name); }
void ExportDialog::setVersion(int version) { m_version->setValue(version); }
void ExportDialog::setFormats(bool onnx, bool savedModel, bool kiln, bool tflite) {
    m_onnx->setChecked(onnx);
    m_savedModel->setChecked(savedModel);
    m_kiln->setChecked(kiln);
    m_tflite->setChecked(tflite);
}
void ExportDialog::setServePort(int port) { m_port->setValue(port); }

// Offers the weights of every run under the project's runs/ folder (in the user's data folder for a
// read-only project, see engine/api/run_location.h), newest first.
void ExportDialog::refreshWeightsChoices() {
    const std::string home = engine::api::runsHome(QFileInfo(m_projectPath).absolutePath().toStdString());
    QDir runs(QDir(QString::fromStdString(home)).filePath(QStringLiteral("runs")));
    QFileInfoList found;
    for (const QFileInfo& d : runs.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time)) {
        QFileInfo w(QDir(d.filePath()).filePath(QStringLiteral("weights.safetensors")));
        if (w.isFile()) found << w;
    }
    for (const QFileInfo& w : found) m_weights->addItem(w.filePath());
}

void ExportDialog::updateButtons() {
    bool busy = m_watcher.isRunning();
    bool anyFormat = m_onnx->isChecked() || m_savedModel->isChecked() || m_kiln->isChecked() || m_tflite->isChecked();
    // Int8 twins are written for ONNX and TensorFlow Lite; one of them must be exported.
    const bool int8 = m_quantize->currentData().toString() == QLatin1String("int8");
    const bool quantOk = !int8 || m_onnx->isChecked() || m_tflite->isChecked();
    m_calibrationSamples->setEnabled(int8);
    m_calibration->setEnabled(int8);
    m_int8Io->setEnabled(int8 && m_tflite->isChecked());
    m_quantize->setToolTip(quantOk ? tr("Writes model.int8.onnx with ONNX and model.int8.tflite with TensorFlow Lite.")
                                   : tr("Int8 quantisation needs ONNX or TensorFlow Lite among the formats."));
    m_exportButton->setEnabled(!busy && anyFormat && quantOk && !m_name->text().isEmpty() &&
                               !m_weights->currentText().isEmpty());
    bool serving = isServing();
    m_serveButton->setEnabled(!serving && !m_versionDir.isEmpty() && m_savedModel->isChecked());
    m_stopButton->setEnabled(serving);
    m_sendButton->setEnabled(serving);
    m_imageButton->setEnabled(!m_description.is_null());
}

void ExportDialog::startExport() {
    if (m_watcher.isRunning()) return;
    app::ExportJobRequest req;
    req.project = m_projectPath.toStdString();
    req.weights = m_weights->currentText().toStdString();
    req.base = m_base->text().toStdString();
    req.name = m_name->text().toStdString();
    req.version = m_version->value();
    QStringList formats;
    if (m_onnx->isChecked()) formats << QStringLiteral("onnx");
    if (m_savedModel->isChecked()) formats << QStringLiteral("savedmodel");
    if (m_kiln->isChecked()) formats << QStringLiteral("kiln");
    if (m_tflite->isChecked()) formats << QStringLiteral("tflite");
    req.formats = formats.join(QLatin1Char(',')).toStdString();
    req.kilnVersion = QCoreApplication::applicationVersion().toStdString();
    req.quantize = m_quantize->currentData().toString().toStdString();
    req.calibrationSamples = m_calibrationSamples->value();
    if (req.quantize == "int8") {
        req.calibrationPercentile = m_calibration->currentData().toDouble();
        req.int8Io = m_int8Io->isChecked() && m_tflite->isChecked();
    }

    m_progress->setValue(0);
    m_quantReport->clear();
    m_status->setText(tr("Exporting…"));
    Theme::clearErrorMark(m_status);
    m_parity->clear();
    QPointer<ExportDialog> self(this);
    auto progress = [self](int pct, const std::string& step) {
        QMetaObject::invokeMethod(qApp, [self, pct, step] {
            if (!self) return;
            self->m_progress->setValue(pct);
            self->m_status->setText(tr("Exporting… (%1)").arg(QString::fromStdString(step)));
        }, Qt::QueuedConnection);
    };
    m_watcher.setFuture(QtConcurrent::run([req, progress] { return app::runExportJob(req, progress); }));
    updateButtons();
}

void ExportDialog::onExportDone() {
    auto result = m_watcher.result();
    if (!result.ok()) {
        // The export was refused (bad input, or the exported model would not reproduce Kiln's
        // outputs): nothing was published.
        Theme::markAsError(m_status);
        m_status->setText(tr("Export failed: %1").arg(app::ErrorText::describe(result.error())));
        if (result.error().param("what") == "parity")
            m_parity->setText(tr("Parity check failed: largest difference %1. Nothing was exported.")
                                  .arg(QString::fromStdString(result.error().param("max_abs_diff"))));
        m_progress->setValue(0);
        updateButtons();
        emit exportFinished(false);
        return;
    }
    const auto& repo = result->repo;
    m_versionDir = QString::fromStdString(repo.versionDir);
    m_progress->setValue(100);
    m_status->setText(tr("Exported version %1 to %2").arg(repo.version).arg(m_versionDir));
    if (repo.parityChecked)
        m_parity->setText(tr("Parity: largest difference %1 over %2 samples (%3 data), within tolerance")
                              .arg(repo.parity.maxAbsDiff, 0, 'g', 3)
                              .arg(repo.parity.batch)
                              .arg(QString::fromStdString(result->paritySource)));
    else
        m_parity->setText(tr("Parity: not checked (ONNX was not exported)"));
    // Plugin operations exported as custom-domain ONNX nodes: the user must know that other tools
    // need their implementation.
    for (const auto& w : repo.warnings)
        m_parity->setText(m_parity->text() + QLatin1Char('\n') + tr("Warning: %1").arg(QString::fromStdString(w)));
    if (result->quantization) showQuantization(*result->quantization);
    loadModelDescription();
    updateButtons();
    emit exportFinished(true);
}

void ExportDialog::showQuantization(const app::QuantizationSummary& q) {
    const auto& r = q.report;
    QStringList lines;
    for (const auto& f : q.files) {
        const auto& c = f.comparison;
        const QString file = QString::fromStdString(f.file);
        if (r.classification) {
            lines << tr("%1: int8 accuracy %2% against float %3% (drop %4 points) on %5 samples of the %6 data; top-1 agreement %7%.")
                         .arg(file)
                         .arg(100.0 * c.int8Metric, 0, 'f', 2)
                         .arg(100.0 * r.floatMetric, 0, 'f', 2)
                         .arg(100.0 * (r.floatMetric - c.int8Metric), 0, 'f', 2)
                         .arg(r.samples)
                         .arg(QString::fromStdString(r.split))
                         .arg(100.0 * c.agreement, 0, 'f', 2);
        } else {
            lines << tr("%1: int8 mean squared error %2 against float %3 on %4 samples of the %5 data.")
                         .arg(file)
                         .arg(c.int8Metric, 0, 'g', 4)
                         .arg(r.floatMetric, 0, 'g', 4)
                         .arg(r.samples)
                         .arg(QString::fromStdString(r.split));
        }
        for (const auto* list : {&f.inputs, &f.outputs})
            for (const auto& e : *list)
                lines << (list == &f.inputs ? tr("%1: input %2 is int8 with scale %3 and zero point %4.")
                                            : tr("%1: output %2 is int8 with scale %3 and zero point %4."))
                             .arg(file, QString::fromStdString(e.name))
                             .arg(e.params.scale, 0, 'g', 6)
                             .arg(e.params.zeroPoint);
        const double ratio = f.floatBytes > 0 ? double(f.int8Bytes) / double(f.floatBytes) : 0.0;
        lines << tr("%1: %2 against %3 for %4 (%5% of the float size).")
                     .arg(file, QLocale().formattedDataSize(f.int8Bytes), QLocale().formattedDataSize(f.floatBytes),
                          QString::fromStdString(f.floatFile))
                     .arg(100.0 * ratio, 0, 'f', 1);
    }
    if (r.percentile > 0.0)
        lines << tr("Calibrated on %1 training samples, ranges clipped to the %2th percentile of |x|.")
                     .arg(r.calibrationSamples)
                     .arg(r.percentile);
    else
        lines << tr("Calibrated on %1 training samples.").arg(r.calibrationSamples);
    m_quantReport->setText(lines.join(QLatin1Char('\n')));
}

bool ExportDialog::loadModelDescription() {
    // The file may come from anywhere (a repository copied in by hand): read it with the same
    // limits as the server does, and accept only the fields used here in their expected types.
    auto parsed = engine::readJsonFileChecked((m_versionDir + QStringLiteral("/kiln-model.json")).toStdString(),
                                              engine::JsonLimits{size_t(64) << 20, 64, 0});
    m_description = parsed ? std::move(*parsed) : nlohmann::json();
    if (!m_description.is_object() || !m_description.contains("inputs") || !m_description["inputs"].is_array() ||
        m_description["inputs"].empty())
        return false;
    const auto& shapeJson = m_description["inputs"][0].is_object() ? m_description["inputs"][0].value("shape", nlohmann::json())
                                                                   : nlohmann::json();
    if (!shapeJson.is_array()) return false;
    // A request of zeros with the right shape, to edit or replace by an image.
    std::vector<int64_t> shape;
    for (const auto& d : shapeJson) {
        if (!d.is_number_integer()) return false;
        shape.push_back(d.get<int64_t>());
    }
    for (size_t k = 1; k < shape.size(); ++k)
        if (shape[k] <= 0 || shape[k] > 4096) return false;
    nlohmann::json inst = 0.0;
    for (size_t k = shape.size(); k-- > 1;) inst = nlohmann::json::array_t(static_cast<size_t>(shape[k]), inst);
    if (m_description["inputs"].size() == 1) m_request->setPlainText(QString::fromStdString(nlohmann::json({{"instances", {inst}}}).dump()));
    return true;
}

QString ExportDialog::findServeProgram() {
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& c : {dir + QStringLiteral("/kiln-serve"), dir + QStringLiteral("/../app/kiln_serve/kiln-serve"),
                             dir + QStringLiteral("/../kiln_serve/kiln-serve")})
        if (QFileInfo(c).isExecutable()) return QFileInfo(c).canonicalFilePath();
    return QStandardPaths::findExecutable(QStringLiteral("kiln-serve"));
}

void ExportDialog::startServing() {
    if (isServing() || m_versionDir.isEmpty()) return;
    const QString program = findServeProgram();
    if (program.isEmpty()) {
        m_prediction->setText(tr("kiln-serve was not found next to Kiln or on PATH."));
        return;
    }
    m_server = new QProcess(this);
    m_server->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_server, &QProcess::readyRead, this, [this] {
        if (m_server) m_serverLog->appendPlainText(QString::fromLocal8Bit(m_server->readAll()).trimmed());
    });
    connect(m_server, &QProcess::stateChanged, this, [this](QProcess::ProcessState s) {
        updateButtons();
        emit servingChanged(s != QProcess::NotRunning);
    });
    const QString modelBase = QFileInfo(m_versionDir).absolutePath();
    m_server->start(program, {QStringLiteral("--rest_api_port=%1").arg(m_port->value()),
                              QStringLiteral("--model_name=%1").arg(m_name->text()),
                              QStringLiteral("--model_base_path=%1").arg(modelBase)});
}

void ExportDialog::stopServing() {
    if (!m_server) return;
    if (m_server->state() != QProcess::NotRunning) {
        m_server->terminate();
        if (!m_server->waitForFinished(3000)) m_server->kill();
        m_server->waitForFinished(1000);
    }
    m_server->deleteLater();
    m_server = nullptr;
    if (m_serveButton) updateButtons();
}

QByteArray ExportDialog::imageRequest(const QImage& image, const std::vector<int64_t>& shape, double scale) {
    if (shape.size() != 4 || image.isNull()) return {};
    const int h = static_cast<int>(shape[1]), w = static_cast<int>(shape[2]), c = static_cast<int>(shape[3]);
    QImage img = image.scaled(w, h, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
                     .convertToFormat(c == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
    QJsonArray rows;
    for (int y = 0; y < h; ++y) {
        QJsonArray row;
        const uchar* line = img.constScanLine(y);
        for (int x = 0; x < w; ++x) {
            QJsonArray px;
            for (int k = 0; k < c; ++k) px.append(line[x * (c == 1 ? 1 : 3) + std::min(k, 2)] * scale);
            row.append(px);
        }
        rows.append(row);
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("instances"), QJsonArray{rows}}}).toJson(QJsonDocument::Compact);
}

QString ExportDialog::describePrediction(const QByteArray& response, const std::vector<std::string>& classNames) {
    auto parsed = engine::parseJsonChecked(response.toStdString(), engine::JsonLimits{size_t(64) << 20, 64, 0},
                                           "response");
    if (!parsed) return QString::fromUtf8(response);
    const nlohmann::json& j = *parsed;
    if (j.contains("error")) return tr("Server error: %1").arg(QString::fromStdString(j["error"].dump()));
    if (!j.contains("predictions") || !j["predictions"].is_array() || j["predictions"].empty()) return QString::fromUtf8(response);
    const auto& p = j["predictions"][0];
    if (!p.is_array() || p.empty() || !p[0].is_number()) return QString::fromStdString(p.dump());
    size_t best = 0;
    for (size_t k = 1; k < p.size(); ++k)
        if (p[k].get<double>() > p[best].get<double>()) best = k;
    QString label = best < classNames.size() ? QString::fromStdString(classNames[best]) : QString::number(best);
    if (p.size() == 1) return tr("Output: %1").arg(p[0].get<double>(), 0, 'g', 4);
    return tr("Prediction: %1 (score %2)").arg(label).arg(p[best].get<double>(), 0, 'g', 4);
}

void ExportDialog::pickImage() {
    if (m_description.is_null()) return;
    QString f = QFileDialog::getOpenFileName(this, tr("Image"), QString(), tr("Images (*.png *.jpg *.jpeg *.bmp)"));
    if (f.isEmpty()) return;
    auto shape = m_description["inputs"][0]["shape"].get<std::vector<int64_t>>();
    double scale = m_description["preprocessing"].value("pixel_scale", 1.0);
    QByteArray body = imageRequest(QImage(f), shape, scale);
    if (body.isEmpty()) m_prediction->setText(tr("The model's input is not an image."));
    else m_request->setPlainText(QString::fromUtf8(body));
}

void ExportDialog::sendRequest() {
    QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1/v1/models/%2:predict").arg(m_port->value()).arg(m_name->text())));
    req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    m_prediction->setText(tr("Sending…"));
    QNetworkReply* reply = m_network->post(req, m_request->toPlainText().toUtf8());
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        QByteArray body = reply->readAll();
        std::vector<std::string> classes;
        if (!m_description.is_null() && m_description.contains("class_names"))
            classes = m_description["class_names"].get<std::vector<std::string>>();
        QString text = body.isEmpty() ? tr("No answer: %1").arg(reply->errorString()) : describePrediction(body, classes);
        m_prediction->setText(text);
        emit predictionReceived(text);
    });
}

}  // namespace kiln::ui
