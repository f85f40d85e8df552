// SPDX-License-Identifier: Apache-2.0
// PreflightPanel: device, predicted memory against free memory, time per epoch.
#include "ui/training/preflight_panel.h"

#include <QEvent>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "app/common/error_text.h"
#include "engine/api/devices.h"
#include "ui/common/theme.h"

namespace kiln::ui::training {

namespace {
QString bytes(uint64_t n) { return QString::fromStdString(engine::api::formatBytes(n)); }

// The threads a run in the studio gets: one core is left to the window.
int trainingThreads() { return std::max(1, QThread::idealThreadCount() - 1); }

QString duration(double seconds) {
    if (seconds < 1) return QCoreApplication::translate("kiln::ui::training::PreflightPanel", "%1 ms").arg(seconds * 1000, 0, 'f', 1);
    if (seconds < 120) return QCoreApplication::translate("kiln::ui::training::PreflightPanel", "%1 s").arg(seconds, 0, 'f', 1);
    const int total = int(seconds + 0.5);
    return QCoreApplication::translate("kiln::ui::training::PreflightPanel", "%1 min %2 s").arg(total / 60).arg(total % 60);
}
}  // namespace

PreflightPanel::PreflightPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("preflightPanel"));
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    layout->addWidget(m_title);
    for (QLabel** l : {&m_device, &m_memory, &m_warning, &m_time}) {
        *l = new QLabel(this);
        (*l)->setWordWrap(true);
        (*l)->setTextInteractionFlags(Qt::TextSelectableByMouse);
        layout->addWidget(*l);
        if (*l == m_warning) {
            m_useBatch = new QPushButton(this);
            m_useBatch->setObjectName(QStringLiteral("useSuggestedBatch"));
            m_useBatch->hide();
            layout->addWidget(m_useBatch, 0, Qt::AlignLeft);
        }
    }
    m_device->setObjectName(QStringLiteral("preflightDevice"));
    m_memory->setObjectName(QStringLiteral("preflightMemory"));
    m_warning->setObjectName(QStringLiteral("preflightWarning"));
    Theme::markAsError(m_warning);
    m_warning->hide();
    m_time->setObjectName(QStringLiteral("preflightTime"));
    m_measure = new QPushButton(this);
    m_measure->setObjectName(QStringLiteral("measureEpochTime"));
    layout->addWidget(m_measure, 0, Qt::AlignLeft);
    layout->addStretch(1);

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(300);
    connect(&m_debounce, &QTimer::timeout, this, &PreflightPanel::checkNow);
    connect(m_measure, &QPushButton::clicked, this, &PreflightPanel::measureTime);
    connect(m_useBatch, &QPushButton::clicked, this, [this] {
        if (m_hasReport && m_report.suggestedBatch > 0) emit batchSizeRequested(m_report.suggestedBatch);
    });
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        const Outcome outcome = m_watcher.result();
        if (outcome.generation == m_generation) show(outcome);
        if (m_rerun) {
            m_rerun = false;
            start(m_rerunSteps);
        }
    });
    retranslate();
}

PreflightPanel::~PreflightPanel() {
    if (m_cancel) m_cancel->store(true);
    m_watcher.waitForFinished();
}

void PreflightPanel::setProject(const engine::io::Project& project, const QString& path) {
    m_project = project;
    m_path = path;
    m_hasProject = true;
    ++m_generation;  // what is running now answers an older project
    if (m_cancel) m_cancel->store(true);
    m_debounce.start();
}

void PreflightPanel::checkNow() { start(0); }

void PreflightPanel::measureTime() { start(kCalibrationSteps); }

void PreflightPanel::start(int calibrationSteps) {
    m_debounce.stop();
    if (!m_hasProject) return;
    if (m_watcher.isRunning()) {
        m_rerun = true;  // latest wins
        m_rerunSteps = std::max(m_rerunSteps, calibrationSteps);
        return;
    }
    m_rerunSteps = 0;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 generation = ++m_generation;
    m_measure->setEnabled(false);
    if (calibrationSteps > 0) m_time->setText(tr("Timing %n training step(s) on the project's data…", nullptr, calibrationSteps));
    engine::api::PreflightRequest request;
    request.calibrationSteps = calibrationSteps;
    request.threads = trainingThreads();
    m_watcher.setFuture(QtConcurrent::run([project = m_project, path = m_path.toStdString(), request, generation,
                                           cancel = m_cancel] {
        Outcome out;
        out.generation = generation;
        auto r = engine::api::preflightTraining(project, path, request, cancel.get());
        out.ok = r.ok();
        if (r.ok()) out.report = std::move(r).value();
        else out.error = app::ErrorText::describe(r.error());
        return out;
    }));
}

QString PreflightPanel::deviceText(const engine::api::PreflightReport& r) const {
    if (r.device == "cpu")
        return tr("Device: CPU (%1 kernels), %n thread(s)", nullptr, trainingThreads())
            .arg(QString::fromStdString(engine::api::cpuInstructionSet()));
    const auto info = engine::api::gpuSystemInfo();
    for (const auto& gpu : info.gpus)
        if (QStringLiteral("cuda:%1").arg(gpu.index) == QString::fromStdString(r.device))
            return tr("Device: %1 — %2, %3 free of %4; driver CUDA %5.%6, cuDNN %7")
                .arg(QString::fromStdString(r.device), QString::fromStdString(gpu.name), bytes(gpu.freeMemory),
                     bytes(gpu.totalMemory))
                .arg(info.driverVersion / 1000)
                .arg((info.driverVersion % 1000) / 10)
                .arg(info.cudnnVersion);
    return tr("Device: %1 (not found on this machine)").arg(QString::fromStdString(r.device));
}

void PreflightPanel::show(const Outcome& outcome) {
    m_measure->setEnabled(true);
    m_errorText = outcome.error;
    if (!outcome.ok) {
        m_hasReport = false;
        m_device->clear();
        m_memory->setText(tr("Cannot check this training yet: %1").arg(outcome.error));
        m_warning->hide();
        m_useBatch->hide();
        m_time->clear();
        emit checked();
        return;
    }
    const bool timed = outcome.report.measuredSteps > 0;
    // A memory-only check keeps the last timing of the same batch and device.
    const bool keepTime = !timed && m_hasReport && m_report.measuredSteps > 0 && m_report.batch == outcome.report.batch &&
                          m_report.device == outcome.report.device;
    engine::api::PreflightReport r = outcome.report;
    if (keepTime) {
        r.measuredSteps = m_report.measuredSteps;
        r.firstStepSeconds = m_report.firstStepSeconds;
        r.secondsPerStep = m_report.secondsPerStep;
        r.samplesPerSecond = m_report.samplesPerSecond;
        r.trainingSamples = m_report.trainingSamples;
        r.stepsPerEpoch = m_report.stepsPerEpoch;
        r.epochSeconds = m_report.epochSeconds;
    }
    m_report = r;
    m_hasReport = true;
    m_device->setText(deviceText(r));
    const auto& m = r.memory;
    QString memory = tr("Predicted peak memory at batch %1 (%2): %3 — weights %4, gradients %5, optimizer %6, "
                        "activations %7")
                         .arg(QLocale().toString(qlonglong(r.batch)), QString::fromStdString(r.precision), bytes(r.peakBytes),
                              bytes(m.parameters), bytes(m.gradients), bytes(m.optimizerState), bytes(m.activations));
    if (r.budgetBytes > 0) memory += tr("; %1 free on the device.").arg(bytes(r.budgetBytes));
    m_memory->setText(memory);
    m_warning->setVisible(!r.fits);
    m_useBatch->setVisible(!r.fits && r.suggestedBatch > 0);
    if (!r.fits) {
        m_warning->setText(r.suggestedBatch > 0
                               ? tr("This does not fit: the largest batch that does is %1.").arg(QLocale().toString(qlonglong(r.suggestedBatch)))
                               : tr("This does not fit even at batch 1: use a smaller model or another device."));
        m_useBatch->setText(tr("Use batch %1").arg(QLocale().toString(qlonglong(r.suggestedBatch))));
    }
    if (r.measuredSteps > 0)
        m_time->setText(tr("About %1 per epoch of training steps: %2 steps × %3 (%4 samples/s); the first step took %5; validation comes on top.")
                            .arg(duration(r.epochSeconds), QLocale().toString(qlonglong(r.stepsPerEpoch)),
                                 duration(r.secondsPerStep), QLocale().toString(r.samplesPerSecond, 'f', 0),
                                 duration(r.firstStepSeconds)));
    else
        m_time->setText(tr("Time per epoch: not measured yet."));
    emit checked();
}

void PreflightPanel::retranslate() {
    m_title->setText(tr("Before you train"));
    m_measure->setText(tr("Measure time per epoch"));
    m_measure->setToolTip(tr("Runs %n real training step(s) on the project's data (nothing is saved)", nullptr, kCalibrationSteps));
    if (m_hasReport) {
        Outcome again;
        again.ok = true;
        again.report = m_report;
        show(again);
    } else if (m_time->text().isEmpty()) {
        m_time->setText(tr("Time per epoch: not measured yet."));
    }
}

void PreflightPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace kiln::ui::training
