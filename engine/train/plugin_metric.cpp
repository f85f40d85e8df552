// SPDX-License-Identifier: Apache-2.0
// The Metric adapter over a plugin's KilnMetricDesc. A failing or non-finite callback leaves its
// error in status(), which the trainer checks after every update and every read of the results.
#include "engine/train/plugin_metric.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/ops/plugin_loss.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::train {
namespace {

constexpr size_t kMessageBytes = 1024;

class PluginMetricAdapter final : public Metric {
public:
    PluginMetricAdapter(const ops::PluginMetric& metric, std::string name, const AttrMap& attrs,
                        const Shape& predictions, const Shape& targets)
        : m_metric(metric),
          m_name(std::move(name)),
          m_ctx(m_name, metric.attrs, attrs, predictions, targets),
          m_state(static_cast<size_t>(metric.desc->state_count)) {
        reset();
    }

    void reset() override {
        m_error = {};
        std::fill(m_state.begin(), m_state.end(), 0.0);
        if (!m_metric.desc->reset) return;
        char err[kMessageBytes] = {};
        if (m_metric.desc->reset(&m_ctx.context(), m_state.data(), err, sizeof err) != 0)
            fail("failed in reset: " + ops::pluginMessage(err, sizeof err));
    }

    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (!m_error.ok()) return;
        const KilnOpContext& c = m_ctx.context();
        int64_t targetWidth = 1;
        for (int32_t i = 1; i < c.inputs[1].rank; ++i) targetWidth *= c.inputs[1].dims[i];
        char err[kMessageBytes] = {};
        KilnMetricArgs a{};
        a.ctx = &c;
        a.predictions = predictions;
        a.targets = targets;
        a.batch = batch;
        a.width = width;
        a.target_width = targetWidth;
        a.state = m_state.data();
        a.error = err;
        a.error_size = sizeof err;
        if (m_metric.desc->update(&a) != 0)
            return fail("failed in update: " + ops::pluginMessage(err, sizeof err));
        for (size_t k = 0; k < m_state.size(); ++k)
            if (!std::isfinite(m_state[k]))
                return fail("left the non-finite value " + std::to_string(m_state[k]) + " in its state[" +
                            std::to_string(k) + "] after an update");
    }

    double result() const override {
        if (!m_error.ok()) return std::numeric_limits<double>::quiet_NaN();
        char err[kMessageBytes] = {};
        double value = 0;
        if (m_metric.desc->result(&m_ctx.context(), m_state.data(), &value, err, sizeof err) != 0) {
            fail("failed in result: " + ops::pluginMessage(err, sizeof err));
            return std::numeric_limits<double>::quiet_NaN();
        }
        if (!std::isfinite(value)) {
            fail("returned the result " + std::to_string(value));
            return value;
        }
        return value;
    }

    std::string name() const override { return m_name; }
    Status status() const override { return m_error; }
    size_t numCounts() const override { return m_state.size(); }
    void readCounts(double* out) const override { std::copy(m_state.begin(), m_state.end(), out); }
    void setCounts(std::span<const double> values) override {
        std::copy(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(m_state.size()),
                  m_state.begin());
    }

private:
    void fail(const std::string& why) const {
        if (!m_error.ok()) return;
        m_error = Error(ErrorCode::PluginError,
                        "the plugin metric " + m_metric.name + " (" + m_metric.pluginPath + ") " + why)
                      .with("path", m_metric.pluginPath)
                      .with("op", m_metric.name)
                      .with("reason", why);
    }

    const ops::PluginMetric& m_metric;
    std::string m_name;
    ops::PluginTermContext m_ctx;
    std::vector<double> m_state;
    mutable Status m_error;
};

Error configError(const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).with("field", field).with("reason", why);
}

}  // namespace

Result<std::unique_ptr<Metric>> makePluginMetric(const std::string& type, const std::string& name,
                                                 const AttrMap& attrs, const Shape& predictions,
                                                 const Shape& targets, const std::string& field) {
    const ops::PluginMetric* metric = ops::PluginRegistry::global().findMetric(ops::pluginTypeName(type));
    if (!metric)
        return configError(field, "names the plugin metric \"" + type + "\", which no loaded plugin provides")
            .with("op", type);
    Node node;
    node.name = name;
    node.op = type;
    node.attrs = attrs;
    auto resolved = ops::resolveAttrsWith(type, metric->attrs, node);
    if (!resolved.ok()) return configError(field, resolved.error().message);
    std::vector<int64_t> p{Shape::kBatch}, t{Shape::kBatch};
    p.insert(p.end(), predictions.dims().begin(), predictions.dims().end());
    t.insert(t.end(), targets.dims().begin(), targets.dims().end());
    auto adapter = std::make_unique<PluginMetricAdapter>(*metric, name, *resolved, Shape(p), Shape(t));
    ops::PluginTermContext check(name, metric->attrs, *resolved, Shape(p), Shape(t));
    KILN_TRY(check.checkShapes(metric->desc->check_shapes));
    KILN_TRY(adapter->status());
    return std::unique_ptr<Metric>(std::move(adapter));
}

}  // namespace kiln::engine::train
