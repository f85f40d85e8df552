// SPDX-License-Identifier: Apache-2.0
// Pipeline settings form and a short measuring run of the input pipeline
// (api::measureImageFolderPipeline).
#include "ui/dataset_browser/pipeline_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QtConcurrent>

#include "engine/api/data_preview.h"

namespace kiln::ui {

PipelinePanel::PipelinePanel(QWidget* parent)
    : QWidget(parent),
      m_batch(new QSpinBox(this)),
      m_shuffle(new QSpinBox(this)),
      m_workers(new QSpinBox(this)),
      m_prefetch(new QSpinBox(this)),
      m_cache(new QComboBox(this)),
      m_run(new QPushButton(tr("Measure rate"), this)),
      m_result(new QLabel(this)) {
    auto* form = new QFormLayout(this);
    m_batch->setObjectName(QStringLiteral("pipelineBatchSize"));
    m_shuffle->setObjectName(QStringLiteral("pipelineShuffleBuffer"));
    m_workers->setObjectName(QStringLiteral("pipelineWorkers"));
    m_prefetch->setObjectName(QStringLiteral("pipelinePrefetch"));
    m_batch->setRange(1, 65536);
    m_batch->setValue(32);
    m_shuffle->setRange(0, 10'000'000);
    m_shuffle->setValue(10000);
    m_shuffle->setToolTip(
        tr("Samples held for shuffling; 0 keeps the order, the data set's size shuffles fully."));
    m_workers->setRange(1, 64);
    m_workers->setValue(std::max(1, QThread::idealThreadCount()));
    m_workers->setToolTip(tr("Threads that read, decode and transform samples."));
    m_prefetch->setRange(1, 64);
    m_prefetch->setValue(2);
    m_prefetch->setToolTip(tr("Batches prepared ahead of the trainer."));
    m_cache->addItem(tr("None"), QStringLiteral("none"));
    m_cache->addItem(tr("Memory"), QStringLiteral("memory"));
    m_cache->addItem(tr("File"), QStringLiteral("file"));
    m_cache->setToolTip(tr("Keep decoded samples after the first epoch (before random transforms)."));
    form->addRow(tr("Batch size:"), m_batch);
    form->addRow(tr("Shuffle buffer:"), m_shuffle);
    form->addRow(tr("Workers:"), m_workers);
    form->addRow(tr("Prefetch:"), m_prefetch);
    form->addRow(tr("Cache:"), m_cache);
    form->addRow(m_run);
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(m_result);
    for (QSpinBox* s : {m_batch, m_shuffle, m_workers, m_prefetch})
        connect(s, &QSpinBox::valueChanged, this, &PipelinePanel::settingsChanged);
    connect(m_cache, &QComboBox::currentIndexChanged, this, &PipelinePanel::settingsChanged);
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (isRunning())
            cancel();
        else
            measure();
    });
    connect(&m_watcher, &QFutureWatcher<PipelineMeasurement>::finished, this, [this] {
        m_last = m_watcher.result();
        m_run->setText(tr("Measure rate"));
        if (!m_last.ok) {
            m_result->setText(m_last.error);
        } else {
            const QLocale loc;
            QString text = tr("%1 samples/s (%2 samples in %3 s, %4 batches of %5)")
                               .arg(loc.toString(m_last.samplesPerSecond, 'f', 0),
                                    loc.toString(m_last.samples), loc.toString(m_last.seconds, 'f', 2),
                                    loc.toString(m_last.batches), m_last.outputShape);
            if (m_last.skipped > 0)
                text += QLatin1Char('\n') + tr("%n bad sample(s) left out.", nullptr, int(m_last.skipped));
            m_result->setText(text);
        }
        emit measured();
    });
    m_result->setText(tr("Measures how fast the input pipeline delivers batches with these settings."));
}

PipelinePanel::~PipelinePanel() {
    cancel();
    m_watcher.waitForFinished();
}

void PipelinePanel::setImageFolder(const QString& root) {
    m_root = root;
}

void PipelinePanel::setTransforms(const nlohmann::json& transforms) {
    m_transforms = transforms.is_array() ? transforms : nlohmann::json::array();
}

nlohmann::json PipelinePanel::settings() const {
    nlohmann::json j;
    j["batch_size"] = m_batch->value();
    j["shuffle_buffer"] = m_shuffle->value();
    j["workers"] = m_workers->value();
    j["prefetch"] = m_prefetch->value();
    const std::string cache = m_cache->currentData().toString().toStdString();
    if (cache != "none") j["cache"] = cache;
    return j;
}

void PipelinePanel::setSettings(const nlohmann::json& data) {
    auto setInt = [&](QSpinBox* box, const char* key) {
        if (data.contains(key) && data[key].is_number_integer()) box->setValue(data[key].get<int>());
    };
    setInt(m_batch, "batch_size");
    setInt(m_shuffle, "shuffle_buffer");
    setInt(m_workers, "workers");
    setInt(m_prefetch, "prefetch");
    if (data.contains("cache") && data["cache"].is_string()) {
        const int i = m_cache->findData(QString::fromStdString(data["cache"].get<std::string>()));
        if (i >= 0) m_cache->setCurrentIndex(i);
    }
}

void PipelinePanel::cancel() {
    if (m_stop) m_stop->store(true);
}

void PipelinePanel::measure(double seconds) {
    if (isRunning()) return;
    if (m_root.isEmpty()) {
        m_result->setText(tr("Open an image folder first."));
        return;
    }
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_run->setText(tr("Stop"));
    m_result->setText(tr("Measuring…"));
    m_watcher.setFuture(
        QtConcurrent::run(&PipelinePanel::run, m_root, m_transforms, settings(), seconds, m_stop));
}

PipelineMeasurement PipelinePanel::run(QString root, nlohmann::json transforms, nlohmann::json settings,
                                       double seconds, std::shared_ptr<std::atomic<bool>> stop) {
    PipelineMeasurement out;
    auto rate = engine::api::measureImageFolderPipeline(root.toStdString(), std::move(transforms), settings, seconds, *stop);
    if (!rate.ok()) {
        const engine::Error& e = rate.error();
        const std::string problem = e.param("problem");
        if (problem == "empty")
            out.error = tr("The folder holds no pictures.");
        else if (problem == "undecodable")
            out.error = tr("None of the first pictures could be decoded.");
        else
            out.error = tr("The pipeline stopped: %1").arg(QString::fromStdString(e.toString()));
        return out;
    }
    QStringList dims;
    for (int64_t d : rate->sampleShape) dims << QString::number(d);
    out.outputShape = dims.join(QStringLiteral("×"));
    out.ok = true;
    out.samples = rate->samples;
    out.batches = rate->batches;
    out.skipped = rate->skipped;
    out.seconds = rate->seconds;
    out.samplesPerSecond = rate->samplesPerSecond;
    out.waitFraction = rate->waitFraction;
    return out;
}

}  // namespace kiln::ui
