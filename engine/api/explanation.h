// SPDX-License-Identifier: Apache-2.0
// Explanations of a classifier's decision on one picture: Grad-CAM (class-weighted activations of
// a convolutional layer) and input-gradient saliency, computed with an inference plan's gradient
// probes (engine/exec's GradientProbe), and the overlays that show them on the picture.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

namespace kiln::engine::api {

enum class ExplainMethod { GradCam, Saliency };

// "gradcam" or "saliency"; nullopt otherwise.
std::optional<ExplainMethod> parseExplainMethod(const std::string& name);

// The nodes Grad-CAM can use, in model order: those whose output is 4-D ([batch, H, W, C]).
std::vector<std::string> gradCamLayers(const ops::ModelInfo& model);
// The default Grad-CAM layer: the last Conv2D or DepthwiseConv2D node with a 4-D output (the one
// nearest the global pooling or flattening); Unsupported when the model has none.
Result<std::string> defaultGradCamLayer(const ops::ModelInfo& model);

struct Heatmap {
    int64_t height = 0, width = 0;  // the input picture's size
    std::vector<float> values;      // [height, width] in [0, 1]
    // Grad-CAM: the map at the layer's resolution (after ReLU, before upsampling and scaling).
    int64_t layerHeight = 0, layerWidth = 0;
    std::vector<float> layerValues;
    // The largest value before scaling to [0, 1] (0: the map is all zeros).
    float scale = 0;
    int64_t explainedClass = 0;
    int64_t predictedClass = 0;
    float score = 0;                 // the explained class's score (its logit where the model has one)
    std::vector<float> scores;       // every class's score
};

// The weights of a model built in code rather than loaded from a file: every parameter starts as
// the initialiser sets it for `seed` (as training's first step does), then each one named in
// `values` ("conv/kernel") takes the given values, as many as it holds, in row-major order.
struct WeightValues {
    uint64_t seed = 0;
    std::map<std::string, std::vector<float>> values;
};

// Explains the decisions of one model with given weights, one picture at a time. Not thread-safe:
// use one Explainer per thread. The score of a class is the model's first output, or the input of
// that output when it is a Softmax or Sigmoid node (the logits, as Grad-CAM intends). A binary
// head (one output) has classes 0 and 1; class 0's score is the negated output.
class Explainer {
public:
    // A model of one input of shape [H, W, C] with the weights `weights`. WeightsMismatch naming
    // the tensor for a name the model has no parameter of, or a wrong number of values.
    static Result<std::unique_ptr<Explainer>> create(ops::ModelInfo model, const WeightValues& weights, ThreadPool& pool);
    // The project's model with the weights in `weights` (a safetensors file or a run folder).
    static Result<std::unique_ptr<Explainer>> create(const io::Project& project, const std::string& weights,
                                                     ThreadPool& pool);
    ~Explainer();

    const ops::ModelInfo& model() const { return m_model; }
    int64_t numClasses() const { return m_classes; }
    const Shape& inputShape() const { return m_inputShape; }  // [1, H, W, C]

    // `input`: one sample, [H, W, C]. `layer`: Grad-CAM's node (empty: defaultGradCamLayer);
    // `cls`: the class to explain (default: the predicted one). Grad-CAM: ReLU(sum_k a_k A_k) with
    // a_k the spatial mean of d score / d A_k, upsampled bilinearly (half-pixel centres) to H x W.
    // Saliency: max over channels of |d score / d input|. Both are divided by their maximum.
    Result<Heatmap> explain(const float* input, ExplainMethod method, const std::string& layer = {},
                            std::optional<int64_t> cls = std::nullopt);

private:
    struct Plans;  // the weights and one compiled plan per Grad-CAM layer (explanation.cpp)

    Explainer(ops::ModelInfo model, std::unique_ptr<Plans> plans);
    // Checks the model and finds its class scores.
    static Result<std::unique_ptr<Explainer>> make(ops::ModelInfo model, std::unique_ptr<Plans> plans);

    ops::ModelInfo m_model;
    std::unique_ptr<Plans> m_plans;
    Shape m_inputShape;
    std::string m_scoreNode;   // where the class scores are read and the gradient seeded
    bool m_scoresAreLogits = false;
    int64_t m_width = 0;       // values at the score node
    int64_t m_classes = 0;
};

// Bilinear resize of a [h, w] map to [outH, outW] with half-pixel centres (PyTorch's
// interpolate(mode="bilinear", align_corners=False), OpenCV's INTER_LINEAR).
std::vector<float> resizeBilinear(const std::vector<float>& in, int64_t h, int64_t w, int64_t outH, int64_t outW);

// The colour of a heat value in [0, 1] on a blue-cyan-yellow-red scale, as 8-bit RGB.
void heatColour(float v, uint8_t rgb[3]);

// A sample as a picture: [H, W, C] values scaled to 0..255 by their own minimum and maximum;
// grey for one channel, RGB for three, the first channel in grey otherwise. Returns H*W*3 bytes.
std::vector<uint8_t> pictureRgb(const float* input, int64_t h, int64_t w, int64_t c);

// The heat map coloured and blended over `picture` (H*W*3 RGB): (1 - opacity * v) * picture +
// opacity * v * colour(v) per pixel, so cold regions keep the picture. Returns H*W*3 bytes.
std::vector<uint8_t> overlayRgb(const std::vector<uint8_t>& picture, const Heatmap& heat, float opacity);

// Writes H*W*3 RGB bytes as a PNG file (atomically); FileWrite naming the path on failure.
Status writePng(const std::string& path, const std::vector<uint8_t>& rgb, int64_t h, int64_t w);

}  // namespace kiln::engine::api
