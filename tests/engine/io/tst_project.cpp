// SPDX-License-Identifier: Apache-2.0
// Project files (parse errors with positions, format/version checks, unknown fields kept,
// version-1 migration, node lines, atomic writes, data path expansion) and safetensors files
// (round trips and every kind of corruption).
#include <QtTest>

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeAll(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> listDir(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Sets or unsets an environment variable for the lifetime of the object.
class EnvGuard {
public:
    EnvGuard(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~EnvGuard() {
        if (m_old) ::setenv(m_name.c_str(), m_old->c_str(), 1);
        else ::unsetenv(m_name.c_str());
    }

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

const char* kSmallProject = R"({
  "format": "kiln-project",
  "version": 2,
  "name": "small",
  "graph": {
    "nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
      {"name": "fc", "op": "Dense", "inputs": ["x"], "attrs": {"units": 3}}
    ]
  },
  "training": {"loss": "MeanSquaredError"}
})";

// A safetensors file from a hand-written header and data section.
std::string rawSafetensors(const std::string& header, const std::string& data, std::optional<uint64_t> length = {}) {
    std::string out;
    const uint64_t len = length ? *length : header.size();
    for (int i = 0; i < 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
    return out + header + data;
}

}  // namespace

class TestProject : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return (fs::path(m_dir.path().toStdString()) / name).string(); }

    // Expects loadSafetensors(file) to fail with WeightsMismatch naming the file and `tensor`
    // (empty: no particular tensor).
    void expectCorrupt(const std::string& file, const std::string& tensor, const std::string& reasonPart) {
        auto r = loadSafetensors(file);
        QVERIFY2(!r.ok(), qPrintable(QString::fromStdString(file)));
        const Error& e = r.error();
        QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode::WeightsMismatch));
        QCOMPARE(e.file, file);
        QVERIFY(e.toString().find(file) != std::string::npos);
        if (!tensor.empty()) {
            QCOMPARE(e.param("tensor"), tensor);
            QVERIFY2(e.message.find("\"" + tensor + "\"") != std::string::npos, e.message.c_str());
        }
        if (!reasonPart.empty()) QVERIFY2(e.message.find(reasonPart) != std::string::npos, e.message.c_str());
    }

    std::string validSafetensors(const std::string& name) {
        Tensor w = Tensor::fromVector(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
        Tensor ids(Shape{4}, DType::I64);
        for (int i = 0; i < 4; ++i) ids.data<int64_t>()[i] = int64_t{1} << (10 * i);
        const std::string file = path(name);
        auto st = saveSafetensors(file, {{"w", w}, {"ids", ids}});
        if (!st.ok()) qFatal("saveSafetensors: %s", st.error().toString().c_str());
        return file;
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // ---- Parsing -------------------------------------------------------------------------------
    void parsesSmallProject() {
        auto r = parseProject(kSmallProject, "small.kiln");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const Project& p = *r;
        QCOMPARE(p.name, std::string("small"));
        QCOMPARE(p.path, std::string("small.kiln"));
        QCOMPARE(p.loadedVersion, 2);
        QCOMPARE(p.graph.nodes.size(), size_t{2});
        QCOMPARE(p.graph.nodes[1].op, std::string("Dense"));
        QCOMPARE(p.graph.nodes[1].inputs, std::vector<std::string>{"x"});
        QCOMPARE(p.graph.nodes[1].attrs.getInt("units"), int64_t{3});
        QCOMPARE(p.graph.nodes[0].attrs.getInts("shape"), std::vector<int64_t>{4});
        QCOMPARE(p.training["loss"].get<std::string>(), std::string("MeanSquaredError"));
        QVERIFY(p.extra.empty());
        QVERIFY(ops::analyzeModel(p.graph).ok());
    }

    // The column must fall within the offending token [first, last].
    void syntaxErrorHasPosition_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        // A doubled comma: the second one (line 3, column 16) is unexpected.
        QTest::newRow("double comma") << "{\n  \"format\": \"kiln-project\",\n  \"version\": 2,,\n}" << 3 << 16 << 16;
        // A missing comma between members: the unexpected key spans line 3, columns 3-11.
        QTest::newRow("missing comma") << "{\n  \"format\": \"kiln-project\"\n  \"version\": 2\n}" << 3 << 3 << 11;
        // A bare word on line 4, columns 11-14.
        QTest::newRow("bare word") << "{\n  \"format\": \"kiln-project\",\n  \"version\": 2,\n  \"name\": nope\n}" << 4
                                   << 11 << 14;
        // A tab counts as one column; the error is on line 2 (a lone closing bracket).
        QTest::newRow("tab") << "{\n\t\t]\n}" << 2 << 3 << 3;
    }
    void syntaxErrorHasPosition() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(int, first);
        QFETCH(int, last);
        auto r = parseProject(text.toStdString(), "/tmp/bad.kiln");
        QVERIFY(!r.ok());
        const Error& e = r.error();
        QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode::ParseError));
        QCOMPARE(e.file, std::string("/tmp/bad.kiln"));
        QCOMPARE(e.line, line);
        QVERIFY2(e.column >= first && e.column <= last, qPrintable(QString("column %1").arg(e.column)));
        const std::string prefix = "/tmp/bad.kiln:" + std::to_string(line) + ":" + std::to_string(e.column) + ": ";
        QVERIFY2(e.toString().rfind(prefix, 0) == 0, e.toString().c_str());
        QVERIFY(!e.param("reason").empty());
    }

    void truncatedJsonIsParseError() {
        const std::string text = std::string(kSmallProject).substr(0, 60);
        auto r = parseProject(text, "t.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::ParseError));
        QVERIFY(r.error().line >= 3);
        QCOMPARE(r.error().file, std::string("t.kiln"));
    }

    // A project nested a million levels deep is refused while it is parsed (no tree to copy or
    // destroy recursively), with the file, line and column of the first bracket too deep.
    void deeplyNestedProjectIsParseError() {
        const size_t depth = 1 << 20;
        const std::string text = "{\n  \"format\": \"kiln-project\",\n  \"graph\": " + std::string(depth, '[') + std::string(depth, ']') + "\n}";
        const std::string path = (fs::path(m_dir.path().toStdString()) / "deep.kiln").string();
        writeAll(path, text);
        auto r = loadProject(path);
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::ParseError));
        QCOMPARE(r.error().file, path);
        QCOMPARE(r.error().line, 3);
        QCOMPARE(r.error().column, 12 + 127);  // "  \"graph\": " then the 128th bracket of the list
        QVERIFY2(r.error().message.find("nested deeper than 128 levels") != std::string::npos, r.error().message.c_str());
        QVERIFY(r.error().message.find("$.graph[0][0]") != std::string::npos);
        // Objects too, and the weights header.
        std::string objects;
        for (size_t i = 0; i < 200000; ++i) objects += "{\"a\":";
        objects += "0" + std::string(200000, '}');
        QVERIFY(!parseProject(objects, "o.kiln").ok());
        const std::string header = "{\"w\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
        std::string st(8, '\0');
        for (int i = 0; i < 8; ++i) st[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
        writeAll(path + ".safetensors", st + header);
        auto w = loadSafetensors(path + ".safetensors");
        QVERIFY(!w.ok());
        QVERIFY2(w.error().message.find("nested deeper than 16 levels") != std::string::npos, w.error().message.c_str());
    }

    void wrongFormat() {
        auto r = parseProject(R"({"format": "keras-model", "version": 2, "graph": {"nodes": []}})", "m.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::UnsupportedFormat));
        QCOMPARE(r.error().file, std::string("m.kiln"));
        QCOMPARE(r.error().param("format"), std::string("\"keras-model\""));

        auto missing = parseProject(R"({"version": 2, "graph": {"nodes": []}})", "m.kiln");
        QVERIFY(!missing.ok());
        QCOMPARE(errorCodeName(missing.error().code), errorCodeName(ErrorCode::UnsupportedFormat));

        auto notObject = parseProject("[1, 2]", "m.kiln");
        QVERIFY(!notObject.ok());
        QCOMPARE(notObject.error().file, std::string("m.kiln"));
    }

    void unsupportedVersion_data() {
        QTest::addColumn<int>("version");
        QTest::newRow("future") << 3;
        QTest::newRow("far future") << 100;
        QTest::newRow("zero") << 0;
        QTest::newRow("negative") << -1;
    }
    void unsupportedVersion() {
        QFETCH(int, version);
        json doc = json::parse(kSmallProject);
        doc["version"] = version;
        auto r = parseProject(doc.dump(2), "v.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::UnsupportedFormat));
        QCOMPARE(r.error().param("version"), std::to_string(version));
        QCOMPARE(r.error().file, std::string("v.kiln"));
        QVERIFY(r.error().message.find(std::to_string(version)) != std::string::npos);
    }

    void versionMustBeInteger() {
        json doc = json::parse(kSmallProject);
        doc["version"] = "2";
        auto r = parseProject(doc.dump(), "v.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().param("field"), std::string("version"));
    }

    void nodeMissingOp() {
        const std::string text = R"({
  "format": "kiln-project",
  "version": 2,
  "graph": {
    "nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
      {"name": "fc", "inputs": ["x"], "attrs": {"units": 3}}
    ]
  }
})";
        auto r = parseProject(text, "p.kiln");
        QVERIFY(!r.ok());
        const Error& e = r.error();
        QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode::ConfigError));
        QCOMPARE(e.param("field"), std::string("graph.nodes[1].op"));
        QCOMPARE(e.file, std::string("p.kiln"));
        QVERIFY2(e.message.find("missing") != std::string::npos, e.message.c_str());
    }

    void badNodeFieldTypes_data() {
        QTest::addColumn<QString>("node");
        QTest::addColumn<QString>("field");
        QTest::newRow("op not a string") << R"({"name": "a", "op": 3})" << "graph.nodes[0].op";
        QTest::newRow("inputs not a list") << R"({"name": "a", "op": "ReLU", "inputs": "x"})" << "graph.nodes[0].inputs";
        QTest::newRow("trainable not bool") << R"({"name": "a", "op": "ReLU", "trainable": 1})"
                                            << "graph.nodes[0].trainable";
        QTest::newRow("lr_multiplier") << R"({"name": "a", "op": "ReLU", "lr_multiplier": "x"})"
                                       << "graph.nodes[0].lr_multiplier";
        QTest::newRow("node not object") << R"(42)" << "graph.nodes[0]";
    }
    void badNodeFieldTypes() {
        QFETCH(QString, node);
        QFETCH(QString, field);
        const std::string text =
            R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [)" + node.toStdString() + "]}}";
        auto r = parseProject(text, "p.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().param("field"), field.toStdString());
    }

    void attributeListOfNonIntegers() {
        const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
            {"name": "c", "op": "Conv2D", "attrs": {"filters": 2, "kernel_size": [3, "x"]}}]}})";
        auto r = parseProject(text, "p.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::BadAttribute));
        QCOMPARE(r.error().param("attribute"), std::string("kernel_size"));
        QCOMPARE(r.error().node, std::string("c"));
        QCOMPARE(r.error().line, 2);  // located on the node's line
    }

    void emptyGraphRejected() {
        auto r = parseProject(R"({"format": "kiln-project", "version": 2, "graph": {"nodes": []}})", "e.kiln");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().param("field"), std::string("graph.nodes"));
    }

    // ---- Round trips ---------------------------------------------------------------------------
    void unknownFieldsSurviveRoundTrip() {
        const std::string text = R"({
  "format": "kiln-project",
  "version": 2,
  "name": "keep",
  "description": "kept verbatim",
  "ui": {"zoom": 1.5, "panels": ["graph", "log"]},
  "graph": {
    "nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [8]}, "position": [10, 20]},
      {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4, "activation": "relu", "use_bias": false},
       "comment": "first layer", "color": {"r": 1, "g": 0.5}},
      {"name": "drop", "op": "Dropout", "inputs": ["a"], "attrs": {"rate": 0.25}},
      {"name": "b", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 4}, "share_weights_with": "a",
       "trainable": false, "lr_multiplier": 0.5}
    ],
    "outputs": ["b"]
  },
  "data": {"format": "csv", "path": "d.csv"},
  "training": {"epochs": 3, "loss": "MeanSquaredError"}
})";
        auto r1 = parseProject(text, "keep.kiln");
        QVERIFY2(r1.ok(), r1.ok() ? "" : r1.error().toString().c_str());
        QCOMPARE(r1->extra["description"].get<std::string>(), std::string("kept verbatim"));
        QCOMPARE(r1->graph.nodes[0].extra["position"], json::parse("[10, 20]"));

        const std::string saved = serializeProject(*r1);
        const json savedDoc = json::parse(saved);
        QCOMPARE(savedDoc["format"].get<std::string>(), std::string("kiln-project"));
        QCOMPARE(savedDoc["version"].get<int>(), kProjectVersion);

        auto r2 = parseProject(saved, "keep.kiln");
        QVERIFY2(r2.ok(), r2.ok() ? "" : r2.error().toString().c_str());
        const Project& p = *r2;
        QCOMPARE(p.name, std::string("keep"));
        QCOMPARE(p.extra["description"].get<std::string>(), std::string("kept verbatim"));
        QCOMPARE(p.extra["ui"], json::parse(R"({"zoom": 1.5, "panels": ["graph", "log"]})"));
        QCOMPARE(p.graph.nodes.size(), size_t{4});
        QCOMPARE(p.graph.nodes[0].extra["position"], json::parse("[10, 20]"));
        QCOMPARE(p.graph.nodes[1].extra["comment"].get<std::string>(), std::string("first layer"));
        QCOMPARE(p.graph.nodes[1].extra["color"], json::parse(R"({"r": 1, "g": 0.5})"));
        // Known fields keep their types and values.
        QCOMPARE(p.graph.nodes[1].attrs.getInt("units"), int64_t{4});
        QCOMPARE(p.graph.nodes[1].attrs.getString("activation"), std::string("relu"));
        QCOMPARE(p.graph.nodes[1].attrs.getBool("use_bias"), false);
        QCOMPARE(p.graph.nodes[2].attrs.getFloat("rate"), 0.25);
        QCOMPARE(p.graph.nodes[3].shareWeightsWith, std::string("a"));
        QCOMPARE(p.graph.nodes[3].trainable, false);
        QCOMPARE(p.graph.nodes[3].lrMultiplier, 0.5);
        QCOMPARE(p.graph.nodes[1].trainable, true);
        QCOMPARE(p.graph.nodes[1].lrMultiplier, 1.0);
        QCOMPARE(p.graph.outputs, std::vector<std::string>{"b"});
        QCOMPARE(p.data, json::parse(R"({"format": "csv", "path": "d.csv"})"));
        QCOMPARE(p.training, json::parse(R"({"epochs": 3, "loss": "MeanSquaredError"})"));
        // Serialising again is stable.
        QCOMPARE(serializeProject(p), saved);
        // Node order is kept.
        QCOMPARE(p.graph.nodes[2].name, std::string("drop"));
    }

    void floatAttributeStaysFloat() {
        // An attribute written as 1.0 must come back as a float, not an integer.
        const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
            {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
            {"name": "d", "op": "Dropout", "inputs": ["x"], "attrs": {"rate": 0.0}}]}})";
        auto r1 = parseProject(text, "f.kiln");
        QVERIFY(r1.ok());
        auto r2 = parseProject(serializeProject(*r1), "f.kiln");
        QVERIFY(r2.ok());
        QVERIFY(std::holds_alternative<double>(r2->graph.nodes[1].attrs.values().at("rate")));
    }

    void migratesVersion1() {
        const std::string text = R"({
  "format": "kiln-project",
  "version": 1,
  "name": "old",
  "graph": {
    "layers": [
      {"class_name": "Input", "name": "image", "config": {"shape": [6]}},
      {"class_name": "Dense", "name": "hidden", "config": {"units": 5, "activation": "relu"}, "inbound": ["image"],
       "trainable": false},
      {"class_name": "Dense", "name": "logits", "config": {"units": 2}, "inbound": ["hidden"], "note": "kept"}
    ]
  },
  "training": {"loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}
})";
        auto r = parseProject(text, "old.kiln");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const Project& p = *r;
        QCOMPARE(p.loadedVersion, 1);
        QCOMPARE(p.name, std::string("old"));
        QCOMPARE(p.graph.nodes.size(), size_t{3});
        QCOMPARE(p.graph.nodes[0].name, std::string("image"));
        QCOMPARE(p.graph.nodes[0].op, std::string("Input"));
        QCOMPARE(p.graph.nodes[0].attrs.getInts("shape"), std::vector<int64_t>{6});
        QCOMPARE(p.graph.nodes[1].op, std::string("Dense"));
        QCOMPARE(p.graph.nodes[1].inputs, std::vector<std::string>{"image"});
        QCOMPARE(p.graph.nodes[1].attrs.getInt("units"), int64_t{5});
        QCOMPARE(p.graph.nodes[1].attrs.getString("activation"), std::string("relu"));
        QCOMPARE(p.graph.nodes[1].trainable, false);
        QCOMPARE(p.graph.nodes[2].inputs, std::vector<std::string>{"hidden"});
        QCOMPARE(p.graph.nodes[2].extra["note"].get<std::string>(), std::string("kept"));
        QVERIFY(p.graph.nodes[2].extra.find("class_name") == p.graph.nodes[2].extra.end());
        QVERIFY(p.graph.nodes[2].extra.find("inbound") == p.graph.nodes[2].extra.end());
        // The migrated graph is a valid model.
        auto model = ops::analyzeModel(p.graph);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        QCOMPARE(model->nodes[2].output, Shape({Shape::kBatch, 2}));
        // Saving writes the current version and node layout.
        const json saved = json::parse(serializeProject(p));
        QCOMPARE(saved["version"].get<int>(), kProjectVersion);
        QVERIFY(saved["graph"].contains("nodes"));
        QVERIFY(!saved["graph"].contains("layers"));
        QCOMPARE(saved["graph"]["nodes"][1]["op"].get<std::string>(), std::string("Dense"));
        QCOMPARE(saved["graph"]["nodes"][1]["inputs"], json::parse(R"(["image"])"));
        auto again = parseProject(saved.dump(), "old.kiln");
        QVERIFY(again.ok());
        QCOMPARE(again->loadedVersion, kProjectVersion);
        QCOMPARE(again->graph.nodes[2].name, std::string("logits"));
    }

    // ---- Node lines ----------------------------------------------------------------------------
    void nodeLineFindsDefinition() {
        const std::string text =
            "{\n"                                                                        // 1
            "  \"format\": \"kiln-project\",\n"                                          // 2
            "  \"version\": 2,\n"                                                        // 3
            "  \"graph\": {\n"                                                           // 4
            "    \"nodes\": [\n"                                                         // 5
            "      {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n"  // 6
            "      {\"name\": \"fc1\", \"op\": \"Dense\", \"inputs\": [\"x\"],\n"        // 7
            "       \"attrs\": {\"units\": 3}},\n"                                      // 8
            "      {\n"                                                                  // 9
            "        \"op\": \"Dense\",\n"                                               // 10
            "        \"inputs\": [\"fc1\"],\n"                                           // 11
            "        \"name\"  :\n"                                                      // 12
            "          \"fc\",\n"                                                        // 13
            "        \"attrs\": {\"units\": 2}\n"                                        // 14
            "      }\n"                                                                  // 15
            "    ]\n"                                                                    // 16
            "  }\n"                                                                      // 17
            "}\n";
        auto r = parseProject(text, "lines.kiln");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->nodeLine("x"), 6);
        QCOMPARE(r->nodeLine("fc1"), 7);
        QCOMPARE(r->nodeLine("fc"), 12);  // not fc1's line: the name must match exactly
        QCOMPARE(r->nodeLine("missing"), 0);

        Error e(ErrorCode::ShapeMismatch, "bad shape");
        e.withNode("fc");
        Error located = locate(e, *r);
        QCOMPARE(located.file, std::string("lines.kiln"));
        QCOMPARE(located.line, 12);
        QVERIFY(located.toString().rfind("lines.kiln:12: ", 0) == 0);
        // An error that already has a position keeps it.
        Error placed(ErrorCode::ShapeMismatch, "x");
        placed.withNode("fc").withFile("other.kiln", 3, 4);
        QCOMPARE(locate(placed, *r).line, 3);
        QCOMPARE(locate(placed, *r).file, std::string("other.kiln"));
    }

    void nodeLineIgnoresProjectName() {
        // The project and a node may share a name; the node's line is the one inside graph.nodes.
        const std::string text =
            "{\n"
            "  \"format\": \"kiln-project\",\n"
            "  \"version\": 2,\n"
            "  \"name\": \"classifier\",\n"
            "  \"graph\": {\"nodes\": [\n"
            "    {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n"
            "    {\"name\": \"classifier\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 2}}\n"
            "  ]}\n"
            "}\n";
        auto r = parseProject(text, "n.kiln");
        QVERIFY(r.ok());
        QCOMPARE(r->nodeLine("classifier"), 7);
    }

    void nodeLineAfterSerialize() {
        auto r = parseProject(kSmallProject, "s.kiln");
        QVERIFY(r.ok());
        const std::string saved = serializeProject(*r);
        auto again = parseProject(saved, "s.kiln");
        QVERIFY(again.ok());
        // Find the line independently.
        std::istringstream in(saved);
        std::string line;
        int number = 0, expected = 0;
        while (std::getline(in, line)) {
            ++number;
            if (line.find("\"name\": \"fc\"") != std::string::npos) expected = number;
        }
        QVERIFY(expected > 0);
        QCOMPARE(again->nodeLine("fc"), expected);
    }

    // ---- Files ---------------------------------------------------------------------------------
    void saveAndLoadProject() {
        auto r = parseProject(kSmallProject, "small.kiln");
        QVERIFY(r.ok());
        const std::string file = path("saved.kiln");
        QVERIFY(saveProject(*r, file).ok());
        auto loaded = loadProject(file);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        QCOMPARE(loaded->path, file);
        QCOMPARE(loaded->graph.nodes.size(), size_t{2});
        QCOMPARE(loaded->sourceText, readAll(file));

        auto missing = loadProject(path("nope.kiln"));
        QVERIFY(!missing.ok());
        QCOMPARE(errorCodeName(missing.error().code), errorCodeName(ErrorCode::FileNotFound));
        QCOMPARE(missing.error().file, path("nope.kiln"));
    }

    void writeFileAtomicCreatesAndReplaces() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string d = dir.path().toStdString();
        const std::string file = d + "/out.txt";
        QVERIFY(writeFileAtomic(file, "first version\n").ok());
        QCOMPARE(readAll(file), std::string("first version\n"));
        QCOMPARE(listDir(d), std::vector<std::string>{"out.txt"});
        struct stat st1 {};
        QCOMPARE(::stat(file.c_str(), &st1), 0);
        QCOMPARE(st1.st_mode & 0777, mode_t{0644});

        // A reader holding the old file keeps seeing the complete old contents: the file is
        // replaced by rename, never truncated and rewritten in place.
        std::ifstream oldReader(file, std::ios::binary);
        QVERIFY(oldReader.good());
        std::string big(1 << 20, 'x');
        QVERIFY(writeFileAtomic(file, big).ok());
        std::stringstream ss;
        ss << oldReader.rdbuf();
        QCOMPARE(ss.str(), std::string("first version\n"));
        QCOMPARE(readAll(file), big);
        struct stat st2 {};
        QCOMPARE(::stat(file.c_str(), &st2), 0);
        QVERIFY(st2.st_ino != st1.st_ino);
        QCOMPARE(listDir(d), std::vector<std::string>{"out.txt"});

        // Empty contents.
        QVERIFY(writeFileAtomic(file, "").ok());
        QCOMPARE(readAll(file), std::string());
        QCOMPARE(listDir(d), std::vector<std::string>{"out.txt"});

        // A relative path (no folder part) works too.
        const fs::path cwd = fs::current_path();
        fs::current_path(d);
        Status rel = writeFileAtomic("relative.txt", "r");
        fs::current_path(cwd);
        QVERIFY2(rel.ok(), rel.ok() ? "" : rel.error().toString().c_str());
        QCOMPARE(readAll(d + "/relative.txt"), std::string("r"));
        QCOMPARE(listDir(d), (std::vector<std::string>{"out.txt", "relative.txt"}));
    }

    void writeFileAtomicFailuresLeaveNothing() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string d = dir.path().toStdString();
        // Missing folder.
        const std::string missing = d + "/no/such/folder/file.txt";
        Status s1 = writeFileAtomic(missing, "x");
        QVERIFY(!s1.ok());
        QCOMPARE(errorCodeName(s1.error().code), errorCodeName(ErrorCode::FileWrite));
        QCOMPARE(s1.error().file, missing);
        QVERIFY(listDir(d).empty());
        // The target is a non-empty folder: the rename fails and the temporary file is removed.
        fs::create_directory(d + "/target");
        writeAll(d + "/target/inside", "keep");
        Status s2 = writeFileAtomic(d + "/target", "x");
        QVERIFY(!s2.ok());
        QCOMPARE(errorCodeName(s2.error().code), errorCodeName(ErrorCode::FileWrite));
        QCOMPARE(listDir(d), std::vector<std::string>{"target"});
        QCOMPARE(readAll(d + "/target/inside"), std::string("keep"));
    }

    // ---- Data paths ----------------------------------------------------------------------------
    void resolveDataPathExpands() {
        EnvGuard home("HOME", "/home/tester");
        {
            EnvGuard data("KILN_DATA", "/srv/kiln-data");
            QCOMPARE(resolveDataPath("${KILN_DATA}/mnist/train.gz", "/p/proj.kiln"),
                     std::string("/srv/kiln-data/mnist/train.gz"));
        }
        {
            EnvGuard data("KILN_DATA", nullptr);
            QCOMPARE(resolveDataPath("${KILN_DATA}/mnist/train.gz", "/p/proj.kiln"),
                     std::string("/home/tester/.cache/kiln/data/mnist/train.gz"));
        }
        {
            EnvGuard data("KILN_DATA", "");  // empty counts as unset
            QCOMPARE(resolveDataPath("${KILN_DATA}/a", ""), std::string("/home/tester/.cache/kiln/data/a"));
        }
        {
            EnvGuard x("KILN_TEST_ROOT", nullptr);
            QCOMPARE(resolveDataPath("${KILN_TEST_ROOT:-/opt/fallback}/f.csv", "/p/proj.kiln"),
                     std::string("/opt/fallback/f.csv"));
            // An unset variable without a default expands to nothing.
            QCOMPARE(resolveDataPath("/base${KILN_TEST_ROOT}/f.csv", "/p/proj.kiln"), std::string("/base/f.csv"));
        }
        {
            EnvGuard x("KILN_TEST_ROOT", "/mnt/set");
            QCOMPARE(resolveDataPath("${KILN_TEST_ROOT:-/opt/fallback}/f.csv", "/p/proj.kiln"),
                     std::string("/mnt/set/f.csv"));
            QCOMPARE(resolveDataPath("${KILN_TEST_ROOT}/a/${KILN_TEST_ROOT}", ""), std::string("/mnt/set/a/mnt/set"));
        }
        QCOMPARE(resolveDataPath("~/datasets/x.csv", "/p/proj.kiln"), std::string("/home/tester/datasets/x.csv"));
        QCOMPARE(resolveDataPath("~", ""), std::string("/home/tester"));
        // Relative paths are taken from the project's folder, and normalised.
        QCOMPARE(resolveDataPath("data/iris.csv", "/home/li/projects/iris.kiln"),
                 std::string("/home/li/projects/data/iris.csv"));
        QCOMPARE(resolveDataPath("../shared/./iris.csv", "/home/li/projects/iris.kiln"),
                 std::string("/home/li/shared/iris.csv"));
        QCOMPARE(resolveDataPath("iris.csv", "rel/proj.kiln"), std::string("rel/iris.csv"));
        // Absolute paths are kept; without a project path a relative one stays relative.
        QCOMPARE(resolveDataPath("/abs/x.csv", "/home/li/projects/iris.kiln"), std::string("/abs/x.csv"));
        QCOMPARE(resolveDataPath("x.csv", ""), std::string("x.csv"));
        // A default that is itself relative is resolved against the project.
        {
            EnvGuard x("KILN_TEST_ROOT", nullptr);
            QCOMPARE(resolveDataPath("${KILN_TEST_ROOT:-data}/x.csv", "/home/li/p.kiln"), std::string("/home/li/data/x.csv"));
        }
    }

    // ---- safetensors ---------------------------------------------------------------------------
    void safetensorsRoundTrip() {
        Tensor f = Tensor::fromVector(Shape{2, 3}, {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f});
        Tensor i64(Shape{5}, DType::I64);
        const int64_t ivals[5] = {0, -1, int64_t{1} << 40, std::numeric_limits<int64_t>::min(), 42};
        std::memcpy(i64.raw(), ivals, sizeof ivals);
        Tensor u8(Shape{3, 1}, DType::U8);
        for (int k = 0; k < 3; ++k) u8.data<uint8_t>()[k] = static_cast<uint8_t>(250 + k);
        Tensor scalar = Tensor::fromVector(Shape{}, {7.0f});
        Tensor empty(Shape{0, 4});
        const std::map<std::string, std::string> meta{{"format", "pt"}, {"kiln_version", "0.1.0"}};
        const std::string file = path("round.safetensors");
        // Given order: not sorted by name.
        Status st = saveSafetensors(file, {{"z/kernel", f}, {"ids", i64}, {"bytes", u8}, {"s", scalar}, {"e", empty}},
                                    meta);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());

        // The layout: header length, JSON header, 8-byte aligned data in the given order.
        const std::string raw = readAll(file);
        uint64_t len = 0;
        for (int k = 0; k < 8; ++k) len |= static_cast<uint64_t>(static_cast<unsigned char>(raw[static_cast<size_t>(k)])) << (8 * k);
        QCOMPARE((8 + len) % 8, uint64_t{0});
        const json header = json::parse(raw.substr(8, len));
        QCOMPARE(header["__metadata__"]["format"].get<std::string>(), std::string("pt"));
        QCOMPARE(header["z/kernel"]["dtype"].get<std::string>(), std::string("F32"));
        QCOMPARE(header["z/kernel"]["shape"], json::parse("[2, 3]"));
        QCOMPARE(header["z/kernel"]["data_offsets"], json::parse("[0, 24]"));
        QCOMPARE(header["ids"]["dtype"].get<std::string>(), std::string("I64"));
        QCOMPARE(header["ids"]["data_offsets"], json::parse("[24, 64]"));
        QCOMPARE(header["bytes"]["dtype"].get<std::string>(), std::string("U8"));
        QCOMPARE(header["bytes"]["data_offsets"], json::parse("[64, 67]"));
        QCOMPARE(raw.size(), static_cast<size_t>(8 + len + 24 + 40 + 3 + 4 + 0));
        float first = 0;
        std::memcpy(&first, raw.data() + 8 + len, 4);
        QCOMPARE(first, 1.5f);  // little-endian float bytes

        auto r = loadSafetensors(file);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const SafetensorsFile& sf = *r;
        QCOMPARE(sf.metadata, meta);
        QCOMPARE(sf.tensors.size(), size_t{5});
        // Sorted by name.
        for (size_t k = 1; k < sf.tensors.size(); ++k) QVERIFY(sf.tensors[k - 1].name < sf.tensors[k].name);
        const Tensor* rf = sf.find("z/kernel");
        QVERIFY(rf);
        QCOMPARE(rf->dtype(), DType::F32);
        QCOMPARE(rf->shape(), Shape({2, 3}));
        QCOMPARE(std::memcmp(rf->raw(), f.raw(), f.bytes()), 0);  // bit exact, -0.0 included
        const Tensor* ri = sf.find("ids");
        QVERIFY(ri);
        QCOMPARE(ri->dtype(), DType::I64);
        QCOMPARE(ri->shape(), Shape({5}));
        for (int k = 0; k < 5; ++k) QCOMPARE(ri->data<int64_t>()[k], ivals[k]);
        const Tensor* ru = sf.find("bytes");
        QVERIFY(ru);
        QCOMPARE(ru->dtype(), DType::U8);
        QCOMPARE(ru->shape(), Shape({3, 1}));
        QCOMPARE(ru->data<uint8_t>()[2], uint8_t{252});
        const Tensor* rs = sf.find("s");
        QVERIFY(rs);
        QCOMPARE(rs->shape(), Shape());
        QCOMPARE(rs->f32()[0], 7.0f);
        const Tensor* re = sf.find("e");
        QVERIFY(re);
        QCOMPARE(re->shape(), Shape({0, 4}));
        QCOMPARE(re->numel(), int64_t{0});
        QVERIFY(sf.find("nope") == nullptr);
        // No temporary files next to it.
        for (const auto& name : listDir(m_dir.path().toStdString())) QVERIFY2(name[0] != '.', name.c_str());
    }

    void safetensorsWithoutMetadata() {
        const std::string file = path("nometa.safetensors");
        QVERIFY(saveSafetensors(file, {{"a", Tensor::fromVector(Shape{1}, {2.0f})}}).ok());
        auto r = loadSafetensors(file);
        QVERIFY(r.ok());
        QVERIFY(r->metadata.empty());
        QCOMPARE(r->tensors.size(), size_t{1});
        const std::string raw = readAll(file);
        const json header = json::parse(raw.substr(8, raw.size() - 8 - 4));
        QVERIFY(!header.contains("__metadata__"));
        QVERIFY(header.contains("a"));
    }

    void safetensorsFromMemory() {
        // parseSafetensors reads bytes already in memory with the file reader's checks; errors
        // name the path it is given.
        const std::string good = validSafetensors("memory.safetensors");
        const std::string bytes = readAll(good);
        auto fromFile = loadSafetensors(good);
        auto fromBytes = parseSafetensors(bytes, "in-memory.safetensors");
        QVERIFY(fromFile.ok() && fromBytes.ok());
        QCOMPARE(fromBytes->tensors.size(), fromFile->tensors.size());
        for (size_t i = 0; i < fromFile->tensors.size(); ++i) {
            QCOMPARE(fromBytes->tensors[i].name, fromFile->tensors[i].name);
            QCOMPARE(fromBytes->tensors[i].tensor.bytes(), fromFile->tensors[i].tensor.bytes());
            QVERIFY(std::memcmp(fromBytes->tensors[i].tensor.raw(), fromFile->tensors[i].tensor.raw(),
                                fromFile->tensors[i].tensor.bytes()) == 0);
        }
        auto cut = parseSafetensors(std::string_view(bytes).substr(0, bytes.size() - 1), "in-memory.safetensors");
        QVERIFY(!cut.ok());
        QCOMPARE(errorCodeName(cut.error().code), errorCodeName(ErrorCode::WeightsMismatch));
        QCOMPARE(cut.error().file, std::string("in-memory.safetensors"));
    }

    void safetensorsMissingFile() {
        auto r = loadSafetensors(path("missing.safetensors"));
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::FileNotFound));
        QCOMPARE(r.error().file, path("missing.safetensors"));
    }

    void safetensorsTruncated() {
        const std::string good = validSafetensors("good.safetensors");
        const std::string bytes = readAll(good);
        // Cut inside the data of the last tensor ("ids", 32 bytes after "w"'s 24).
        const std::string cutData = path("cut_data.safetensors");
        writeAll(cutData, bytes.substr(0, bytes.size() - 5));
        expectCorrupt(cutData, "ids", "");
        // Cut inside the header.
        const std::string cutHeader = path("cut_header.safetensors");
        writeAll(cutHeader, bytes.substr(0, 20));
        expectCorrupt(cutHeader, "", "header");
        // Shorter than the length field.
        const std::string tiny = path("tiny.safetensors");
        writeAll(tiny, bytes.substr(0, 5));
        expectCorrupt(tiny, "", "");
        const std::string empty = path("empty.safetensors");
        writeAll(empty, "");
        expectCorrupt(empty, "", "");
    }

    void safetensorsHeaderLength() {
        const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
        const std::string data(4, '\0');
        // One byte more than the file holds.
        const std::string over = path("len_over.safetensors");
        writeAll(over, rawSafetensors(header, data, header.size() + data.size() + 1));
        expectCorrupt(over, "", "header");
        // Huge lengths, including ones that overflow 8 + len.
        for (uint64_t len : {uint64_t{1} << 40, ~uint64_t{0}, ~uint64_t{0} - 7, uint64_t{1} << 63}) {
            const std::string f = path("len_huge.safetensors");
            writeAll(f, rawSafetensors(header, data, len));
            expectCorrupt(f, "", "header");
        }
        // Too short: the JSON is cut.
        const std::string under = path("len_under.safetensors");
        writeAll(under, rawSafetensors(header, data, header.size() - 3));
        expectCorrupt(under, "", "");
        // Zero.
        const std::string zero = path("len_zero.safetensors");
        writeAll(zero, rawSafetensors(header, data, 0));
        expectCorrupt(zero, "", "");
    }

    void safetensorsCorruptHeaders_data() {
        QTest::addColumn<QString>("header");
        QTest::addColumn<int>("dataBytes");
        QTest::addColumn<QString>("tensor");  // empty: any
        QTest::newRow("offsets past the end")
            << R"({"a":{"dtype":"F32","shape":[250],"data_offsets":[0,1000]}})" << 16 << "a";
        QTest::newRow("end before begin")
            << R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})" << 16 << "a";
        QTest::newRow("begin past the end")
            << R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[100,100]}})" << 16 << "a";
        QTest::newRow("shape needs more bytes")
            << R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})" << 16 << "a";
        QTest::newRow("shape needs fewer bytes")
            << R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})" << 16 << "a";
        QTest::newRow("dtype size mismatch")
            << R"({"a":{"dtype":"I64","shape":[2],"data_offsets":[0,8]}})" << 16 << "a";
        QTest::newRow("second tensor bad")
            << R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,16]}})"
            << 16 << "b";
        QTest::newRow("unknown dtype")
            << R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})" << 16 << "a";
        QTest::newRow("dtype not a string")
            << R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})" << 16 << "a";
        QTest::newRow("negative dimension")
            << R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})" << 16 << "a";
        QTest::newRow("float dimension")
            << R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})" << 16 << "a";
        QTest::newRow("shape not a list")
            << R"({"a":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})" << 16 << "a";
        QTest::newRow("shape product overflows")
            << R"({"a":{"dtype":"F32","shape":[4611686018427387905,4],"data_offsets":[0,16]}})" << 16 << "a";
        QTest::newRow("negative offset")
            << R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})" << 16 << "a";
        QTest::newRow("one offset")
            << R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}})" << 16 << "a";
        QTest::newRow("offsets not a list")
            << R"({"a":{"dtype":"F32","shape":[1],"data_offsets":"0-4"}})" << 16 << "a";
        QTest::newRow("missing shape") << R"({"a":{"dtype":"F32","data_offsets":[0,4]}})" << 16 << "a";
        QTest::newRow("missing dtype") << R"({"a":{"shape":[1],"data_offsets":[0,4]}})" << 16 << "a";
        QTest::newRow("missing offsets") << R"({"a":{"dtype":"F32","shape":[1]}})" << 16 << "a";
        QTest::newRow("entry not an object") << R"({"a":[1,2,3]})" << 16 << "a";
        QTest::newRow("header not JSON") << R"({"a":{"dtype":)" << 16 << "";
        QTest::newRow("header an array") << R"([{"dtype":"F32"}])" << 16 << "";
    }
    void safetensorsCorruptHeaders() {
        QFETCH(QString, header);
        QFETCH(int, dataBytes);
        QFETCH(QString, tensor);
        const std::string file = path("corrupt.safetensors");
        writeAll(file, rawSafetensors(header.toStdString(), std::string(static_cast<size_t>(dataBytes), '\x01')));
        expectCorrupt(file, tensor.toStdString(), "");
    }

    void safetensorsOverlappingRanges() {
        const std::string file = path("overlap.safetensors");
        writeAll(file, rawSafetensors(
                           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                           std::string(16, '\0')));
        auto r = loadSafetensors(file);
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::WeightsMismatch));
        QCOMPARE(r.error().file, file);
        QVERIFY2(r.error().message.find("overlap") != std::string::npos, r.error().message.c_str());
        // The error names one of the overlapping tensors.
        const std::string t = r.error().param("tensor");
        QVERIFY2(t == "a" || t == "b", qPrintable(QString("tensor param: \"%1\"").arg(QString::fromStdString(t))));

        // Identical ranges overlap too; touching ranges do not.
        const std::string same = path("same.safetensors");
        writeAll(same, rawSafetensors(
                           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                           std::string(8, '\0')));
        QVERIFY(!loadSafetensors(same).ok());
        const std::string touching = path("touching.safetensors");
        writeAll(touching, rawSafetensors(
                               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                               std::string(16, '\0')));
        QVERIFY(loadSafetensors(touching).ok());
    }

    void safetensorsRandomCorruptionNeverCrashes() {
        // Flip bytes of a valid file all over: every load either succeeds or fails cleanly.
        const std::string good = validSafetensors("fuzz_src.safetensors");
        const std::string bytes = readAll(good);
        const std::string file = path("fuzz.safetensors");
        uint32_t state = 12345;
        int failures = 0;
        for (int iter = 0; iter < 400; ++iter) {
            std::string b = bytes;
            const int flips = 1 + iter % 4;
            for (int k = 0; k < flips; ++k) {
                state = state * 1664525u + 1013904223u;
                const size_t pos = (state >> 8) % b.size();
                state = state * 1664525u + 1013904223u;
                b[pos] = static_cast<char>(state >> 24);
            }
            if (iter % 7 == 0) b.resize((state >> 4) % b.size());
            writeAll(file, b);
            auto r = loadSafetensors(file);
            if (!r.ok()) {
                ++failures;
                QVERIFY(r.error().code == ErrorCode::WeightsMismatch);
                QCOMPARE(r.error().file, file);
            } else {
                for (const auto& t : r->tensors) QCOMPARE(t.tensor.bytes(), static_cast<size_t>(t.tensor.numel()) * dtypeSize(t.tensor.dtype()));
            }
        }
        QVERIFY(failures > 0);
    }
};

QTEST_APPLESS_MAIN(TestProject)
#include "tst_project.moc"
