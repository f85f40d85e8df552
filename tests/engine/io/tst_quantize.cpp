// SPDX-License-Identifier: Apache-2.0
// Int8 quantisation: weight scales per channel and per tensor, activation parameters, range
// collection against a hand computation on a tiny model, the int8 simulation against a direct
// fake-quantised computation, the structure of the QDQ ONNX graph, and the full-integer layout
// (values, fixed grids, pre-activation ranges from the linear twin).
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>

#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/io/project.h"
#include "engine/io/quantize.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;

namespace {

struct Loaded {
    ops::ModelInfo model;
    exec::ParamStore params;
};

Loaded load(const char* text) {
    auto p = parseProject(text, "q.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto g = modelGraph(*p);
    if (!g.ok()) qFatal("modelGraph: %s", g.error().toString().c_str());
    auto m = ops::analyzeModel(*g);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    Loaded l{std::move(m.value()), {}};
    l.params = exec::ParamStore::create(l.model, 3);
    return l;
}

// x[3] → Dropout → Dense(2, relu) "h" → Dense(1) "y".
const char* kTiny = R"({"format":"kiln-project","version":2,"name":"tiny","graph":{"nodes":[
  {"name":"x","op":"Input","attrs":{"shape":[3]}},
  {"name":"drop","op":"Dropout","inputs":["x"],"attrs":{"rate":0.5}},
  {"name":"h","op":"Dense","inputs":["drop"],"attrs":{"units":2,"activation":"relu"}},
  {"name":"y","op":"Dense","inputs":["h"],"attrs":{"units":1}}],"outputs":["y"]}})";

// Sets the tiny model's weights: h = relu(x·W1 + b1), y = h·W2 + b2.
void setTiny(exec::ParamStore& p) {
    const float w1[6] = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f};  // [3, 2]
    const float b1[2] = {0.1f, -0.2f};
    const float w2[2] = {1.5f, -0.5f};
    const float b2[1] = {0.05f};
    auto set = [&](const char* name, const float* v) {
        auto* t = p.find(name);
        QVERIFY(t);
        std::copy(v, v + t->value.numel(), t->value.data<float>());
    };
    set("h/kernel", w1);
    set("h/bias", b1);
    set("y/kernel", w2);
    set("y/bias", b2);
}

void tinyForward(const float* x, float* h, float* y) {
    const float w1[6] = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f};
    h[0] = std::max(0.0f, x[0] * w1[0] + x[1] * w1[2] + x[2] * w1[4] + 0.1f);
    h[1] = std::max(0.0f, x[0] * w1[1] + x[1] * w1[3] + x[2] * w1[5] - 0.2f);
    *y = h[0] * 1.5f + h[1] * -0.5f + 0.05f;
}

const float kSamples[5][3] = {{1.0f, 2.0f, -1.0f}, {-0.5f, 0.25f, 3.0f}, {2.0f, -1.5f, 0.5f},
                              {0.0f, 1.0f, 1.0f},  {-2.0f, 0.5f, -0.25f}};

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT

private slots:
    void weightScalesPerChannel() {
        // [rows 2, channels 3], channel fastest; channel 2 is all zero.
        const float w[6] = {0.5f, -2.54f, 0.0f, -1.27f, 1.0f, 0.0f};
        auto s = weightScales(w, 2, 3, true);
        QCOMPARE(s.size(), size_t{3});
        QCOMPARE(s[0], 1.27f / 127.0f);
        QCOMPARE(s[1], 2.54f / 127.0f);
        QCOMPARE(s[2], 1.0f);
        auto t = weightScales(w, 2, 3, false);
        QCOMPARE(t.size(), size_t{1});
        QCOMPARE(t[0], 2.54f / 127.0f);
        auto q = quantizeWeights(w, 2, 3, s);
        QCOMPARE(int(q[0]), 50);    // 0.5 / 0.01
        QCOMPARE(int(q[1]), -127);
        QCOMPARE(int(q[3]), -127);
        QCOMPARE(int(q[4]), 50);    // 1.0 / 0.02
        QCOMPARE(int(q[2]), 0);
        // Per tensor: one scale for all, 1.0 / 0.02 = 50, 0.5 / 0.02 = 25.
        auto qt = quantizeWeights(w, 2, 3, t);
        QCOMPARE(int(qt[0]), 25);
        QCOMPARE(int(qt[4]), 50);
        // Halves round to even, as ONNX QuantizeLinear does.
        const float ties[2] = {2.5f, 127.0f};
        auto qe = quantizeWeights(ties, 1, 2, {1.0f});
        QCOMPARE(int(qe[0]), 2);
        QCOMPARE(int(qe[1]), 127);
    }

    void activationParameters() {
        auto p = activationParams({-1.0f, 3.0f});
        QCOMPARE(p.scale, float(4.0 / 255.0));
        QCOMPARE(p.zeroPoint, -64);  // −128 + 1 / (4/255) = −64.25
        // A range above zero is widened to hold 0: 0 maps to −128.
        auto r = activationParams({0.5f, 2.0f});
        QCOMPARE(r.scale, float(2.0 / 255.0));
        QCOMPARE(r.zeroPoint, -128);
        auto n = activationParams({-4.0f, -1.0f});
        QCOMPARE(n.zeroPoint, 127);
        auto z = activationParams({0.0f, 0.0f});
        QCOMPARE(z.scale, 1.0f);
        QCOMPARE(z.zeroPoint, 0);
        // Fake quantisation lands on the grid and clamps outside the range.
        float v[4] = {0.0f, 1.0f, 10.0f, -10.0f};
        fakeQuantize(v, 4, p);
        QCOMPARE(v[0], 0.0f);
        QVERIFY(std::fabs(v[1] - 1.0f) <= p.scale / 2);
        QCOMPARE(v[2], (127.0f + 64.0f) * p.scale);
        QCOMPARE(v[3], (-128.0f + 64.0f) * p.scale);
    }

    void quantizedValueSelection() {
        Loaded l = load(kTiny);
        auto v = quantizedValues(l.model);
        // The Dropout passes x on: x is quantised, not "drop".
        QCOMPARE(v, (std::set<std::string>{"x", "h", "y"}));
    }

    void fullIntegerLayout() {
        // x[3] → Dense(4) "d" → BatchNormalization "bn" (folded into d in TFLite) → MaxPool-free
        // chain: Reshape "r" [2, 2] → Flatten "f" → Dense(3, softmax) "p"; and Dense(2, tanh) "t".
        Loaded l = load(R"({"format":"kiln-project","version":2,"name":"fi","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[3]}},
          {"name":"d","op":"Dense","inputs":["x"],"attrs":{"units":4}},
          {"name":"bn","op":"BatchNormalization","inputs":["d"]},
          {"name":"r","op":"Reshape","inputs":["bn"],"attrs":{"target_shape":[2,2]}},
          {"name":"f","op":"Flatten","inputs":["r"]},
          {"name":"p","op":"Dense","inputs":["f"],"attrs":{"units":3,"activation":"softmax"}},
          {"name":"t","op":"Dense","inputs":["x"],"attrs":{"units":2,"activation":"tanh"}}],"outputs":["p","t"]}})");
        QCOMPARE(foldedBatchNorm(l.model, l.model.graph.find("d")), l.model.graph.find("bn"));
        QCOMPARE(foldedBatchNorm(l.model, l.model.graph.find("p")), -1);
        QVERIFY(hasSeparateActivation(l.model, l.model.graph.find("p")));
        QVERIFY(!hasSeparateActivation(l.model, l.model.graph.find("d")));
        const auto values = quantizedValues(l.model, QuantScheme::FullInteger);
        QCOMPARE(values, (std::set<std::string>{"x", "d", "bn", "p", "p/pre_activation", "t", "t/pre_activation"}));

        ThreadPool pool(1);
        auto rc = RangeCollector::create(l.model, l.params, values, 5, pool);
        QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
        QVERIFY((*rc)->add({&kSamples[0][0]}, 5).ok());
        const auto& ranges = (*rc)->ranges();
        // The pre-activations come from the linear twin: logits, not probabilities; a
        // probability range lies within [0, 1], tanh's within [−1, 1].
        QVERIFY(ranges.count("p/pre_activation") && ranges.count("t/pre_activation"));
        QVERIFY(ranges.at("p").min >= 0.0f && ranges.at("p").max <= 1.0f);
        const auto pre = ranges.at("p/pre_activation");
        QVERIFY2(pre.min < 0.0f || pre.max > 1.0f, qPrintable(QString("%1 %2").arg(pre.min).arg(pre.max)));
        // Direct check of t's pre-activation: x·W + b over the samples.
        const auto* tw = l.params.find("t/kernel");
        const auto* tb = l.params.find("t/bias");
        QVERIFY(tw && tb);
        float lo = 1e30f, hi = -1e30f;
        for (const auto& smp : kSamples)
            for (int c = 0; c < 2; ++c) {
                float v = tb->value.data<float>()[c];
                for (int k = 0; k < 3; ++k) v += smp[k] * tw->value.data<float>()[k * 2 + c];
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        QVERIFY(std::fabs(ranges.at("t/pre_activation").min - lo) < 1e-5f && std::fabs(ranges.at("t/pre_activation").max - hi) < 1e-5f);

        auto q = makeQuantization(l.model, ranges, true, QuantScheme::FullInteger);
        QVERIFY2(q.ok(), q.ok() ? "" : q.error().toString().c_str());
        QCOMPARE(q->scheme, QuantScheme::FullInteger);
        // Softmax and tanh outputs on TFLite's fixed grids, whatever the calibration saw.
        QCOMPARE(q->values.at("p").scale, 1.0f / 256.0f);
        QCOMPARE(q->values.at("p").zeroPoint, -128);
        QCOMPARE(q->values.at("t").scale, 1.0f / 128.0f);
        QCOMPARE(q->values.at("t").zeroPoint, 0);
        // Reshape and Flatten keep bn's grid; the folded d has no value of its own.
        QVERIFY(!q->values.count("d"));
        QCOMPARE(q->values.at("r").scale, q->values.at("bn").scale);
        QCOMPARE(q->values.at("f").zeroPoint, q->values.at("bn").zeroPoint);
        QCOMPARE(q->values.at("p/pre_activation").scale, activationParams(pre).scale);
        // A missing range is an error naming the value.
        auto partial = ranges;
        partial.erase("t/pre_activation");
        auto bad = makeQuantization(l.model, partial, true, QuantScheme::FullInteger);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().node, std::string("t/pre_activation"));
        // The representable range of a grid.
        const ValueRange r = representable({0.5f, -28});
        QCOMPARE(r.min, -50.0f);
        QCOMPARE(r.max, 77.5f);
    }

    void rangeCollection() {
        Loaded l = load(kTiny);
        setTiny(l.params);
        ThreadPool pool(1);
        auto rc = RangeCollector::create(l.model, l.params, quantizedValues(l.model), 2, pool);
        QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
        // Batches of 2, 2 and 1 (the last one short: its padding must not count).
        for (int first : {0, 2, 4}) {
            const int count = first == 4 ? 1 : 2;
            QVERIFY((*rc)->add({&kSamples[first][0]}, count).ok());
        }
        QCOMPARE((*rc)->samples(), int64_t{5});
        std::map<std::string, ValueRange> want;
        auto widen = [&](const std::string& k, float v) {
            auto it = want.find(k);
            if (it == want.end()) want[k] = {v, v};
            else it->second = {std::min(it->second.min, v), std::max(it->second.max, v)};
        };
        for (const auto& s : kSamples) {
            float h[2], y;
            tinyForward(s, h, &y);
            for (float x : s) widen("x", x);
            widen("h", h[0]);
            widen("h", h[1]);
            widen("y", y);
        }
        const auto& got = (*rc)->ranges();
        QCOMPARE(got.size(), size_t{3});
        for (const auto& [k, r] : want) {
            QVERIFY2(got.count(k), k.c_str());
            QVERIFY2(std::fabs(got.at(k).min - r.min) < 1e-5f && std::fabs(got.at(k).max - r.max) < 1e-5f, k.c_str());
        }
    }

    // Percentile calibration: 10 000 inputs spread evenly over [−1, 1] plus one outlier at 100.
    // Min/max keeps the outlier; the 99.9th percentile of |x| is 0.999 (interpolated within a
    // histogram bin, at most 2·100/4096 wide), both ends of x are clipped to ±t, and an end that
    // lies inside ±t (−1 when the estimate is above 1; h after its ReLU keeps its minimum 0) is
    // not widened.
    void percentileCalibration() {
        Loaded l = load(kTiny);
        setTiny(l.params);
        ThreadPool pool(1);
        const int64_t n = 10001;
        std::vector<float> xs(static_cast<size_t>(n * 3));
        for (int64_t s = 0; s < n - 1; ++s)
            for (int k = 0; k < 3; ++k) xs[static_cast<size_t>(s * 3 + k)] = -1.0f + 2.0f * static_cast<float>((s * 3 + k) % 10000) / 9999.0f;
        xs[static_cast<size_t>((n - 1) * 3)] = 100.0f;
        for (double pct : {0.0, 99.9}) {
            auto rc = RangeCollector::create(l.model, l.params, quantizedValues(l.model), n, pool);
            QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
            (*rc)->setPercentile(pct);
            QVERIFY((*rc)->add({xs.data()}, n).ok());
            const auto r = (*rc)->ranges();
            const ValueRange x = r.at("x");
            if (pct == 0.0) {
                QCOMPARE(x.min, -1.0f);
                QCOMPARE(x.max, 100.0f);
                continue;
            }
            const float bin = 2.0f * 100.0f / 4096.0f;
            QVERIFY2(std::fabs(x.max - 0.999f) <= bin, qPrintable(QString::number(x.max)));
            QCOMPARE(x.min, std::max(-1.0f, -x.max));
            QVERIFY(r.at("h").min == 0.0f);
            QVERIFY(r.at("h").max > 0.0f && r.at("h").max < 100.0f);
        }
    }

    void simulationMatchesDirectComputation() {
        Loaded l = load(kTiny);
        setTiny(l.params);
        ThreadPool pool(1);
        auto rc = RangeCollector::create(l.model, l.params, quantizedValues(l.model), 5, pool);
        QVERIFY(rc.ok());
        QVERIFY((*rc)->add({&kSamples[0][0]}, 5).ok());
        auto quant = makeQuantization(l.model, (*rc)->ranges(), true);
        QVERIFY(quant.ok());
        auto sim = Int8Simulator::create(l.model, l.params, *quant, 5, pool);
        QVERIFY2(sim.ok(), sim.ok() ? "" : sim.error().toString().c_str());
        std::copy(&kSamples[0][0], &kSamples[0][0] + 15, (*sim)->input(0));
        QVERIFY((*sim)->forward().ok());
        // The same by hand: fake-quantised input, int8 kernels, fake-quantised outputs.
        const auto qp = quant->values;
        // QDQ weights use 7 bits (−63..63), TensorFlow Lite's the full −127..127.
        QCOMPARE(quant->scheme, QuantScheme::Qdq);
        QCOMPARE(weightLimit(QuantScheme::Qdq), 63);
        QCOMPARE(weightLimit(QuantScheme::FullInteger), 127);
        const int limit = weightLimit(quant->scheme);
        float w1[6] = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f}, w2[2] = {1.5f, -0.5f};
        auto s1 = weightScales(w1, 3, 2, true, limit);
        auto q1 = quantizeWeights(w1, 3, 2, s1, limit);
        QCOMPARE(int(q1[3]), 63);   // 2.0, the largest of channel 1
        QCOMPARE(int(q1[4]), -63);  // −0.75, the largest magnitude of channel 0
        QCOMPARE(int(q1[5]), 3);    // 0.1 / (2 / 63) = 3.15
        for (int e = 0; e < 6; ++e) w1[e] = q1[size_t(e)] * s1[size_t(e % 2)];
        auto s2 = weightScales(w2, 2, 1, true, limit);
        auto q2 = quantizeWeights(w2, 2, 1, s2, limit);
        for (int e = 0; e < 2; ++e) w2[e] = q2[size_t(e)] * s2[0];
        double worstFloat = 0;
        for (int s = 0; s < 5; ++s) {
            float x[3];
            std::copy(kSamples[s], kSamples[s] + 3, x);
            fakeQuantize(x, 3, qp.at("x"));
            float h[2];
            h[0] = std::max(0.0f, x[0] * w1[0] + x[1] * w1[2] + x[2] * w1[4] + 0.1f);
            h[1] = std::max(0.0f, x[0] * w1[1] + x[1] * w1[3] + x[2] * w1[5] - 0.2f);
            fakeQuantize(h, 2, qp.at("h"));
            float y = h[0] * w2[0] + h[1] * w2[1] + 0.05f;
            fakeQuantize(&y, 1, qp.at("y"));
            QVERIFY2(std::fabs((*sim)->output(0)[s] - y) < 1e-5f, QByteArray::number(s).constData());
            float hf[2], yf;
            tinyForward(kSamples[s], hf, &yf);
            worstFloat = std::max(worstFloat, double(std::fabs(yf - (*sim)->output(0)[s])));
        }
        // Int8 stays close to float (a few grid steps of the output's range).
        QVERIFY2(worstFloat < 4 * qp.at("y").scale + 0.05, QByteArray::number(worstFloat).constData());
        QVERIFY(worstFloat > 0);  // and it is really quantised
    }

    void qdqGraphStructure() {
        Loaded l = load(R"({"format":"kiln-project","version":2,"name":"c","graph":{"nodes":[
          {"name":"img","op":"Input","attrs":{"shape":[6,6,2]}},
          {"name":"conv","op":"Conv2D","inputs":["img"],"attrs":{"filters":4,"kernel_size":[3,3],"padding":"same","activation":"relu"}},
          {"name":"pool","op":"MaxPooling2D","inputs":["conv"],"attrs":{"pool_size":[2,2]}},
          {"name":"dw","op":"DepthwiseConv2D","inputs":["pool"],"attrs":{"depth_multiplier":2,"padding":"same"}},
          {"name":"flat","op":"Flatten","inputs":["dw"]},
          {"name":"out","op":"Dense","inputs":["flat"],"attrs":{"units":3}}],"outputs":["out"]}})");
        Int8Quantization q;
        for (const auto& name : quantizedValues(l.model)) q.values[name] = activationParams({-1.0f, 2.0f});
        // img, conv, pool (feeds dw), dw (feeds out through Flatten), out.
        QCOMPARE(q.values.size(), size_t{5});
        auto bytes = exportOnnx(l.model, l.params, {}, nullptr, &q);
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        onnx::ModelProto m;
        QVERIFY(m.ParseFromString(*bytes));
        std::map<std::string, const onnx::TensorProto*> inits;
        for (const auto& t : m.graph().initializer()) inits[t.name()] = &t;
        std::map<std::string, std::string> producer;
        for (const auto& n : m.graph().node())
            for (const auto& o : n.output()) producer[o] = n.op_type();
        int quantizes = 0, weightDequantizes = 0;
        for (const auto& n : m.graph().node()) {
            if (n.op_type() == "QuantizeLinear") {
                ++quantizes;
                QCOMPARE(n.input_size(), 3);
                QVERIFY(inits.count(n.input(2)));
                QCOMPARE(inits[n.input(2)]->data_type(), int(onnx::TensorProto::INT8));
                QCOMPARE(inits[n.input(1)]->data_type(), int(onnx::TensorProto::FLOAT));
            }
            if (n.op_type() == "DequantizeLinear" && inits.count(n.input(0))) {
                // A kernel: int8 data, one scale and zero point per output channel.
                ++weightDequantizes;
                const auto* w = inits[n.input(0)];
                QCOMPARE(w->data_type(), int(onnx::TensorProto::INT8));
                int64_t axis = -1;
                for (const auto& a : n.attribute())
                    if (a.name() == "axis") axis = a.i();
                const int64_t channels = w->dims(static_cast<int>(axis));
                QCOMPARE(inits[n.input(1)]->dims(0), channels);
                QCOMPARE(inits[n.input(2)]->data_type(), int(onnx::TensorProto::INT8));
                QCOMPARE(int64_t(inits[n.input(1)]->raw_data().size()), channels * 4);
                QVERIFY(w->raw_data().size() == size_t(w->dims(0) * (w->dims_size() > 1 ? w->dims(1) : 1) *
                                                       (w->dims_size() > 2 ? w->dims(2) * w->dims(3) : 1)));
            }
            // Every Conv and Gemm reads dequantised activations and a dequantised kernel.
            if (n.op_type() == "Conv" || n.op_type() == "Gemm") {
                std::string src = n.input(0);
                while (producer[src] == "Transpose" || producer[src] == "Flatten")
                    for (const auto& p : m.graph().node())
                        if (p.output(0) == src) {
                            src = p.input(0);
                            break;
                        }
                QCOMPARE(producer[src], std::string("DequantizeLinear"));
                QCOMPARE(producer[n.input(1)], std::string("DequantizeLinear"));
            }
        }
        QCOMPARE(quantizes, 5);
        QCOMPARE(weightDequantizes, 3);
        // The graph output is the dequantised value of "out"; the float model has no QDQ at all.
        QCOMPARE(producer[m.graph().output(0).name()], std::string("DequantizeLinear"));
        auto plain = exportOnnx(l.model, l.params, {});
        QVERIFY(plain.ok());
        QVERIFY(plain->find("QuantizeLinear") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestQuantize)
#include "tst_quantize.moc"
