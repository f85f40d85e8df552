// SPDX-License-Identifier: Apache-2.0
// The range test's dialog: a QtConcurrent job streams points back over queued calls, the plot
// replots on a coalescing timer, closing the dialog cancels the job between steps.
#include "ui/training/lr_finder_dialog.h"

#include <QEvent>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <qcustomplot.h>

#include "app/common/error_text.h"
#include "engine/api/learning_rate_finder.h"
#include "ui/charts/chart_theme.h"

namespace kiln::ui::training {

namespace {
struct Outcome {
    bool ok = false;
    QString error;
    engine::api::LrFinderResult result;
};
}  // namespace

LrFinderDialog::LrFinderDialog(const engine::io::Project& project, const QString& projectPath, QWidget* parent)
    : QDialog(parent), m_project(project), m_projectPath(projectPath), m_cancel(std::make_shared<std::atomic<bool>>(false)) {
    setObjectName(QStringLiteral("lrFinderDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    m_stepsLabel = new QLabel(this);
    m_steps = new QSpinBox(this);
    m_steps->setObjectName(QStringLiteral("lrFinderSteps"));
    m_steps->setRange(10, 1000);
    m_steps->setValue(100);
    m_stepsLabel->setBuddy(m_steps);
    m_run = new QPushButton(this);
    m_run->setObjectName(QStringLiteral("lrFinderRun"));
    m_use = new QPushButton(this);
    m_use->setObjectName(QStringLiteral("lrFinderUse"));
    m_use->setEnabled(false);
    controls->addWidget(m_stepsLabel);
    controls->addWidget(m_steps);
    controls->addStretch();
    controls->addWidget(m_run);
    controls->addWidget(m_use);
    layout->addLayout(controls);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("lrFinderPlot"));
    m_plot->setMinimumSize(480, 300);
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->xAxis->setNumberFormat(QStringLiteral("eb"));
    m_plot->xAxis->setNumberPrecision(0);
    m_plot->xAxis->setRange(1e-7, 10);
    m_plot->legend->setVisible(true);
    charts::followTheme(m_plot);
    m_loss = m_plot->addGraph();
    m_loss->setPen(QPen(QColor(31, 119, 180, 110), 1));
    m_smoothed = m_plot->addGraph();
    m_smoothed->setPen(QPen(QColor(31, 119, 180), 2));
    m_marker = new QCPItemStraightLine(m_plot);
    m_marker->setPen(QPen(QColor(214, 39, 40), 1.5, Qt::DashLine));
    m_marker->setVisible(false);
    layout->addWidget(m_plot, 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("lrFinderStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    // Points may arrive thousands of times a second on small models: one replot per 40 ms at most.
    m_replot = new QTimer(this);
    m_replot->setSingleShot(true);
    m_replot->setInterval(40);
    connect(m_replot, &QTimer::timeout, this, [this] {
        m_plot->rescaleAxes();
        m_plot->xAxis->setRange(1e-7, 10);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(m_run, &QPushButton::clicked, this, &LrFinderDialog::start);
    connect(m_use, &QPushButton::clicked, this, [this] {
        emit learningRateChosen(m_result.suggestedLr);
        accept();
    });
    retranslate();
}

LrFinderDialog::~LrFinderDialog() { m_cancel->store(true); }

void LrFinderDialog::start() {
    if (m_running) return;
    m_running = true;
    m_run->setEnabled(false);
    m_use->setEnabled(false);
    m_marker->setVisible(false);
    m_loss->data()->clear();
    m_smoothed->data()->clear();
    m_result = {};
    m_status->setText(tr("Trying learning rates…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    engine::api::LrFinderRequest request;
    request.finder.steps = m_steps->value();
    const engine::io::Project project = m_project;
    const std::string path = m_projectPath.toStdString();
    auto cancel = m_cancel;
    QPointer<LrFinderDialog> self(this);
    auto* watcher = new QFutureWatcher<std::shared_ptr<Outcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_running = false;
        m_run->setEnabled(true);
        const auto outcome = watcher->result();
        if (!outcome->ok) {
            m_status->setText(tr("The range test failed: %1").arg(outcome->error));
            emit finished(false, outcome->error);
            return;
        }
        m_result = outcome->result;
        // The plot shows exactly the result's points (the streamed ones may lag behind).
        m_loss->data()->clear();
        m_smoothed->data()->clear();
        for (const auto& p : m_result.points) addPoint(p);
        if (m_result.points.empty()) {
            m_status->setText(tr("No step was run."));
            emit finished(true, QString());
            return;
        }
        m_marker->point1->setCoords(m_result.suggestedLr, 0);
        m_marker->point2->setCoords(m_result.suggestedLr, 1);
        m_marker->setVisible(true);
        m_use->setEnabled(true);
        const QString rate = QString::number(m_result.suggestedLr, 'e', 2);
        m_status->setText(m_result.rule == "steepest"
                              ? tr("Suggested learning rate: %1, where the smoothed loss falls fastest.").arg(rate)
                              : tr("Suggested learning rate: %1, a tenth of the rate with the lowest loss (the loss never fell).")
                                    .arg(rate));
        m_replot->start();
        emit finished(true, QString());
    });
    watcher->setFuture(QtConcurrent::run([project, path, request, cancel, self]() {
        auto out = std::make_shared<Outcome>();
        try {
            auto progress = [self](const engine::api::LrFinderPoint& p) {
                QMetaObject::invokeMethod(
                    qApp, [self, p] { if (self) self->addPoint(p); }, Qt::QueuedConnection);
            };
            auto r = engine::api::findLearningRate(project, path, request, progress, cancel.get());
            if (!r.ok()) {
                out->error = app::ErrorText::describe(engine::io::locate(r.error(), project));
                return out;
            }
            out->result = std::move(r.value());
            out->ok = true;
        } catch (const std::exception& ex) {
            out->error = QString::fromUtf8(ex.what());
        }
        return out;
    }));
}

void LrFinderDialog::addPoint(const engine::api::LrFinderPoint& p) {
    m_loss->addData(p.lr, p.loss);
    m_smoothed->addData(p.lr, p.smoothed);
    if (!m_replot->isActive()) m_replot->start();
}

void LrFinderDialog::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QDialog::changeEvent(event);
}

void LrFinderDialog::retranslate() {
    setWindowTitle(tr("Find learning rate"));
    m_stepsLabel->setText(tr("Steps:"));
    m_run->setText(tr("Run"));
    m_use->setText(tr("Use suggested"));
    m_plot->xAxis->setLabel(tr("Learning rate"));
    m_plot->yAxis->setLabel(tr("Loss"));
    m_loss->setName(tr("Loss per step"));
    m_smoothed->setName(tr("Smoothed loss"));
    if (m_status->text().isEmpty()) m_status->setText(tr("Training steps from the current weights with the learning rate growing from 1e-7 to 10; nothing is saved."));
}

}  // namespace kiln::ui::training
