// SPDX-License-Identifier: Apache-2.0
// Live-chart benchmark: 1M points per series, then frame times while streaming, panning and zooming.
// Prints one JSON object (wall-clock frame times and the GUI thread's CPU time per frame); run
// offscreen or under Xvfb (run_chart_bench.sh does both).
#include <QApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <time.h>

#include <qcustomplot.h>

#include "ui/charts/metric_chart.h"

using namespace kiln::ui::charts;

namespace {

struct Stats {
    double median = 0, p99 = 0, max = 0;
};

Stats summarize(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    Stats s;
    s.median = v[v.size() / 2];
    s.p99 = v[std::min(v.size() - 1, size_t(std::ceil(v.size() * 0.99)) - 1)];
    s.max = v.back();
    return s;
}

QJsonObject toJson(const Stats& s)
{
    return QJsonObject{{QStringLiteral("median_ms"), s.median}, {QStringLiteral("p99_ms"), s.p99},
                       {QStringLiteral("max_ms"), s.max}};
}

// This thread's CPU time in milliseconds: what a frame costs the GUI thread, which on a shared
// machine the wall-clock frame time overstates by however long the thread waited for a core.
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const int points = argc > 1 ? std::atoi(argv[1]) : 1000000;
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(1200, 500);
    chart.show();
    QApplication::processEvents();

    // Three series of `points` each: two runs' training loss and one validation curve.
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0, 0.05);
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < points; ++i) {
        const double base = 2.0 * std::exp(-i / double(points) * 4) + 0.1;
        chart.append(QStringLiteral("run1"), Split::Train, i, i / 1000.0, 1.7e9 + i * 0.002, base + noise(rng));
        chart.append(QStringLiteral("run2"), Split::Train, i, i / 1000.0, 1.7e9 + i * 0.002, base * 1.1 + noise(rng));
        chart.append(QStringLiteral("run1"), Split::Validation, i, i / 1000.0, 1.7e9 + i * 0.002, base * 1.05);
    }
    const double appendSeconds = clock.nsecsElapsed() / 1e9;

    // One frame: decimate the visible range of every series and repaint the widget.
    std::vector<double> cpu;  // the CPU time of each frame, in the order taken
    auto frame = [&] {
        const double before = threadCpuMs();
        const double wall = chart.rebuildNow();
        cpu.push_back(threadCpuMs() - before);
        return wall;
    };
    frame();  // warm-up: first layout and label caches

    // Streaming: 1,000 new points per series per frame, the chart following the data.
    std::vector<double> streaming;
    cpu.clear();
    int64_t step = points;
    for (int f = 0; f < 60; ++f) {
        for (int k = 0; k < 1000; ++k, ++step) {
            chart.append(QStringLiteral("run1"), Split::Train, step, step / 1000.0, 1.7e9 + step * 0.002, 0.1 + noise(rng));
            chart.append(QStringLiteral("run2"), Split::Train, step, step / 1000.0, 1.7e9 + step * 0.002, 0.1 + noise(rng));
            chart.append(QStringLiteral("run1"), Split::Validation, step, step / 1000.0, 1.7e9 + step * 0.002, 0.1);
        }
        streaming.push_back(frame());
    }
    const std::vector<double> streamingCpu = cpu;
    // Smoothing change: the EMA is recomputed over every point once, then frames are normal.
    QElapsedTimer smoothClock;
    smoothClock.start();
    chart.setSmoothing(0.9);
    const double smoothingMs = smoothClock.nsecsElapsed() / 1e6 + frame();

    // Pan and zoom: the user moved the view; each frame decimates the new visible range.
    std::vector<double> panzoom;
    cpu.clear();
    QCPRange range = chart.plot()->xAxis->range();
    for (int f = 0; f < 60; ++f) {
        const double span = range.size() * std::pow(0.93, f % 30);
        const double centre = range.lower + range.size() * (0.3 + 0.4 * (f / 60.0));
        chart.plot()->xAxis->setRange(centre - span / 2, centre + span / 2);
        panzoom.push_back(frame());
    }
    const int drawn = chart.lastDrawnPoints();

    const QJsonObject result{
        {QStringLiteral("platform"), QGuiApplication::platformName()},
        {QStringLiteral("points_per_series"), points},
        {QStringLiteral("series"), 3},
        {QStringLiteral("append_points_per_second"), 3.0 * points / appendSeconds},
        {QStringLiteral("streaming_frame"), toJson(summarize(streaming))},
        {QStringLiteral("pan_zoom_frame"), toJson(summarize(panzoom))},
        {QStringLiteral("streaming_frame_cpu"), toJson(summarize(streamingCpu))},
        {QStringLiteral("pan_zoom_frame_cpu"), toJson(summarize(cpu))},
        {QStringLiteral("smoothing_change_ms"), smoothingMs},
        {QStringLiteral("points_drawn_last_frame"), drawn},
        {QStringLiteral("memory_mb_per_series"),
         double(chart.series(QStringLiteral("run1"), Split::Train)->memoryBytes()) / (1 << 20)},
    };
    std::printf("%s\n", QJsonDocument(result).toJson(QJsonDocument::Compact).constData());
    return 0;
}
