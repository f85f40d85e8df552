// SPDX-License-Identifier: Apache-2.0
// ChartsPanel: shared controls and a two-column grid of metric charts.
#include "ui/charts/charts_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QVBoxLayout>

namespace kiln::ui::charts {

ChartsPanel::ChartsPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    m_smoothingLabel = new QLabel(this);
    m_smoothing = new QSlider(Qt::Horizontal, this);
    m_smoothing->setRange(0, 99);
    m_smoothing->setValue(60);
    m_smoothing->setObjectName(QStringLiteral("smoothingSlider"));
    m_smoothingValue = new QLabel(QStringLiteral("0.60"), this);
    m_xLabel = new QLabel(this);
    m_xCombo = new QComboBox(this);
    m_xCombo->setObjectName(QStringLiteral("xAxisCombo"));
    m_logY = new QCheckBox(this);
    m_logY->setObjectName(QStringLiteral("logYCheck"));
    controls->addWidget(m_smoothingLabel);
    controls->addWidget(m_smoothing, 1);
    controls->addWidget(m_smoothingValue);
    controls->addSpacing(12);
    controls->addWidget(m_xLabel);
    controls->addWidget(m_xCombo);
    controls->addWidget(m_logY);
    controls->addStretch();
    layout->addLayout(controls);

    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* gridHost = new QWidget(scroll);
    m_grid = new QGridLayout(gridHost);
    m_grid->setContentsMargins(0, 0, 0, 0);
    scroll->setWidget(gridHost);
    layout->addWidget(scroll, 1);

    for (int i = 0; i < 4; ++i) {
        m_xCombo->addItem(QString(), i);
    }
    retranslate();

    connect(m_smoothing, &QSlider::valueChanged, this, [this](int v) {
        const double w = v / 100.0;
        m_smoothingValue->setText(QString::number(w, 'f', 2));
        for (auto& [name, chart] : m_charts) {
            chart->setSmoothing(w);
        }
    });
    connect(m_xCombo, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int index) { setXAxisMode(static_cast<XAxisMode>(m_xCombo->itemData(index).toInt())); });
    connect(m_logY, &QCheckBox::toggled, this, &ChartsPanel::setLogY);
}

void ChartsPanel::retranslate()
{
    m_smoothingLabel->setText(tr("Smoothing"));
    m_xLabel->setText(tr("Horizontal axis"));
    m_xCombo->setItemText(0, tr("Step"));
    m_xCombo->setItemText(1, tr("Epoch"));
    m_xCombo->setItemText(2, tr("Relative time"));
    m_xCombo->setItemText(3, tr("Wall time"));
    m_logY->setText(tr("Logarithmic"));
    m_smoothing->setToolTip(tr("Exponential moving average, debiased as in TensorBoard"));
}

void ChartsPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(event);
}

void ChartsPanel::setRun(const QString& runId, const QString& displayName, const QColor& colour)
{
    m_runs[runId] = {displayName, colour};
    for (auto& [name, chart] : m_charts) {
        chart->setRun(runId, displayName, colour);
    }
}

void ChartsPanel::addMarker(const QString& runId, int64_t step, double epoch, double wallTime, const QString& label)
{
    m_markers.push_back({runId, step, epoch, wallTime, label});
    for (auto& [name, chart] : m_charts) {
        chart->addMarker(runId, step, epoch, wallTime, label);
    }
}

void ChartsPanel::removeRun(const QString& runId)
{
    std::erase_if(m_markers, [&](const Marker& m) { return m.runId == runId; });
    m_runs.erase(runId);
    m_hidden.erase(runId);
    for (auto& [name, chart] : m_charts) {
        chart->removeRun(runId);
    }
}

void ChartsPanel::setRunVisible(const QString& runId, bool visible)
{
    m_hidden[runId] = !visible;
    for (auto& [name, chart] : m_charts) {
        chart->setRunVisible(runId, visible);
    }
}

void ChartsPanel::append(const QString& metric, const QString& runId, Split split, int64_t step, double epoch,
                         double wallTime, double value)
{
    auto it = m_charts.find(metric);
    if (it == m_charts.end()) {
        auto* chart = new MetricChart(metric, this);
        chart->setObjectName(QStringLiteral("chart_") + metric);
        chart->setSmoothing(smoothing());
        chart->setXAxisMode(m_xMode);
        chart->setLogY(m_log);
        for (const auto& [id, run] : m_runs) {
            chart->setRun(id, run.first, run.second);
            if (m_hidden.count(id) && m_hidden[id]) {
                chart->setRunVisible(id, false);
            }
        }
        for (const auto& m : m_markers) {
            chart->addMarker(m.runId, m.step, m.epoch, m.wallTime, m.label);
        }
        it = m_charts.emplace(metric, chart).first;
        if (metric == QLatin1String("loss")) {
            m_order.prepend(metric);
        } else {
            m_order.append(metric);
        }
        relayout();
    }
    it->second->append(runId, split, step, epoch, wallTime, value);
}

void ChartsPanel::relayout()
{
    for (int i = 0; i < m_order.size(); ++i) {
        MetricChart* chart = m_charts.at(m_order[i]);
        m_grid->removeWidget(chart);
        m_grid->addWidget(chart, i / 2, i % 2);
    }
}

void ChartsPanel::clear()
{
    for (auto& [name, chart] : m_charts) {
        delete chart;
    }
    m_charts.clear();
    m_order.clear();
    m_runs.clear();
    m_hidden.clear();
    m_markers.clear();
}

MetricChart* ChartsPanel::chart(const QString& metric) const
{
    const auto it = m_charts.find(metric);
    return it == m_charts.end() ? nullptr : it->second;
}

void ChartsPanel::setSmoothing(double weight)
{
    m_smoothing->setValue(int(std::lround(std::clamp(weight, 0.0, 0.99) * 100)));
}

double ChartsPanel::smoothing() const
{
    return m_smoothing->value() / 100.0;
}

void ChartsPanel::setXAxisMode(XAxisMode mode)
{
    m_xMode = mode;
    const int index = m_xCombo->findData(int(mode));
    if (index >= 0 && m_xCombo->currentIndex() != index) {
        m_xCombo->setCurrentIndex(index);  // re-enters with the same mode: charts ignore repeats
    }
    for (auto& [name, chart] : m_charts) {
        chart->setXAxisMode(mode);
    }
}

void ChartsPanel::setLogY(bool on)
{
    m_log = on;
    if (m_logY->isChecked() != on) {
        m_logY->setChecked(on);
    }
    for (auto& [name, chart] : m_charts) {
        chart->setLogY(on);
    }
}

bool ChartsPanel::exportCsv(const QString& folder, QString* error) const
{
    QDir().mkpath(folder);
    for (const auto& [name, chart] : m_charts) {
        if (!chart->exportCsv(QDir(folder).filePath(name + QStringLiteral(".csv")), error)) {
            return false;
        }
    }
    return true;
}

bool ChartsPanel::exportPng(const QString& folder, QString* error)
{
    QDir().mkpath(folder);
    for (auto& [name, chart] : m_charts) {
        const QString path = QDir(folder).filePath(name + QStringLiteral(".png"));
        if (!chart->exportPng(path)) {
            if (error) {
                *error = tr("Cannot write %1").arg(path);
            }
            return false;
        }
    }
    return true;
}

}  // namespace kiln::ui::charts
