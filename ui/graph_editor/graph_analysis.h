// SPDX-License-Identifier: Apache-2.0
// Live analysis of the edited graph: per-node shapes, parameters, MACs and problems from the
// engine's op table (continuing past errors, so every node shows what it can), the one rule
// that decides whether a connection is allowed, and a runner that analyses off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/graph/graph.h"
#include "engine/io/layers.h"
#include "engine/ops/summary.h"

namespace kiln::ui {

struct NodeResult {
    bool hasShape = false;
    engine::Shape output;  // with the symbolic batch dimension first
    int64_t params = 0;    // this node's own parameters (0 when it shares another's)
    int64_t macs = 0;      // per sample
    std::string error;     // the engine's message, empty when the node is fine
    // A layer instance with several outputs: each output's shape ("name:output" refers to it).
    std::vector<std::pair<std::string, engine::Shape>> ports;
};

struct GraphAnalysis {
    quint64 generation = 0;
    std::vector<NodeResult> nodes;   // same indices as the graph's nodes
    std::vector<std::string> names;  // node names, to map results back after renames
    // The first problem of the model as a whole (what engine::ops::analyzeModel would report)
    // and, when there is none, the engine's summary.
    std::optional<engine::Error> modelError;
    std::optional<engine::ops::ModelSummary> summary;
    double milliseconds = 0;

    const NodeResult* find(const std::string& name) const;
};

// Analyses every node of `graph` in dependency order; a node whose inputs have no shape gets
// none either. Nodes naming a layer of `layers` are analysed through the layer's expansion
// (their shape is the layer output's, their parameters and MACs those of the layer's nodes),
// and a valid graph with instances is summarised as the engine would: expanded. Pure and
// thread-safe.
GraphAnalysis analyzeGraph(const engine::Graph& graph, int64_t summaryBatch = 1,
                           const engine::io::LayerLibrary* layers = nullptr);

// The connection rule: may `from`'s output feed input `port` of `to`? Checks the op's arity,
// cycles and (when all the inputs have shapes) the op's shape rule. The error explains why not.
engine::Status checkConnection(const engine::Graph& graph, const std::string& from, const std::string& to,
                               int port, const engine::io::LayerLibrary* layers = nullptr);

// Runs analyzeGraph on a worker thread; the latest request wins and stale replies are dropped.
class AnalysisRunner : public QObject {
    Q_OBJECT
public:
    explicit AnalysisRunner(QObject* parent = nullptr);
    ~AnalysisRunner() override;
    void request(const engine::Graph& graph, const engine::io::LayerLibrary& layers = {});
    const GraphAnalysis& latest() const { return m_latest; }
    quint64 generation() const { return m_generation; }
    bool busy() const;
    void waitForIdle();  // tests and benchmarks

signals:
    void finished(const kiln::ui::GraphAnalysis& analysis);

private:
    void start();
    void onDone();

    quint64 m_generation = 0;
    std::optional<engine::Graph> m_pending;
    engine::io::LayerLibrary m_pendingLayers;
    quint64 m_pendingGeneration = 0;
    QFutureWatcher<GraphAnalysis>* m_watcher = nullptr;
    GraphAnalysis m_latest;
};

}  // namespace kiln::ui

Q_DECLARE_METATYPE(kiln::ui::GraphAnalysis)
