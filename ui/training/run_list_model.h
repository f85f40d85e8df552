// SPDX-License-Identifier: Apache-2.0
// The runs of a project's run history as a table: name (editable), status, created, epochs, final
// loss and validation loss. Renaming writes through to the run store.
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "engine/api/run_history.h"

namespace kiln::ui::training {

class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Status, Created, Epochs, Loss, ValLoss, ColumnCount };
    enum Role { RunIdRole = Qt::UserRole + 1, SortRole };

    explicit RunListModel(QObject* parent = nullptr);
    ~RunListModel() override;

    // Opens (or creates) the store; empty path closes it. False with `error` naming the file.
    bool open(const QString& storePath, QString* error = nullptr);
    QString storePath() const { return m_path; }
    engine::api::RunHistory* history() const { return m_history.get(); }
    void refresh();

    const engine::api::RunInfo* runAt(int row) const;
    int rowOf(qint64 runId) const;
    bool removeRun(qint64 runId, QString* error = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QString statusText(engine::api::RunStatus status);

private:
    QString m_path;
    std::unique_ptr<engine::api::RunHistory> m_history;
    std::vector<engine::api::RunInfo> m_runs;
};

}  // namespace kiln::ui::training
