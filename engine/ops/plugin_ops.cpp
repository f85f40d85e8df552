// SPDX-License-Identifier: Apache-2.0
// Plugin: the one op-table row for every plugin operation. The node's "plugin_op" attribute names
// the operation; attributes are checked against its schema (resolveAttrs), and the shape rule,
// parameters and CPU kernel call through the plugin's C function pointers. A node whose plugin is
// not loaded keeps all its attributes but cannot be analysed, run, trained or exported.
#include "engine/ops/plugin_ops.h"

#include <cstring>

#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

constexpr size_t kMessageBytes = 1024;

std::string message(const char* buf) {
    return pluginMessage(buf, kMessageBytes);
}

KilnShape toKiln(const Shape& s) {
    KilnShape k{};
    k.rank = static_cast<int32_t>(s.rank());
    for (size_t i = 0; i < s.rank() && i < size_t{KILN_PLUGIN_MAX_RANK}; ++i) k.dims[i] = s[i];
    return k;
}

Shape fromKiln(const KilnShape& k) {
    return Shape(std::vector<int64_t>(k.dims, k.dims + std::clamp<int32_t>(k.rank, 0, KILN_PLUGIN_MAX_RANK)));
}

}  // namespace

std::string pluginMessage(const char* buf, size_t size) {
    std::string s(buf, strnlen(buf, size));
    return s.empty() ? std::string("it gave no reason") : s;
}

KilnTensor pluginTensor(float* data, const Shape& s) {
    KilnTensor t{};
    t.data = data;
    t.shape = toKiln(s);
    int64_t stride = 1;
    for (int i = t.shape.rank - 1; i >= 0; --i) {
        t.strides[i] = stride;
        stride *= t.shape.dims[i];
    }
    return t;
}

namespace {

KilnTensor tensor(float* data, const Shape& s) {
    return pluginTensor(data, s);
}

Error missingOp(const Node& node, const std::string& op) {
    const std::string folder = userPluginFolder();
    return Error(ErrorCode::UnknownOp, "Plugin \"" + node.name + "\" uses the plugin operation " + op +
                                           ", which no loaded plugin provides; put its plugin in " +
                                           (folder.empty() ? std::string("the plugin folder") : folder) +
                                           ", or name it with KILN_PLUGIN_PATH or --plugin")
        .withNode(node.name)
        .with("op", op);
}

}  // namespace

std::string pluginOpName(const Node& node) {
    auto it = node.attrs.values().find(kPluginOpAttr);
    if (it == node.attrs.values().end()) return {};
    const auto* s = std::get_if<std::string>(&it->second);
    return s ? *s : std::string();
}

std::vector<KilnAttrValue> pluginAttrValues(const std::vector<AttrSpec>& specs, const AttrMap& attrs) {
    std::vector<KilnAttrValue> out;
    for (const auto& spec : specs) {
        KilnAttrValue v{};
        const AttrValue& a = attrs.values().at(spec.name);  // resolveAttrs filled every one
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, bool>) v.i = x ? 1 : 0;
                else if constexpr (std::is_same_v<T, int64_t>) v.i = x;
                else if constexpr (std::is_same_v<T, double>) v.f = x;
                else if constexpr (std::is_same_v<T, std::string>) v.s = x.c_str();
                else {
                    v.ints = x.data();
                    v.count = static_cast<int32_t>(x.size());
                }
            },
            a);
        out.push_back(v);
    }
    return out;
}

KilnShape toKilnShape(const Shape& s) {
    return toKiln(s);
}

void pluginParallelFor(void* pool, int64_t n, KilnRangeFn fn, void* user) {
    static_cast<ThreadPool*>(pool)->parallelFor(n, 1, [&](int64_t b, int64_t e) { fn(user, b, e); });
}

PluginCall::PluginCall(const PluginOp& op, const Node& node, const AttrMap& attrs, std::span<const Shape> inputs)
    : m_op(op), m_node(node.name), m_values(pluginAttrValues(op.attrs, attrs)) {
    for (const auto& s : inputs) m_inputs.push_back(toKiln(s));
    m_ctx.node_name = m_node.c_str();
    m_ctx.attrs = m_values.data();
    m_ctx.attr_count = static_cast<int32_t>(m_values.size());
    m_ctx.inputs = m_inputs.data();
    m_ctx.input_count = static_cast<int32_t>(m_inputs.size());
}

Result<Shape> PluginCall::shape() const {
    const KilnOpDesc& d = *m_op.desc;
    const auto count = static_cast<int32_t>(m_inputs.size());
    if (count < d.min_inputs || (d.max_inputs >= 0 && count > d.max_inputs)) {
        const std::string expected = d.max_inputs < 0 ? "at least " + std::to_string(d.min_inputs)
                                     : d.min_inputs == d.max_inputs ? std::to_string(d.min_inputs)
                                     : std::to_string(d.min_inputs) + " to " + std::to_string(d.max_inputs);
        return Error(ErrorCode::ArityMismatch, m_op.name + " \"" + m_node + "\" takes " + expected +
                                                   " input(s) but has " + std::to_string(count))
            .withNode(m_node)
            .with("expected", expected)
            .with("got", std::to_string(count));
    }
    for (const auto& in : m_inputs)
        if (in.rank < 1 || in.rank > KILN_PLUGIN_MAX_RANK)
            return fail("an input has rank " + std::to_string(in.rank) + "; plugin operations take ranks 1 to " +
                        std::to_string(KILN_PLUGIN_MAX_RANK));
    char err[kMessageBytes] = {};
    KilnShape out{};
    if (d.shape(&m_ctx, &out, err, sizeof err) != 0) return fail(message(err));
    if (out.rank < 1 || out.rank > KILN_PLUGIN_MAX_RANK)
        return fail("its shape function gave rank " + std::to_string(out.rank));
    // The batch follows the inputs (symbolic in analysis, concrete in a plan).
    out.dims[0] = m_inputs.empty() ? Shape::kBatch : m_inputs[0].dims[0];
    for (int i = 1; i < out.rank; ++i)
        if (out.dims[i] < 1) return fail("its shape function gave dimension " + std::to_string(out.dims[i]));
    const Shape output = fromKiln(out);
    for (int32_t k = 0; k < d.param_count; ++k) KILN_TRY(paramShape(output, k));
    return output;
}

Result<Shape> PluginCall::paramShape(const Shape& output, int32_t k) const {
    char err[kMessageBytes] = {};
    const KilnShape o = toKiln(output);
    KilnShape ps{};
    const std::string pname = m_op.desc->params[k].name;
    if (m_op.desc->param_shape(&m_ctx, &o, k, &ps, err, sizeof err) != 0)
        return fail("parameter \"" + pname + "\": " + message(err));
    if (ps.rank < 1 || ps.rank > KILN_PLUGIN_MAX_RANK) return fail("parameter \"" + pname + "\" has rank " + std::to_string(ps.rank));
    for (int i = 0; i < ps.rank; ++i)
        if (ps.dims[i] < 1) return fail("parameter \"" + pname + "\" has dimension " + std::to_string(ps.dims[i]));
    return fromKiln(ps);
}

Error PluginCall::fail(const std::string& why) const {
    return Error(ErrorCode::ShapeMismatch, m_op.name + " \"" + m_node + "\": " + why).withNode(m_node).with("reason", why)
        .with("op", m_op.name);
}

const PluginOp* pluginOpOf(const Node& node) {
    return PluginRegistry::global().find(pluginOpName(node));
}

namespace {

const PluginOp& requireOp(const ShapeContext& c) {
    // Rules run after resolveAttrs succeeded, which found the op.
    return *pluginOpOf(c.node);
}

Result<Shape> pluginShape(const ShapeContext& c) {
    const PluginOp* op = pluginOpOf(c.node);
    if (!op) return missingOp(c.node, pluginOpName(c.node));
    return PluginCall(*op, c.node, c.attrs, c.inputs).shape();
}

std::vector<ParamSpec> pluginParams(const ShapeContext& c, const Shape& output) {
    const PluginOp& op = requireOp(c);
    PluginCall call(op, c.node, c.attrs, c.inputs);
    std::vector<ParamSpec> out;
    for (int32_t k = 0; k < op.desc->param_count; ++k) {
        const KilnParamSpec& p = op.desc->params[k];
        auto shape = call.paramShape(output, k);  // checked by the shape rule
        Init init = p.init == KILN_INIT_ONES            ? Init::Ones
                    : p.init == KILN_INIT_GLOROT_UNIFORM ? Init::GlorotUniform
                    : p.init == KILN_INIT_HE_UNIFORM     ? Init::HeUniform
                                                         : Init::Zeros;
        out.push_back({p.name, shape.ok() ? *shape : Shape{1}, init, p.trainable != 0});
    }
    return out;
}

class PluginKernel final : public CpuKernel {
public:
    PluginKernel(const PluginOp& op, const Node& node, const AttrMap& attrs, std::span<const Shape> inputs,
                 const Shape& output, std::vector<Shape> params)
        : m_op(op), m_node(node), m_attrs(attrs), m_inputShapes(inputs.begin(), inputs.end()), m_output(output),
          m_params(std::move(params)), m_call(op, m_node, m_attrs, m_inputShapes) {
        if (op.desc->workspace_floats) {
            const KilnShape o = toKiln(m_output);
            m_workspace = std::max<int64_t>(0, op.desc->workspace_floats(&m_call.context(), &o));
        }
    }
    size_t workspaceFloats() const override { return static_cast<size_t>(m_workspace); }
    bool backwardNeedsOutput() const override { return true; }

    Status forward(const KernelIo& io) override { return run(io, false); }
    Status backward(const KernelIo& io) override {
        if (!m_op.desc->cpu_backward)
            return Error(ErrorCode::Unsupported, m_op.name + " \"" + m_node.name +
                                                     "\" has no backward kernel in its plugin; it can run but not train")
                .withNode(m_node.name)
                .with("what", "training the plugin operation " + m_op.name);
        return run(io, true);
    }

private:
    Status run(const KernelIo& io, bool backward) {
        std::vector<KilnTensor> in, params;
        for (size_t k = 0; k < io.in.size(); ++k) in.push_back(tensor(const_cast<float*>(io.in[k]), m_inputShapes[k]));
        for (size_t k = 0; k < io.params.size(); ++k) params.push_back(tensor(io.params[k], m_params[k]));
        char err[kMessageBytes] = {};
        KilnKernelArgs a{};
        a.ctx = &m_call.context();
        a.inputs = in.data();
        a.input_count = static_cast<int32_t>(in.size());
        a.output = tensor(io.out, m_output);
        a.params = params.data();
        a.param_count = static_cast<int32_t>(params.size());
        if (backward) {
            a.d_output = io.dOut;
            a.d_inputs = io.dIn.data();
            a.d_params = io.dParams.empty() ? nullptr : io.dParams.data();
        }
        std::vector<float*> noParams(params.size(), nullptr);
        if (backward && io.dParams.empty()) a.d_params = noParams.data();
        a.workspace = io.workspace;
        a.workspace_floats = m_workspace;
        a.training = io.training ? 1 : 0;
        a.parallel_for = io.pool ? pluginParallelFor : nullptr;
        a.pool = io.pool;
        a.error = err;
        a.error_size = sizeof err;
        KilnCpuKernelFn fn = backward ? m_op.desc->cpu_backward : m_op.desc->cpu_forward;
        if (fn(&a) != 0)
            return Error(ErrorCode::PluginError, m_op.name + " \"" + m_node.name + "\" failed in its " +
                                                     (backward ? "backward" : "forward") + " kernel: " + message(err))
                .withNode(m_node.name)
                .with("path", m_op.pluginPath)
                .with("reason", message(err))
                .with("op", m_op.name);
        return okStatus();
    }

    const PluginOp& m_op;
    Node m_node;
    AttrMap m_attrs;
    std::vector<Shape> m_inputShapes;
    Shape m_output;
    std::vector<Shape> m_params;
    PluginCall m_call;
    int64_t m_workspace = 0;
};

Result<std::unique_ptr<CpuKernel>> pluginKernel(const ShapeContext& c, const Shape& output) {
    const PluginOp* op = pluginOpOf(c.node);
    if (!op) return missingOp(c.node, pluginOpName(c.node));
    std::vector<Shape> params;
    for (const auto& p : pluginParams(c, output)) params.push_back(p.shape);
    return makeKernel<PluginKernel>(*op, c.node, c.attrs, c.inputs, output, std::move(params));
}

}  // namespace

Result<AttrMap> resolvePluginAttrs(const Node& node) {
    auto it = node.attrs.values().find(kPluginOpAttr);
    if (it == node.attrs.values().end() || !std::holds_alternative<std::string>(it->second) ||
        std::get<std::string>(it->second).empty())
        return Error(ErrorCode::BadAttribute, "Plugin \"" + node.name + "\" needs the attribute \"" + kPluginOpAttr +
                                                  "\" (the plugin operation it runs, e.g. acme.GroupNorm)")
            .withNode(node.name)
            .with("attribute", kPluginOpAttr)
            .with("reason", "missing");
    const PluginOp* op = pluginOpOf(node);
    // A missing plugin keeps every attribute as written; the shape rule says what is missing.
    if (!op) return node.attrs;
    std::vector<AttrSpec> specs = op->attrs;
    specs.insert(specs.begin(), opDef(OpKind::Plugin).attrs.front());
    return resolveAttrsWith(op->name, specs, node);
}

std::vector<OpDef> pluginOps() {
    std::vector<OpDef> rows;
    AttrSpec op{kPluginOpAttr, AttrType::String, std::string(), true, std::nullopt, std::nullopt, {}, 0,
                "the plugin operation this node runs, e.g. acme.GroupNorm"};
    rows.push_back({OpKind::Plugin, "Plugin", Category::Plugin, 0, -1, {std::move(op)}, pluginShape, pluginParams,
                    nullptr, pluginKernel,
                    "An operation from a plugin library; its attributes come from the plugin's schema"});
    return rows;
}

}  // namespace kiln::engine::ops
