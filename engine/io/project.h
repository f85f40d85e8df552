// SPDX-License-Identifier: Apache-2.0
// The *.kiln project file: JSON with "format": "kiln-project" and a version. Older versions are
// migrated on load, unknown fields are kept, and writes are atomic.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/graph/graph.h"
#include "engine/io/layers.h"

namespace kiln::engine::io {

constexpr int kProjectVersion = 2;

struct Project {
    std::string path;        // where it was loaded from (for relative data paths and messages)
    std::string name;
    Graph graph;             // as written: nodes may be instances of layers
    std::vector<LayerDef> layers;  // the project's own layer definitions ("layers")
    nlohmann::json data = nlohmann::json::object();      // data sources (see docs/project-format.md)
    nlohmann::json training = nlohmann::json::object();  // training configuration
    nlohmann::json extra = nlohmann::json::object();     // unknown top-level fields, kept
    // Editor layout: {"nodes": {"name": [x, y]}, "groups": [...], "comments": [...]}; empty when
    // the file has none (the editor then lays the graph out itself). The engine never reads it.
    nlohmann::json layout = nlohmann::json::object();
    int loadedVersion = kProjectVersion;                 // version found in the file

    // Line (1-based) of the node's definition in the source text, 0 when unknown.
    int nodeLine(const std::string& node) const;
    std::string sourceText;  // the text it was parsed from
};

// The graph to analyse, train and export: project.graph with every layer instance expanded into
// primitive nodes (project layers and the bundled library). Errors name the node and the file.
Result<Graph> modelGraph(const Project& project);

// A node object of the project format; `where` is its JSON path for messages. With `attrRefs`,
// attribute values {"$attr": "name"} are accepted and collected there (layer definitions).
Result<Node> parseNodeJson(const nlohmann::json& j, const std::string& where, const std::string& path,
                           std::map<std::string, std::string>* attrRefs = nullptr);
nlohmann::json nodeToJson(const Node& node);
Result<AttrValue> attrFromJson(const nlohmann::json& v, const std::string& node, const std::string& key);
nlohmann::json attrToJson(const AttrValue& v);

Result<Project> parseProject(const std::string& text, const std::string& path);
Result<Project> loadProject(const std::string& path);
std::string serializeProject(const Project& project);
Status saveProject(const Project& project, const std::string& path);

// Writes `bytes` to `path` atomically: a temporary file in the same folder, fsync, rename.
Status writeFileAtomic(const std::string& path, const std::string& bytes);

// Adds the node's line to an error that names a node, and the file path.
Error locate(Error e, const Project& project);

// Expands ${VAR} / ${VAR:-default} and a leading ~ in a data path; relative paths are taken
// from the project's folder. KILN_DATA defaults to ~/.cache/kiln/data.
std::string resolveDataPath(const std::string& raw, const std::string& projectPath);

}  // namespace kiln::engine::io
