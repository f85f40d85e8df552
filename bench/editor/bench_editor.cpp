// SPDX-License-Identifier: Apache-2.0
// Editor benchmark: opens a generated ResNet-style project of about 1,000 nodes (load + automatic
// layout + scene build), times shape inference over it, and times pan and zoom frames of the canvas,
// at working zoom and zoomed far out.
#include <QApplication>
#include <QElapsedTimer>
#include <QPainter>
#include <QScrollBar>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_scene.h"

using namespace kiln;

namespace {

// A bottleneck ResNet: stem, stages of blocks (1x1, 3x3, 1x1 convolutions with batch norm and
// ReLU, a projection shortcut on each stage's first block), global pooling and a classifier.
engine::io::Project resnet(const std::vector<int>& stages, const std::string& name) {
    engine::io::Project p;
    p.name = name;
    auto& nodes = p.graph.nodes;
    auto add = [&](const std::string& n, const std::string& op,
                   std::vector<std::string> in) -> engine::Node& {
        engine::Node node;
        node.name = n;
        node.op = op;
        node.inputs = std::move(in);
        nodes.push_back(std::move(node));
        return nodes.back();
    };
    auto conv = [&](const std::string& n, const std::string& in, int64_t filters, int64_t k, int64_t stride) {
        auto& c = add(n, "Conv2D", {in});
        c.attrs.set("filters", filters);
        c.attrs.set("kernel_size", std::vector<int64_t>{k, k});
        c.attrs.set("strides", std::vector<int64_t>{stride, stride});
        c.attrs.set("padding", std::string("same"));
        c.attrs.set("use_bias", false);
    };
    add("image", "Input", {}).attrs.set("shape", std::vector<int64_t>{224, 224, 3});
    conv("stem_conv", "image", 64, 7, 2);
    add("stem_bn", "BatchNormalization", {"stem_conv"});
    add("stem_relu", "ReLU", {"stem_bn"});
    auto& pool = add("stem_pool", "MaxPooling2D", {"stem_relu"});
    pool.attrs.set("pool_size", std::vector<int64_t>{3, 3});
    pool.attrs.set("strides", std::vector<int64_t>{2, 2});
    pool.attrs.set("padding", std::string("same"));
    std::string x = "stem_pool";
    int64_t width = 64;
    for (size_t s = 0; s < stages.size(); ++s, width *= 2) {
        for (int b = 0; b < stages[s]; ++b) {
            std::string pre = "s" + std::to_string(s + 1) + "b" + std::to_string(b + 1) + "_";
            int64_t stride = (b == 0 && s > 0) ? 2 : 1;
            conv(pre + "conv1", x, width, 1, 1);
            add(pre + "bn1", "BatchNormalization", {pre + "conv1"});
            add(pre + "relu1", "ReLU", {pre + "bn1"});
            conv(pre + "conv2", pre + "relu1", width, 3, stride);
            add(pre + "bn2", "BatchNormalization", {pre + "conv2"});
            add(pre + "relu2", "ReLU", {pre + "bn2"});
            conv(pre + "conv3", pre + "relu2", width * 4, 1, 1);
            add(pre + "bn3", "BatchNormalization", {pre + "conv3"});
            std::string shortcut = x;
            if (b == 0) {
                conv(pre + "proj", x, width * 4, 1, stride);
                add(pre + "proj_bn", "BatchNormalization", {pre + "proj"});
                shortcut = pre + "proj_bn";
            }
            add(pre + "add", "Add", {pre + "bn3", shortcut});
            add(pre + "out", "ReLU", {pre + "add"});
            x = pre + "out";
        }
    }
    add("gap", "GlobalAveragePooling2D", {x});
    add("logits", "Dense", {"gap"}).attrs.set("units", int64_t{1000});
    p.graph.outputs = {"logits"};
    return p;
}

struct Stats {
    double median, p95, max;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 95 / 100)], v.back()};
}

double ms(const QElapsedTimer& t) {
    return static_cast<double>(t.nsecsElapsed()) / 1e6;
}

void runCase(const std::string& label, const engine::io::Project& project, const QString& dir) {
    const QString path = dir + "/" + QString::fromStdString(project.name) + ".kiln";
    if (!engine::io::saveProject(project, path.toStdString()).ok()) {
        std::printf("cannot write %s\n", qPrintable(path));
        return;
    }
    // Open: parse + automatic layout (the file has no positions) + scene build + first paint.
    QElapsedTimer t;
    t.start();
    ui::EditorDocument doc;
    auto st = doc.load(path);
    const double loadMs = ms(t);
    if (!st.ok()) {
        std::printf("load failed: %s\n", st.error().message.c_str());
        return;
    }
    QElapsedTimer t2;
    t2.start();
    ui::GraphEditorWidget widget(&doc);
    widget.resize(1280, 800);
    widget.show();
    widget.fitView();
    QCoreApplication::processEvents();
    widget.view()->viewport()->repaint();
    const double sceneMs = ms(t2);
    const double openMs = ms(t);
    widget.analysis()->waitForIdle();

    // Shape inference: the editor's analysis (per-node pass + whole-model check + summary),
    // and the engine's analyzeModel alone.
    const engine::Graph graph = doc.project().graph;
    std::vector<double> inf, model;
    for (int i = 0; i < 30; ++i) {
        QElapsedTimer a;
        a.start();
        auto r = ui::analyzeGraph(graph);
        inf.push_back(ms(a));
        if (r.modelError) std::printf("model error: %s\n", r.modelError->message.c_str());
        QElapsedTimer b;
        b.start();
        auto m = engine::ops::analyzeModel(graph);
        model.push_back(ms(b));
    }
    // Live edit: from an attribute change to the analysis applied on the canvas.
    std::vector<double> live;
    for (int i = 0; i < 10; ++i) {
        QElapsedTimer a;
        a.start();
        (void)doc.setAttribute(doc.idOf("logits"), "units", engine::AttrValue(int64_t{100 + i}));
        const quint64 want = widget.analysis()->generation();
        while (widget.analysis()->latest().generation != want)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 1);
        live.push_back(ms(a));
    }

    // Frames at 100 % zoom in the middle of the graph: pan by 24 px per frame, then zoom steps.
    auto* view = widget.view();
    view->resetTransform();
    view->centerOn(view->graphScene()->diagramRect().center());
    view->viewport()->repaint();
    std::vector<double> pan, full, zoom, panFit;
    // A pan frame as the user sees it: the view scrolls and paints the uncovered strip.
    for (int i = 0; i < 120; ++i) {
        QElapsedTimer f;
        f.start();
        view->verticalScrollBar()->setValue(view->verticalScrollBar()->value() + (i % 40 < 20 ? 24 : -24));
        QCoreApplication::processEvents();
        pan.push_back(ms(f));
    }
    // The worst case: the whole viewport painted again.
    for (int i = 0; i < 120; ++i) {
        QElapsedTimer f;
        f.start();
        view->verticalScrollBar()->setValue(view->verticalScrollBar()->value() + (i % 40 < 20 ? 24 : -24));
        view->viewport()->repaint();
        full.push_back(ms(f));
    }
    for (int i = 0; i < 60; ++i) {
        QElapsedTimer f;
        f.start();
        widget.zoomBy(i % 20 < 10 ? 1.1 : 1 / 1.1);
        view->viewport()->repaint();
        zoom.push_back(ms(f));
    }
    // Zoomed out over the middle of the graph: zoom steps around 30 % and around 12 % of full
    // size, where many more cards are in view and the cards are drawn simplified.
    auto zoomAround = [&](qreal scale) {
        view->resetTransform();
        view->scale(scale, scale);
        view->centerOn(view->graphScene()->diagramRect().center());
        view->viewport()->repaint();
        std::vector<double> frames;
        for (int i = 0; i < 60; ++i) {
            QElapsedTimer f;
            f.start();
            widget.zoomBy(i % 20 < 10 ? 1.1 : 1 / 1.1);
            view->viewport()->repaint();
            frames.push_back(ms(f));
        }
        return frames;
    };
    const std::vector<double> zoom30 = zoomAround(0.3), zoom12 = zoomAround(0.12);
    // The whole graph in view (every item visible, drawn at low detail).
    widget.fitView();
    view->viewport()->repaint();
    for (int i = 0; i < 60; ++i) {
        QElapsedTimer f;
        f.start();
        view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->value() + (i % 20 < 10 ? 8 : -8));
        view->viewport()->repaint();
        panFit.push_back(ms(f));
    }
    // Rendering into an image (what export does).
    QImage image(1280, 800, QImage::Format_ARGB32_Premultiplied);
    QElapsedTimer r;
    r.start();
    {
        QPainter painter(&image);
        view->render(&painter);
    }
    const double renderMs = ms(r);

    auto I = stats(inf), M = stats(model), L = stats(live), P = stats(pan), R = stats(full), Z = stats(zoom),
         F = stats(panFit), Z30 = stats(zoom30), Z12 = stats(zoom12);
    std::printf("%s: %zu nodes, platform %s\n", label.c_str(), doc.nodes().size(),
                qPrintable(QGuiApplication::platformName()));
    std::printf(
        "  open (load + layout + scene + first paint): %.1f ms  [load+layout %.1f ms, scene+paint %.1f ms]\n",
        openMs, loadMs, sceneMs);
    std::printf(
        "  shape inference (editor analysis incl. summary): median %.2f ms, p95 %.2f ms; engine "
        "analyzeModel: "
        "median %.2f ms\n",
        I.median, I.p95, M.median);
    std::printf("  edit -> analysis on canvas: median %.2f ms, max %.2f ms\n", L.median, L.max);
    std::printf("  pan frame @100%% (scroll + exposed strip): median %.2f ms, p95 %.2f ms, max %.2f ms\n",
                P.median, P.p95, P.max);
    std::printf("  full viewport repaint @100%%: median %.2f ms, p95 %.2f ms, max %.2f ms\n", R.median, R.p95,
                R.max);
    std::printf("  zoom frame: median %.2f ms, p95 %.2f ms, max %.2f ms\n", Z.median, Z.p95, Z.max);
    std::printf("  zoom frame around 30%%: median %.2f ms, p95 %.2f ms, max %.2f ms\n", Z30.median, Z30.p95, Z30.max);
    std::printf("  zoom frame around 12%%: median %.2f ms, p95 %.2f ms, max %.2f ms\n", Z12.median, Z12.p95, Z12.max);
    std::printf("  pan frame, whole graph in view: median %.2f ms, p95 %.2f ms, max %.2f ms\n", F.median,
                F.p95, F.max);
    std::printf("  view->render into a 1280x800 image: %.1f ms\n", renderMs);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QTemporaryDir dir;
    runCase("ResNet-152 (bottleneck 3-8-36-3)", resnet({3, 8, 36, 3}, "resnet152"), dir.path());
    runCase("ResNet-style 6-16-72-6 (1,000+ nodes)", resnet({6, 16, 72, 6}, "resnet_1k"), dir.path());
    return 0;
}
