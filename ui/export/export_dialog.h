// SPDX-License-Identifier: Apache-2.0
// The export dialog: formats, model name, version (automatic by default), repository base path and
// the run's weights; exports off the GUI thread with progress and shows the parity result. A
// second part starts kiln-serve on the repository and sends a test prediction request.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QImage>
#include <QPointer>
#include <QProcess>

#include <nlohmann/json.hpp>

#include "app/kiln_export/export_job.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace kiln::ui {

class ExportDialog : public QDialog {
    Q_OBJECT

public:
    explicit ExportDialog(const QString& projectPath, QWidget* parent = nullptr);
    ~ExportDialog() override;

    void setWeightsPath(const QString& path);
    void setBasePath(const QString& path);
    void setModelName(const QString& name);
    void setVersion(int version);  // 0: automatic
    void setFormats(bool onnx, bool savedModel, bool kiln, bool tflite = false);
    void setServePort(int port);

    QString versionDir() const { return m_versionDir; }
    bool isExporting() const { return m_watcher.isRunning(); }
    bool isServing() const { return m_server && m_server->state() != QProcess::NotRunning; }

    // The :predict request body for an image, resized and converted to the model's input
    // [height, width, channels] and scaled by `scale` (row format, one instance).
    static QByteArray imageRequest(const QImage& image, const std::vector<int64_t>& shape, double scale);
    // "Sneaker (0.93)" from a :predict response, with class names; the raw JSON otherwise.
    static QString describePrediction(const QByteArray& response, const std::vector<std::string>& classNames);
    // The kiln-serve program next to this one, in the build tree, or on PATH ("" if none).
    static QString findServeProgram();

public slots:
    void startExport();
    void startServing();
    void stopServing();
    void sendRequest();
    void pickImage();

signals:
    void exportFinished(bool ok);
    void servingChanged(bool running);
    void predictionReceived(const QString& text);

private:
    void onExportDone();
    void refreshWeightsChoices();
    void updateButtons();
    bool loadModelDescription();
    void showQuantization(const app::QuantizationSummary& q);

    QString m_projectPath;
    QString m_versionDir;
    nlohmann::json m_description;

    QComboBox* m_weights = nullptr;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_base = nullptr;
    QSpinBox* m_version = nullptr;
    QCheckBox* m_onnx = nullptr;
    QCheckBox* m_savedModel = nullptr;
    QCheckBox* m_kiln = nullptr;
    QCheckBox* m_tflite = nullptr;
    QComboBox* m_quantize = nullptr;         // "none" / "int8"
    QSpinBox* m_calibrationSamples = nullptr;
    QComboBox* m_calibration = nullptr;      // min/max or the 99.99th percentile of |x|
    QCheckBox* m_int8Io = nullptr;           // model.int8.tflite with int8 inputs and outputs
    QLabel* m_quantReport = nullptr;         // the int8 comparison and size saving after an export
    QPushButton* m_exportButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_parity = nullptr;

    QSpinBox* m_port = nullptr;
    QPushButton* m_serveButton = nullptr;
    QPushButton* m_stopButton = nullptr;
    QPushButton* m_imageButton = nullptr;
    QPushButton* m_sendButton = nullptr;
    QPlainTextEdit* m_request = nullptr;
    QLabel* m_prediction = nullptr;
    QPlainTextEdit* m_serverLog = nullptr;

    QFutureWatcher<engine::Result<app::ExportJobResult>> m_watcher;
    QPointer<QProcess> m_server;
    QNetworkAccessManager* m_network = nullptr;
};

}  // namespace kiln::ui
