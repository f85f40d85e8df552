// SPDX-License-Identifier: Apache-2.0
// kiln-import: turns an ONNX or Keras model into an editable Kiln project, its weights
// (safetensors, Kiln names "<node>/<param>") and an import report. Exit 0 on success, 2 when the
// model file cannot be read (the message names the file and the ONNX node, or the Keras config's
// JSON path or the HDF5 path), 1 on other failures (writing).
//
// Keras files are read with the HDF5 C library (legacy .h5, and the weights inside a .keras
// archive), which can crash or run for hours on some damaged files. So kiln-import reads them in
// a child process of itself (app::ImportProcess: the same program, KILN_IMPORT_CHILD set, which
// hands its result back as one JSON line) and waits at most --timeout seconds: a child that
// crashes or runs out of time ends the import with an error naming the file, exit 2. The studio's
// File > Import Model runs this program the same way.
#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>
#include <exception>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "app/kiln_import/import_job.h"
#include "app/kiln_import/import_process.h"
#include "engine/io/keras_import.h"

namespace {
using namespace kiln;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

QString joined(const std::vector<std::string>& names) {
    QStringList list;
    for (const auto& n : names) list << QString::fromStdString(n);
    return list.join(QStringLiteral(", "));
}

using app::printErr;
using app::printOut;

constexpr int kDefaultTimeoutS = 300;
constexpr int kMaxTimeoutS = 7 * 24 * 3600;

// What was imported, in the user's words (or the report as one JSON line with --json).
void printOutcome(const app::ImportOutcome& o, bool asJson) {
    if (asJson) {
        printOut(QString::fromStdString(o.report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
        return;
    }
    const auto& s = o.report["summary"];
    const bool keras = o.report.value("source_format", std::string()) == "keras";
    if (keras)
        printOut(Cli::tr("Imported %1 Keras layers as %2 Kiln nodes (%3 without computation in Kiln)")
                     .arg(s["keras_layers"].get<int64_t>())
                     .arg(s["kiln_nodes"].get<int64_t>())
                     .arg(s["pass_through"].get<int64_t>()));
    else
        printOut(Cli::tr("Imported %1 ONNX nodes as %2 Kiln nodes (%3 folded into others, %4 layout-only, %5 constants)")
                     .arg(s["onnx_nodes"].get<int64_t>())
                     .arg(s["kiln_nodes"].get<int64_t>())
                     .arg(s["folded"].get<int64_t>())
                     .arg(s["pass_through"].get<int64_t>())
                     .arg(s["constant"].get<int64_t>()));
    printOut(Cli::tr("Weights: %1 tensors, %2 values in %3")
                 .arg(s["weight_tensors"].get<int64_t>())
                 .arg(s["parameters"].get<int64_t>())
                 .arg(QString::fromStdString(o.weightsPath)));
    printOut(Cli::tr("Project: %1").arg(QString::fromStdString(o.projectPath)));
    if (!o.headAdded.empty())
        printOut(Cli::tr("New head after %1: %2 (removed: %3)")
                     .arg(QString::fromStdString(o.report["head"]["cut_after"].get<std::string>()), joined(o.headAdded),
                          o.headRemoved.empty() ? Cli::tr("nothing") : joined(o.headRemoved)));
    if (!o.reportPath.empty()) printOut(Cli::tr("Report: %1").arg(QString::fromStdString(o.reportPath)));
    for (const auto& p : o.report["placeholders"]) {
        const QString node = QString::fromStdString(p["kiln_node"].get<std::string>());
        if (keras)
            printOut(Cli::tr("Placeholder: %1 stands for the Keras layer %2, which Kiln cannot compute; replace it before training or export")
                         .arg(node, QString::fromStdString(p["keras_class"].get<std::string>())));
        else
            printOut(Cli::tr("Placeholder: %1 stands for the ONNX operation %2, which Kiln cannot compute; replace it before training or export")
                         .arg(node, QString::fromStdString(p["onnx_op"].get<std::string>())));
        QStringList kept;
        for (const auto& w : p["weight_tensors"]) kept << QString::fromStdString(w.get<std::string>());
        if (!kept.isEmpty()) printOut(Cli::tr("  its weights from the file are kept: %1").arg(kept.join(QStringLiteral(", "))));
    }
}

int reportImportError(const engine::Error& e) {
    QString text = QStringLiteral("kiln-import: ") + app::describeImportError(e);
    if (e.param("reason") == "timeout") text += QLatin1Char(' ') + Cli::tr("(--timeout SECONDS sets the limit)");
    printErr(text);
    // Everything that goes wrong while reading concerns the model file: exit 2. Failing to write
    // the results is the machine's problem: exit 1.
    return app::importExitCode(e);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-import"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Imports an ONNX or Keras model as an editable Kiln project with its weights."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"), Cli::tr("The model: ONNX (*.onnx), Keras 3 (*.keras) or legacy Keras (*.h5)."));
    QCommandLineOption outOpt(QStringList{QStringLiteral("o"), QStringLiteral("output")}, Cli::tr("The project file to write (*.kiln)."),
                              QStringLiteral("PROJECT"));
    QCommandLineOption weightsOpt(QStringLiteral("weights-out"), Cli::tr("Where to write the weights (default: the project's name with .safetensors)."),
                                  QStringLiteral("FILE"));
    QCommandLineOption reportOpt(QStringLiteral("report"), Cli::tr("Write the import report (JSON) to this file."), QStringLiteral("FILE"));
    QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("Print the import report as one JSON line."));
    QCommandLineOption headOpt(QStringLiteral("replace-head-after"),
                               Cli::tr("Cut the network after this node (a Kiln node, or the ONNX node or Keras layer it came from) "
                                       "and attach a new head: global average pooling, dropout and a softmax Dense layer."),
                               QStringLiteral("NODE"));
    QCommandLineOption classesOpt(QStringLiteral("classes"), Cli::tr("Classes of the new head (with --replace-head-after)."),
                                  QStringLiteral("N"));
    QCommandLineOption dropoutOpt(QStringLiteral("dropout"),
                                  Cli::tr("Dropout rate of the new head, at least 0 and below 1; 0 leaves the Dropout layer out (default 0.2)."),
                                  QStringLiteral("RATE"));
    QCommandLineOption timeoutOpt(QStringLiteral("timeout"),
                                  Cli::tr("Seconds a Keras model (read with the HDF5 library) may take before it counts as damaged "
                                          "(default %1; 0: no limit).")
                                      .arg(kDefaultTimeoutS),
                                  QStringLiteral("SECONDS"));
    parser.addOptions({outOpt, weightsOpt, reportOpt, jsonOpt, headOpt, classesOpt, dropoutOpt, timeoutOpt});
    // ONNX nodes of a loaded plugin operation's custom domain import as that operation.
    const QCommandLineOption pluginOpt = app::pluginOption();
    parser.addOption(pluginOpt);
    parser.process(app);
    if (int rc = app::loadPlugins(QStringLiteral("kiln-import"), parser.values(pluginOpt)); rc != 0) return rc;

    auto usage = [&](const QString& why) {
        printErr(QStringLiteral("kiln-import: ") + why);
        return 2;
    };
    if (parser.positionalArguments().size() != 1) return usage(Cli::tr("give exactly one model file"));
    if (!parser.isSet(outOpt)) return usage(Cli::tr("-o PROJECT is required"));

    app::ImportJobRequest req;
    req.model = parser.positionalArguments().first().toStdString();
    req.project = parser.value(outOpt).toStdString();
    req.weightsOut = parser.value(weightsOpt).toStdString();
    req.reportOut = parser.value(reportOpt).toStdString();
    if (parser.isSet(headOpt)) {
        req.replaceHeadAfter = parser.value(headOpt).toStdString();
        if (req.replaceHeadAfter.empty()) return usage(Cli::tr("--replace-head-after needs a node name"));
        if (!parser.isSet(classesOpt)) return usage(Cli::tr("--replace-head-after needs --classes N"));
        bool ok = false;
        req.classes = parser.value(classesOpt).toLongLong(&ok);
        if (!ok || req.classes < 1)
            return usage(Cli::tr("--classes must be a whole number of at least 1, not \"%1\"").arg(parser.value(classesOpt)));
        if (parser.isSet(dropoutOpt)) {
            req.dropout = parser.value(dropoutOpt).toDouble(&ok);
            if (!ok || !(req.dropout >= 0.0 && req.dropout < 1.0))
                return usage(Cli::tr("--dropout must be a number of at least 0 and below 1, not \"%1\"").arg(parser.value(dropoutOpt)));
        }
    } else if (parser.isSet(classesOpt) || parser.isSet(dropoutOpt)) {
        return usage(Cli::tr("--classes and --dropout describe the new head: give them with --replace-head-after NODE"));
    }
    int timeoutS = kDefaultTimeoutS;
    if (parser.isSet(timeoutOpt)) {
        bool ok = false;
        timeoutS = parser.value(timeoutOpt).toInt(&ok);
        if (!ok || timeoutS < 0 || timeoutS > kMaxTimeoutS)
            return usage(Cli::tr("--timeout must be a whole number of seconds from 0 to %1, not \"%2\"").arg(QString::number(kMaxTimeoutS), parser.value(timeoutOpt)));
    }
    const bool child = !qEnvironmentVariableIsEmpty(app::kImportChildVariable);
    try {
        if (child) {
            // The child of a kiln-import or of the studio: one result line on stdout, nothing else.
            const auto result = app::runImportJob(req);
            printOut(QString::fromStdString(app::childResultLine(result)));
            return result.ok() ? 0 : app::importExitCode(result.error());
        }
        // A Keras file goes to a child process (see the top of this file); ONNX is read here.
        auto format = engine::io::detectModelFile(req.model);
        if (format.ok() && *format != engine::io::ModelFileFormat::Onnx) {
            app::ImportProcess process;
            process.setProgram(QCoreApplication::applicationFilePath());
            QStringList plugins;
            for (const QString& p : parser.values(pluginOpt)) plugins << QStringLiteral("--plugin") << p;
            process.setExtraArguments(plugins);
            process.setForwardErrors(true);
            process.start(req, timeoutS);
            const auto& outcome = process.waitForResult();
            if (!outcome.ok()) return reportImportError(outcome.error());
            printOutcome(*outcome, parser.isSet(jsonOpt));
            return 0;
        }
        auto result = app::runImportJob(req);
        if (!result.ok()) return reportImportError(result.error());
        printOutcome(app::outcomeOf(*result), parser.isSet(jsonOpt));
        return 0;
    } catch (const std::bad_alloc&) {
        if (child) printOut(QString::fromStdString(app::childResultLine(engine::Error(engine::ErrorCode::OutOfMemory, "out of memory"))));
        printErr(Cli::tr("kiln-import: out of memory"));
        return 1;
    } catch (const std::exception& e) {
        if (child) printOut(QString::fromStdString(app::childResultLine(engine::Error(engine::ErrorCode::Internal, e.what()))));
        printErr(Cli::tr("kiln-import: internal error: %1").arg(QString::fromUtf8(e.what())));
        return 1;
    }
}
