// SPDX-License-Identifier: Apache-2.0
// Localized headlines for engine error codes.
#include "app/common/error_text.h"

#include <QDir>

namespace kiln::app {
using engine::ErrorCode;

namespace {

// True for a path inside the data cache (KILN_DATA, else ~/.cache/kiln/data), where the examples'
// data sets are expected once fetched.
bool inDataCache(const QString& path) {
    QString cache = qEnvironmentVariable("KILN_DATA");
    if (cache.isEmpty()) cache = QDir::homePath() + QStringLiteral("/.cache/kiln/data");
    return !path.isEmpty() && QDir::cleanPath(path).startsWith(QDir::cleanPath(cache) + QLatin1Char('/'));
}

}  // namespace

QString ErrorText::headline(const engine::Error& e) {
    const QString node = QString::fromStdString(e.node);
    const QString file = QString::fromStdString(e.file);
    switch (e.code) {
    case ErrorCode::Ok: return tr("No error");
    case ErrorCode::Internal: return tr("Internal error in Kiln");
    case ErrorCode::InvalidArgument: return tr("Invalid argument");
    case ErrorCode::FileNotFound: return tr("File not found: %1").arg(QString::fromStdString(e.param("path")).isEmpty() ? file : QString::fromStdString(e.param("path")));
    case ErrorCode::FileRead: return tr("Cannot read the file");
    case ErrorCode::FileWrite: return tr("Cannot write the file");
    case ErrorCode::ParseError: return tr("The file is not valid");
    case ErrorCode::UnsupportedFormat: return tr("Unsupported file format or version");
    case ErrorCode::UnknownOp: return tr("Node \"%1\" uses an unknown operation").arg(node);
    case ErrorCode::UnknownAttribute: return tr("Node \"%1\" has an unknown attribute").arg(node);
    case ErrorCode::BadAttribute: return tr("Node \"%1\" has an invalid attribute").arg(node);
    case ErrorCode::DuplicateNode: return tr("Two nodes are called \"%1\"").arg(node);
    case ErrorCode::DanglingInput: return tr("Node \"%1\" is connected to a node that does not exist").arg(node);
    case ErrorCode::Cycle: return tr("The graph contains a cycle at node \"%1\"").arg(node);
    case ErrorCode::ArityMismatch: return tr("Node \"%1\" has the wrong number of inputs").arg(node);
    case ErrorCode::ShapeMismatch: return node.isEmpty() ? tr("Shapes do not fit") : tr("Shapes do not fit at node \"%1\"").arg(node);
    case ErrorCode::WeightsMismatch: return tr("The weights file does not match the model");
    case ErrorCode::DataError: return tr("Problem in the data");
    case ErrorCode::ConfigError: return tr("Invalid setting %1").arg(QString::fromStdString(e.param("field")));
    case ErrorCode::Unsupported: return tr("Not supported");
    case ErrorCode::DeviceUnavailable: return tr("Device not available");
    case ErrorCode::OutOfMemory: {
        // Device allocations carry the numbers (bytes) and, from the memory assistant, a batch that fits.
        auto gib = [&](const char* key) {
            return QString::number(QString::fromStdString(e.param(key)).toDouble() / double(1ull << 30), 'f', 2);
        };
        if (e.param("cap").empty()) return tr("Out of memory");
        QString text = tr("Out of memory on %1: %2 GiB requested, %3 GiB in use, limit %4 GiB")
                           .arg(QString::fromStdString(e.param("device")), gib("requested"), gib("in_use"), gib("cap"));
        if (!e.param("predicted").empty())
            text += QLatin1String("; ") + tr("predicted peak %1 GiB for batch size %2")
                                             .arg(gib("predicted"), QString::fromStdString(e.param("batch")));
        if (!e.param("suggested_batch").empty())
            text += QLatin1String("; ") + tr("try batch size %1, or bf16 precision")
                                             .arg(QString::fromStdString(e.param("suggested_batch")));
        return text;
    }
    case ErrorCode::Cancelled: return tr("Cancelled");
    case ErrorCode::PluginError: return tr("Plugin problem");  // the detail names the library
    }
    return tr("Error");
}

QString ErrorText::describe(const engine::Error& e) {
    QString where;
    if (!e.file.empty()) {
        where = QString::fromStdString(e.file);
        if (e.line > 0) where += QLatin1Char(':') + QString::number(e.line);
        if (e.column > 0) where += QLatin1Char(':') + QString::number(e.column);
        where += QStringLiteral(": ");
    }
    QString text = where + headline(e) + QStringLiteral(": ") + QString::fromStdString(e.message);
    const QString missing = QString::fromStdString(e.param("path").empty() ? e.file : e.param("path"));
    if (e.code == ErrorCode::FileNotFound && inDataCache(missing))
        text += QLatin1Char(' ') + tr("The example data sets are fetched with kiln-fetch-data (tools/fetch_data.sh in a source tree).");
    return text;
}

int ErrorText::exitCode(const engine::Error& e) {
    switch (e.code) {
    case ErrorCode::Internal:
    case ErrorCode::FileWrite:
    case ErrorCode::OutOfMemory:
    case ErrorCode::Unsupported:
    case ErrorCode::Cancelled:
    case ErrorCode::Ok: return 1;
    default: return 2;
    }
}

QStringList WeightsText::describe(const engine::api::WeightsReport& r) {
    QStringList lines;
    lines << tr("Weights from %1: %2 tensor(s) loaded, %3 initialised (not in the file), %4 with another shape, "
                "%5 unused")
                 .arg(QString::fromStdString(r.file))
                 .arg(r.loaded.size())
                 .arg(r.initialised.size())
                 .arg(r.mismatched.size())
                 .arg(r.unused.size());
    for (const auto& m : r.mismatched)
        lines << tr("shape mismatch: %1 is %2 in the file, %3 in the model (initialised)")
                     .arg(QString::fromStdString(m.name), QString::fromStdString(m.fileShape),
                          QString::fromStdString(m.modelShape));
    for (const auto& n : r.initialised) lines << tr("new: %1 (initialised)").arg(QString::fromStdString(n));
    for (const auto& n : r.unused) lines << tr("unused: %1").arg(QString::fromStdString(n));
    return lines;
}

}  // namespace kiln::app
