// SPDX-License-Identifier: Apache-2.0
// The editor document: project <-> editable content, layout persistence, and the edits, each
// checked with the engine's rules before it becomes one undo command.
#include "ui/graph_editor/editor_document.h"

#include <QRegularExpression>
#include <QSet>

#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "engine/api/plugins.h"
#include "engine/api/pretrained.h"
#include "engine/ops/op_table.h"
#include "engine/ops/plugin_ops.h"
#include "ui/common/plugin_notifier.h"
#include "ui/graph_editor/editor_commands.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_layout.h"

namespace kiln::ui {
namespace {

using engine::Error;
using engine::ErrorCode;
using nlohmann::json;

enum NodeEditKind { AttributeEdit, RenameEdit, FlagsEdit };

std::optional<QPointF> pointFromJson(const json& j) {
    if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number()) return std::nullopt;
    return QPointF(j[0].get<double>(), j[1].get<double>());
}

json pointToJson(QPointF p) {
    return json::array({p.x(), p.y()});
}

Error refused(ErrorCode code, const QString& why, const std::string& node = {}) {
    Error e(code, why.toStdString());
    if (!node.empty()) e.withNode(node);
    e.with("reason", why.toStdString());
    return e;
}

}  // namespace

EditorDocument::EditorDocument(QObject* parent) : QObject(parent), m_undo(new QUndoStack(this)) {
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool) { emit modifiedChanged(isModified()); });
    // A plugin loaded now gives its Plugin nodes their ports, attributes and shapes: the canvas
    // rebuilds them and analyses the graph again. The document itself does not change.
    connect(&PluginNotifier::instance(), &PluginNotifier::pluginsChanged, this, [this] {
        const std::string plugin(engine::ops::opDef(engine::ops::OpKind::Plugin).name);
        if (std::any_of(m_content.nodes.begin(), m_content.nodes.end(),
                        [&](const EditorNode& n) { return n.node.op == plugin; }))
            emit structureChanged();
    });
    newDocument();
}

EditorDocument::~EditorDocument() = default;

bool EditorDocument::isModified() const {
    return m_forcedModified || !m_undo->isClean();
}

// ---- files --------------------------------------------------------------------------------

void EditorDocument::newDocument() {
    engine::io::Project p;
    p.name = "untitled";
    engine::Node input = makeNode("Input", "input");
    p.graph.nodes.push_back(input);
    m_filePath.clear();
    loadFrom(std::move(p), true);
    emit filePathChanged(m_filePath);
}

engine::Status EditorDocument::load(const QString& path) {
    auto r = engine::io::loadProject(path.toStdString());
    if (!r.ok()) return std::move(r.error());
    m_filePath = path;
    loadFrom(std::move(r.value()), true);
    emit filePathChanged(m_filePath);
    return {};
}

engine::Status EditorDocument::save(const QString& path) {
    engine::io::Project p = project();
    KILN_TRY(engine::io::saveProject(p, path.toStdString()));
    bool pathChanged = path != m_filePath;
    m_filePath = path;
    m_base.path = path.toStdString();
    m_forcedModified = false;
    m_undo->setClean();
    emit modifiedChanged(isModified());
    if (pathChanged) emit filePathChanged(m_filePath);
    return {};
}

void EditorDocument::setProject(const engine::io::Project& project, bool clean) {
    m_filePath = QString::fromStdString(project.path);
    loadFrom(project, clean);
    emit filePathChanged(m_filePath);
}

QByteArray EditorDocument::toJson() const {
    return QByteArray::fromStdString(engine::io::serializeProject(project()));
}

engine::Status EditorDocument::fromJson(const QByteArray& text, const QString& path) {
    auto r = engine::io::parseProject(text.toStdString(), path.toStdString());
    if (!r.ok()) return std::move(r.error());
    setProject(r.value(), false);
    return {};
}

void EditorDocument::loadFrom(engine::io::Project project, bool clean) {
    m_undo->clear();
    m_content = DocumentContent{};
    m_nextId = 0;
    const json layout = project.layout;
    m_content.outputs = project.graph.outputs;
    m_content.layers = std::move(project.layers);
    project.layers.clear();
    bool missing = false;
    const json* positions =
        layout.contains("nodes") && layout["nodes"].is_object() ? &layout["nodes"] : nullptr;
    for (auto& node : project.graph.nodes) {
        EditorNode en;
        en.id = allocateId();
        std::optional<QPointF> pos;
        if (positions && positions->contains(node.name)) pos = pointFromJson((*positions)[node.name]);
        if (pos)
            en.pos = *pos;
        else
            missing = true;
        en.node = std::move(node);
        m_content.nodes.push_back(std::move(en));
    }
    reindex();
    if (layout.contains("groups") && layout["groups"].is_array()) {
        for (const auto& g : layout["groups"]) {
            if (!g.is_object()) continue;
            EditorGroup eg;
            eg.id = allocateId();
            if (g.contains("name") && g["name"].is_string())
                eg.name = QString::fromStdString(g["name"].get<std::string>());
            if (g.contains("nodes") && g["nodes"].is_array())
                for (const auto& n : g["nodes"])
                    if (n.is_string())
                        if (ItemId id = idOf(n.get<std::string>());
                            id && groupOf(id) == 0 && !eg.nodes.contains(id))
                            eg.nodes.push_back(id);
            eg.collapsed = g.value("collapsed", false);
            if (g.contains("position"))
                if (auto p = pointFromJson(g["position"])) eg.pos = *p;
            if (!eg.nodes.isEmpty()) m_content.groups.push_back(eg);
        }
    }
    if (layout.contains("comments") && layout["comments"].is_array()) {
        for (const auto& c : layout["comments"]) {
            if (!c.is_object() || !c.contains("rect") || !c["rect"].is_array() || c["rect"].size() != 4)
                continue;
            const auto& r = c["rect"];
            bool numbers = true;
            for (const auto& v : r) numbers = numbers && v.is_number();
            if (!numbers) continue;
            EditorComment ec;
            ec.id = allocateId();
            ec.rect = QRectF(r[0].get<double>(), r[1].get<double>(), r[2].get<double>(), r[3].get<double>());
            if (c.contains("text") && c["text"].is_string())
                ec.text = QString::fromStdString(c["text"].get<std::string>());
            m_content.comments.push_back(ec);
        }
    }
    if (missing) {
        // Hand-written files have no positions: lay the graph out. Where only some nodes have
        // one, the others go, in layered order, to the right of what is already placed.
        auto laid = computeLayout();
        QRectF placed, fresh;
        QSet<ItemId> unplaced;
        for (const auto& n : m_content.nodes) {
            if (positions && positions->contains(n.node.name) && pointFromJson((*positions)[n.node.name])) {
                placed |= QRectF(n.pos, QSizeF(1, 1));
            } else {
                unplaced.insert(n.id);
                fresh |= QRectF(laid.value(n.id), QSizeF(1, 1));
            }
        }
        const QPointF shift =
            placed.isNull() ? QPointF() : QPointF(placed.right() + 300, placed.top()) - fresh.topLeft();
        for (auto& n : m_content.nodes)
            if (unplaced.contains(n.id)) n.pos = laid.value(n.id) + shift;
    }
    m_base = std::move(project);
    m_base.graph = engine::Graph{};
    m_base.layout = json::object();
    m_base.sourceText.clear();
    m_forcedModified = !clean;
    m_undo->setClean();
    emit structureChanged();
    emit layersChanged();
    emit changed();
    emit modifiedChanged(isModified());
}

engine::io::Project EditorDocument::project() const {
    engine::io::Project p = m_base;
    if (!m_filePath.isEmpty()) p.path = m_filePath.toStdString();
    p.graph.nodes.reserve(m_content.nodes.size());
    json positions = json::object();
    for (const auto& n : m_content.nodes) {
        p.graph.nodes.push_back(n.node);
        positions[n.node.name] = pointToJson(n.pos);
    }
    p.graph.outputs = m_content.outputs;
    p.layers = m_content.layers;
    json layout = json::object();
    layout["nodes"] = std::move(positions);
    if (!m_content.groups.isEmpty()) {
        json groups = json::array();
        for (const auto& g : m_content.groups) {
            json members = json::array();
            for (ItemId id : g.nodes)
                if (const auto* n = node(id)) members.push_back(n->node.name);
            groups.push_back({{"name", g.name.toStdString()},
                              {"nodes", members},
                              {"collapsed", g.collapsed},
                              {"position", pointToJson(g.pos)}});
        }
        layout["groups"] = std::move(groups);
    }
    if (!m_content.comments.isEmpty()) {
        json comments = json::array();
        for (const auto& c : m_content.comments)
            comments.push_back(
                {{"text", c.text.toStdString()},
                 {"rect", json::array({c.rect.x(), c.rect.y(), c.rect.width(), c.rect.height()})}});
        layout["comments"] = std::move(comments);
    }
    p.layout = std::move(layout);
    return p;
}

// ---- reading ------------------------------------------------------------------------------

void EditorDocument::reindex() {
    m_index.clear();
    m_index.reserve(static_cast<qsizetype>(m_content.nodes.size()));
    ItemId maxId = m_nextId;
    for (size_t i = 0; i < m_content.nodes.size(); ++i) {
        m_index.insert(m_content.nodes[i].id, static_cast<int>(i));
        maxId = std::max(maxId, m_content.nodes[i].id);
    }
    for (const auto& g : m_content.groups) maxId = std::max(maxId, g.id);
    for (const auto& c : m_content.comments) maxId = std::max(maxId, c.id);
    m_nextId = maxId;
}

const EditorNode* EditorDocument::node(ItemId id) const {
    auto it = m_index.constFind(id);
    return it == m_index.constEnd() ? nullptr : &m_content.nodes[static_cast<size_t>(*it)];
}

const EditorNode* EditorDocument::nodeByName(const std::string& name) const {
    for (const auto& n : m_content.nodes)
        if (n.node.name == name) return &n;
    return nullptr;
}

ItemId EditorDocument::idOf(const std::string& name) const {
    const auto* n = nodeByName(name);
    return n ? n->id : 0;
}

const EditorGroup* EditorDocument::group(ItemId id) const {
    for (const auto& g : m_content.groups)
        if (g.id == id) return &g;
    return nullptr;
}

const EditorComment* EditorDocument::comment(ItemId id) const {
    for (const auto& c : m_content.comments)
        if (c.id == id) return &c;
    return nullptr;
}

ItemId EditorDocument::groupOf(ItemId nodeId) const {
    for (const auto& g : m_content.groups)
        if (g.nodes.contains(nodeId)) return g.id;
    return 0;
}

std::string EditorDocument::baseNameForOp(const std::string& op) {
    std::string out;
    for (size_t i = 0; i < op.size(); ++i) {
        char c = op[i];
        bool upper = c >= 'A' && c <= 'Z';
        if (upper && i > 0 && op[i - 1] >= 'a' && op[i - 1] <= 'z') out += '_';
        out += upper ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out.empty() ? std::string("node") : out;
}

std::string EditorDocument::uniqueName(const std::string& base,
                                       const std::vector<std::string>& reserved) const {
    std::unordered_set<std::string> used(reserved.begin(), reserved.end());
    for (const auto& n : m_content.nodes) used.insert(n.node.name);
    if (!used.count(base)) return base;
    for (int k = 1;; ++k) {
        std::string candidate = base + "_" + std::to_string(k);
        if (!used.count(candidate)) return candidate;
    }
}

engine::Node EditorDocument::makeNode(const std::string& op, const std::string& name) const {
    engine::Node n;
    n.op = op;
    n.name = name.empty() ? uniqueName(baseNameForOp(op)) : name;
    if (const auto* def = engine::ops::findOp(op)) {
        for (const auto& spec : def->attrs) {
            if (!spec.required) continue;
            if (spec.name == "shape")
                n.attrs.set("shape", std::vector<int64_t>{28, 28, 1});
            else if (spec.name == "target_shape")
                n.attrs.set("target_shape", std::vector<int64_t>{-1});
            else if (spec.name == "input_dim")
                n.attrs.set("input_dim", int64_t{1000});
            else if (spec.type == engine::AttrType::Int)
                n.attrs.set(spec.name, int64_t{64});
        }
    } else if (const auto* layer = findLayer(op)) {
        // An instance shows every attribute of its layer at the layer's default (a required
        // one stays unset: the inspector and the live check ask for it).
        for (const auto& spec : layer->attributes)
            if (!spec.required) n.attrs.set(spec.name, spec.defaultValue);
    }
    return n;
}

QHash<ItemId, QPointF> EditorDocument::computeLayout() const {
    std::unordered_map<std::string, int> index;
    index.reserve(m_content.nodes.size() * 2);
    for (size_t i = 0; i < m_content.nodes.size(); ++i)
        index.emplace(m_content.nodes[i].node.name, static_cast<int>(i));
    std::vector<std::vector<int>> inputs(m_content.nodes.size());
    for (size_t i = 0; i < m_content.nodes.size(); ++i)
        for (const auto& in : m_content.nodes[i].node.inputs)
            if (auto it = index.find(in); it != index.end()) inputs[i].push_back(it->second);
    auto pos = layeredLayout(inputs, m_layout);
    QHash<ItemId, QPointF> out;
    out.reserve(static_cast<qsizetype>(pos.size()));
    for (size_t i = 0; i < pos.size(); ++i) out.insert(m_content.nodes[i].id, pos[i]);
    return out;
}

QHash<ItemId, QPointF> EditorDocument::currentPositions(const QVector<ItemId>& ids) const {
    QHash<ItemId, QPointF> out;
    for (ItemId id : ids) {
        if (const auto* n = node(id))
            out.insert(id, n->pos);
        else if (const auto* c = comment(id))
            out.insert(id, c->rect.topLeft());
        else if (const auto* g = group(id))
            out.insert(id, g->pos);
    }
    return out;
}

// ---- raw mutators ---------------------------------------------------------------------------

void EditorDocument::applyContent(const DocumentContent& content) {
    const bool layers = engine::io::layerDefsToJson(content.layers) != engine::io::layerDefsToJson(m_content.layers);
    m_content = content;
    reindex();
    emit structureChanged();
    if (layers) emit layersChanged();
    emit changed();
}

void EditorDocument::applyPositions(const QHash<ItemId, QPointF>& positions) {
    QVector<ItemId> ids;
    for (auto it = positions.begin(); it != positions.end(); ++it) {
        if (auto idx = m_index.constFind(it.key()); idx != m_index.constEnd()) {
            m_content.nodes[static_cast<size_t>(*idx)].pos = it.value();
        } else {
            for (auto& c : m_content.comments)
                if (c.id == it.key()) c.rect.moveTopLeft(it.value());
            for (auto& g : m_content.groups)
                if (g.id == it.key()) g.pos = it.value();
        }
        ids.push_back(it.key());
    }
    emit positionsChanged(ids);
    emit changed();
}

void EditorDocument::applyNode(ItemId id, const engine::Node& n) {
    auto idx = m_index.constFind(id);
    if (idx == m_index.constEnd()) return;
    auto& slot = m_content.nodes[static_cast<size_t>(*idx)].node;
    const std::string oldName = slot.name;
    slot = n;
    if (oldName != n.name) {
        for (auto& other : m_content.nodes) {
            if (other.id == id) continue;
            for (auto& in : other.node.inputs)
                if (in == oldName) in = n.name;
            if (other.node.shareWeightsWith == oldName) other.node.shareWeightsWith = n.name;
        }
        for (auto& o : m_content.outputs)
            if (o == oldName) o = n.name;
    }
    emit nodeChanged(id);
    emit changed();
}

void EditorDocument::applyGroupCollapsed(ItemId id, bool collapsed, QPointF pos) {
    for (auto& g : m_content.groups)
        if (g.id == id) {
            g.collapsed = collapsed;
            g.pos = pos;
        }
    emit groupChanged(id);
    emit changed();
}

void EditorDocument::applyCommentText(ItemId id, const QString& text) {
    for (auto& c : m_content.comments)
        if (c.id == id) c.text = text;
    emit commentChanged(id);
    emit changed();
}

void EditorDocument::applySections(const json& data, const json& training) {
    m_base.data = data;
    m_base.training = training;
    emit sectionsChanged();
    emit changed();
}

// ---- edits ----------------------------------------------------------------------------------

void EditorDocument::setSections(const json& data, const json& training) {
    if (data == m_base.data && training == m_base.training) return;
    const QString text = data != m_base.data ? tr("Edit data settings") : tr("Edit training settings");
    m_undo->push(new SectionsCommand(this, text, m_base.data, m_base.training, data, training));
}

ItemId EditorDocument::addNode(const std::string& op, QPointF pos) {
    // A plugin operation from the palette ("example.GroupNorm") becomes a Plugin node naming it.
    if (engine::api::findPluginOp(op) && !engine::ops::findOp(op)) {
        DocumentContent after = m_content;
        engine::Node node = makeNode("Plugin", uniqueName(baseNameForOp(op.substr(op.find('.') + 1))));
        node.attrs.set(engine::ops::kPluginOpAttr, op);
        EditorNode n{allocateId(), std::move(node), pos};
        after.nodes.push_back(n);
        m_undo->push(
            new AddNodesCommand(this, tr("Add %1").arg(QString::fromStdString(op)), m_content, std::move(after)));
        return n.id;
    }
    if (!engine::ops::findOp(op)) {
        auto r = findLayer(op) ? addLayerNode(op, pos) : engine::Result<ItemId>(ItemId{0});
        return r.ok() ? r.value() : 0;
    }
    DocumentContent after = m_content;
    EditorNode n{allocateId(), makeNode(op), pos};
    after.nodes.push_back(n);
    m_undo->push(
        new AddNodesCommand(this, tr("Add %1").arg(QString::fromStdString(op)), m_content, std::move(after)));
    return n.id;
}

engine::Status EditorDocument::connectNodes(ItemId from, ItemId to, int port) {
    const auto* f = node(from);
    const auto* t = node(to);
    if (!f || !t) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    engine::Graph g;
    g.nodes.reserve(m_content.nodes.size());
    for (const auto& n : m_content.nodes) g.nodes.push_back(n.node);
    const engine::io::LayerLibrary layers = layerLibrary();
    KILN_TRY(checkConnection(g, f->node.name, t->node.name, port, &layers));
    DocumentContent after = m_content;
    auto& inputs = after.nodes[static_cast<size_t>(m_index.value(to))].node.inputs;
    if (port < 0 || port >= static_cast<int>(inputs.size()))
        inputs.push_back(f->node.name);
    else
        inputs[static_cast<size_t>(port)] = f->node.name;
    m_undo->push(new ConnectCommand(
        this,
        tr("Connect %1 to %2")
            .arg(QString::fromStdString(f->node.name), QString::fromStdString(t->node.name)),
        m_content, std::move(after)));
    return {};
}

void EditorDocument::disconnect(ItemId to, int port) {
    const auto* t = node(to);
    if (!t || port < 0 || port >= static_cast<int>(t->node.inputs.size())) return;
    DocumentContent after = m_content;
    auto& inputs = after.nodes[static_cast<size_t>(m_index.value(to))].node.inputs;
    inputs.erase(inputs.begin() + port);
    m_undo->push(new DisconnectCommand(this, tr("Disconnect %1").arg(QString::fromStdString(t->node.name)),
                                       m_content, std::move(after)));
}

void EditorDocument::removeItems(const QVector<ItemId>& nodeIds, const QVector<ItemId>& comments,
                                 const QVector<ItemId>& groups) {
    QSet<ItemId> gone(nodeIds.begin(), nodeIds.end());
    for (ItemId gid : groups)
        if (const auto* g = group(gid))
            for (ItemId m : g->nodes) gone.insert(m);
    std::unordered_set<std::string> goneNames;
    for (ItemId id : gone)
        if (const auto* n = node(id)) goneNames.insert(n->node.name);
    QSet<ItemId> goneComments(comments.begin(), comments.end());
    if (goneNames.empty() && goneComments.isEmpty() && groups.isEmpty()) return;
    DocumentContent after;
    for (const auto& n : m_content.nodes) {
        if (goneNames.count(n.node.name)) continue;
        EditorNode copy = n;
        auto& in = copy.node.inputs;
        in.erase(std::remove_if(in.begin(), in.end(),
                                [&](const std::string& s) { return goneNames.count(s) != 0; }),
                 in.end());
        if (goneNames.count(copy.node.shareWeightsWith)) copy.node.shareWeightsWith.clear();
        after.nodes.push_back(std::move(copy));
    }
    for (const auto& o : m_content.outputs)
        if (!goneNames.count(o)) after.outputs.push_back(o);
    for (const auto& g : m_content.groups) {
        if (groups.contains(g.id)) continue;
        EditorGroup copy = g;
        copy.nodes.removeIf([&](ItemId id) { return gone.contains(id); });
        if (!copy.nodes.isEmpty()) after.groups.push_back(copy);
    }
    for (const auto& c : m_content.comments)
        if (!goneComments.contains(c.id)) after.comments.push_back(c);
    int count = static_cast<int>(goneNames.size() + static_cast<size_t>(goneComments.size()));
    m_undo->push(
        new RemoveItemsCommand(this, tr("Delete %n item(s)", nullptr, count), m_content, std::move(after)));
}

void EditorDocument::moveNodes(const QHash<ItemId, QPointF>& newPositions, bool mergeable) {
    QHash<ItemId, QPointF> before = currentPositions(newPositions.keys().toVector());
    bool same = true;
    for (auto it = newPositions.begin(); it != newPositions.end() && same; ++it)
        same = before.value(it.key()) == it.value();
    if (same || before.isEmpty()) return;
    m_undo->push(new MoveCommand(this, tr("Move"), before, newPositions, mergeable));
}

void EditorDocument::alignNodes(const QHash<ItemId, QPointF>& newPositions) {
    QHash<ItemId, QPointF> before = currentPositions(newPositions.keys().toVector());
    if (before == newPositions || before.isEmpty()) return;
    m_undo->push(new AlignCommand(this, tr("Align"), before, newPositions, false));
}

engine::Status EditorDocument::pushNodeEdit(int kind, const QString& text, ItemId id, engine::Node after,
                                            const QString& mergeKey) {
    const auto* n = node(id);
    if (!n) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    engine::Node before = n->node;
    if (kind == AttributeEdit)
        m_undo->push(new SetAttributeCommand(this, text, id, std::move(before), std::move(after), mergeKey));
    else if (kind == RenameEdit)
        m_undo->push(new RenameNodeCommand(this, text, id, std::move(before), std::move(after), mergeKey));
    else
        m_undo->push(new SetNodeFlagsCommand(this, text, id, std::move(before), std::move(after), mergeKey));
    return {};
}

engine::Status EditorDocument::setAttribute(ItemId id, const std::string& attr,
                                            const engine::AttrValue& value) {
    const auto* n = node(id);
    if (!n) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    if (!engine::ops::findOp(n->node.op) && !findLayer(n->node.op))
        return refused(ErrorCode::UnknownOp,
                       tr("\"%1\" is not a known op.").arg(QString::fromStdString(n->node.op)));
    const auto specs = attributeSpecs(n->node);
    const engine::AttrSpec* spec = nullptr;
    for (const auto& s : specs)
        if (s.name == attr) spec = &s;
    if (!spec)
        return refused(ErrorCode::UnknownAttribute,
                       tr("%1 has no attribute \"%2\".")
                           .arg(QString::fromStdString(n->node.op), QString::fromStdString(attr)),
                       n->node.name);
    KILN_ASSIGN(engine::AttrValue coerced, engine::coerceAttr(*spec, value, n->node.name));
    auto cur = n->node.attrs.values().find(attr);
    if (cur != n->node.attrs.values().end() && cur->second == coerced) return {};
    engine::Node after = n->node;
    after.attrs.set(attr, coerced);
    return pushNodeEdit(AttributeEdit, tr("Change %1").arg(QString::fromStdString(attr)), id,
                        std::move(after), QStringLiteral("attr:") + QString::fromStdString(attr));
}

void EditorDocument::resetAttribute(ItemId id, const std::string& attr) {
    const auto* n = node(id);
    if (!n || !n->node.attrs.has(attr)) return;
    engine::Node after = n->node;
    engine::AttrMap attrs;
    for (const auto& [k, v] : n->node.attrs.values())
        if (k != attr) attrs.set(k, v);
    after.attrs = attrs;
    (void)pushNodeEdit(AttributeEdit, tr("Reset %1").arg(QString::fromStdString(attr)), id, std::move(after),
                       {});
}

engine::Status EditorDocument::renameNode(ItemId id, const std::string& newName) {
    const auto* n = node(id);
    if (!n) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    if (newName == n->node.name) return {};
    if (newName.empty()) return refused(ErrorCode::InvalidArgument, tr("A node needs a name."), n->node.name);
    for (char c : newName)
        if (c == '/' || c == '"' || static_cast<unsigned char>(c) <= ' ')
            return refused(
                ErrorCode::InvalidArgument,
                tr("A node name cannot contain spaces, quotes or \"/\" (it prefixes parameter names)."),
                n->node.name);
    if (nodeByName(newName))
        return refused(ErrorCode::DuplicateNode,
                       tr("Another node is already called \"%1\".").arg(QString::fromStdString(newName)),
                       n->node.name);
    engine::Node after = n->node;
    after.name = newName;
    return pushNodeEdit(RenameEdit, tr("Rename %1").arg(QString::fromStdString(n->node.name)), id,
                        std::move(after), {});
}

void EditorDocument::setTrainable(ItemId id, bool trainable) {
    const auto* n = node(id);
    if (!n || n->node.trainable == trainable) return;
    engine::Node after = n->node;
    after.trainable = trainable;
    (void)pushNodeEdit(FlagsEdit,
                       trainable ? tr("Unfreeze %1").arg(QString::fromStdString(n->node.name))
                                 : tr("Freeze %1").arg(QString::fromStdString(n->node.name)),
                       id, std::move(after), {});
}

engine::Status EditorDocument::setLrMultiplier(ItemId id, double multiplier) {
    const auto* n = node(id);
    if (!n) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    if (!std::isfinite(multiplier) || multiplier < 0)
        return refused(ErrorCode::BadAttribute,
                       tr("The learning-rate multiplier must be a number of at least 0."), n->node.name);
    if (n->node.lrMultiplier == multiplier) return {};
    engine::Node after = n->node;
    after.lrMultiplier = multiplier;
    return pushNodeEdit(FlagsEdit, tr("Change learning-rate multiplier"), id, std::move(after),
                        QStringLiteral("lr"));
}

int EditorDocument::freezeUpTo(ItemId id) {
    const auto* target = node(id);
    if (!target) return 0;
    // The node and its ancestors, found through the inputs by name.
    QSet<QString> upstream;
    std::vector<std::string> todo{target->node.name};
    while (!todo.empty()) {
        const std::string name = todo.back();
        todo.pop_back();
        if (upstream.contains(QString::fromStdString(name))) continue;
        upstream.insert(QString::fromStdString(name));
        if (const auto* n = nodeByName(name))
            for (const auto& in : n->node.inputs) todo.push_back(in);
    }
    DocumentContent after = m_content;
    bool changed = false;
    for (auto& n : after.nodes) {
        const bool trainable = !upstream.contains(QString::fromStdString(n.node.name));
        changed = changed || n.node.trainable != trainable;
        n.node.trainable = trainable;
    }
    const int frozen = static_cast<int>(upstream.size());
    if (changed)
        m_undo->push(new FreezeNodesCommand(this, tr("Freeze up to %1").arg(QString::fromStdString(target->node.name)),
                                            m_content, std::move(after)));
    return frozen;
}

engine::Result<QVector<ItemId>> EditorDocument::replaceHead(ItemId id, int64_t classes, double dropout) {
    const auto* target = node(id);
    if (!target) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    engine::api::HeadOptions options;
    options.classes = classes;
    options.dropout = dropout;
    KILN_ASSIGN(engine::api::HeadReplacement r, engine::api::replaceHead(project(), target->node.name, options));

    DocumentContent after = m_content;
    QSet<ItemId> removed;
    after.nodes.clear();
    for (const auto& n : m_content.nodes) {
        if (r.graph.find(n.node.name) >= 0) after.nodes.push_back(n);
        else removed.insert(n.id);
    }
    for (auto& g : after.groups) g.nodes.removeIf([&](ItemId n) { return removed.contains(n); });
    after.groups.removeIf([](const EditorGroup& g) { return g.nodes.isEmpty(); });
    // The new head hangs below the cut node, one card per layer.
    QVector<ItemId> ids;
    QPointF pos = target->pos;
    for (const auto& name : r.added) {
        EditorNode n;
        n.id = allocateId();
        n.node = *r.graph.node(name);
        pos.ry() += m_layout.nodeSize.height() + m_layout.layerGap;
        n.pos = pos;
        ids.push_back(n.id);
        after.nodes.push_back(std::move(n));
    }
    after.outputs = r.graph.outputs;
    m_undo->push(new ReplaceHeadCommand(this, tr("Replace head after %1").arg(QString::fromStdString(target->node.name)),
                                        m_content, std::move(after)));
    return ids;
}

void EditorDocument::unfreezeAll() {
    DocumentContent after = m_content;
    bool changed = false;
    for (auto& n : after.nodes) {
        changed = changed || !n.node.trainable;
        n.node.trainable = true;
    }
    if (changed) m_undo->push(new FreezeNodesCommand(this, tr("Unfreeze all nodes"), m_content, std::move(after)));
}

void EditorDocument::setLrMultipliers(const QHash<QString, double>& multipliers) {
    DocumentContent after = m_content;
    bool changed = false;
    for (auto& n : after.nodes) {
        const auto it = multipliers.constFind(QString::fromStdString(n.node.name));
        if (it == multipliers.constEnd() || !std::isfinite(*it) || *it < 0) continue;
        changed = changed || n.node.lrMultiplier != *it;
        n.node.lrMultiplier = *it;
    }
    if (changed)
        m_undo->push(new LrMultipliersCommand(this, tr("Set learning-rate multipliers"), m_content, std::move(after)));
}

engine::Status EditorDocument::setShareWeightsWith(ItemId id, const std::string& owner) {
    const auto* n = node(id);
    if (!n) return refused(ErrorCode::DanglingInput, tr("The node no longer exists."));
    if (owner == n->node.shareWeightsWith) return {};
    if (!owner.empty()) {
        const auto* o = nodeByName(owner);
        if (!o)
            return refused(ErrorCode::DanglingInput,
                           tr("There is no node called \"%1\".").arg(QString::fromStdString(owner)),
                           n->node.name);
        if (o->id == id)
            return refused(ErrorCode::BadAttribute, tr("A node cannot share weights with itself."),
                           n->node.name);
        if (o->node.op != n->node.op)
            return refused(ErrorCode::BadAttribute,
                           tr("Only nodes of the same op can share weights (%1 is a %2).")
                               .arg(QString::fromStdString(owner), QString::fromStdString(o->node.op)),
                           n->node.name);
        // Follow the owner's chain: it must not lead back here.
        std::string cur = o->node.shareWeightsWith;
        for (int guard = 0; !cur.empty() && guard < 100000; ++guard) {
            if (cur == n->node.name)
                return refused(ErrorCode::Cycle, tr("Sharing would make a loop of shared weights."),
                               n->node.name);
            const auto* next = nodeByName(cur);
            cur = next ? next->node.shareWeightsWith : std::string();
        }
    }
    engine::Node after = n->node;
    after.shareWeightsWith = owner;
    return pushNodeEdit(FlagsEdit, tr("Share weights"), id, std::move(after), {});
}

ItemId EditorDocument::groupNodes(const QVector<ItemId>& ids, const QString& name) {
    QVector<ItemId> members;
    for (ItemId id : ids)
        if (node(id) && !members.contains(id)) members.push_back(id);
    if (members.isEmpty()) return 0;
    DocumentContent after = m_content;
    // A node belongs to one group at most: it leaves its old one.
    for (auto& g : after.groups) g.nodes.removeIf([&](ItemId id) { return members.contains(id); });
    after.groups.removeIf([](const EditorGroup& g) { return g.nodes.isEmpty(); });
    EditorGroup g;
    g.id = allocateId();
    QString groupName = name;
    if (groupName.isEmpty()) {
        for (int k = 1;; ++k) {
            groupName = tr("block_%1").arg(k);
            bool taken = false;
            for (const auto& other : after.groups) taken = taken || other.name == groupName;
            if (!taken) break;
        }
    }
    g.name = groupName;
    g.nodes = members;
    QRectF box;
    for (ItemId id : members) box |= QRectF(node(id)->pos, QSizeF(1, 1));
    g.pos = box.topLeft();
    after.groups.push_back(g);
    m_undo->push(new GroupCommand(this, tr("Group %n node(s)", nullptr, static_cast<int>(members.size())),
                                  m_content, std::move(after)));
    return g.id;
}

void EditorDocument::ungroup(ItemId id) {
    if (!group(id)) return;
    DocumentContent after = m_content;
    after.groups.removeIf([id](const EditorGroup& g) { return g.id == id; });
    m_undo->push(new UngroupCommand(this, tr("Ungroup"), m_content, std::move(after)));
}

void EditorDocument::setGroupCollapsed(ItemId id, bool collapsed) {
    const auto* g = group(id);
    if (!g || g->collapsed == collapsed) return;
    QPointF pos = g->pos;
    if (collapsed) {
        // The box takes the place of its nodes' top-left corner.
        QRectF box;
        for (ItemId m : g->nodes)
            if (const auto* n = node(m)) box |= QRectF(n->pos, QSizeF(1, 1));
        pos = box.topLeft();
    }
    m_undo->push(
        new GroupStateCommand(this, collapsed ? tr("Collapse %1").arg(g->name) : tr("Expand %1").arg(g->name),
                              id, g->collapsed, g->pos, collapsed, pos));
}

ItemId EditorDocument::addComment(const QRectF& rect, const QString& text) {
    DocumentContent after = m_content;
    EditorComment c{allocateId(), rect, text};
    after.comments.push_back(c);
    m_undo->push(new AddCommentCommand(this, tr("Add comment"), m_content, std::move(after)));
    return c.id;
}

void EditorDocument::editComment(ItemId id, const QString& text) {
    const auto* c = comment(id);
    if (!c || c->text == text) return;
    m_undo->push(new CommentTextCommand(this, id, c->text, text));
}

void EditorDocument::autoLayout() {
    auto after = computeLayout();
    QVector<ItemId> ids;
    for (const auto& n : m_content.nodes) ids.push_back(n.id);
    auto before = currentPositions(ids);
    if (before == after) return;
    m_undo->push(new AutoLayoutCommand(this, tr("Auto layout"), before, after, false));
}

QByteArray EditorDocument::copyNodes(const QVector<ItemId>& ids) const {
    engine::io::Project p;
    json positions = json::object();
    for (const auto& n : m_content.nodes) {
        if (!ids.contains(n.id)) continue;
        p.graph.nodes.push_back(n.node);
        positions[n.node.name] = pointToJson(n.pos);
    }
    if (p.graph.nodes.empty()) return {};
    // Instances of project layers carry their definitions, so they paste into other projects.
    for (const auto& n : p.graph.nodes)
        for (auto& def : layerWithDependencies(n.op))
            if (std::none_of(p.layers.begin(), p.layers.end(), [&](const auto& d) { return d.name == def.name; }))
                p.layers.push_back(std::move(def));
    p.layout = {{"nodes", positions}};
    return QByteArray::fromStdString(engine::io::serializeProject(p));
}

QVector<ItemId> EditorDocument::pasteNodes(const QByteArray& data, QPointF offset) {
    auto parsed = engine::io::parseProject(data.toStdString(), {});
    if (!parsed.ok()) return {};
    const auto& src = parsed.value();
    std::unordered_map<std::string, std::string> rename;
    std::vector<std::string> reserved;
    for (const auto& n : src.graph.nodes) {
        std::string name = uniqueName(n.name, reserved);
        reserved.push_back(name);
        rename[n.name] = name;
    }
    const json* positions = src.layout.contains("nodes") ? &src.layout["nodes"] : nullptr;
    DocumentContent after = m_content;
    // Layer definitions the project lacks come along; where it has one of the same name, its
    // own stays.
    for (const auto& def : src.layers)
        if (std::none_of(after.layers.begin(), after.layers.end(), [&](const auto& d) { return d.name == def.name; }))
            after.layers.push_back(def);
    QVector<ItemId> ids;
    int k = 0;
    for (const auto& n : src.graph.nodes) {
        EditorNode en;
        en.id = allocateId();
        en.node = n;
        en.node.name = rename[n.name];
        en.node.inputs.clear();
        for (const auto& in : n.inputs) {
            if (auto it = rename.find(in); it != rename.end())
                en.node.inputs.push_back(it->second);
            else if (nodeByName(in))
                en.node.inputs.push_back(in);
        }
        if (auto it = rename.find(n.shareWeightsWith); it != rename.end())
            en.node.shareWeightsWith = it->second;
        else if (!nodeByName(n.shareWeightsWith))
            en.node.shareWeightsWith.clear();
        std::optional<QPointF> p;
        if (positions && positions->contains(n.name)) p = pointFromJson((*positions)[n.name]);
        en.pos = (p ? *p : QPointF(k * 24.0, k * 24.0)) + offset;
        ++k;
        ids.push_back(en.id);
        after.nodes.push_back(std::move(en));
    }
    if (ids.isEmpty()) return {};
    m_undo->push(new PasteCommand(this, tr("Paste %n node(s)", nullptr, static_cast<int>(ids.size())),
                                  m_content, std::move(after)));
    return ids;
}

QVector<ItemId> EditorDocument::duplicateNodes(const QVector<ItemId>& ids) {
    return pasteNodes(copyNodes(ids), QPointF(40, 40));
}

// ---- composite layers -------------------------------------------------------------------------

const engine::io::LayerDef* EditorDocument::findLayer(const std::string& op) const {
    if (engine::ops::findOp(op)) return nullptr;
    for (const auto& d : m_content.layers)
        if (d.name == op) return &d;
    return engine::io::bundledLayers().find(op);
}

engine::io::LayerLibrary EditorDocument::layerLibrary() const {
    return engine::io::layerLibrary(m_content.layers);
}

std::vector<engine::AttrSpec> EditorDocument::attributeSpecs(const std::string& op) const {
    if (const auto* def = engine::ops::findOp(op)) return def->attrs;
    if (const auto* layer = findLayer(op)) return layer->attributes;
    return {};
}

std::vector<engine::AttrSpec> EditorDocument::attributeSpecs(const engine::Node& node) const {
    auto specs = attributeSpecs(node.op);
    if (node.op == engine::ops::opDef(engine::ops::OpKind::Plugin).name)
        if (const auto* op = engine::ops::pluginOpOf(node)) specs.insert(specs.end(), op->attrs.begin(), op->attrs.end());
    return specs;
}

QString EditorDocument::opDoc(const engine::Node& node) const {
    if (node.op == engine::ops::opDef(engine::ops::OpKind::Plugin).name) {
        const auto* op = engine::ops::pluginOpOf(node);
        const QString name = QString::fromStdString(engine::ops::pluginOpName(node));
        if (!op) return tr("Plugin operation %1, whose plugin is not loaded").arg(name);
        return tr("Plugin operation %1: %2").arg(name, QString::fromUtf8(op->desc->doc ? op->desc->doc : ""));
    }
    return opDoc(node.op);
}

QString EditorDocument::opDoc(const std::string& op) const {
    if (const auto* def = engine::ops::findOp(op)) return QString::fromUtf8(def->doc.data(), static_cast<int>(def->doc.size()));
    if (const auto* layer = findLayer(op))
        return layer->doc.empty() ? tr("Composite layer of %n node(s)", nullptr, static_cast<int>(layer->nodes.size()))
                                  : QString::fromStdString(layer->doc);
    return {};
}

engine::Status EditorDocument::checkLayerName(const std::string& name) const {
    const QString q = QString::fromStdString(name);
    if (name.empty()) return refused(ErrorCode::InvalidArgument, tr("A layer needs a name."));
    static const QRegularExpression identifier(QStringLiteral("^[A-Za-z][A-Za-z0-9_]*$"));
    if (!identifier.match(q).hasMatch())
        return refused(ErrorCode::InvalidArgument,
                       tr("\"%1\" cannot name a layer: use letters, digits and \"_\", starting with a letter.").arg(q));
    if (engine::ops::findOp(name))
        return refused(ErrorCode::DuplicateNode, tr("\"%1\" is the name of a built-in op.").arg(q));
    for (const auto& d : m_content.layers)
        if (d.name == name)
            return refused(ErrorCode::DuplicateNode, tr("The project already has a layer called \"%1\".").arg(q));
    if (engine::io::bundledLayers().find(name))
        return refused(ErrorCode::DuplicateNode, tr("\"%1\" is the name of a layer of Kiln's library.").arg(q));
    return {};
}

engine::Result<SelectionInterface> EditorDocument::selectionInterface(const QVector<ItemId>& ids) const {
    std::unordered_set<std::string> inside;
    SelectionInterface out;
    for (const auto& n : m_content.nodes)
        if (ids.contains(n.id)) {
            inside.insert(n.node.name);
            out.nodes.push_back(n.id);
        }
    if (out.nodes.empty()) return refused(ErrorCode::InvalidArgument, tr("Select the nodes that should become the layer."));
    auto baseOf = [](const std::string& ref) { return ref.substr(0, ref.find(':')); };
    for (ItemId id : out.nodes) {
        const auto& n = node(id)->node;
        const QString name = QString::fromStdString(n.name);
        if (const auto* def = engine::ops::findOp(n.op); def && def->maxInputs == 0)
            return refused(ErrorCode::InvalidArgument,
                           tr("%1 \"%2\" takes no input and cannot go inside a layer: a layer gets its inputs from "
                              "the nodes that feed it.")
                               .arg(QString::fromStdString(n.op), name),
                           n.name);
        if (!n.shareWeightsWith.empty() && !inside.count(n.shareWeightsWith))
            return refused(ErrorCode::BadAttribute,
                           tr("\"%1\" shares weights with \"%2\", which is not selected: select both or neither.")
                               .arg(name, QString::fromStdString(n.shareWeightsWith)),
                           n.name);
        for (const auto& in : n.inputs)
            if (!inside.count(baseOf(in)) && std::find(out.inputs.begin(), out.inputs.end(), in) == out.inputs.end())
                out.inputs.push_back(in);
    }
    // Exits: what leaves the selection (a consumer outside it, a model output, or nothing at
    // all consuming it: the end of the graph).
    std::vector<std::string> exits;
    auto addExit = [&](const std::string& ref) {
        if (std::find(exits.begin(), exits.end(), ref) == exits.end()) exits.push_back(ref);
    };
    std::unordered_set<std::string> consumed;
    for (const auto& n : m_content.nodes) {
        for (const auto& in : n.node.inputs) {
            consumed.insert(baseOf(in));
            if (!inside.count(n.node.name) && inside.count(baseOf(in))) addExit(in);
        }
        if (!inside.count(n.node.name) && inside.count(n.node.shareWeightsWith))
            return refused(ErrorCode::BadAttribute,
                           tr("\"%1\" shares weights with \"%2\", which is selected: select both or neither.")
                               .arg(QString::fromStdString(n.node.name), QString::fromStdString(n.node.shareWeightsWith)),
                           n.node.name);
    }
    for (const auto& o : m_content.outputs)
        if (inside.count(baseOf(o))) addExit(o);
    for (ItemId id : out.nodes) {
        const auto& name = node(id)->node.name;
        if (!consumed.count(name)) addExit(name);
    }
    if (out.inputs.empty())
        return refused(ErrorCode::InvalidArgument,
                       tr("Nothing outside the selection feeds it: a layer needs at least one input. Leave the Input "
                          "nodes out of the selection."));
    if (exits.size() != 1) {
        QStringList names;
        for (const auto& e : exits) names << QString::fromStdString(e);
        return refused(ErrorCode::InvalidArgument,
                       tr("The selection has %n way(s) out (%1); a layer made on the canvas has exactly one output.",
                          nullptr, static_cast<int>(exits.size()))
                           .arg(names.join(QStringLiteral(", "))));
    }
    out.output = exits.front();
    return out;
}

std::vector<engine::io::LayerDef> EditorDocument::layerWithDependencies(const std::string& name) const {
    std::vector<engine::io::LayerDef> out;
    std::vector<std::string> todo{name};
    while (!todo.empty()) {
        std::string next = todo.back();
        todo.pop_back();
        bool done = false;
        for (const auto& d : out) done = done || d.name == next;
        if (done) continue;
        for (const auto& d : m_content.layers) {
            if (d.name != next) continue;
            out.push_back(d);
            for (const auto& ln : d.nodes)
                if (!engine::ops::findOp(ln.node.op)) todo.push_back(ln.node.op);
        }
    }
    return out;
}

engine::Result<ItemId> EditorDocument::addLayerNode(const std::string& layerName, QPointF pos,
                                                    const std::vector<engine::io::LayerDef>& definitions) {
    DocumentContent after = m_content;
    for (const auto& def : definitions) {
        auto same = std::find_if(after.layers.begin(), after.layers.end(), [&](const auto& d) { return d.name == def.name; });
        if (same == after.layers.end()) {
            after.layers.push_back(def);
        } else if (engine::io::layerDefsToJson({*same}) != engine::io::layerDefsToJson({def})) {
            return refused(ErrorCode::DuplicateNode,
                           tr("The project already has a different layer called \"%1\": rename one of them first.")
                               .arg(QString::fromStdString(def.name)));
        }
    }
    const engine::io::LayerDef* layer = nullptr;
    for (const auto& d : after.layers)
        if (d.name == layerName) layer = &d;
    if (!layer && !engine::ops::findOp(layerName)) layer = engine::io::bundledLayers().find(layerName);
    if (!layer)
        return refused(ErrorCode::UnknownOp, tr("There is no layer called \"%1\".").arg(QString::fromStdString(layerName)));
    if (!definitions.empty()) KILN_TRY(engine::io::checkLayers(engine::io::layerLibrary(after.layers)));
    EditorNode n;
    n.id = allocateId();
    n.node.op = layerName;
    n.node.name = uniqueName(baseNameForOp(layerName));
    for (const auto& spec : layer->attributes)
        if (!spec.required) n.node.attrs.set(spec.name, spec.defaultValue);
    n.pos = pos;
    after.nodes.push_back(n);
    m_undo->push(new AddNodesCommand(this, tr("Add %1").arg(QString::fromStdString(layerName)), m_content, std::move(after)));
    return n.id;
}

engine::Result<ItemId> EditorDocument::makeLayer(const QVector<ItemId>& ids, const std::string& name,
                                                 const std::vector<ExposedAttribute>& expose, const std::string& doc) {
    KILN_TRY(checkLayerName(name));
    KILN_ASSIGN(SelectionInterface iface, selectionInterface(ids));
    std::unordered_set<std::string> inside;
    for (ItemId id : iface.nodes) inside.insert(node(id)->node.name);

    engine::io::LayerDef def;
    def.name = name;
    def.doc = doc;
    // Port names: "x", or "x1", "x2", ...; never the name of a node of the layer.
    std::unordered_map<std::string, std::string> portOf;
    for (size_t k = 0; k < iface.inputs.size(); ++k) {
        std::string port = iface.inputs.size() == 1 ? std::string("x") : "x" + std::to_string(k + 1);
        while (inside.count(port)) port += "_in";
        def.inputs.push_back(port);
        portOf[iface.inputs[k]] = port;
    }
    def.outputs = {iface.output};

    // Exposed attributes: one layer attribute per name, its default the node's current value.
    std::unordered_map<std::string, engine::AttrValue> exposedValue;
    std::map<std::pair<ItemId, std::string>, std::string> refOf;
    static const QRegularExpression identifier(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    for (const auto& e : expose) {
        const EditorNode* n = node(e.node);
        if (!n || !inside.count(n->node.name)) continue;
        const QString as = QString::fromStdString(e.as);
        if (!identifier.match(as).hasMatch())
            return refused(ErrorCode::InvalidArgument,
                           tr("\"%1\" cannot name a layer attribute: use letters, digits and \"_\".").arg(as), n->node.name);
        const auto specs = attributeSpecs(n->node);
        auto spec = std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return s.name == e.attr; });
        if (spec == specs.end())
            return refused(ErrorCode::UnknownAttribute,
                           tr("%1 has no attribute \"%2\".").arg(QString::fromStdString(n->node.op), QString::fromStdString(e.attr)),
                           n->node.name);
        auto cur = n->node.attrs.values().find(e.attr);
        KILN_ASSIGN(engine::AttrValue value,
                    engine::coerceAttr(*spec, cur != n->node.attrs.values().end() ? cur->second : spec->defaultValue, n->node.name));
        if (auto known = exposedValue.find(e.as); known != exposedValue.end()) {
            const engine::AttrSpec* have = def.attribute(e.as);
            if (have->type != spec->type || known->second != value)
                return refused(ErrorCode::BadAttribute,
                               tr("The attributes exposed as \"%1\" have different types or values: expose them "
                                  "under different names.")
                                   .arg(as),
                               n->node.name);
        } else {
            engine::AttrSpec exposed = *spec;
            exposed.name = e.as;
            exposed.required = false;
            exposed.defaultValue = value;
            def.attributes.push_back(std::move(exposed));
            exposedValue.emplace(e.as, value);
        }
        refOf[{e.node, e.attr}] = e.as;
    }
    for (ItemId id : iface.nodes) {
        engine::io::LayerNode ln;
        ln.node = node(id)->node;
        for (auto& in : ln.node.inputs)
            if (auto it = portOf.find(in); it != portOf.end()) in = it->second;
        engine::AttrMap kept;
        for (const auto& [k, v] : ln.node.attrs.values()) {
            if (auto r = refOf.find({id, k}); r != refOf.end())
                continue;
            kept.set(k, v);
        }
        for (const auto& [key, as] : refOf)
            if (key.first == id) ln.attrRefs[key.second] = as;
        ln.node.attrs = kept;
        def.nodes.push_back(std::move(ln));
    }
    // The definition as a file would hold it must read back and fit with the other layers.
    auto reread = engine::io::parseLayerDefs(engine::io::layerDefsToJson({def}), {}, "layers");
    if (!reread.ok()) return std::move(reread.error());
    std::vector<engine::io::LayerDef> layers = m_content.layers;
    layers.push_back(def);
    KILN_TRY(engine::io::checkLayers(engine::io::layerLibrary(layers)));

    EditorNode instance;
    instance.id = allocateId();
    instance.node.op = name;
    instance.node.inputs = iface.inputs;
    {
        // The selected names go away: the instance may take the first one's place.
        std::string base = baseNameForOp(name);
        std::unordered_set<std::string> used;
        for (const auto& n : m_content.nodes)
            if (!inside.count(n.node.name)) used.insert(n.node.name);
        std::string candidate = base;
        for (int k = 1; used.count(candidate); ++k) candidate = base + "_" + std::to_string(k);
        instance.node.name = candidate;
    }
    for (const auto& spec : def.attributes) instance.node.attrs.set(spec.name, spec.defaultValue);
    QRectF box;
    for (ItemId id : iface.nodes) box |= QRectF(node(id)->pos, QSizeF(1, 1));
    instance.pos = box.topLeft();

    DocumentContent after;
    after.layers = std::move(layers);
    after.comments = m_content.comments;
    bool placed = false;
    for (const auto& n : m_content.nodes) {
        if (inside.count(n.node.name)) {
            if (!placed) after.nodes.push_back(instance);
            placed = true;
            continue;
        }
        EditorNode copy = n;
        for (auto& in : copy.node.inputs)
            if (in == iface.output) in = instance.node.name;
        after.nodes.push_back(std::move(copy));
    }
    for (const auto& o : m_content.outputs) after.outputs.push_back(o == iface.output ? instance.node.name : o);
    for (const auto& g : m_content.groups) {
        EditorGroup copy = g;
        copy.nodes.removeIf([&](ItemId id) { return iface.nodes.end() != std::find(iface.nodes.begin(), iface.nodes.end(), id); });
        if (!copy.nodes.isEmpty()) after.groups.push_back(copy);
    }
    m_undo->push(new MakeLayerCommand(this, tr("Make layer %1").arg(QString::fromStdString(name)), m_content, std::move(after)));
    return instance.id;
}

engine::Result<engine::io::Project> EditorDocument::layerInside(const std::string& name,
                                                                const std::vector<std::vector<int64_t>>& portShapes) const {
    const engine::io::LayerDef* def = nullptr;
    for (const auto& d : m_content.layers)
        if (d.name == name) def = &d;
    if (!def)
        return refused(ErrorCode::UnknownOp,
                       engine::io::bundledLayers().find(name)
                           ? tr("%1 is a built-in layer: its inside cannot be changed. Make a layer of your own from "
                                "its nodes instead.")
                                 .arg(QString::fromStdString(name))
                           : tr("%1 is not a layer of this project.").arg(QString::fromStdString(name)));
    engine::io::Project p;
    p.name = name;
    for (size_t k = 0; k < def->inputs.size(); ++k) {
        engine::Node in;
        in.name = def->inputs[k];
        in.op = "Input";
        in.attrs.set("shape", k < portShapes.size() && !portShapes[k].empty() ? portShapes[k] : std::vector<int64_t>{1});
        p.graph.nodes.push_back(std::move(in));
    }
    for (const auto& ln : def->nodes) {
        engine::Node n = ln.node;
        for (const auto& [attr, ref] : ln.attrRefs)
            if (const auto* spec = def->attribute(ref); spec && !spec->required) n.attrs.set(attr, spec->defaultValue);
        p.graph.nodes.push_back(std::move(n));
    }
    p.graph.outputs = def->outputs;
    return p;
}

engine::Status EditorDocument::applyLayerInside(const std::string& name, const engine::io::Project& inside) {
    auto old = std::find_if(m_content.layers.begin(), m_content.layers.end(), [&](const auto& d) { return d.name == name; });
    if (old == m_content.layers.end())
        return refused(ErrorCode::UnknownOp, tr("%1 is not a layer of this project.").arg(QString::fromStdString(name)));
    engine::io::LayerDef def;
    def.name = old->name;
    def.doc = old->doc;
    def.inputs = old->inputs;
    def.outputs = old->outputs;
    def.attributes = old->attributes;
    std::unordered_set<std::string> ports(old->inputs.begin(), old->inputs.end()), present;
    for (const auto& n : inside.graph.nodes) {
        present.insert(n.name);
        const auto* op = engine::ops::findOp(n.op);
        const bool isInput = op && op->maxInputs == 0;
        if (ports.count(n.name)) {
            if (!isInput)
                return refused(ErrorCode::InvalidArgument,
                               tr("\"%1\" is an input of the layer and must stay an Input node.").arg(QString::fromStdString(n.name)),
                               n.name);
            continue;
        }
        if (isInput)
            return refused(ErrorCode::InvalidArgument,
                           tr("%1 \"%2\" cannot go inside a layer: a layer gets its inputs through its ports (%3).")
                               .arg(QString::fromStdString(n.op), QString::fromStdString(n.name),
                                    QString::fromStdString([&] {
                                        std::string list;
                                        for (const auto& p : old->inputs) list += (list.empty() ? "" : ", ") + p;
                                        return list;
                                    }())),
                           n.name);
        engine::io::LayerNode ln;
        ln.node = n;
        // Exposed attributes stay exposed; a value set inside becomes the attribute's default.
        for (const auto& oldNode : old->nodes) {
            if (oldNode.node.name != n.name) continue;
            engine::AttrMap kept;
            for (const auto& [k, v] : n.attrs.values()) {
                auto ref = oldNode.attrRefs.find(k);
                if (ref == oldNode.attrRefs.end()) {
                    kept.set(k, v);
                    continue;
                }
                for (auto& spec : def.attributes)
                    if (spec.name == ref->second) {
                        KILN_ASSIGN(spec.defaultValue, engine::coerceAttr(spec, v, n.name));
                        spec.required = false;
                    }
            }
            ln.node.attrs = kept;
            ln.attrRefs = oldNode.attrRefs;
        }
        def.nodes.push_back(std::move(ln));
    }
    for (const auto& p : old->inputs)
        if (!present.count(p))
            return refused(ErrorCode::InvalidArgument,
                           tr("The layer's input \"%1\" was removed or renamed; a layer keeps its inputs.")
                               .arg(QString::fromStdString(p)));
    for (const auto& o : old->outputs)
        if (!present.count(o.substr(0, o.find(':'))) || ports.count(o))
            return refused(ErrorCode::InvalidArgument,
                           tr("The layer's output \"%1\" was removed or renamed; a layer keeps its outputs.")
                               .arg(QString::fromStdString(o)));
    auto reread = engine::io::parseLayerDefs(engine::io::layerDefsToJson({def}), {}, "layers");
    if (!reread.ok()) return std::move(reread.error());
    DocumentContent after = m_content;
    for (auto& d : after.layers)
        if (d.name == name) d = def;
    KILN_TRY(engine::io::checkLayers(engine::io::layerLibrary(after.layers)));
    if (engine::io::layerDefsToJson({def}) == engine::io::layerDefsToJson({*old})) return {};
    m_undo->push(new EditLayerCommand(this, tr("Edit layer %1").arg(QString::fromStdString(name)), m_content, std::move(after)));
    return {};
}

}  // namespace kiln::ui
