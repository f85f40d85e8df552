// SPDX-License-Identifier: Apache-2.0
// Kiln's ONNX reader on the forms exporters write beyond plain layers: explicit pads of a max
// pooling behind a ReLU, squeeze-and-excitation on a pooled value, a reshape written with the
// literal batch size, [N] values, reductions over other axes, Pad with another value, Resize
// with sizes, and shapes computed from the input's own (Shape, Slice, Gather, Concat) for a Reshape.
// Each model is built here, read, run by Kiln and checked against a direct computation; the forms
// the reader cannot take must be refused with a reason.
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <cmath>

#include "engine/exec/plan.h"
#include "engine/io/onnx_import.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;

namespace {

// A small ONNX graph written node by node.
struct Builder {
    onnx::ModelProto m;
    onnx::GraphProto* g;
    explicit Builder(int opset = 17) {
        m.set_ir_version(8);
        m.add_opset_import()->set_version(opset);
        g = m.mutable_graph();
        g->set_name("t");
    }
    // dims[0] < 0: a symbolic batch.
    void input(const std::string& name, const std::vector<int64_t>& dims) {
        auto* tt = g->add_input();
        tt->set_name(name);
        auto* t = tt->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        for (size_t k = 0; k < dims.size(); ++k) {
            if (k == 0 && dims[0] < 0) t->mutable_shape()->add_dim()->set_dim_param("N");
            else t->mutable_shape()->add_dim()->set_dim_value(dims[k]);
        }
    }
    void output(const std::string& name) {
        auto* o = g->add_output();
        o->set_name(name);
        o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    }
    void floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        for (float f : v) t->add_float_data(f);
    }
    void ints(const std::string& name, const std::vector<int64_t>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v) t->add_int64_data(x);
    }
    void scalarInt(const std::string& name, int64_t v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_int64_data(v);
    }
    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const auto& s : ins) n->add_input(s);
        n->add_output(out);
        return n;
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (auto x : v) a->add_ints(x);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    Result<ImportedModel> read() const { return importOnnx(m.SerializeAsString(), "t.onnx"); }
};

// Runs an imported model on `inputs` (Kiln's layout) and returns its first output.
std::vector<float> run(const ImportedModel& im, int64_t batch, const std::vector<std::vector<float>>& inputs) {
    auto info = ops::analyzeModel(im.graph);
    if (!info.ok()) qFatal("analyse: %s", info.error().toString().c_str());
    auto params = exec::ParamStore::create(*info, 0);
    if (auto w = applyWeights(im, params); !w.ok()) qFatal("weights: %s", w.error().toString().c_str());
    ThreadPool pool(1);
    exec::CompileOptions opts;
    opts.batch = batch;
    opts.training = false;
    auto plan = exec::Plan::compile(*info, params, opts, pool);
    if (!plan.ok()) qFatal("plan: %s", plan.error().toString().c_str());
    for (size_t k = 0; k < inputs.size(); ++k) std::memcpy((*plan)->input(k), inputs[k].data(), inputs[k].size() * sizeof(float));
    if (!(*plan)->forward().ok()) qFatal("forward failed");
    const float* y = (*plan)->output(0);
    return std::vector<float>(y, y + (*plan)->outputShape(0).numel());
}

int count(const ImportedModel& im, const std::string& op) {
    int n = 0;
    for (const auto& node : im.graph.nodes) n += node.op == op;
    return n;
}

float wave(size_t k) { return std::sin(0.9f * static_cast<float>(k) + 0.3f); }

}  // namespace

class TestOnnxImport : public QObject {
    Q_OBJECT

private slots:
    // Conv -> Relu -> MaxPool(3, 2, pads 1), as ResNet's stem: zero padding is exact after the
    // ReLU; without it the reader refuses and says why.
    void maxPoolWithPadsAfterRelu() {
        for (bool relu : {true, false}) {
            Builder b;
            b.input("x", {-1, 1, 6, 6});  // "same" would pad 0 and 1
            b.floats("w", {1, 1, 1, 1}, {1.f});
            b.node("Conv", {"x", "w"}, "c");
            if (relu) b.node("Relu", {"c"}, "r");
            auto* p = b.node("MaxPool", {relu ? "r" : "c"}, "p");
            Builder::attr(p, "kernel_shape", {3, 3});
            Builder::attr(p, "strides", {2, 2});
            Builder::attr(p, "pads", {1, 1, 1, 1});
            Builder::attr(b.node("Transpose", {"p"}, "y"), "perm", {0, 2, 3, 1});
            b.output("y");
            auto im = b.read();
            if (!relu) {
                QVERIFY(!im.ok());
                QVERIFY2(im.error().message.find("never negative") != std::string::npos, im.error().message.c_str());
                continue;
            }
            QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
            QCOMPARE(count(*im, "ZeroPadding2D"), 1);
            std::vector<float> x(36);
            for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k);
            const auto y = run(*im, 1, {x});
            QCOMPARE(y.size(), size_t{9});
            for (int oy = 0; oy < 3; ++oy)
                for (int ox = 0; ox < 3; ++ox) {
                    float want = -INFINITY;
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const int iy = oy * 2 + dy, ix = ox * 2 + dx;
                            if (iy >= 0 && ix >= 0 && iy < 6 && ix < 6) want = std::max(want, std::max(x[size_t(iy) * 6 + size_t(ix)], 0.f));
                        }
                    QCOMPARE(y[size_t(oy * 3 + ox)], want);
                }
        }
    }

    // ReduceMean(keepdims) -> 1x1 Conv -> Sigmoid -> Mul: the 1x1 Conv of the pooled value is a Dense.
    void squeezeAndExcitation() {
        const int C = 3, H = 2, W = 2, M = 2;
        Builder b;
        b.input("x", {-1, C, H, W});
        std::vector<float> w0(C * C), w1(M * C), b1(M);
        for (size_t k = 0; k < w0.size(); ++k) w0[k] = k % (C + 1) == 0 ? 1.f : 0.f;  // identity 1x1 convolution
        for (size_t k = 0; k < w1.size(); ++k) w1[k] = wave(k + 7);
        for (size_t k = 0; k < b1.size(); ++k) b1[k] = 0.1f * float(k);
        b.floats("w0", {C, C, 1, 1}, w0);
        b.floats("w1", {M, C, 1, 1}, w1);
        b.floats("b1", {M}, b1);
        b.node("Conv", {"x", "w0"}, "c");
        auto* r = b.node("ReduceMean", {"c"}, "m");
        Builder::attr(r, "axes", {2, 3});
        b.node("Conv", {"m", "w1", "b1"}, "s");
        b.node("Sigmoid", {"s"}, "g");
        b.node("Flatten", {"g"}, "y");
        b.output("y");
        auto im = b.read();
        QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
        QCOMPARE(count(*im, "Dense"), 1);
        std::vector<float> x(C * H * W);  // NHWC for Kiln
        for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k);
        const auto y = run(*im, 1, {x});
        QCOMPARE(y.size(), size_t{M});
        for (int o = 0; o < M; ++o) {
            float s = b1[size_t(o)];
            for (int c = 0; c < C; ++c) {
                float mean = 0.f;
                for (int p = 0; p < H * W; ++p) mean += x[size_t(p) * size_t(C) + size_t(c)] / float(H * W);
                s += w1[size_t(o) * size_t(C) + size_t(c)] * mean;
            }
            QVERIFY(std::fabs(y[size_t(o)] - 1.f / (1.f + std::exp(-s))) < 1e-6f);
        }
    }

    // The batch size written literally ([2, -1] for inputs of batch 2) keeps the batch; another
    // first entry is refused.
    void reshapeWithLiteralBatch() {
        for (int64_t first : {2, 3}) {
            Builder b;
            b.input("x", {2, 3, 4});
            b.ints("shape", {first, -1});
            b.node("Reshape", {"x", "shape"}, "y");
            b.output("y");
            auto im = b.read();
            if (first == 3) {
                QVERIFY(!im.ok());
                QVERIFY2(im.error().message.find("keep the batch") != std::string::npos, im.error().message.c_str());
                continue;
            }
            QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
            auto info = ops::analyzeModel(im->graph);
            QVERIFY(info.ok());
            QCOMPARE(info->nodes[size_t(info->outputs[0])].output, Shape({Shape::kBatch, 12}));
        }
    }

    // [N] inputs are Kiln's [N, 1]: Sum and Relu take them, Softmax does not.
    void vectorValues() {
        Builder b(13);
        b.input("a", {-1});
        b.input("c", {-1});
        b.input("d", {-1});
        b.node("Sum", {"a", "c", "d"}, "s");
        b.node("Relu", {"s"}, "y");
        b.output("y");
        auto im = b.read();
        QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
        const auto y = run(*im, 3, {{1.f, -2.f, 0.5f}, {0.25f, 1.f, -3.f}, {1.f, 0.5f, 1.f}});
        QCOMPARE(y, (std::vector<float>{2.25f, 0.f, 0.f}));

        Builder s(13);
        s.input("a", {-1});
        s.node("Softmax", {"a"}, "y");
        s.output("y");
        auto refused = s.read();
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("no dimension besides the batch") != std::string::npos, refused.error().message.c_str());
    }

    // ReduceMax over one middle axis without keepdims; axes that are not neighbours are refused.
    void reduceOverOtherAxes() {
        Builder b(13);
        b.input("x", {-1, 3, 4, 2});
        auto* r = b.node("ReduceMax", {"x"}, "y");
        Builder::attr(r, "axes", std::vector<int64_t>{2});
        Builder::attr(r, "keepdims", int64_t{0});
        b.output("y");
        auto im = b.read();
        QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
        std::vector<float> x(24);
        for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k);
        const auto y = run(*im, 1, {x});
        QCOMPARE(y.size(), size_t{6});
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 2; ++k) {
                float want = -INFINITY;
                for (int j = 0; j < 4; ++j) want = std::max(want, x[(size_t(i) * 4 + size_t(j)) * 2 + size_t(k)]);
                QCOMPARE(y[size_t(i * 2 + k)], want);
            }

        Builder bad(13);
        bad.input("x", {-1, 3, 4, 2});
        auto* r2 = bad.node("ReduceMean", {"x"}, "y");
        Builder::attr(r2, "axes", {1, 3});
        bad.output("y");
        auto refused = bad.read();
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("next to each other") != std::string::npos, refused.error().message.c_str());
    }

    // Pad with the value 2 of an NCHW input's width, then Resize to twice the size
    // given as sizes: ZeroPadding2D between Rescalings, and UpSampling2D.
    void padValueAndResizeSizes() {
        Builder b(13);
        b.input("x", {1, 1, 2, 2});
        b.ints("pads", {0, 0, 0, 1, 0, 0, 0, 0});
        b.floats("v", {}, {2.f});
        b.node("Pad", {"x", "pads", "v"}, "p");
        b.ints("sizes", {1, 1, 4, 6});
        auto* r = b.node("Resize", {"p", "", "", "sizes"}, "r");
        auto* mode = r->add_attribute();
        mode->set_name("coordinate_transformation_mode");
        mode->set_type(onnx::AttributeProto::STRING);
        mode->set_s("asymmetric");
        auto* nearest = r->add_attribute();
        nearest->set_name("nearest_mode");
        nearest->set_type(onnx::AttributeProto::STRING);
        nearest->set_s("floor");
        Builder::attr(b.node("Transpose", {"r"}, "y"), "perm", {0, 2, 3, 1});
        b.output("y");
        auto im = b.read();
        QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
        QCOMPARE(im->inputChannelFirst, std::vector<bool>{true});
        QCOMPARE(count(*im, "UpSampling2D"), 1);
        QCOMPARE(count(*im, "Rescaling"), 2);
        const auto y = run(*im, 1, {{1.f, 3.f, -1.f, 4.f}});  // rows [1, 3], [-1, 4]; padded: [2, 1, 3], [2, -1, 4]
        const std::vector<float> padded{2.f, 1.f, 3.f, 2.f, -1.f, 4.f};
        QCOMPARE(y.size(), size_t{24});
        for (int yy = 0; yy < 4; ++yy)
            for (int xx = 0; xx < 6; ++xx) QVERIFY(std::fabs(y[size_t(yy * 6 + xx)] - padded[size_t((yy / 2) * 3 + xx / 2)]) < 1e-6f);
    }

    // Shapes computed from the input's own, as exporters write a flatten that keeps the batch:
    // PyTorch's x.view(x.size(0), -1) (Shape, Gather of index 0, Unsqueeze, Concat with -1) and
    // Paddle's (Shape, Slice 0:1, Concat with -1); Shape's start and end with a negative Gather
    // index for [batch, 4, 6]; arithmetic on the sizes (Cast, Mul, Div) for [batch, 3, 8]. They
    // fold while reading, leaving the batch open: the models run at any batch size and give the
    // input's values in the new shape.
    void shapeArithmeticForReshape() {
        for (const char* form : {"torch", "paddle", "start_end", "arithmetic"}) {
            Builder b(15);
            b.input("x", {-1, 6, 4});
            b.ints("minus_one", {-1});
            const std::string f = form;
            if (f == "torch") {
                b.node("Shape", {"x"}, "s");
                b.scalarInt("zero", 0);
                b.node("Gather", {"s", "zero"}, "n");
                b.ints("axes0", {0});
                b.node("Unsqueeze", {"n", "axes0"}, "n1");
                Builder::attr(b.node("Concat", {"n1", "minus_one"}, "target"), "axis", int64_t{0});
            } else if (f == "paddle") {
                b.node("Shape", {"x"}, "s");
                b.ints("starts", {0});
                b.ints("ends", {1});
                b.ints("axes0", {0});
                b.node("Slice", {"s", "starts", "ends", "axes0"}, "n1");
                Builder::attr(b.node("Concat", {"n1", "minus_one"}, "target"), "axis", int64_t{0});
            } else if (f == "arithmetic") {
                // [0, 6 / 2, 4 * 2], the half computed through floats as PyTorch writes it.
                b.node("Shape", {"x"}, "s");
                b.ints("one", {1});
                b.ints("two", {2});
                b.ints("zero", {0});
                b.node("Gather", {"s", "one"}, "c");
                Builder::attr(b.node("Cast", {"c"}, "cf"), "to", int64_t{onnx::TensorProto::FLOAT});
                b.floats("half", {1}, {0.5f});
                b.node("Mul", {"cf", "half"}, "hf");
                Builder::attr(b.node("Cast", {"hf"}, "h"), "to", int64_t{onnx::TensorProto::INT64});
                b.node("Gather", {"s", "two"}, "w");
                b.node("Mul", {"w", "two"}, "w2");
                b.node("Div", {"w2", "one"}, "w3");
                Builder::attr(b.node("Concat", {"zero", "h", "w3"}, "target"), "axis", int64_t{0});
            } else {
                auto* tail = b.node("Shape", {"x"}, "tail");  // [6, 4]
                Builder::attr(tail, "start", int64_t{1});
                b.ints("last", {-1});
                b.node("Gather", {"tail", "last"}, "four");
                auto* first = b.node("Shape", {"x"}, "first");  // [batch]
                Builder::attr(first, "end", int64_t{-2});
                Builder::attr(b.node("Concat", {"first", "four", "minus_one"}, "target"), "axis", int64_t{0});
            }
            b.node("Reshape", {"x", "target"}, "y");
            b.output("y");
            auto im = b.read();
            QVERIFY2(im.ok(), im.ok() ? "" : (std::string(form) + ": " + im.error().toString()).c_str());
            auto info = ops::analyzeModel(im->graph);
            QVERIFY(info.ok());
            const Shape want = f == "start_end" ? Shape({Shape::kBatch, 4, 6}) : f == "arithmetic" ? Shape({Shape::kBatch, 3, 8})
                                                                                                   : Shape({Shape::kBatch, 24});
            QCOMPARE(info->nodes[size_t(info->outputs[0])].output, want);
            for (int64_t batch : {1, 3}) {
                std::vector<float> x(size_t(batch) * 24);
                for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k);
                QCOMPARE(run(*im, batch, {x}), x);
            }
        }
    }

    // What a shape holding the batch size cannot do is refused with the reason: the batch after the
    // first entry of a Reshape, ConstantOfShape of it, arithmetic on it, a graph output that is only
    // a shape; a Gather index out of range is an error naming the index.
    void shapeArithmeticRefused() {
        struct Case {
            const char* what;
            const char* message;
        };
        for (const Case& c : {Case{"batch_last", "batch size after the first"}, Case{"constant_of_shape", "holds the batch size"},
                              Case{"shape_output", "is a constant"}, Case{"gather_range", "index 3 is out of range"},
                              Case{"batch_times_two", "Mul of the batch size"}}) {
            Builder b(15);
            b.input("x", {-1, 6, 4});
            const std::string w = c.what;
            b.node("Shape", {"x"}, "s");
            if (w == "batch_last") {
                b.ints("idx", {2, 1, 0});
                b.node("Gather", {"s", "idx"}, "t");
                b.node("Reshape", {"x", "t"}, "y");
            } else if (w == "constant_of_shape") {
                b.node("ConstantOfShape", {"s"}, "z");
                b.node("Add", {"x", "z"}, "y");
            } else if (w == "shape_output") {
                b.node("Identity", {"s"}, "y");
            } else if (w == "batch_times_two") {
                b.ints("idx", {0});
                b.node("Gather", {"s", "idx"}, "n");
                b.ints("two", {2, 1, 1});
                b.node("Mul", {"n", "two"}, "t");
                b.node("Reshape", {"x", "t"}, "y");
            } else {
                b.ints("idx", {3});
                b.node("Gather", {"s", "idx"}, "g");
                b.node("Reshape", {"x", "g"}, "y");
            }
            b.output("y");
            auto im = b.read();
            QVERIFY2(!im.ok(), c.what);
            QVERIFY2(im.error().message.find(c.message) != std::string::npos, (std::string(c.what) + ": " + im.error().message).c_str());
        }
    }

    // Gather of a computed value by constant indices becomes Kiln's Gather (any axis after the
    // batch, negative and repeated indices, 2-D indices; on a channel-first image the channel axis
    // is moved to Kiln's last). Along the batch, and by computed indices, it is refused with the reason.
    void gatherOfValues() {
        const int64_t batch = 2;
        {
            Builder b;
            b.input("x", {-1, 5, 3});
            b.ints("idx", {4, -1, 0, 4});
            Builder::attr(b.node("Gather", {"x", "idx"}, "y"), "axis", int64_t{1});
            b.output("y");
            auto im = b.read();
            QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
            QCOMPARE(count(*im, "Gather"), 1);
            std::vector<float> x(batch * 15);
            for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k);
            const auto y = run(*im, batch, {x});
            QCOMPARE(y.size(), size_t(batch * 4 * 3));
            const int rows[] = {4, 4, 0, 4};
            for (int64_t n = 0; n < batch; ++n)
                for (int j = 0; j < 4; ++j)
                    for (int c = 0; c < 3; ++c) QCOMPARE(y[size_t((n * 4 + j) * 3 + c)], x[size_t((n * 5 + rows[j]) * 3 + c)]);
        }
        {
            Builder b;
            b.input("x", {-1, 5, 3});
            auto* t = b.g->add_initializer();
            t->set_name("idx");
            t->set_data_type(onnx::TensorProto::INT64);
            t->add_dims(2);
            t->add_dims(2);
            for (int64_t v : {2, 0, -1, 2}) t->add_int64_data(v);
            Builder::attr(b.node("Gather", {"x", "idx"}, "y"), "axis", int64_t{-1});
            b.output("y");
            auto im = b.read();
            QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
            std::vector<float> x(batch * 15);
            for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k + 7);
            const auto y = run(*im, batch, {x});
            QCOMPARE(y.size(), size_t(batch * 5 * 4));
            const int cols[] = {2, 0, 2, 2};
            for (int64_t r = 0; r < batch * 5; ++r)
                for (int j = 0; j < 4; ++j) QCOMPARE(y[size_t(r * 4 + j)], x[size_t(r * 3 + cols[j])]);
        }
        {
            // Channels 2 and 0 of a convolved image, then pooled: [N, 2].
            Builder b;
            b.input("x", {-1, 3, 4, 4});
            std::vector<float> w(9, 0.f);
            for (int c = 0; c < 3; ++c) w[size_t(c * 3 + c)] = 1.f + float(c);
            b.floats("w", {3, 3, 1, 1}, w);
            b.node("Conv", {"x", "w"}, "c");
            b.ints("idx", {2, 0});
            Builder::attr(b.node("Gather", {"c", "idx"}, "g"), "axis", int64_t{1});
            b.node("GlobalAveragePool", {"g"}, "p");
            b.node("Flatten", {"p"}, "y");
            b.output("y");
            auto im = b.read();
            QVERIFY2(im.ok(), im.ok() ? "" : im.error().toString().c_str());
            QVERIFY(im->inputChannelFirst[0]);
            std::vector<float> x(batch * 48);  // Kiln's NHWC
            for (size_t k = 0; k < x.size(); ++k) x[k] = wave(k + 3);
            const auto y = run(*im, batch, {x});
            QCOMPARE(y.size(), size_t(batch * 2));
            const int channels[] = {2, 0};
            for (int64_t n = 0; n < batch; ++n)
                for (int j = 0; j < 2; ++j) {
                    double mean = 0;
                    for (int p = 0; p < 16; ++p) mean += double(x[size_t((n * 16 + p) * 3 + channels[j])]);
                    mean = mean / 16.0 * (1.0 + channels[j]);
                    QVERIFY2(std::fabs(y[size_t(n * 2 + j)] - mean) < 1e-5, qPrintable(QString::number(y[size_t(n * 2 + j)])));
                }
        }
        struct Refused {
            const char* what;
            const char* message;
        };
        for (const Refused& c : {Refused{"batch", "along the batch axis"}, Refused{"computed", "by computed indices"},
                                 Refused{"range", "has index 5, outside [-5, 5)"}}) {
            Builder b;
            b.input("x", {-1, 5, 3});
            const std::string w = c.what;
            if (w == "computed") {
                b.node("Gather", {"x", "x"}, "y");
            } else {
                b.ints("idx", {w == "range" ? 5 : 0});
                Builder::attr(b.node("Gather", {"x", "idx"}, "y"), "axis", int64_t{w == "batch" ? 0 : 1});
            }
            b.output("y");
            auto im = b.read();
            QVERIFY2(!im.ok(), c.what);
            QVERIFY2(im.error().message.find(c.message) != std::string::npos, (std::string(c.what) + ": " + im.error().message).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestOnnxImport)
#include "tst_onnx_import.moc"
