// SPDX-License-Identifier: Apache-2.0
// RunListModel: the run history's rows for the runs list.
#include "ui/training/run_list_model.h"

#include <QDateTime>

#include <nlohmann/json.hpp>

#include "app/common/error_text.h"

namespace kiln::ui::training {

using engine::api::RunStatus;

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}
RunListModel::~RunListModel() = default;

bool RunListModel::open(const QString& storePath, QString* error)
{
    beginResetModel();
    m_runs.clear();
    m_history.reset();
    m_path = storePath;
    bool ok = true;
    if (!storePath.isEmpty()) {
        auto history = engine::api::RunHistory::open(storePath.toStdString());
        if (history.ok()) {
            m_history = std::move(history.value());
            if (auto runs = m_history->runs(); runs.ok()) {
                m_runs = std::move(runs.value());
            }
        } else {
            ok = false;
            if (error) {
                *error = app::ErrorText::describe(history.error());
            }
        }
    }
    endResetModel();
    return ok;
}

void RunListModel::refresh()
{
    if (!m_history) {
        return;
    }
    auto runs = m_history->runs();
    if (!runs.ok()) {
        return;
    }
    beginResetModel();
    m_runs = std::move(runs.value());
    endResetModel();
}

const engine::api::RunInfo* RunListModel::runAt(int row) const {
    return row >= 0 && row < int(m_runs.size()) ? &m_runs[size_t(row)] : nullptr;
}

int RunListModel::rowOf(qint64 runId) const
{
    for (size_t i = 0; i < m_runs.size(); ++i) {
        if (m_runs[i].id == runId) {
            return int(i);
        }
    }
    return -1;
}

bool RunListModel::removeRun(qint64 runId, QString* error)
{
    const int row = rowOf(runId);
    if (row < 0 || !m_history) {
        return false;
    }
    if (auto st = m_history->remove(runId); !st.ok()) {
        if (error) {
            *error = app::ErrorText::describe(st.error());
        }
        return false;
    }
    beginRemoveRows({}, row, row);
    m_runs.erase(m_runs.begin() + row);
    endRemoveRows();
    return true;
}

int RunListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_runs.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString RunListModel::statusText(RunStatus status)
{
    switch (status) {
    case RunStatus::Running:
        return tr("running");
    case RunStatus::Completed:
        return tr("completed");
    case RunStatus::Stopped:
        return tr("stopped");
    case RunStatus::Failed:
        return tr("failed");
    case RunStatus::Interrupted:
        return tr("interrupted");
    }
    return {};
}

namespace {

double resultValue(const std::string& resultsJson, const char* key)
{
    const auto j = nlohmann::json::parse(resultsJson, nullptr, false);
    if (j.is_object() && j.contains(key) && j[key].is_number()) {
        return j[key].get<double>();
    }
    return qQNaN();
}

}  // namespace

QVariant RunListModel::data(const QModelIndex& index, int role) const
{
    const auto* run = index.isValid() ? runAt(index.row()) : nullptr;
    if (!run) {
        return {};
    }
    if (role == RunIdRole) {
        return QVariant::fromValue<qint64>(run->id);
    }
    const double loss = index.column() == Loss ? resultValue(run->resultsJson, "train_loss")
                        : index.column() == ValLoss ? resultValue(run->resultsJson, "val_loss")
                                                    : 0.0;
    if (role == SortRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(run->name).toLower();
        case Status:
            return int(run->status);
        case Created:
            return QVariant::fromValue<qint64>(run->createdMs);
        case Epochs:
            return run->lastEpoch;
        default:
            return std::isnan(loss) ? 1e300 : loss;
        }
    }
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(run->name);
        case Status:
            return statusText(run->status);
        case Created:
            return QDateTime::fromMSecsSinceEpoch(run->createdMs).toString(QStringLiteral("yyyy-MM-dd hh:mm"));
        case Epochs:
            return run->lastEpoch;
        default:
            return std::isnan(loss) ? QVariant() : QVariant(QString::number(loss, 'f', 4));
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Name) {
        return QString::fromStdString(run->runDir);
    }
    return {};
}

bool RunListModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.column() != Name || role != Qt::EditRole || !m_history) {
        return false;
    }
    const QString name = value.toString().trimmed();
    if (name.isEmpty()) {
        return false;
    }
    auto& run = m_runs[size_t(index.row())];
    if (!m_history->rename(run.id, name.toStdString()).ok()) {
        return false;
    }
    run.name = name.toStdString();
    emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, SortRole});
    return true;
}

Qt::ItemFlags RunListModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Name) {
        f |= Qt::ItemIsEditable;
    }
    return f;
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Name:
        return tr("Name");
    case Status:
        return tr("Status");
    case Created:
        return tr("Created");
    case Epochs:
        return tr("Epochs");
    case Loss:
        return tr("Loss");
    case ValLoss:
        return tr("Validation loss");
    default:
        return {};
    }
}

}  // namespace kiln::ui::training
