// SPDX-License-Identifier: Apache-2.0
// The plugin checker: each check case through attribute resolution, the shape rule, the CPU
// kernels, the reference forward and central finite differences.
#include "engine/ops/plugin_check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/ops/plugin_loss.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::ops {
namespace {

constexpr double kRefRtol = 1e-4;  // kernel vs reference, as the op harness
constexpr double kRefAtol = 1e-5;
constexpr double kFdEps = 1e-3;    // central differences in float32
constexpr double kFdRtol = 2e-2;
constexpr double kFdAtol = 5e-4;
constexpr size_t kFdMaxElements = 64;  // per tensor; larger ones are sampled

using Finding = PluginCheck::Finding;
using Params = std::vector<std::pair<std::string, std::string>>;

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

Result<AttrValue> attrFromJson(const nlohmann::json& v, const std::string& key) {
    if (v.is_boolean()) return AttrValue(v.get<bool>());
    if (v.is_number_integer()) return AttrValue(v.get<int64_t>());
    if (v.is_number()) return AttrValue(v.get<double>());
    if (v.is_string()) return AttrValue(v.get<std::string>());
    if (v.is_array()) {
        std::vector<int64_t> out;
        for (const auto& e : v) {
            if (!e.is_number_integer()) break;
            out.push_back(e.get<int64_t>());
        }
        if (out.size() == v.size()) return AttrValue(std::move(out));
    }
    return Error(ErrorCode::BadAttribute, "attribute \"" + key + "\" has an unsupported value").with("attribute", key);
}

// Why a concrete shape cannot be a check case's tensor: its finding (DimensionBelowOne,
// TooManyValues) with the parameter that says by how much, and the English words.
struct SizeProblem {
    Finding finding;
    Params params;
    std::string text;
};

std::optional<SizeProblem> sizeProblem(const Shape& s) {
    int64_t n = 1;
    for (int k = 0; k < s.rank(); ++k) {
        if (s[k] < 1) return SizeProblem{Finding::DimensionBelowOne, {{"dimension", std::to_string(s[k])}}, "has dimension " + std::to_string(s[k])};
        if (s[k] > kMaxCheckElements / n)
            return SizeProblem{Finding::TooManyValues, {{"limit", std::to_string(kMaxCheckElements)}}, "holds more than " + std::to_string(kMaxCheckElements) + " values"};
        n *= s[k];
    }
    return std::nullopt;
}

// One check's result; a loss case's name and shapes are set by its checker.
PluginCheck made(std::string caseName, PluginCheck::Kind kind, PluginCheck::Outcome outcome, std::string detail,
                 double worst, std::optional<Error> error, Finding finding, Params params) {
    PluginCheck c;
    c.caseName = std::move(caseName);
    c.kind = kind;
    c.outcome = outcome;
    c.detail = std::move(detail);
    c.worstError = worst;
    c.error = std::move(error);
    c.finding = finding;
    c.params = std::move(params);
    return c;
}

// `base` followed by `more`.
Params joined(Params base, const Params& more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
}

std::string shapeText(const KilnShape& s) {
    std::string out = "[";
    for (int32_t k = 0; k < std::clamp<int32_t>(s.rank, 0, KILN_PLUGIN_MAX_RANK); ++k)
        out += (k ? "," : "") + std::to_string(s.dims[k]);
    return out + "]";
}

// The error of a check case that cannot be made: ShapeMismatch naming the op or loss, the case
// and the reason.
Error caseError(const std::string& op, const std::string& caseName, const std::string& why) {
    return Error(ErrorCode::ShapeMismatch, op + ", check case \"" + caseName + "\": " + why)
        .with("op", op)
        .with("case", caseName)
        .with("reason", why);
}

// A failed check's error: `given` (an error of Kiln's own rules) with the op and case added, or a
// PluginError saying what the check found.
Error checkError(const std::string& op, const std::string& caseName, const std::string& detail, std::optional<Error> given) {
    Error e = given ? std::move(*given)
                    : Error(ErrorCode::PluginError, op + ", check case \"" + caseName + "\": " + detail).with("reason", detail);
    if (e.param("op").empty()) e.with("op", op);
    if (e.param("case").empty()) e.with("case", caseName);
    return e;
}

// One case's kernel with plan-like buffers.
struct Bench {
    std::unique_ptr<CpuKernel> kernel;
    std::vector<std::vector<float>> x, p;
    std::vector<float> out, workspace;
    ThreadPool* pool = nullptr;

    Status forward(bool training) {
        std::vector<const float*> in;
        for (auto& v : x) in.push_back(v.data());
        std::vector<float*> params;
        for (auto& v : p) params.push_back(v.data());
        KernelIo io;
        io.in = in;
        io.params = params;
        io.out = out.data();
        io.workspace = workspace.data();
        io.training = training;
        io.pool = pool;
        return kernel->forward(io);
    }
    // J = sum(w * out) in double after a training forward.
    Result<double> objective(const std::vector<float>& w) {
        KILN_TRY(forward(true));
        double s = 0;
        for (size_t i = 0; i < out.size(); ++i) s += static_cast<double>(w[i]) * out[i];
        return s;
    }
};

class Checker {
public:
    Checker(const PluginOp& op, ThreadPool& pool) : m_op(op), m_pool(pool) {}

    void run(const KilnCheckCase& c) {
        m_case = c.name ? c.name : "?";
        // Attributes.
        Node node;
        node.name = "check";
        node.op = "Plugin";
        node.attrs.set(kPluginOpAttr, m_op.name);
        nlohmann::json attrs = nlohmann::json::parse(c.attrs_json ? c.attrs_json : "{}", nullptr, false);
        if (attrs.is_discarded() || !attrs.is_object())
            return refuse(Finding::AttributesNotObject, {}, "its attributes are not a JSON object");
        for (auto& [k, v] : attrs.items()) {
            auto a = attrFromJson(v, k);
            if (!a.ok()) return failWith(PluginCheck::Kind::Shape, a.error());
            node.attrs.set(k, *a);
        }
        auto resolved = resolvePluginAttrs(node);
        if (!resolved.ok()) return failWith(PluginCheck::Kind::Shape, resolved.error());
        if (c.input_count < 0 || (c.input_count > 0 && !c.inputs))
            return refuse(Finding::InputsMissing, {}, "its input shapes are missing");
        std::vector<Shape> inputs, symbolic;
        for (int32_t k = 0; k < c.input_count; ++k) {
            const KilnShape& s = c.inputs[k];
            const std::string input = "input " + std::to_string(k);
            const Params named{{"tensor", "input"}, {"input", std::to_string(k)}, {"shape", shapeText(s)}};
            if (s.rank < 1 || s.rank > KILN_PLUGIN_MAX_RANK || s.dims[0] < 1)
                return refuse(Finding::InputShapeInvalid, joined(named, {{"max_rank", std::to_string(KILN_PLUGIN_MAX_RANK)}}),
                              input + " " + shapeText(s) + " needs rank 1 to " + std::to_string(KILN_PLUGIN_MAX_RANK) +
                                  " and a concrete batch");
            inputs.emplace_back(std::vector<int64_t>(s.dims, s.dims + s.rank));
            if (const auto why = sizeProblem(inputs.back()))
                return refuse(why->finding, joined(named, why->params), input + " " + shapeText(s) + " " + why->text);
            symbolic.push_back(inputs.back().withBatch(Shape::kBatch));
        }
        // Shapes: the same rule with the symbolic batch (the editor) and the concrete one (a plan).
        auto out = PluginCall(m_op, node, *resolved, inputs).shape();
        if (!out.ok()) return failWith(PluginCheck::Kind::Shape, out.error());
        auto outSym = PluginCall(m_op, node, *resolved, symbolic).shape();
        if (!outSym.ok())
            return fail(PluginCheck::Kind::Shape, Finding::EngineError, {{"when", "symbolic_batch"}, {"message", outSym.error().message}},
                        "with a symbolic batch: " + outSym.error().message, 0, outSym.error());
        if (outSym->withBatch((*out)[0]) != *out)
            return fail(PluginCheck::Kind::Shape, Finding::SymbolicShapeDiffers,
                        {{"shape", out->toString()}, {"symbolic", outSym->toString()}},
                        "the output is " + out->toString() + " with a batch but " + outSym->toString() + " without");
        if (const auto why = sizeProblem(*out))
            return refuse(why->finding, joined({{"tensor", "output"}, {"shape", out->toString()}}, why->params),
                          "the output " + out->toString() + " " + why->text);
        pass(PluginCheck::Kind::Shape, Finding::OutputShape, {{"shape", out->toString()}}, "output " + out->toString(), 0);

        // Kernel and data.
        const ShapeContext ctx{node, *resolved, inputs};
        const OpDef& def = opDef(OpKind::Plugin);
        const auto specs = def.params(ctx, *out);
        for (const auto& s : specs)
            if (const auto why = sizeProblem(s.shape))
                return refuse(why->finding,
                              joined({{"tensor", "parameter"}, {"parameter", s.name}, {"shape", s.shape.toString()}}, why->params),
                              "the parameter \"" + s.name + "\" " + s.shape.toString() + " " + why->text);
        auto kernel = def.cpu(ctx, *out);
        if (!kernel.ok()) return failWith(PluginCheck::Kind::Forward, kernel.error());
        if ((*kernel)->workspaceFloats() > static_cast<size_t>(kMaxCheckElements))
            return refuse(Finding::WorkspaceTooLarge,
                          {{"values", std::to_string((*kernel)->workspaceFloats())}, {"limit", std::to_string(kMaxCheckElements)}},
                          "the kernel asks for " + std::to_string((*kernel)->workspaceFloats()) +
                              " scratch values, more than " + std::to_string(kMaxCheckElements));
        Bench b;
        b.kernel = std::move(*kernel);
        b.pool = &m_pool;
        std::mt19937 gen(1234);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f), pu(0.5f, 1.5f);
        for (const auto& s : inputs) {
            std::vector<float> v(static_cast<size_t>(s.numel()));
            for (auto& e : v) e = u(gen);
            b.x.push_back(std::move(v));
        }
        for (const auto& s : specs) {
            std::vector<float> v(static_cast<size_t>(s.shape.numel()));
            for (auto& e : v) e = pu(gen);
            b.p.push_back(std::move(v));
        }
        b.out.assign(static_cast<size_t>(out->numel()), 0.0f);
        b.workspace.assign(b.kernel->workspaceFloats(), 0.0f);

        // Forward against the reference.
        Status st = b.forward(false);
        if (!st.ok()) return failWith(PluginCheck::Kind::Forward, st.error(), false);
        if (!m_op.desc->reference_forward) {
            skip(PluginCheck::Kind::Forward, Finding::NoReference, "the plugin has no reference forward");
        } else {
            std::vector<float> want(b.out.size(), 0.0f);
            if (!reference(node, *resolved, inputs, *out, b, want)) return;
            double worst = 0;
            size_t bad = want.size();
            for (size_t i = 0; i < want.size(); ++i) {
                const double d = std::fabs(static_cast<double>(b.out[i]) - want[i]);
                worst = std::max(worst, d);
                if (!(d <= kRefAtol + kRefRtol * std::fabs(want[i])) && bad == want.size()) bad = i;
            }
            if (bad != want.size())
                return fail(PluginCheck::Kind::Forward, Finding::ForwardMismatch,
                            {{"element", std::to_string(bad)}, {"kernel", num(b.out[bad])}, {"reference", num(want[bad])}},
                            "element " + std::to_string(bad) + ": kernel " + num(b.out[bad]) + ", reference " + num(want[bad]),
                            worst);
            pass(PluginCheck::Kind::Forward, Finding::ForwardAgrees, {{"count", std::to_string(want.size())}},
                 std::to_string(want.size()) + " values agree with the reference", worst);
        }

        // Gradients against central differences.
        if (!m_op.desc->cpu_backward)
            return skip(PluginCheck::Kind::Gradient, Finding::NoBackward, "the plugin has no backward kernel");
        gradients(b, specs);
    }

    std::vector<PluginCheck> results() { return std::move(m_results); }

private:
    bool reference(const Node& node, const AttrMap& attrs, const std::vector<Shape>& inputs, const Shape& out, Bench& b,
                   std::vector<float>& want) {
        PluginCall call(m_op, node, attrs, inputs);
        std::vector<KilnTensor> in, params;
        for (size_t k = 0; k < b.x.size(); ++k) in.push_back(pluginTensor(b.x[k].data(), inputs[k]));
        std::vector<std::vector<float>> pcopy = b.p;
        for (size_t k = 0; k < pcopy.size(); ++k)
            params.push_back(pluginTensor(pcopy[k].data(), Shape(std::vector<int64_t>{static_cast<int64_t>(pcopy[k].size())})));
        // Parameter shapes as the plugin declared them.
        for (size_t k = 0; k < params.size(); ++k) {
            auto ps = call.paramShape(out, static_cast<int32_t>(k));
            if (ps.ok()) params[k] = pluginTensor(pcopy[k].data(), *ps);
        }
        char err[1024] = {};
        KilnKernelArgs a{};
        a.ctx = &call.context();
        a.inputs = in.data();
        a.input_count = static_cast<int32_t>(in.size());
        a.output = pluginTensor(want.data(), out);
        a.params = params.data();
        a.param_count = static_cast<int32_t>(params.size());
        a.error = err;
        a.error_size = sizeof err;
        if (m_op.desc->reference_forward(&a) != 0) {
            const std::string reason = pluginMessage(err, sizeof err);
            fail(PluginCheck::Kind::Forward, Finding::ReferenceFailed, {{"reason", reason}},
                 "the reference forward failed: " + reason);
            return false;
        }
        return true;
    }

    void gradients(Bench& b, const std::vector<ParamSpec>& specs) {
        std::mt19937 gen(99);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> w(b.out.size());
        for (auto& e : w) e = u(gen);
        // Analytic: one backward after a training forward, into zeroed buffers.
        std::vector<std::vector<float>> dIn, dP;
        for (const auto& v : b.x) dIn.emplace_back(v.size(), 0.0f);
        for (const auto& v : b.p) dP.emplace_back(v.size(), 0.0f);
        Status st = b.forward(true);
        if (!st.ok()) return failWith(PluginCheck::Kind::Gradient, st.error(), false);
        std::vector<const float*> in;
        for (auto& v : b.x) in.push_back(v.data());
        std::vector<float*> params, din, dpar;
        for (auto& v : b.p) params.push_back(v.data());
        for (auto& v : dIn) din.push_back(v.data());
        for (size_t k = 0; k < dP.size(); ++k) dpar.push_back(specs[k].trainable ? dP[k].data() : nullptr);
        KernelIo io;
        io.in = in;
        io.params = params;
        io.out = b.out.data();
        io.dOut = w.data();
        io.dIn = din;
        io.dParams = dpar;
        io.workspace = b.workspace.data();
        io.training = true;
        io.pool = &m_pool;
        st = b.kernel->backward(io);
        if (!st.ok()) return failWith(PluginCheck::Kind::Gradient, st.error(), false);

        double worst = 0;
        size_t checked = 0;
        // `tensor` names the input or parameter for the finding, `what` for the English words.
        auto fd = [&](std::vector<float>& target, const std::vector<float>& analytic, const Params& tensor,
                      const std::string& what) -> bool {
            std::vector<size_t> elements(target.size());
            std::iota(elements.begin(), elements.end(), size_t{0});
            if (elements.size() > kFdMaxElements) {
                std::shuffle(elements.begin(), elements.end(), gen);
                elements.resize(kFdMaxElements);
            }
            for (size_t i : elements) {
                const float v = target[i];
                const float hi = static_cast<float>(v + kFdEps), lo = static_cast<float>(v - kFdEps);
                target[i] = hi;
                auto jp = b.objective(w);
                target[i] = lo;
                auto jm = b.objective(w);
                target[i] = v;
                if (!jp.ok() || !jm.ok()) {
                    failWith(PluginCheck::Kind::Gradient, jp.ok() ? jm.error() : jp.error(), false);
                    return false;
                }
                const double numeric = (*jp - *jm) / (static_cast<double>(hi) - static_cast<double>(lo));
                const double diff = std::fabs(analytic[i] - numeric);
                const double scale = std::max(std::fabs(static_cast<double>(analytic[i])), std::fabs(numeric));
                worst = std::max(worst, diff / std::max(scale, 1e-6));
                ++checked;
                if (diff > kFdAtol + kFdRtol * scale) {
                    fail(PluginCheck::Kind::Gradient, Finding::GradientMismatch,
                         joined(tensor, {{"element", std::to_string(i)}, {"backward", num(analytic[i])}, {"numeric", num(numeric)}}),
                         what + " element " + std::to_string(i) + ": backward " + num(analytic[i]) +
                             ", finite difference " + num(numeric),
                         worst);
                    return false;
                }
            }
            return true;
        };
        for (size_t k = 0; k < b.x.size(); ++k)
            if (!fd(b.x[k], dIn[k], {{"tensor", "input"}, {"input", std::to_string(k)}}, "d/d input " + std::to_string(k)))
                return;
        for (size_t k = 0; k < b.p.size(); ++k)
            if (specs[k].trainable &&
                !fd(b.p[k], dP[k], {{"tensor", "parameter"}, {"parameter", specs[k].name}}, "d/d " + specs[k].name))
                return;
        pass(PluginCheck::Kind::Gradient, Finding::GradientAgrees, {{"count", std::to_string(checked)}},
             std::to_string(checked) + " gradient values agree with central differences", worst);
    }

    void pass(PluginCheck::Kind k, Finding f, Params params, std::string detail, double worst) {
        m_results.push_back(made(m_case, k, PluginCheck::Outcome::Passed, std::move(detail), worst, std::nullopt, f, std::move(params)));
    }
    void skip(PluginCheck::Kind k, Finding f, std::string detail) {
        m_results.push_back(made(m_case, k, PluginCheck::Outcome::Skipped, std::move(detail), 0, std::nullopt, f, {}));
    }
    void fail(PluginCheck::Kind k, Finding f, Params params, std::string detail, double worst = 0,
              std::optional<Error> error = std::nullopt) {
        Error e = checkError(m_op.name, m_case, detail, std::move(error));
        m_results.push_back(made(m_case, k, PluginCheck::Outcome::Failed, std::move(detail), worst, std::move(e), f, std::move(params)));
    }
    // A failed check that an engine error says: with `keep` the error itself (one of Kiln's
    // rules), else a PluginError whose reason is its message (a call into the plugin that failed).
    void failWith(PluginCheck::Kind k, const Error& e, bool keep = true) {
        fail(k, Finding::EngineError, {{"message", e.message}}, e.message, 0, keep ? std::optional<Error>(e) : std::nullopt);
    }
    // A case that cannot be made: a failed Shape check with a ShapeMismatch error carrying the
    // finding's parameters.
    void refuse(Finding f, const Params& params, const std::string& why) {
        Error e = caseError(m_op.name, m_case, why);
        for (const auto& [k, v] : params) e.with(k, v);
        fail(PluginCheck::Kind::Shape, f, params, why, 0, std::move(e));
    }

    const PluginOp& m_op;
    ThreadPool& m_pool;
    std::string m_case;
    std::vector<PluginCheck> m_results;
};

// One loss case: the plugin's compute() called directly for per-sample values, and Kiln's loss
// kernel (pluginLossDef()) for the reduced value and the gradient the trainer uses.
class LossChecker {
public:
    LossChecker(const PluginLoss& loss, ThreadPool& pool) : m_loss(loss), m_pool(pool) {}

    // `declared`: the plugin's name for the case, "" for one Kiln made.
    void run(const std::string& declared, const AttrMap& attrs, const Shape& predictions, const Shape& targets) {
        const std::string shapes = "predictions " + predictions.toString() + ", targets " + targets.toString();
        m_case = declared.empty() ? shapes : declared + " (" + shapes + ")";
        m_declared = declared;
        m_predShape = predictions.toString();
        m_targetShape = targets.toString();
        m_label = std::string(kPluginPrefix) + m_loss.name;
        m_attrs = attrs;
        m_batch = predictions[0];
        m_width = predictions.numelFrom(1);
        m_targetWidth = targets.numelFrom(1);
        std::mt19937 gen(4321);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f), t(0.0f, 1.0f);
        m_pred.resize(static_cast<size_t>(predictions.numel()));
        for (auto& v : m_pred) v = u(gen);
        m_target.resize(static_cast<size_t>(targets.numel()));
        const bool classIndices = m_targetWidth == 1 && m_width > 1;
        std::uniform_int_distribution<int64_t> cls(0, std::max<int64_t>(m_width - 1, 0));
        for (auto& v : m_target) v = classIndices ? static_cast<float>(cls(gen)) : t(gen);
        m_ctx = std::make_unique<PluginTermContext>(m_label, m_loss.attrs, m_attrs, predictions, targets);

        // Kiln's kernel, as a plan makes it.
        Node node;
        node.name = "check";
        node.op = m_label;
        const std::vector<Shape> inputs{predictions, targets};
        const ShapeContext sc{node, m_attrs, inputs};
        const OpDef& def = pluginLossDef();
        auto out = def.shape(sc);
        if (!out.ok()) return failWith(PluginCheck::Kind::Shape, out.error());
        auto kernel = def.cpu(sc, *out);
        if (!kernel.ok()) return failWith(PluginCheck::Kind::Value, kernel.error());
        m_kernel = std::move(*kernel);
        if (!values()) return;
        gradients();
    }

    std::vector<PluginCheck> results() { return std::move(m_results); }

private:
    // The plugin's per-sample values of `pred` (and its gradient into `grad` when not null).
    Status compute(const std::vector<float>& pred, std::vector<float>& values, std::vector<float>* grad) {
        char err[1024] = {};
        values.assign(static_cast<size_t>(m_batch), 0.0f);
        if (grad) grad->assign(pred.size(), 0.0f);
        KilnLossArgs a{};
        a.ctx = &m_ctx->context();
        a.predictions = pred.data();
        a.targets = m_target.data();
        a.batch = m_batch;
        a.width = m_width;
        a.target_width = m_targetWidth;
        a.values = values.data();
        a.d_predictions = grad ? grad->data() : nullptr;
        a.parallel_for = pluginParallelFor;
        a.pool = &m_pool;
        a.error = err;
        a.error_size = sizeof err;
        if (m_loss.desc->compute(&a) != 0)
            return Error(ErrorCode::PluginError, "the plugin's compute() failed: " + pluginMessage(err, sizeof err));
        return {};
    }

    // The loss the trainer takes: the kernel's forward (the mean over the batch).
    Result<float> kernelLoss(const std::vector<float>& pred) {
        float out = 0;
        const std::array<const float*, 2> in{pred.data(), m_target.data()};
        KernelIo io;
        io.in = in;
        io.out = &out;
        io.training = true;
        io.pool = &m_pool;
        KILN_TRY(m_kernel->forward(io));
        return out;
    }

    bool values() {
        std::vector<float> plain, withGrad, grad;
        if (Status st = compute(m_pred, plain, nullptr); !st.ok()) return failWith(PluginCheck::Kind::Value, st.error()), false;
        if (Status st = compute(m_pred, withGrad, &grad); !st.ok())
            return fail(PluginCheck::Kind::Value, Finding::EngineError, {{"when", "with_gradients"}, {"message", st.error().message}},
                        "with gradients: " + st.error().message),
                   false;
        double sum = 0;
        for (int64_t i = 0; i < m_batch; ++i) {
            const float v = plain[static_cast<size_t>(i)], w = withGrad[static_cast<size_t>(i)];
            const std::string sample = std::to_string(i);
            if (!std::isfinite(v))
                return fail(PluginCheck::Kind::Value, Finding::LossNotFinite, {{"sample", sample}, {"value", num(v)}},
                            "sample " + sample + ": the value is " + num(v) + " for finite predictions and targets"),
                       false;
            if (std::fabs(double(v) - w) > kRefAtol + kRefRtol * std::fabs(double(v)))
                return fail(PluginCheck::Kind::Value, Finding::LossValueWithGradients,
                            {{"sample", sample}, {"without", num(v)}, {"with", num(w)}},
                            "sample " + sample + ": the value is " + num(v) + " without gradients but " + num(w) + " with them"),
                       false;
            sum += v;
        }
        // Each sample's value depends on that sample only: changing sample 0 leaves the others.
        if (m_batch > 1) {
            std::vector<float> moved = m_pred, after;
            for (int64_t k = 0; k < m_width; ++k) moved[static_cast<size_t>(k)] += 0.5f;
            if (Status st = compute(moved, after, nullptr); !st.ok()) return failWith(PluginCheck::Kind::Value, st.error()), false;
            for (int64_t i = 1; i < m_batch; ++i)
                if (after[static_cast<size_t>(i)] != plain[static_cast<size_t>(i)])
                    return fail(PluginCheck::Kind::Value, Finding::LossNotPerSample, {{"sample", std::to_string(i)}},
                                "the value of sample " + std::to_string(i) +
                                    " changes when only sample 0's predictions change"),
                           false;
        }
        auto reduced = kernelLoss(m_pred);
        if (!reduced.ok()) return failWith(PluginCheck::Kind::Value, reduced.error()), false;
        const double mean = sum / static_cast<double>(m_batch);
        const double diff = std::fabs(*reduced - mean);
        if (diff > kRefAtol + kRefRtol * std::fabs(mean))
            return fail(PluginCheck::Kind::Value, Finding::LossMeanMismatch, {{"loss", num(*reduced)}, {"mean", num(mean)}},
                        "the loss is " + num(*reduced) + " but the mean of the values " + num(mean), diff),
                   false;
        pass(PluginCheck::Kind::Value, Finding::LossValuesAgree, {{"count", std::to_string(m_batch)}, {"loss", num(mean)}},
             std::to_string(m_batch) + " per-sample values, finite, the same with and without gradients; loss " + num(mean),
             diff);
        return true;
    }

    void gradients() {
        // Analytic: the kernel's backward with a unit weight, d(mean loss)/d predictions.
        std::vector<float> analytic(m_pred.size(), 0.0f);
        std::vector<float> out(1, 0.0f);
        const std::array<const float*, 2> in{m_pred.data(), m_target.data()};
        const std::array<float*, 2> dIn{analytic.data(), nullptr};
        const float dOut = 1.0f;
        KernelIo io;
        io.in = in;
        io.out = out.data();
        io.dOut = &dOut;
        io.dIn = dIn;
        io.training = true;
        io.pool = &m_pool;
        io.gradScale = 1.0f;
        if (Status st = m_kernel->forward(io); !st.ok()) return failWith(PluginCheck::Kind::Gradient, st.error());
        if (Status st = m_kernel->backward(io); !st.ok()) return failWith(PluginCheck::Kind::Gradient, st.error());
        // Numeric: central differences of the mean of the plugin's values, summed in double.
        auto objective = [&](const std::vector<float>& pred) -> Result<double> {
            std::vector<float> v;
            KILN_TRY(compute(pred, v, nullptr));
            double s = 0;
            for (float x : v) s += x;
            return s / static_cast<double>(m_batch);
        };
        std::vector<size_t> elements(m_pred.size());
        std::iota(elements.begin(), elements.end(), size_t{0});
        std::mt19937 gen(77);
        if (elements.size() > kFdMaxElements) {
            std::shuffle(elements.begin(), elements.end(), gen);
            elements.resize(kFdMaxElements);
        }
        double worst = 0;
        std::vector<float> x = m_pred;
        for (size_t i : elements) {
            const float v = x[i];
            const float hi = static_cast<float>(v + kFdEps), lo = static_cast<float>(v - kFdEps);
            x[i] = hi;
            auto jp = objective(x);
            x[i] = lo;
            auto jm = objective(x);
            x[i] = v;
            if (!jp.ok() || !jm.ok()) return failWith(PluginCheck::Kind::Gradient, jp.ok() ? jm.error() : jp.error());
            const double numeric = (*jp - *jm) / (static_cast<double>(hi) - static_cast<double>(lo));
            const double diff = std::fabs(analytic[i] - numeric);
            const double scale = std::max(std::fabs(static_cast<double>(analytic[i])), std::fabs(numeric));
            worst = std::max(worst, diff / std::max(scale, 1e-6));
            if (diff > kFdAtol / static_cast<double>(m_batch) + kFdRtol * scale) {
                const int64_t sample = static_cast<int64_t>(i) / std::max<int64_t>(m_width, 1);
                const int64_t k = static_cast<int64_t>(i) % std::max<int64_t>(m_width, 1);
                const std::string index = "[" + std::to_string(sample) + "," + std::to_string(k) + "]";
                return fail(PluginCheck::Kind::Gradient, Finding::LossGradientMismatch,
                            {{"sample", std::to_string(sample)},
                             {"index", std::to_string(k)},
                             {"gradient", num(analytic[i])},
                             {"numeric", num(numeric)}},
                            "d loss / d prediction " + index + ": gradient " + num(analytic[i]) + ", finite difference " +
                                num(numeric),
                            worst);
            }
        }
        pass(PluginCheck::Kind::Gradient, Finding::GradientAgrees, {{"count", std::to_string(elements.size())}},
             std::to_string(elements.size()) + " gradient values agree with central differences", worst);
    }

    void pass(PluginCheck::Kind k, Finding f, Params params, std::string detail, double worst) {
        add(made(m_case, k, PluginCheck::Outcome::Passed, std::move(detail), worst, std::nullopt, f, std::move(params)));
    }
    void fail(PluginCheck::Kind k, Finding f, Params params, std::string detail, double worst = 0) {
        Error e = checkError(m_label, m_case, detail, std::nullopt);
        add(made(m_case, k, PluginCheck::Outcome::Failed, std::move(detail), worst, std::move(e), f, std::move(params)));
    }
    void add(PluginCheck c) {
        c.declaredCase = m_declared;
        c.predictionsShape = m_predShape;
        c.targetsShape = m_targetShape;
        m_results.push_back(std::move(c));
    }
    // A failed check that an engine error says (a PluginError whose reason is its message).
    void failWith(PluginCheck::Kind k, const Error& e) { fail(k, Finding::EngineError, {{"message", e.message}}, e.message); }

    const PluginLoss& m_loss;
    ThreadPool& m_pool;
    std::string m_case, m_label, m_declared, m_predShape, m_targetShape;
    AttrMap m_attrs;
    int64_t m_batch = 0, m_width = 0, m_targetWidth = 0;
    std::vector<float> m_pred, m_target;
    std::unique_ptr<PluginTermContext> m_ctx;
    std::unique_ptr<CpuKernel> m_kernel;
    std::vector<PluginCheck> m_results;
};

}  // namespace

// The plugin's own cases for a loss (ABI 1.2): its attributes from JSON, its shapes.
static std::vector<PluginCheck> checkDeclaredLossCases(const PluginLoss& loss, ThreadPool& pool) {
    const std::string label = std::string(kPluginPrefix) + loss.name;
    std::vector<PluginCheck> out;
    for (const KilnLossCheckCase* c : loss.checkCases) {
        const std::string name = c->name ? c->name : "?";
        // A case that cannot be made: a failed Shape check with the error of the rule it breaks.
        // `error`: one of Kiln's rules that the case breaks (an EngineError finding); else a
        // ShapeMismatch with the finding's parameters and the case's shapes.
        auto refuse = [&](Finding f, const Params& params, const std::string& why, std::optional<Error> error = std::nullopt) {
            const bool given = error.has_value();
            Error e = given ? checkError(label, name, why, std::move(error))
                            : caseError(label, name, why)
                                  .with("predictions", shapeText(c->predictions))
                                  .with("targets", shapeText(c->targets));
            if (!given)
                for (const auto& [k, v] : params)
                    if (e.param(k).empty()) e.with(k, v);
            out.push_back(made(name, PluginCheck::Kind::Shape, PluginCheck::Outcome::Failed, why, 0, std::move(e), f, params));
        };
        auto refuseWith = [&](const Error& e) { refuse(Finding::EngineError, {{"message", e.message}}, e.message, e); };
        nlohmann::json json = nlohmann::json::parse(c->attrs_json ? c->attrs_json : "{}", nullptr, false);
        if (json.is_discarded() || !json.is_object()) {
            refuse(Finding::AttributesNotObject, {}, "its attributes are not a JSON object");
            continue;
        }
        AttrMap given;
        bool ok = true;
        for (auto& [k, v] : json.items()) {
            auto a = attrFromJson(v, k);
            if (!a.ok()) {
                refuseWith(a.error());
                ok = false;
                break;
            }
            given.set(k, *a);
        }
        if (!ok) continue;
        auto attrs = resolvePluginLossAttrs(loss, given, label);
        if (!attrs.ok()) {
            refuseWith(attrs.error());
            continue;
        }
        // Why `s` cannot be a case's predictions or targets (`tensor`): refused, and true.
        auto badShape = [&](const KilnShape& s, const std::string& tensor) -> bool {
            const std::string words = "the " + tensor + "' shape " + shapeText(s) + " ";
            const Params named{{"tensor", tensor}, {"shape", shapeText(s)}};
            if (s.rank < 2 || s.rank > KILN_PLUGIN_MAX_RANK) {
                refuse(Finding::LossShapeRank,
                       joined(named, {{"rank", std::to_string(s.rank)}, {"max_rank", std::to_string(KILN_PLUGIN_MAX_RANK)}}),
                       words + "has rank " + std::to_string(s.rank) + " (2 to " + std::to_string(KILN_PLUGIN_MAX_RANK) +
                           ": the batch and at least one more dimension)");
                return true;
            }
            if (const auto why = sizeProblem(Shape(std::vector<int64_t>(s.dims, s.dims + s.rank)))) {
                refuse(why->finding, joined(named, why->params), words + why->text);
                return true;
            }
            return false;
        };
        if (badShape(c->predictions, "predictions") || badShape(c->targets, "targets")) continue;
        const Shape pred(std::vector<int64_t>(c->predictions.dims, c->predictions.dims + c->predictions.rank));
        const Shape target(std::vector<int64_t>(c->targets.dims, c->targets.dims + c->targets.rank));
        if (pred[0] != target[0]) {
            refuse(Finding::BatchesDiffer, {{"predictions", pred.toString()}, {"targets", target.toString()}},
                   "the predictions " + pred.toString() + " and the targets " + target.toString() + " have different batches");
            continue;
        }
        PluginTermContext symbolic(label, loss.attrs, *attrs, pred.withBatch(Shape::kBatch), target.withBatch(Shape::kBatch));
        if (Status st = symbolic.checkShapes(loss.desc->check_shapes); !st.ok()) {
            refuseWith(st.error());
            continue;
        }
        LossChecker checker(loss, pool);
        checker.run(name, *attrs, pred, target);
        for (auto& r : checker.results()) out.push_back(std::move(r));
    }
    return out;
}

std::vector<PluginCheck> checkPluginLoss(const PluginLoss& loss, ThreadPool& pool) {
    if (!loss.checkCases.empty()) return checkDeclaredLossCases(loss, pool);
    constexpr int64_t kBatch = 4;
    auto attrs = resolvePluginLossAttrs(loss, AttrMap{}, std::string(kPluginPrefix) + loss.name);
    if (!attrs.ok())
        return {made("defaults", PluginCheck::Kind::Shape, PluginCheck::Outcome::Skipped,
                     "no case can be made from the loss's defaults (" + attrs.error().message +
                         "); the plugin can declare loss check cases (ABI 1.2)",
                     0, std::nullopt, Finding::NoDefaultCase, {{"reason", attrs.error().message}})};
    const std::vector<std::pair<Shape, Shape>> pairs{{Shape{kBatch, 3}, Shape{kBatch, 3}},
                                                     {Shape{kBatch, 1}, Shape{kBatch, 1}},
                                                     {Shape{kBatch, 3}, Shape{kBatch, 1}}};
    std::vector<PluginCheck> out;
    std::string refused;
    for (const auto& [pred, target] : pairs) {
        // The loss's shape check sees the symbolic batch, as when a model is compiled.
        const std::string label = std::string(kPluginPrefix) + loss.name;
        PluginTermContext symbolic(label, loss.attrs, *attrs, pred.withBatch(Shape::kBatch), target.withBatch(Shape::kBatch));
        if (Status st = symbolic.checkShapes(loss.desc->check_shapes); !st.ok()) {
            refused += (refused.empty() ? "" : "; ") + st.error().message;
            continue;
        }
        LossChecker checker(loss, pool);
        checker.run("", *attrs, pred, target);
        for (auto& r : checker.results()) out.push_back(std::move(r));
    }
    if (out.empty())
        out.push_back(made("shapes", PluginCheck::Kind::Shape, PluginCheck::Outcome::Skipped,
                           "the loss accepts none of the shapes the check tries: " + refused, 0, std::nullopt,
                           Finding::NoShapesAccepted, {{"reasons", refused}}));
    return out;
}

std::string PluginCheck::param(const std::string& key) const {
    for (const auto& [k, v] : params)
        if (k == key) return v;
    return {};
}

std::vector<PluginCheck> checkPluginOp(const PluginOp& op, ThreadPool& pool) {
    Checker checker(op, pool);
    for (int32_t i = 0; i < op.desc->check_case_count; ++i) checker.run(op.desc->check_cases[i]);
    return checker.results();
}

}  // namespace kiln::engine::ops
