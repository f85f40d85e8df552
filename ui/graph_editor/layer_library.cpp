// SPDX-License-Identifier: Apache-2.0
// Reading and writing the user's layer library files, and the palette's layer payload.
#include "ui/graph_editor/layer_library.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "engine/core/json_checked.h"
#include "engine/io/project.h"

namespace kiln::ui {
namespace {

using engine::Error;
using engine::ErrorCode;
using nlohmann::json;

Error fileError(const QString& path, const std::string& field, const std::string& why) {
    Error e(ErrorCode::ConfigError, path.toStdString() + ": " + field + " " + why);
    e.withFile(path.toStdString()).with("field", field).with("reason", why);
    return e;
}

}  // namespace

UserLayerLibrary::UserLayerLibrary(const QString& dir, QObject* parent)
    : QObject(parent), m_dir(dir.isEmpty() ? defaultDirectory() : dir) {
    reload();
}

QString UserLayerLibrary::defaultDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/layers");
}

engine::Result<LibraryLayer> UserLayerLibrary::readFile(const QString& path) {
    auto doc = engine::readJsonFileChecked(path.toStdString());
    if (!doc.ok()) return std::move(doc.error());
    const json& j = doc.value();
    if (!j.is_object() || j.value("format", std::string()) != "kiln-layer")
        return fileError(path, "format", "must be \"kiln-layer\"");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() < 1)
        return fileError(path, "version", "must be a whole number of at least 1");
    if (j["version"].get<int64_t>() > kLayerFileVersion)
        return fileError(path, "version",
                         "is " + std::to_string(j["version"].get<int64_t>()) + ", written by a newer Kiln (this one reads up to " +
                             std::to_string(kLayerFileVersion) + ")");
    if (!j.contains("layers")) return fileError(path, "layers", "is missing");
    auto defs = engine::io::parseLayerDefs(j["layers"], path.toStdString(), "layers");
    if (!defs.ok()) return std::move(defs.error());
    if (defs.value().empty()) return fileError(path, "layers", "must hold at least one layer");
    // The layers of the file, with the bundled ones, must expand on their own.
    KILN_TRY(engine::io::checkLayers(engine::io::layerLibrary(defs.value())));
    LibraryLayer l;
    l.definitions = std::move(defs.value());
    l.file = path;
    return l;
}

void UserLayerLibrary::reload() {
    m_layers.clear();
    m_problems.clear();
    const QDir dir(m_dir);
    const auto files = dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QFileInfo& f : files) {
        auto r = readFile(f.absoluteFilePath());
        if (!r.ok()) {
            // Every problem names its file (and line, when the JSON itself is broken).
            const engine::Error& e = r.error();
            QString text = QString::fromStdString(e.message);
            const QString where = e.line > 0 ? QStringLiteral("%1:%2").arg(f.absoluteFilePath()).arg(e.line)
                                             : f.absoluteFilePath();
            if (!text.startsWith(f.absoluteFilePath())) text = where + QStringLiteral(": ") + text;
            m_problems << text;
            continue;
        }
        bool taken = false;
        for (const auto& have : m_layers) taken = taken || have.layer().name == r.value().layer().name;
        if (taken) {
            m_problems << tr("%1: the library already has a layer called \"%2\"; this file is not used.")
                              .arg(f.absoluteFilePath(), QString::fromStdString(r.value().layer().name));
            continue;
        }
        m_layers.push_back(std::move(r.value()));
    }
    emit changed();
}

const LibraryLayer* UserLayerLibrary::find(const QString& name) const {
    for (const auto& l : m_layers)
        if (QString::fromStdString(l.layer().name) == name) return &l;
    return nullptr;
}

engine::Status UserLayerLibrary::save(const std::vector<engine::io::LayerDef>& definitions) {
    if (definitions.empty()) return Error(ErrorCode::InvalidArgument, "no layer to save");
    const QString name = QString::fromStdString(definitions.front().name);
    if (!QDir().mkpath(m_dir))
        return Error(ErrorCode::FileWrite, "cannot create the folder " + m_dir.toStdString())
            .withFile(m_dir.toStdString())
            .with("path", m_dir.toStdString())
            .with("reason", "cannot create the folder");
    json j = {{"format", "kiln-layer"},
              {"version", kLayerFileVersion},
              {"layers", engine::io::layerDefsToJson(definitions)}};
    QString path = m_dir + QLatin1Char('/') + name + QStringLiteral(".json");
    // Another file may hold the layer under another file name: that one is replaced.
    if (const auto* old = find(name)) path = old->file;
    KILN_TRY(engine::io::writeFileAtomic(path.toStdString(), j.dump(2) + "\n"));
    reload();
    return {};
}

QByteArray layerPayload(const std::string& name, const std::vector<engine::io::LayerDef>& definitions) {
    json j = {{"layer", name}, {"definitions", engine::io::layerDefsToJson(definitions)}};
    return QByteArray::fromStdString(j.dump());
}

engine::Result<ItemId> addLayerFromPayload(EditorDocument* document, const QByteArray& payload, QPointF pos) {
    auto doc = engine::parseJsonChecked(payload.toStdString(), engine::JsonLimits{}, "layer");
    if (!doc.ok()) return std::move(doc.error());
    const json& j = doc.value();
    if (!j.is_object() || !j.contains("layer") || !j["layer"].is_string())
        return Error(ErrorCode::InvalidArgument, "the dropped data names no layer");
    std::vector<engine::io::LayerDef> defs;
    if (j.contains("definitions")) {
        auto parsed = engine::io::parseLayerDefs(j["definitions"], {}, "definitions");
        if (!parsed.ok()) return std::move(parsed.error());
        defs = std::move(parsed.value());
    }
    return document->addLayerNode(j["layer"].get<std::string>(), pos, defs);
}

}  // namespace kiln::ui
