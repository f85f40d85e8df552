// SPDX-License-Identifier: Apache-2.0
// Grad-CAM and saliency through gradient-probe plans (batch 1, inference mode), one plan per
// Grad-CAM layer, and their colouring.
#include "engine/api/explanation.h"

#include <algorithm>
#include <cmath>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/api/evaluation.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

std::optional<ExplainMethod> parseExplainMethod(const std::string& name) {
    if (name == "gradcam") return ExplainMethod::GradCam;
    if (name == "saliency") return ExplainMethod::Saliency;
    return std::nullopt;
}

std::vector<std::string> gradCamLayers(const ops::ModelInfo& model) {
    std::vector<std::string> out;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (ni.def->kind != ops::OpKind::Input && ni.output.rank() == 4)
            out.push_back(model.graph.nodes[static_cast<size_t>(i)].name);
    }
    return out;
}

Result<std::string> defaultGradCamLayer(const ops::ModelInfo& model) {
    std::string last;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if ((ni.def->kind == ops::OpKind::Conv2D || ni.def->kind == ops::OpKind::DepthwiseConv2D) && ni.output.rank() == 4)
            last = model.graph.nodes[static_cast<size_t>(i)].name;
    }
    if (last.empty())
        return Error(ErrorCode::Unsupported, "Grad-CAM needs a convolutional layer and the model has none")
            .with("what", "Grad-CAM without a convolutional layer");
    return last;
}

// The model's weights and its compiled probe plans: one per Grad-CAM layer, "" for saliency.
struct Explainer::Plans {
    exec::ParamStore params;
    ThreadPool* pool = nullptr;
    std::map<std::string, std::unique_ptr<exec::Plan>> byLayer;

    Result<exec::Plan*> get(const ops::ModelInfo& model, const std::string& scoreNode, const std::string& layer) {
        if (auto it = byLayer.find(layer); it != byLayer.end()) return it->second.get();
        exec::CompileOptions o;
        o.batch = 1;
        o.training = false;
        exec::GradientProbe probe;
        probe.seeds = {scoreNode};
        probe.keep = {scoreNode};
        if (!layer.empty()) probe.keep.push_back(layer);
        o.probe = probe;
        KILN_ASSIGN(auto plan, exec::Plan::compile(model, params, o, *pool));
        exec::Plan* p = plan.get();
        byLayer.emplace(layer, std::move(plan));
        return p;
    }
};

Explainer::Explainer(ops::ModelInfo model, std::unique_ptr<Plans> plans)
    : m_model(std::move(model)), m_plans(std::move(plans)) {}

Explainer::~Explainer() = default;

Result<std::unique_ptr<Explainer>> Explainer::make(ops::ModelInfo model, std::unique_ptr<Plans> plans) {
    if (model.inputs.size() != 1)
        return Error(ErrorCode::Unsupported,
                     "explanations need a model with one input, this one has " + std::to_string(model.inputs.size()))
            .with("what", "models with several inputs");
    const auto& in = model.nodes[static_cast<size_t>(model.inputs[0])];
    if (in.output.rank() != 4)
        return Error(ErrorCode::Unsupported, "explanations need a picture input [height, width, channels], this one is " +
                                                 in.output.toString())
            .withNode(model.graph.nodes[static_cast<size_t>(model.inputs[0])].name)
            .with("what", "explanations of inputs that are not pictures");
    if (model.outputs.empty()) return Error(ErrorCode::Internal, "the model has no output");
    const Shape inputShape = in.output.withBatch(1);
    std::unique_ptr<Explainer> e(new Explainer(std::move(model), std::move(plans)));
    const auto& m = e->m_model;
    e->m_inputShape = inputShape;
    // The scores: the logits feeding a final Softmax or Sigmoid, else the output itself.
    int score = m.outputs[0];
    const auto& out = m.nodes[static_cast<size_t>(score)];
    if ((out.def->kind == ops::OpKind::Softmax || out.def->kind == ops::OpKind::Sigmoid) && out.inputs.size() == 1) {
        score = out.inputs[0];
        e->m_scoresAreLogits = true;
    }
    const auto& sn = m.nodes[static_cast<size_t>(score)];
    if (sn.output.rank() != 2)
        return Error(ErrorCode::Unsupported, "explanations need a classifier whose output is [batch, classes], this one is " +
                                                 sn.output.toString())
            .withNode(m.graph.nodes[static_cast<size_t>(score)].name)
            .with("what", "explanations of outputs that are not class scores");
    e->m_scoreNode = m.graph.nodes[static_cast<size_t>(score)].name;
    e->m_width = sn.output[1];
    e->m_classes = e->m_width == 1 ? 2 : e->m_width;
    return e;
}

Result<std::unique_ptr<Explainer>> Explainer::create(ops::ModelInfo model, const WeightValues& weights, ThreadPool& pool) {
    auto plans = std::make_unique<Plans>();
    plans->params = exec::ParamStore::create(model, weights.seed);
    plans->pool = &pool;
    for (const auto& [name, values] : weights.values) {
        exec::Parameter* p = plans->params.find(name);
        if (p == nullptr)
            return Error(ErrorCode::WeightsMismatch, "the model has no parameter named " + name)
                .with("tensor", name)
                .with("reason", "no such parameter");
        if (p->value.numel() != static_cast<int64_t>(values.size()))
            return Error(ErrorCode::WeightsMismatch, "parameter " + name + " holds " + std::to_string(p->value.numel()) +
                                                         " values, " + std::to_string(values.size()) + " were given")
                .with("tensor", name)
                .with("reason", "wrong number of values");
        std::copy(values.begin(), values.end(), p->value.data<float>());
    }
    return make(std::move(model), std::move(plans));
}

Result<std::unique_ptr<Explainer>> Explainer::create(const io::Project& project, const std::string& weights,
                                                     ThreadPool& pool) {
    KILN_ASSIGN(std::string file, resolveWeights(weights));
    auto model = ops::analyzeModel(project.graph);
    if (!model.ok()) return io::locate(model.error(), project);
    auto plans = std::make_unique<Plans>();
    plans->params = exec::ParamStore::create(*model, 0);
    plans->pool = &pool;
    KILN_TRY(train::loadWeights(plans->params, file));
    return make(std::move(model.value()), std::move(plans));
}

Result<Heatmap> Explainer::explain(const float* input, ExplainMethod method, const std::string& layerName,
                                   std::optional<int64_t> cls) {
    std::string layer;
    if (method == ExplainMethod::GradCam) {
        if (layerName.empty()) {
            KILN_ASSIGN(layer, defaultGradCamLayer(m_model));
        } else {
            const int i = m_model.graph.find(layerName);
            if (i < 0)
                return Error(ErrorCode::ConfigError, "no node named \"" + layerName + "\"").withNode(layerName).with("field", "layer");
            const auto& ni = m_model.nodes[static_cast<size_t>(i)];
            if (ni.output.rank() != 4 || ni.def->kind == ops::OpKind::Input)
                return Error(ErrorCode::ConfigError, "Grad-CAM needs a layer with a [batch, height, width, channels] output; \"" +
                                                         layerName + "\" gives " + ni.output.toString())
                    .withNode(layerName)
                    .with("field", "layer");
            layer = layerName;
        }
    }
    KILN_ASSIGN(exec::Plan * plan, m_plans->get(m_model, m_scoreNode, layer));
    const int64_t h = m_inputShape[1], w = m_inputShape[2], c = m_inputShape[3];
    std::copy(input, input + h * w * c, plan->input(size_t{0}));
    KILN_TRY(plan->forward());

    Heatmap out;
    out.height = h;
    out.width = w;
    const float* scores = plan->value(m_scoreNode);
    if (!scores) return Error(ErrorCode::Internal, "the score node's value is not kept");
    if (m_width == 1) {
        const float threshold = m_scoresAreLogits ? 0.0f : 0.5f;
        out.scores = {-scores[0], scores[0]};
        out.predictedClass = scores[0] > threshold ? 1 : 0;
    } else {
        out.scores.assign(scores, scores + m_width);
        out.predictedClass = std::max_element(out.scores.begin(), out.scores.end()) - out.scores.begin();
    }
    out.explainedClass = cls.value_or(out.predictedClass);
    if (out.explainedClass < 0 || out.explainedClass >= m_classes)
        return Error(ErrorCode::ConfigError, "class " + std::to_string(out.explainedClass) + " is out of range: the model has " +
                                                 std::to_string(m_classes) + " classes (0 to " + std::to_string(m_classes - 1) + ")")
            .with("field", "class");
    out.score = out.scores[static_cast<size_t>(out.explainedClass)];

    float* seed = plan->seedGradient(m_scoreNode);
    if (!seed) return Error(ErrorCode::Internal, "the probe plan has no seed gradient");
    std::fill(seed, seed + m_width, 0.0f);
    if (m_width == 1) seed[0] = out.explainedClass == 1 ? 1.0f : -1.0f;
    else seed[out.explainedClass] = 1.0f;
    KILN_TRY(plan->backward());

    std::vector<float> map;
    if (method == ExplainMethod::Saliency) {
        const float* g = plan->inputGradient(0);
        if (!g) return Error(ErrorCode::Internal, "the probe plan has no input gradient");
        map.assign(static_cast<size_t>(h * w), 0.0f);
        for (int64_t p = 0; p < h * w; ++p) {
            float m = 0;
            for (int64_t k = 0; k < c; ++k) m = std::max(m, std::abs(g[p * c + k]));
            map[static_cast<size_t>(p)] = m;
        }
    } else {
        const auto& ln = m_model.info(layer);
        const int64_t lh = ln.output[1], lw = ln.output[2], lc = ln.output[3];
        const float* a = plan->value(layer);
        const float* g = plan->gradient(layer);
        if (!a || !g) return Error(ErrorCode::Internal, "the probe plan did not keep layer " + layer).withNode(layer);
        // Channel weights: the spatial mean of the gradient (sums in double, the map is small).
        std::vector<double> alpha(static_cast<size_t>(lc), 0.0);
        for (int64_t p = 0; p < lh * lw; ++p)
            for (int64_t k = 0; k < lc; ++k) alpha[static_cast<size_t>(k)] += g[p * lc + k];
        for (auto& v : alpha) v /= static_cast<double>(lh * lw);
        out.layerHeight = lh;
        out.layerWidth = lw;
        out.layerValues.assign(static_cast<size_t>(lh * lw), 0.0f);
        for (int64_t p = 0; p < lh * lw; ++p) {
            double s = 0;
            for (int64_t k = 0; k < lc; ++k) s += alpha[static_cast<size_t>(k)] * a[p * lc + k];
            out.layerValues[static_cast<size_t>(p)] = static_cast<float>(std::max(s, 0.0));
        }
        map = resizeBilinear(out.layerValues, lh, lw, h, w);
    }
    out.scale = map.empty() ? 0.0f : *std::max_element(map.begin(), map.end());
    if (out.scale > 0)
        for (auto& v : map) v /= out.scale;
    out.values = std::move(map);
    return out;
}

std::vector<float> resizeBilinear(const std::vector<float>& in, int64_t h, int64_t w, int64_t outH, int64_t outW) {
    std::vector<float> out(static_cast<size_t>(outH * outW));
    // Source coordinate of an output index: (o + 0.5) * in / out - 0.5, clamped at 0; the upper
    // neighbour is clamped at the last row or column.
    auto axis = [](int64_t o, int64_t n, int64_t outN, int64_t& i0, int64_t& i1, float& t) {
        float src = (static_cast<float>(o) + 0.5f) * static_cast<float>(n) / static_cast<float>(outN) - 0.5f;
        src = std::max(src, 0.0f);
        i0 = std::min(static_cast<int64_t>(src), n - 1);
        i1 = std::min(i0 + 1, n - 1);
        t = src - static_cast<float>(i0);
    };
    for (int64_t y = 0; y < outH; ++y) {
        int64_t y0, y1;
        float ty;
        axis(y, h, outH, y0, y1, ty);
        for (int64_t x = 0; x < outW; ++x) {
            int64_t x0, x1;
            float tx;
            axis(x, w, outW, x0, x1, tx);
            const float top = (1 - tx) * in[static_cast<size_t>(y0 * w + x0)] + tx * in[static_cast<size_t>(y0 * w + x1)];
            const float bottom = (1 - tx) * in[static_cast<size_t>(y1 * w + x0)] + tx * in[static_cast<size_t>(y1 * w + x1)];
            out[static_cast<size_t>(y * outW + x)] = (1 - ty) * top + ty * bottom;
        }
    }
    return out;
}

void heatColour(float v, uint8_t rgb[3]) {
    // Piecewise linear through blue (0), cyan (1/3), yellow (2/3) and red (1).
    static constexpr float kStops[4][3] = {{0, 0, 255}, {0, 255, 255}, {255, 255, 0}, {255, 0, 0}};
    const float x = std::clamp(v, 0.0f, 1.0f) * 3.0f;
    const int i = std::min(static_cast<int>(x), 2);
    const float t = x - static_cast<float>(i);
    for (int k = 0; k < 3; ++k)
        rgb[k] = static_cast<uint8_t>(std::lround((1 - t) * kStops[i][k] + t * kStops[i + 1][k]));
}

std::vector<uint8_t> pictureRgb(const float* input, int64_t h, int64_t w, int64_t c) {
    const int64_t n = h * w;
    float lo = INFINITY, hi = -INFINITY;
    const int64_t shown = c == 3 ? 3 : 1;
    for (int64_t p = 0; p < n; ++p)
        for (int64_t k = 0; k < shown; ++k) {
            lo = std::min(lo, input[p * c + k]);
            hi = std::max(hi, input[p * c + k]);
        }
    const float range = hi > lo ? hi - lo : 1.0f;
    std::vector<uint8_t> out(static_cast<size_t>(n * 3));
    for (int64_t p = 0; p < n; ++p)
        for (int k = 0; k < 3; ++k) {
            const float v = input[p * c + (shown == 3 ? k : 0)];
            out[static_cast<size_t>(p * 3 + k)] = static_cast<uint8_t>(std::lround(std::clamp((v - lo) / range, 0.0f, 1.0f) * 255.0f));
        }
    return out;
}

std::vector<uint8_t> overlayRgb(const std::vector<uint8_t>& picture, const Heatmap& heat, float opacity) {
    std::vector<uint8_t> out(picture.size());
    opacity = std::clamp(opacity, 0.0f, 1.0f);
    const size_t n = std::min(picture.size() / 3, heat.values.size());
    for (size_t p = 0; p < n; ++p) {
        uint8_t colour[3];
        heatColour(heat.values[p], colour);
        const float a = opacity * std::clamp(heat.values[p], 0.0f, 1.0f);
        for (int k = 0; k < 3; ++k)
            out[p * 3 + static_cast<size_t>(k)] =
                static_cast<uint8_t>(std::lround((1 - a) * picture[p * 3 + static_cast<size_t>(k)] + a * colour[k]));
    }
    return out;
}

Status writePng(const std::string& path, const std::vector<uint8_t>& rgb, int64_t h, int64_t w) {
    if (static_cast<int64_t>(rgb.size()) != h * w * 3)
        return Error(ErrorCode::Internal, "picture size does not match " + std::to_string(h) + "x" + std::to_string(w));
    cv::Mat bgr(static_cast<int>(h), static_cast<int>(w), CV_8UC3);
    for (int64_t p = 0; p < h * w; ++p) {
        uint8_t* px = bgr.data + p * 3;
        px[0] = rgb[static_cast<size_t>(p * 3 + 2)];
        px[1] = rgb[static_cast<size_t>(p * 3 + 1)];
        px[2] = rgb[static_cast<size_t>(p * 3)];
    }
    std::vector<uchar> png;
    if (!cv::imencode(".png", bgr, png))
        return Error(ErrorCode::FileWrite, "could not encode a PNG picture").withFile(path).with("path", path).with("reason", "PNG encoding failed");
    return io::writeFileAtomic(path, std::string(png.begin(), png.end()));
}

}  // namespace kiln::engine::api
