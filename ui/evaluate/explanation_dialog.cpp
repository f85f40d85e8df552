// SPDX-License-Identifier: Apache-2.0
// The explanation dialog: a worker state shared with the jobs (sample, Explainer, thread pool),
// jobs run with QtConcurrent one at a time, the overlay blended on the GUI thread when only the
// opacity changes.
#include "ui/evaluate/explanation_dialog.h"

#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QPixmap>
#include <QPointer>
#include <QSlider>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "app/common/error_text.h"

namespace kiln::ui::evaluate {

namespace {
constexpr int kShownSize = 256;  // pictures are scaled up (nearest) to about this many pixels
}

// Lives as long as the dialog or its last job, whichever is later; only one job touches it at a time.
struct ExplanationDialog::Worker {
    engine::io::Project project;
    std::string projectPath;
    engine::api::EvaluationOptions options;
    int64_t sample = 0;
    std::unique_ptr<engine::ThreadPool> pool;
    std::unique_ptr<engine::api::Explainer> explainer;
    std::optional<engine::api::SampleInput> input;
    std::vector<std::string> classNames;  // the data's, read with the sample
};

struct ExplanationDialog::Result {
    bool ok = false;
    QString error;
    engine::api::Heatmap heat;
    std::vector<uint8_t> picture;  // RGB of the sample
    std::vector<std::string> layers;
    std::string defaultLayer;
    std::vector<std::string> classNames;
};

ExplanationDialog::ExplanationDialog(const engine::io::Project& project, const QString& projectPath,
                                     const engine::api::EvaluationOptions& options, int64_t sample, const QString& source,
                                     std::vector<std::string> classNames, QWidget* parent)
    : QDialog(parent), m_worker(std::make_shared<Worker>()), m_classNames(std::move(classNames)), m_source(source) {
    setObjectName(QStringLiteral("explanationDialog"));
    m_worker->project = project;
    m_worker->projectPath = projectPath.toStdString();
    m_worker->options = options;
    m_worker->sample = sample;

    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_methodLabel = new QLabel(this);
    m_method = new QComboBox(this);
    m_method->setObjectName(QStringLiteral("explainMethod"));
    m_method->addItem(QString(), QStringLiteral("gradcam"));
    m_method->addItem(QString(), QStringLiteral("saliency"));
    form->addRow(m_methodLabel, m_method);
    m_layerLabel = new QLabel(this);
    m_layer = new QComboBox(this);
    m_layer->setObjectName(QStringLiteral("explainLayer"));
    form->addRow(m_layerLabel, m_layer);
    m_classLabel = new QLabel(this);
    m_class = new QComboBox(this);
    m_class->setObjectName(QStringLiteral("explainClass"));
    m_class->addItem(QString(), -1);  // the predicted class
    for (size_t c = 0; c < m_classNames.size(); ++c)
        m_class->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(m_classNames[c])).arg(c), int(c));
    form->addRow(m_classLabel, m_class);
    m_opacityLabel = new QLabel(this);
    m_opacity = new QSlider(Qt::Horizontal, this);
    m_opacity->setObjectName(QStringLiteral("explainOpacity"));
    m_opacity->setRange(0, 100);
    m_opacity->setValue(50);
    m_opacity->setPageStep(10);
    form->addRow(m_opacityLabel, m_opacity);
    layout->addLayout(form);

    auto* pictures = new QHBoxLayout;
    m_picture = new QLabel(this);
    m_picture->setObjectName(QStringLiteral("explainPicture"));
    m_overlayView = new QLabel(this);
    m_overlayView->setObjectName(QStringLiteral("explainOverlay"));
    for (QLabel* l : {m_picture, m_overlayView}) {
        l->setMinimumSize(kShownSize, kShownSize);
        l->setAlignment(Qt::AlignCenter);
        pictures->addWidget(l);
    }
    layout->addLayout(pictures, 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("explainStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The caption (the picture's path, the prediction and its score) arrives after the dialog is
    // shown and wraps onto two or three lines: its room is kept from the start, and the dialog
    // cannot be made smaller than its contents, so the caption never lies over the pictures.
    m_status->setMinimumHeight(m_status->fontMetrics().lineSpacing() * 3);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    layout->addWidget(m_status);
    layout->setSizeConstraint(QLayout::SetMinimumSize);

    connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
        m_layer->setEnabled(m_method->currentData().toString() == QLatin1String("gradcam"));
        compute();
    });
    connect(m_layer, &QComboBox::currentIndexChanged, this, [this] {
        if (m_layersFilled) compute();
    });
    connect(m_class, &QComboBox::currentIndexChanged, this, [this] { compute(); });
    connect(m_opacity, &QSlider::valueChanged, this, [this] { redraw(); });
    retranslate();
    compute();
}

ExplanationDialog::~ExplanationDialog() = default;

void ExplanationDialog::compute() {
    if (m_busy) {  // after the running job, with the settings of then
        m_pending = true;
        return;
    }
    m_busy = true;
    m_pending = false;
    m_status->setText(tr("Computing…"));
    const bool gradCam = m_method->currentData().toString() == QLatin1String("gradcam");
    const engine::api::ExplainMethod method = gradCam ? engine::api::ExplainMethod::GradCam : engine::api::ExplainMethod::Saliency;
    const std::string layer = m_layersFilled ? m_layer->currentData().toString().toStdString() : std::string();
    std::optional<int64_t> cls;
    if (m_class->currentData().toInt() >= 0) cls = m_class->currentData().toInt();
    auto worker = m_worker;
    auto* watcher = new QFutureWatcher<std::shared_ptr<Result>>(this);
    QPointer<ExplanationDialog> self(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, self, watcher] {
        watcher->deleteLater();
        if (!self) return;
        m_busy = false;
        showResult(*watcher->result());
        if (m_pending) compute();
    });
    watcher->setFuture(QtConcurrent::run([worker, method, layer, cls]() {
        auto out = std::make_shared<Result>();
        try {
            auto& w = *worker;
            if (!w.pool) w.pool = std::make_unique<engine::ThreadPool>(w.options.threads);
            if (!w.explainer) {
                auto e = engine::api::Explainer::create(w.project, w.options.weights, *w.pool);
                if (!e.ok()) {
                    out->error = app::ErrorText::describe(engine::io::locate(e.error(), w.project));
                    return out;
                }
                w.explainer = std::move(e.value());
            }
            if (!w.input) {
                engine::Status st = engine::api::forEachSample(w.project, w.projectPath, w.options,
                                                       [&](const engine::api::SampleInput& s) -> engine::Result<bool> {
                                                           if (s.index != w.sample) return true;
                                                           if (s.classNames != nullptr) w.classNames = *s.classNames;
                                                           w.input = s;
                                                           w.input->classNames = nullptr;  // not kept past the pass
                                                           return false;
                                                       });
                if (!st.ok()) {
                    out->error = app::ErrorText::describe(engine::io::locate(st.error(), w.project));
                    return out;
                }
                if (!w.input) {
                    out->error = ExplanationDialog::tr("The split no longer holds sample %1.").arg(w.sample);
                    return out;
                }
            }
            out->classNames = w.classNames;
            out->layers = engine::api::gradCamLayers(w.explainer->model());
            if (auto d = engine::api::defaultGradCamLayer(w.explainer->model()); d.ok()) out->defaultLayer = *d;
            const auto& shape = w.explainer->inputShape();
            out->picture = engine::api::pictureRgb(w.input->data.data(), shape[1], shape[2], shape[3]);
            auto heat = w.explainer->explain(w.input->data.data(), method, layer, cls);
            if (!heat.ok()) {
                out->error = app::ErrorText::describe(heat.error());
                return out;
            }
            out->heat = std::move(heat.value());
            out->ok = true;
        } catch (const std::exception& ex) {
            out->error = QString::fromUtf8(ex.what());
        }
        return out;
    }));
}

void ExplanationDialog::showResult(const Result& r) {
    if (!m_layersFilled && !r.layers.empty()) {
        // Grad-CAM's layers are known once the model is; the default is computed already.
        const QSignalBlocker block(m_layer);
        for (const auto& name : r.layers) m_layer->addItem(QString::fromStdString(name), QString::fromStdString(name));
        const int at = m_layer->findData(QString::fromStdString(r.defaultLayer));
        m_layer->setCurrentIndex(std::max(at, 0));
        m_layersFilled = true;
    }
    if (m_classNames.empty() && !r.classNames.empty()) {
        // Opened without the class names (from the dataset browser): the data's, once read.
        m_classNames = r.classNames;
        const QSignalBlocker block(m_class);
        for (size_t c = 0; c < m_classNames.size(); ++c)
            m_class->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(m_classNames[c])).arg(c), int(c));
    }
    if (!r.picture.empty()) m_pictureRgb = r.picture;
    if (!r.ok) {
        m_heat = {};
        m_error = r.error;
        m_overlay = {};
        m_overlayView->clear();
        m_status->setText(tr("Explanation failed: %1").arg(r.error));
        emit explained(false);
        return;
    }
    m_error.clear();
    m_heat = r.heat;
    auto className = [&](int64_t c) {
        return c >= 0 && size_t(c) < m_classNames.size() ? QString::fromStdString(m_classNames[size_t(c)]) : QString::number(c);
    };
    m_status->setText(tr("%1 — predicted %2; explaining %3 (score %4)")
                          .arg(m_source, className(m_heat.predictedClass), className(m_heat.explainedClass))
                          .arg(double(m_heat.score), 0, 'f', 4));
    redraw();
    emit explained(true);
}

void ExplanationDialog::redraw() {
    const int h = int(m_heat.height), w = int(m_heat.width);
    if (h <= 0 || w <= 0 || m_pictureRgb.size() != size_t(h * w * 3)) return;
    const int scale = std::max(1, kShownSize / std::max(h, w));
    auto toImage = [&](const std::vector<uint8_t>& rgb) {
        QImage img(rgb.data(), w, h, w * 3, QImage::Format_RGB888);
        return img.scaled(w * scale, h * scale, Qt::IgnoreAspectRatio, Qt::FastTransformation);  // deep copy
    };
    m_picture->setPixmap(QPixmap::fromImage(toImage(m_pictureRgb)));
    m_overlay = toImage(engine::api::overlayRgb(m_pictureRgb, m_heat, float(m_opacity->value()) / 100.0f));
    m_overlayView->setPixmap(QPixmap::fromImage(m_overlay));
}

void ExplanationDialog::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QDialog::changeEvent(event);
}

void ExplanationDialog::retranslate() {
    setWindowTitle(tr("Explain sample: %1").arg(m_source));
    m_methodLabel->setText(tr("Method:"));
    m_method->setItemText(0, tr("Grad-CAM"));
    m_method->setItemText(1, tr("Saliency (input gradient)"));
    m_layerLabel->setText(tr("Layer:"));
    m_classLabel->setText(tr("Class:"));
    m_class->setItemText(0, tr("Predicted class"));
    m_opacityLabel->setText(tr("Opacity:"));
}

}  // namespace kiln::ui::evaluate
