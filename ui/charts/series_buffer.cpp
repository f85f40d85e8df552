// SPDX-License-Identifier: Apache-2.0
// SeriesBuffer: append, debiased EMA, visible-range search and min/max decimation.
#include "ui/charts/series_buffer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::ui::charts {

namespace {
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
}

void SeriesBuffer::reserve(size_t n)
{
    m_step.reserve(n);
    m_epoch.reserve(n);
    m_wall.reserve(n);
    m_value.reserve(n);
    m_smoothed.reserve(n);
}

void SeriesBuffer::clear()
{
    m_step.clear();
    m_epoch.clear();
    m_wall.clear();
    m_value.clear();
    m_smoothed.clear();
    m_valuePyramid.clear();
    m_smoothedPyramid.clear();
    m_last = 0;
    m_finite = 0;
    m_weightPow = 1;
}

float SeriesBuffer::smoothNext(double value)
{
    if (!std::isfinite(value)) {
        return static_cast<float>(value);
    }
    m_last = m_last * m_weight + (1 - m_weight) * value;
    ++m_finite;
    m_weightPow *= m_weight;
    const double debias = 1 - m_weightPow;
    return static_cast<float>(debias > 0 ? m_last / debias : value);
}

void SeriesBuffer::append(int64_t step, double epoch, double wallTime, double value)
{
    m_step.push_back(step);
    m_epoch.push_back(epoch);
    m_wall.push_back(wallTime);
    m_value.push_back(static_cast<float>(value));
    m_smoothed.push_back(smoothNext(value));
    const size_t index = m_value.size() - 1;
    extendPyramid(m_valuePyramid, m_value, index);
    extendPyramid(m_smoothedPyramid, m_smoothed, index);
}

void SeriesBuffer::extendPyramid(Pyramid& pyramid, const std::vector<float>& values, size_t index)
{
    const float v = values[index];
    const bool finite = std::isfinite(v);
    auto better = [&](Extremes& e, uint32_t lo, uint32_t hi) {
        if (lo != kNone && (e.minIndex == kNone || values[lo] < values[e.minIndex])) {
            e.minIndex = lo;
        }
        if (hi != kNone && (e.maxIndex == kNone || values[hi] > values[e.maxIndex])) {
            e.maxIndex = hi;
        }
    };
    if (pyramid.empty()) {
        pyramid.emplace_back();
    }
    for (size_t level = 0; level < pyramid.size(); ++level) {
        auto& entries = pyramid[level];
        const size_t b = index / (kLeaf << level);
        if (entries.size() <= b) {
            entries.push_back({kNone, kNone});
        }
        if (finite) {
            better(entries[b], static_cast<uint32_t>(index), static_cast<uint32_t>(index));
        }
    }
    // A new level appears when the top one gets its second block; it then holds one block that
    // covers both, and keeps growing with the levels below it.
    while (pyramid.back().size() >= 2) {
        const auto& top = pyramid.back();
        std::vector<Extremes> next((top.size() + 1) / 2, Extremes{kNone, kNone});
        for (size_t j = 0; j < top.size(); ++j) {
            better(next[j / 2], top[j].minIndex, top[j].maxIndex);
        }
        pyramid.push_back(std::move(next));
    }
}

void SeriesBuffer::rebuildPyramid(Pyramid& pyramid, const std::vector<float>& values)
{
    // Bottom-up: the leaf level in one pass over the values, each level above from pairs below.
    pyramid.clear();
    const size_t n = values.size();
    if (n == 0) {
        return;
    }
    std::vector<Extremes> leaf((n + kLeaf - 1) / kLeaf, Extremes{kNone, kNone});
    for (size_t b = 0; b < leaf.size(); ++b) {
        Extremes e{kNone, kNone};
        const size_t end = std::min(n, (b + 1) * kLeaf);
        for (size_t i = b * kLeaf; i < end; ++i) {
            const float v = values[i];
            if (!std::isfinite(v)) {
                continue;
            }
            if (e.minIndex == kNone || v < values[e.minIndex]) {
                e.minIndex = static_cast<uint32_t>(i);
            }
            if (e.maxIndex == kNone || v > values[e.maxIndex]) {
                e.maxIndex = static_cast<uint32_t>(i);
            }
        }
        leaf[b] = e;
    }
    pyramid.push_back(std::move(leaf));
    while (pyramid.back().size() >= 2) {
        const auto& top = pyramid.back();
        std::vector<Extremes> next((top.size() + 1) / 2, Extremes{kNone, kNone});
        for (size_t j = 0; j < top.size(); ++j) {
            Extremes& e = next[j / 2];
            const Extremes& c = top[j];
            if (c.minIndex != kNone && (e.minIndex == kNone || values[c.minIndex] < values[e.minIndex])) {
                e.minIndex = c.minIndex;
            }
            if (c.maxIndex != kNone && (e.maxIndex == kNone || values[c.maxIndex] > values[e.maxIndex])) {
                e.maxIndex = c.maxIndex;
            }
        }
        pyramid.push_back(std::move(next));
    }
}

void SeriesBuffer::setSmoothing(double weight)
{
    weight = std::clamp(weight, 0.0, 0.999);
    if (weight == m_weight && m_smoothed.size() == m_value.size()) {
        return;
    }
    m_weight = weight;
    m_last = 0;
    m_finite = 0;
    m_weightPow = 1;
    for (size_t i = 0; i < m_value.size(); ++i) {
        m_smoothed[i] = smoothNext(m_value[i]);
    }
    rebuildPyramid(m_smoothedPyramid, m_smoothed);
}

double SeriesBuffer::x(size_t i, XAxisMode mode) const
{
    switch (mode) {
    case XAxisMode::Step:
        return static_cast<double>(m_step[i]);
    case XAxisMode::Epoch:
        return m_epoch[i];
    case XAxisMode::Relative:
        return m_wall[i] - m_wall.front();
    case XAxisMode::WallTime:
        return m_wall[i];
    }
    return 0;
}

std::pair<size_t, size_t> SeriesBuffer::visibleRange(double lo, double hi, XAxisMode mode) const
{
    const size_t n = size();
    if (n == 0 || hi < lo) {
        return {0, 0};
    }
    // First index with x >= lo, last with x <= hi (x is non-decreasing).
    size_t a = 0, b = n;
    while (a < b) {
        const size_t mid = (a + b) / 2;
        if (x(mid, mode) < lo) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    size_t first = a;
    a = first;
    b = n;
    while (a < b) {
        const size_t mid = (a + b) / 2;
        if (x(mid, mode) <= hi) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    size_t last = a;
    if (first > 0) {
        --first;
    }
    if (last < n) {
        ++last;
    }
    return {first, last};
}

size_t SeriesBuffer::nearest(double xv, XAxisMode mode) const
{
    const size_t n = size();
    if (n == 0) {
        return 0;
    }
    size_t a = 0, b = n;
    while (a < b) {
        const size_t mid = (a + b) / 2;
        if (x(mid, mode) < xv) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    if (a == n) {
        return n - 1;
    }
    if (a > 0 && std::abs(x(a - 1, mode) - xv) <= std::abs(x(a, mode) - xv)) {
        return a - 1;
    }
    return a;
}

SeriesBuffer::Extremes SeriesBuffer::extremes(size_t first, size_t last, bool smoothed) const
{
    const auto& v = values(smoothed);
    const auto& pyr = pyramid(smoothed);
    Extremes out{kNone, kNone};
    auto take = [&](uint32_t lo, uint32_t hi) {
        if (lo != kNone && (out.minIndex == kNone || v[lo] < v[out.minIndex])) {
            out.minIndex = lo;
        }
        if (hi != kNone && (out.maxIndex == kNone || v[hi] > v[out.maxIndex])) {
            out.maxIndex = hi;
        }
    };
    size_t p = first;
    while (p < last) {
        if (p % kLeaf != 0 || p + kLeaf > last) {
            if (std::isfinite(v[p])) {
                take(static_cast<uint32_t>(p), static_cast<uint32_t>(p));
            }
            ++p;
            continue;
        }
        // The largest aligned, complete block that starts at p and ends by `last`.
        size_t level = 0;
        while (level + 1 < pyr.size()) {
            const size_t bigger = kLeaf << (level + 1);
            if (p % bigger != 0 || p + bigger > last) {
                break;
            }
            ++level;
        }
        const size_t block = kLeaf << level;
        const Extremes& e = pyr[level][p / block];
        take(e.minIndex, e.maxIndex);
        p += block;
    }
    return out;
}

void SeriesBuffer::decimate(size_t first, size_t last, int buckets, XAxisMode mode, bool smoothed,
                            std::vector<double>& xs, std::vector<double>& ys) const
{
    xs.clear();
    ys.clear();
    last = std::min(last, size());
    if (first >= last) {
        return;
    }
    const auto& v = values(smoothed);
    const size_t count = last - first;
    buckets = std::max(buckets, 1);
    auto push = [&](size_t i) {
        if (std::isfinite(v[i])) {
            xs.push_back(x(i, mode));
            ys.push_back(v[i]);
        }
    };
    if (count <= static_cast<size_t>(buckets) * 2) {
        xs.reserve(count);
        ys.reserve(count);
        for (size_t i = first; i < last; ++i) {
            push(i);
        }
        return;
    }
    xs.reserve(static_cast<size_t>(buckets) * 2 + 2);
    ys.reserve(static_cast<size_t>(buckets) * 2 + 2);
    push(first);
    size_t lastPushed = first;
    for (int b = 0; b < buckets; ++b) {
        const size_t a = first + count * static_cast<size_t>(b) / static_cast<size_t>(buckets);
        const size_t e = first + count * static_cast<size_t>(b + 1) / static_cast<size_t>(buckets);
        if (a >= e) {
            continue;
        }
        const Extremes ex = extremes(a, e, smoothed);
        if (ex.minIndex == kNone) {
            continue;
        }
        const size_t i1 = std::min(ex.minIndex, ex.maxIndex);
        const size_t i2 = std::max(ex.minIndex, ex.maxIndex);
        if (i1 != lastPushed) {
            push(i1);
        }
        if (i2 != i1) {
            push(i2);
        }
        lastPushed = i2;
    }
    if (lastPushed != last - 1) {
        push(last - 1);
    }
}

bool SeriesBuffer::valueRange(size_t first, size_t last, bool smoothed, bool positiveOnly, double& lo,
                              double& hi) const
{
    last = std::min(last, size());
    if (first >= last) {
        return false;
    }
    if (!positiveOnly) {
        const Extremes e = extremes(first, last, smoothed);
        if (e.minIndex == kNone) {
            return false;
        }
        lo = values(smoothed)[e.minIndex];
        hi = values(smoothed)[e.maxIndex];
        return true;
    }
    // A logarithmic axis needs the smallest positive value: scan (rare: only on a mode change
    // or a rescale, and bounded by the visible range).
    const auto& v = values(smoothed);
    bool any = false;
    for (size_t i = first; i < last; ++i) {
        const double x = v[i];
        if (!std::isfinite(x) || x <= 0) {
            continue;
        }
        if (!any) {
            lo = hi = x;
            any = true;
        } else {
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
    }
    return any;
}

size_t SeriesBuffer::memoryBytes() const
{
    size_t bytes = m_step.capacity() * sizeof(int64_t) + m_epoch.capacity() * sizeof(double) +
                   m_wall.capacity() * sizeof(double) + (m_value.capacity() + m_smoothed.capacity()) * sizeof(float);
    for (const auto* pyr : {&m_valuePyramid, &m_smoothedPyramid}) {
        for (const auto& level : *pyr) {
            bytes += level.capacity() * sizeof(Extremes);
        }
    }
    return bytes;
}

}  // namespace kiln::ui::charts
