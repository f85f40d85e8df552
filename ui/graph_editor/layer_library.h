// SPDX-License-Identifier: Apache-2.0
// The user's layer library: composite layers saved from any project to
// <AppDataLocation>/layers/<Name>.json, listed in every project's palette and copied into a
// project when used. Also the palette's drag payload for a layer.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QPointF>
#include <QStringList>
#include <QVector>

#include <vector>

#include "engine/core/error.h"
#include "engine/io/layers.h"
#include "ui/graph_editor/editor_document.h"

namespace kiln::ui {

// The version written into library files; files of a later version are refused with a message.
constexpr int kLayerFileVersion = 1;

struct LibraryLayer {
    // The layer first, then the non-bundled layers it uses (copied into a project with it).
    std::vector<engine::io::LayerDef> definitions;
    QString file;
    const engine::io::LayerDef& layer() const { return definitions.front(); }
};

class UserLayerLibrary : public QObject {
    Q_OBJECT
public:
    // `dir` empty: <AppDataLocation>/layers.
    explicit UserLayerLibrary(const QString& dir = {}, QObject* parent = nullptr);
    static QString defaultDirectory();
    QString directory() const { return m_dir; }

    // Reads every *.json of the folder; files that cannot be read are skipped and named in
    // problems() (file, field and reason).
    void reload();
    const QVector<LibraryLayer>& layers() const { return m_layers; }
    const LibraryLayer* find(const QString& name) const;
    QStringList problems() const { return m_problems; }

    // Writes <Name>.json (atomically) holding `definitions` (the layer first, then the layers
    // it uses) and reloads. A layer of that name already in the library is replaced.
    engine::Status save(const std::vector<engine::io::LayerDef>& definitions);
    // Reads one library file.
    static engine::Result<LibraryLayer> readFile(const QString& path);

signals:
    void changed();

private:
    QString m_dir;
    QVector<LibraryLayer> m_layers;
    QStringList m_problems;
};

// The palette's drag payload for a layer: its name and the definitions to copy into the
// project (none for project and bundled layers).
QByteArray layerPayload(const std::string& name, const std::vector<engine::io::LayerDef>& definitions = {});
// Adds an instance from a payload at pos (one undo step); the error says why not.
engine::Result<ItemId> addLayerFromPayload(EditorDocument* document, const QByteArray& payload, QPointF pos);

}  // namespace kiln::ui
