// SPDX-License-Identifier: Apache-2.0
// Composite layers: named blocks of nodes with their own inputs, outputs and attribute schema,
// defined in a project's "layers" section or in Kiln's bundled library, and expanded into
// primitive nodes before model analysis so that every consumer of a graph sees only op-table ops.
//
// The expansion lives in io/ (not graph/) because it needs the op table, to tell built-in ops
// from layer names and to know which nodes own parameters when instances share weights, and
// because the definitions come from files (the project and the bundled library).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/graph/attr.h"
#include "engine/graph/graph.h"

namespace kiln::engine::io {

// A node inside a layer definition: an ordinary node whose attributes may instead name one of
// the layer's attributes ({"$attr": "filters"}), filled in per instance.
struct LayerNode {
    Node node;
    std::map<std::string, std::string> attrRefs;  // node attribute -> layer attribute
};

struct LayerDef {
    std::string name;                  // used as a node's "op"
    std::string doc;                   // one line
    std::vector<std::string> inputs;   // port names, referenced by the inner nodes' inputs
    std::vector<std::string> outputs;  // inner node names (or "instance:output" of a nested layer)
    std::vector<AttrSpec> attributes;  // exposed attributes: type, default, range, choices, doc
    std::vector<LayerNode> nodes;

    const AttrSpec* attribute(const std::string& n) const;
};

// The layers a graph may use, by name. Project definitions come after (and so replace) bundled
// ones of the same name.
class LayerLibrary {
public:
    void add(LayerDef def);
    const LayerDef* find(const std::string& name) const;
    const std::vector<LayerDef>& layers() const { return m_layers; }
    bool empty() const { return m_layers.empty(); }

private:
    std::vector<LayerDef> m_layers;
};

// Reads a "layers" list. `field` is the JSON path used in error messages ("layers"); errors name
// the file, the field and the layer. Definitions are checked on their own (unique names, inputs
// that resolve, outputs that exist, $attr references to declared attributes, defaults that fit
// their schema, no built-in op names); uses of other layers are checked by checkLayers().
Result<std::vector<LayerDef>> parseLayerDefs(const nlohmann::json& list, const std::string& path,
                                             const std::string& field = "layers");
nlohmann::json layerDefsToJson(const std::vector<LayerDef>& defs);

// Kiln's bundled layers (resources/layers/library.json, compiled in).
const LayerLibrary& bundledLayers();
// The bundled layers plus `project` (which replaces bundled layers of the same name).
LayerLibrary layerLibrary(const std::vector<LayerDef>& project);

// Every layer used inside a definition exists and takes as many inputs as it is given, and no
// layer contains itself, directly or through others; the error shows the chain (A -> B -> A).
Status checkLayers(const LayerLibrary& library);

// Replaces every node whose op names a layer by the layer's nodes, recursively. Node "b" using
// a layer with node "conv" becomes "b/conv" (parameters "b/conv/kernel"); other nodes refer to
// an instance by its name when its layer has one output and as "b:out" when it has several.
// Instance attributes are checked against the layer's schema; "trainable" and "lr_multiplier"
// of an instance apply to all its nodes, and "share_weights_with" another instance of the same
// layer makes each parameterised node use its counterpart's parameters. A graph without
// instances comes back unchanged.
Result<Graph> expandLayers(const Graph& graph, const LayerLibrary& library);

// Whether `op` names a layer of the library (and not a built-in op).
bool isLayerOp(const LayerLibrary& library, const std::string& op);

}  // namespace kiln::engine::io
