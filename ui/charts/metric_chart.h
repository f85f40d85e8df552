// SPDX-License-Identifier: Apache-2.0
// A live chart of one metric (loss, accuracy, learning rate...) for one or more runs, training and
// validation, drawn with QCustomPlot from decimated SeriesBuffers on a coalescing timer.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <QColor>
#include <QPointer>
#include <QString>
#include <QWidget>

#include "ui/charts/series_buffer.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;
class QTimer;

namespace kiln::ui::charts {

enum class Split { Train, Validation };

// A stable, distinguishable colour for the n-th run (a fixed qualitative palette).
QColor runColour(int index);

class MetricChart : public QWidget {
    Q_OBJECT
public:
    explicit MetricChart(const QString& metric, QWidget* parent = nullptr);
    ~MetricChart() override;

    QString metric() const { return m_metric; }
    void setTitle(const QString& title);

    // Declares a run (name and colour) before or after its first points.
    void setRun(const QString& runId, const QString& displayName, const QColor& colour);
    void removeRun(const QString& runId);
    void setRunVisible(const QString& runId, bool visible);
    QStringList runs() const;

    // Appends one point; the chart redraws at most every replotInterval() ms.
    void append(const QString& runId, Split split, int64_t step, double epoch, double wallTime, double value);

    void setXAxisMode(XAxisMode mode);
    XAxisMode xAxisMode() const { return m_xMode; }
    void setSmoothing(double weight);  // 0 .. 0.999, TensorBoard's debiased EMA
    double smoothing() const { return m_smoothing; }
    void setLogY(bool on);
    bool logY() const { return m_logY; }
    // Back to following the data (full x range, y fitted); a double click does the same.
    void resetView();
    bool following() const { return m_follow; }

    // A vertical marker with a label (a fine-tuning stage begins) at a position of a run, drawn on
    // whichever horizontal axis is chosen; removed with the run.
    void addMarker(const QString& runId, int64_t step, double epoch, double wallTime, const QString& label);
    int markerCount() const { return int(m_markers.size()); }
    QString markerLabel(int i) const { return m_markers[size_t(i)].label; }
    // Where marker i is drawn on the current horizontal axis.
    double markerX(int i) const;

    // Writes every point of every run: run, split, step, epoch, wall time, value, smoothed.
    bool exportCsv(const QString& path, QString* error = nullptr) const;
    bool exportPng(const QString& path, int width = 0, int height = 0);

    const SeriesBuffer* series(const QString& runId, Split split) const;
    QCustomPlot* plot() const { return m_plot; }
    // The text shown for the point nearest to x (empty when there is none); used by hover.
    QString describeNearest(double x, double y) const;

    // Redraws now (tests and benchmarks); returns the milliseconds spent building the data.
    double rebuildNow();
    int lastDrawnPoints() const { return m_lastDrawnPoints; }
    static int replotInterval() { return 33; }
    static constexpr int kSpacingMs = 6;  // between two charts' redraws

signals:
    void hoverTextChanged(const QString& text);

private:
    struct Trace {
        QString runId;
        Split split = Split::Train;
        SeriesBuffer buffer;
        QCPGraph* raw = nullptr;
        QCPGraph* smooth = nullptr;
    };
    struct Marker {
        QString runId;
        int64_t step = 0;
        double epoch = 0;
        double wallTime = 0;
        QString label;
        QCPItemStraightLine* line = nullptr;
        QCPItemText* text = nullptr;
    };
    struct Run {
        QString name;
        QColor colour;
        bool visible = true;
    };

    Trace& trace(const QString& runId, Split split);
    void styleTrace(Trace& t);
    void scheduleRebuild();
    void rebuild();
    void onMouseMove(QMouseEvent* event);
    void onUserNavigates();
    void updateAxisTicker();
    void placeMarkers();

    QString m_metric;
    QCustomPlot* m_plot = nullptr;
    QTimer* m_timer = nullptr;
    QCPItemStraightLine* m_cursor = nullptr;
    std::map<QString, Run> m_runs;
    std::vector<std::unique_ptr<Trace>> m_traces;
    std::vector<Marker> m_markers;
    XAxisMode m_xMode = XAxisMode::Step;
    double m_smoothing = 0.6;
    bool m_logY = false;
    bool m_follow = true;
    bool m_updatingRange = false;
    int m_lastDrawnPoints = 0;
    std::vector<double> m_xs, m_ys;  // scratch for decimation
};

}  // namespace kiln::ui::charts
