// SPDX-License-Identifier: Apache-2.0
// A grid of MetricCharts, one per metric, sharing the smoothing, x-axis and log-scale controls:
// the live view of a run and the overlay of several runs.
#pragma once

#include <map>
#include <vector>

#include <QString>
#include <QWidget>

#include "ui/charts/metric_chart.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QSlider;

namespace kiln::ui::charts {

class ChartsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartsPanel(QWidget* parent = nullptr);

    void setRun(const QString& runId, const QString& displayName, const QColor& colour);
    void removeRun(const QString& runId);
    void setRunVisible(const QString& runId, bool visible);
    // Appends a point to the chart of `metric`, creating the chart on first use. Metrics named
    // "loss" come first, then in order of appearance.
    void append(const QString& metric, const QString& runId, Split split, int64_t step, double epoch,
                double wallTime, double value);
    void clear();
    // A vertical marker with a label on every chart (charts made later get it too): where a
    // fine-tuning stage of a run begins.
    void addMarker(const QString& runId, int64_t step, double epoch, double wallTime, const QString& label);

    MetricChart* chart(const QString& metric) const;
    QStringList metrics() const { return m_order; }

    void setSmoothing(double weight);
    double smoothing() const;
    void setXAxisMode(XAxisMode mode);
    XAxisMode xAxisMode() const { return m_xMode; }
    void setLogY(bool on);

    // One CSV / PNG per metric into `folder` (<metric>.csv, <metric>.png); false with a message
    // naming the file on the first failure.
    bool exportCsv(const QString& folder, QString* error = nullptr) const;
    bool exportPng(const QString& folder, QString* error = nullptr);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void relayout();

    QSlider* m_smoothing = nullptr;
    QLabel* m_smoothingLabel = nullptr;
    QLabel* m_smoothingValue = nullptr;
    QLabel* m_xLabel = nullptr;
    QComboBox* m_xCombo = nullptr;
    QCheckBox* m_logY = nullptr;
    QGridLayout* m_grid = nullptr;
    std::map<QString, MetricChart*> m_charts;
    QStringList m_order;
    std::map<QString, std::pair<QString, QColor>> m_runs;
    std::map<QString, bool> m_hidden;
    struct Marker {
        QString runId;
        int64_t step;
        double epoch, wallTime;
        QString label;
    };
    std::vector<Marker> m_markers;
    XAxisMode m_xMode = XAxisMode::Step;
    bool m_log = false;
};

}  // namespace kiln::ui::charts
