// SPDX-License-Identifier: Apache-2.0
// One streaming metric series (value per step) with TensorBoard's debiased EMA smoothing and a
// min/max pyramid, so that drawing a million points costs a few thousand per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::ui::charts {

// What the horizontal axis shows.
enum class XAxisMode {
    Step,      // global training step
    Epoch,     // fractional epoch (epoch - 1 + step / steps per epoch)
    Relative,  // seconds since the series' first point
    WallTime,  // seconds since the Unix epoch (drawn as local date/time)
};

// Append-only series. Every x coordinate is non-decreasing in append order (steps, epochs and
// wall time all grow during a run), so visible ranges are found by binary search.
class SeriesBuffer {
public:
    void append(int64_t step, double epoch, double wallTime, double value);
    void clear();
    void reserve(size_t n);

    size_t size() const { return m_value.size(); }
    bool empty() const { return m_value.empty(); }
    int64_t step(size_t i) const { return m_step[i]; }
    double epoch(size_t i) const { return m_epoch[i]; }
    double wallTime(size_t i) const { return m_wall[i]; }
    double value(size_t i) const { return m_value[i]; }
    double smoothed(size_t i) const { return m_smoothed[i]; }
    double x(size_t i, XAxisMode mode) const;

    // TensorBoard's smoothing: an exponential moving average debiased by 1 - w^n, where n counts
    // the finite values seen so far; non-finite values pass through unsmoothed. w in [0, 1).
    void setSmoothing(double weight);
    double smoothing() const { return m_weight; }

    // Indices [first, last) of the points whose x lies in [lo, hi], widened by one point on each
    // side so a line leaving the visible area is still drawn to the edge.
    std::pair<size_t, size_t> visibleRange(double lo, double hi, XAxisMode mode) const;

    // Index of the point whose x is closest to `x` (size() when empty).
    size_t nearest(double x, XAxisMode mode) const;

    // Reduces [first, last) to at most about 2 * buckets points for drawing: for every bucket of
    // consecutive points, its minimum and maximum in the order they occur. The result traces the
    // same envelope as the full series at that resolution. Non-finite values are left out.
    void decimate(size_t first, size_t last, int buckets, XAxisMode mode, bool smoothed, std::vector<double>& xs,
                  std::vector<double>& ys) const;

    // Smallest and largest finite value in [first, last); false when there is none. With
    // positiveOnly, values <= 0 are ignored (a logarithmic axis).
    bool valueRange(size_t first, size_t last, bool smoothed, bool positiveOnly, double& lo, double& hi) const;

    // Bytes held by this series (for the memory budget of long runs).
    size_t memoryBytes() const;

private:
    // Pyramid levels start at blocks of kLeaf points; level k holds blocks of kLeaf << k points.
    static constexpr size_t kLeaf = 16;
    struct Extremes {
        uint32_t minIndex;
        uint32_t maxIndex;
    };
    using Pyramid = std::vector<std::vector<Extremes>>;

    const std::vector<float>& values(bool smoothed) const { return smoothed ? m_smoothed : m_value; }
    const Pyramid& pyramid(bool smoothed) const { return smoothed ? m_smoothedPyramid : m_valuePyramid; }
    void extendPyramid(Pyramid& pyramid, const std::vector<float>& values, size_t index);
    void rebuildPyramid(Pyramid& pyramid, const std::vector<float>& values);
    // Extremes of [first, last) (indices; either may be invalid when all are non-finite).
    Extremes extremes(size_t first, size_t last, bool smoothed) const;
    float smoothNext(double value);

    std::vector<int64_t> m_step;
    std::vector<double> m_epoch;
    std::vector<double> m_wall;
    std::vector<float> m_value;
    std::vector<float> m_smoothed;
    Pyramid m_valuePyramid;
    Pyramid m_smoothedPyramid;

    double m_weight = 0;
    double m_last = 0;      // EMA accumulator
    int64_t m_finite = 0;   // finite values seen
    double m_weightPow = 1; // weight^m_finite
};

}  // namespace kiln::ui::charts
