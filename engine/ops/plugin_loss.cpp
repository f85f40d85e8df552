// SPDX-License-Identifier: Apache-2.0
// Plugin losses: the shape rule and CPU kernel of pluginLossDef(), calling the plugin's C
// functions; the reduction to one value and the gradient scaling are Kiln's.
#include "engine/ops/plugin_loss.h"

#include <cmath>

#include "engine/ops/op_helpers.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

constexpr size_t kMessageBytes = 1024;

Error missingLoss(const ShapeContext& c) {
    return Error(ErrorCode::UnknownOp, "the loss " + c.node.op + " comes from a plugin that is not loaded")
        .withNode(c.node.name)
        .with("op", c.node.op)
        .with("field", "training.loss.type");
}

Result<Shape> pluginLossShape(const ShapeContext& c) {
    const PluginLoss* loss = findPluginLoss(c.node.op);
    if (!loss) return missingLoss(c);
    if (c.inputs.size() != 2) return shapeError(c, "takes predictions and targets");
    PluginTermContext ctx(c.node.op, loss->attrs, c.attrs, c.inputs[0], c.inputs[1]);
    KILN_TRY(ctx.checkShapes(loss->desc->check_shapes));
    return Shape{1};
}

bool allFinite(const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i])) return false;
    return true;
}

class PluginLossKernel final : public CpuKernel {
public:
    PluginLossKernel(const PluginLoss& loss, const std::string& label, const AttrMap& attrs,
                     const Shape& predictions, const Shape& targets)
        : m_loss(loss),
          m_label(label),
          m_ctx(label, loss.attrs, attrs, predictions, targets),
          m_batch(predictions[0]),
          m_width(predictions.numelFrom(1)),
          m_targetWidth(targets.numelFrom(1)),
          m_values(static_cast<size_t>(m_batch)),
          m_grad(static_cast<size_t>(m_batch * m_width)) {}

    Status forward(const KernelIo& io) override { return run(io, false); }
    Status backward(const KernelIo& io) override {
        if (!io.dIn[0]) return {};
        return run(io, true);
    }

private:
    Error failure(const std::string& why) const {
        return Error(ErrorCode::PluginError,
                     "the plugin loss " + m_loss.name + " (" + m_loss.pluginPath + ") " + why)
            .with("path", m_loss.pluginPath)
            .with("op", m_loss.name)
            .with("reason", why);
    }

    Status run(const KernelIo& io, bool backward) {
        char err[kMessageBytes] = {};
        KilnLossArgs a{};
        a.ctx = &m_ctx.context();
        a.predictions = io.in[0];
        a.targets = io.in[1];
        a.batch = m_batch;
        a.width = m_width;
        a.target_width = m_targetWidth;
        a.values = m_values.data();
        a.d_predictions = backward ? m_grad.data() : nullptr;
        a.parallel_for = io.pool ? pluginParallelFor : nullptr;
        a.pool = io.pool;
        a.error = err;
        a.error_size = sizeof err;
        if (m_loss.desc->compute(&a) != 0) return failure("failed: " + pluginMessage(err, sizeof err));
        // Non-finite results from finite inputs are the plugin's fault; from non-finite
        // predictions they are the model's, and the trainer's NaN check reports them.
        const bool finiteValues = allFinite(m_values.data(), m_batch);
        const bool finiteGrad = !backward || allFinite(m_grad.data(), m_batch * m_width);
        if ((!finiteValues || !finiteGrad) && allFinite(io.in[0], m_batch * m_width) &&
            allFinite(io.in[1], m_batch * m_targetWidth)) {
            int64_t sample = 0;
            if (!finiteValues) {
                while (std::isfinite(m_values[static_cast<size_t>(sample)])) ++sample;
                return failure("returned the value " + std::to_string(m_values[static_cast<size_t>(sample)]) +
                               " for sample " + std::to_string(sample) +
                               " of finite predictions and targets");
            }
            int64_t k = 0;
            while (std::isfinite(m_grad[static_cast<size_t>(k)])) ++k;
            return failure("returned the gradient " + std::to_string(m_grad[static_cast<size_t>(k)]) +
                           " for sample " + std::to_string(k / std::max<int64_t>(m_width, 1)) +
                           " of finite predictions and targets");
        }
        if (!backward) {
            double sum = 0;
            for (float v : m_values) sum += v;
            io.out[0] = static_cast<float>(sum / static_cast<double>(m_batch));
            return {};
        }
        const float scale = io.gradScale / static_cast<float>(m_batch);
        float* d = io.dIn[0];
        for (size_t k = 0; k < m_grad.size(); ++k) d[k] += scale * m_grad[k];
        return {};
    }

    const PluginLoss& m_loss;
    std::string m_label;
    PluginTermContext m_ctx;
    int64_t m_batch, m_width, m_targetWidth;
    std::vector<float> m_values, m_grad;  // sized at plan time: a step allocates nothing
};

Result<std::unique_ptr<CpuKernel>> pluginLossKernel(const ShapeContext& c, const Shape&) {
    const PluginLoss* loss = findPluginLoss(c.node.op);
    if (!loss) return missingLoss(c);
    return makeKernel<PluginLossKernel>(*loss, c.node.op, c.attrs, c.inputs[0], c.inputs[1]);
}

}  // namespace

const OpDef& pluginLossDef() {
    // Outside the op table: the kind only stands in (the CUDA plan runs plugin losses on the host).
    static const OpDef def{OpKind::Plugin,
                           "PluginLoss",
                           Category::Loss,
                           2,
                           2,
                           {},
                           pluginLossShape,
                           nullptr,
                           nullptr,
                           pluginLossKernel,
                           "A loss from a plugin library"};
    return def;
}

bool isPluginLossDef(const OpDef* def) {
    return def == &pluginLossDef();
}

const PluginLoss* findPluginLoss(std::string_view type) {
    const std::string_view name = pluginTypeName(type);
    return name.empty() ? nullptr : PluginRegistry::global().findLoss(name);
}

Result<AttrMap> resolvePluginLossAttrs(const PluginLoss& loss, const AttrMap& given,
                                       const std::string& field) {
    Node node;
    node.name = field;
    node.op = std::string(kPluginPrefix) + loss.name;
    node.attrs = given;
    return resolveAttrsWith(node.op, loss.attrs, node);
}

PluginTermContext::PluginTermContext(std::string label, const std::vector<AttrSpec>& specs,
                                     const AttrMap& attrs, const Shape& predictions, const Shape& targets)
    : m_label(std::move(label)), m_attrs(attrs), m_predictions(predictions), m_targets(targets) {
    m_values = pluginAttrValues(specs, m_attrs);
    m_shapes[0] = toKilnShape(predictions);
    m_shapes[1] = toKilnShape(targets);
    m_ctx.node_name = m_label.c_str();
    m_ctx.attrs = m_values.data();
    m_ctx.attr_count = static_cast<int32_t>(m_values.size());
    m_ctx.inputs = m_shapes;
    m_ctx.input_count = 2;
}

Status PluginTermContext::checkShapes(KilnLossShapeFn check) const {
    auto fail = [&](const std::string& why) {
        return Error(ErrorCode::ShapeMismatch, m_label + " " + why).with("reason", why).with("op", m_label);
    };
    for (const Shape* s : {&m_predictions, &m_targets})
        if (s->rank() < 1 || s->rank() > KILN_PLUGIN_MAX_RANK)
            return fail("takes predictions and targets of rank 1 to " + std::to_string(KILN_PLUGIN_MAX_RANK) +
                        ", got " + s->toString());
    if (check) {
        char err[kMessageBytes] = {};
        if (check(&m_ctx, err, sizeof err) != 0) return fail(pluginMessage(err, sizeof err));
        return {};
    }
    if (m_predictions.rank() < 2)
        return fail("expects predictions with a batch dimension, got " + m_predictions.toString());
    if (m_predictions.numelFrom(1) != m_targets.numelFrom(1))
        return fail("has predictions " + m_predictions.toString() + " but targets " + m_targets.toString() +
                    ": they must have the same number of values per sample");
    return {};
}

}  // namespace kiln::engine::ops
