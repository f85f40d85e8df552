// SPDX-License-Identifier: Apache-2.0
// kiln-import: turns an ONNX or Keras model into an editable Kiln project, its weights
// (safetensors, Kiln names "<node>/<param>") and an import report. Exit 0 on success, 2 when the
// model file cannot be read (the message names the file and the ONNX node, or the Keras config's
// JSON path or the HDF5 path), 1 on other failures (writing).
//
// Keras files are read with the HDF5 C library (legacy .h5, and the weights inside a .keras
// archive), which can crash or run for hours on some damaged files. So kiln-import reads them in
// a child process of itself (the same program and arguments, KILN_IMPORT_CHILD set) and waits at
// most --timeout seconds: a child that crashes or runs out of time ends the import with an error
// naming the file, exit 2.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QProcess>

#include <cstdio>
#include <exception>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "app/kiln_import/import_job.h"
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
const char* const kChildVariable = "KILN_IMPORT_CHILD";

// Runs this program again on the same arguments as a child and waits for it (at most `timeoutS`
// seconds, 0 without limit); its output goes straight to ours. Returns the exit status to end with.
int importInChild(const QString& model, int timeoutS) {
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QString::fromLatin1(kChildVariable), QStringLiteral("1"));
    child.setProcessEnvironment(env);
    child.start(QCoreApplication::applicationFilePath(), QCoreApplication::arguments().mid(1));
    if (!child.waitForStarted(60000)) {
        printErr(Cli::tr("kiln-import: could not start the process that reads %1: %2").arg(model, child.errorString()));
        return 1;
    }
    if (!child.waitForFinished(timeoutS > 0 ? timeoutS * 1000 : -1)) {
        child.kill();
        child.waitForFinished(30000);
        printErr(Cli::tr("kiln-import: %1: reading the model did not finish within %2 s; the file is probably damaged (the HDF5 library "
                         "does not stop on some damage). --timeout SECONDS sets the limit")
                     .arg(model, QString::number(timeoutS)));
        return 2;
    }
    if (child.exitStatus() == QProcess::CrashExit) {
        printErr(Cli::tr("kiln-import: %1: the HDF5 library crashed reading the model; the file is damaged").arg(model));
        return 2;
    }
    return child.exitCode();
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
    try {
        // A Keras file goes to a child process (see the top of this file); ONNX is read here.
        if (qEnvironmentVariableIsEmpty(kChildVariable)) {
            auto format = engine::io::detectModelFile(req.model);
            if (format.ok() && *format != engine::io::ModelFileFormat::Onnx) return importInChild(QString::fromStdString(req.model), timeoutS);
        }
        auto result = app::runImportJob(req);
        if (!result.ok()) {
            const engine::Error& e = result.error();
            printErr(QStringLiteral("kiln-import: ") + app::describeImportError(e));
            // Everything that goes wrong while reading concerns the model file: exit 2. Failing to
            // write the results is the machine's problem: exit 1.
            return app::importExitCode(e);
        }
        if (parser.isSet(jsonOpt)) {
            printOut(QString::fromStdString(result->report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
            return 0;
        }
        const auto& s = result->report["summary"];
        const bool keras = result->model.format == "keras";
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
                     .arg(QString::fromStdString(result->weightsPath)));
        printOut(Cli::tr("Project: %1").arg(QString::fromStdString(result->projectPath)));
        if (!result->headAdded.empty())
            printOut(Cli::tr("New head after %1: %2 (removed: %3)")
                         .arg(QString::fromStdString(result->report["head"]["cut_after"].get<std::string>()),
                              joined(result->headAdded),
                              result->headRemoved.empty() ? Cli::tr("nothing") : joined(result->headRemoved)));
        if (!result->reportPath.empty()) printOut(Cli::tr("Report: %1").arg(QString::fromStdString(result->reportPath)));
        for (const auto& p : result->report["placeholders"]) {
            const QString node = QString::fromStdString(p["kiln_node"].get<std::string>());
            if (keras)
                printOut(Cli::tr("Placeholder: %1 stands for the Keras layer %2, which Kiln cannot compute; replace it before training or export")
                             .arg(node, QString::fromStdString(p["keras_class"].get<std::string>())));
            else
                printOut(Cli::tr("Placeholder: %1 stands for the ONNX operation %2, which Kiln cannot compute; replace it before training or export")
                             .arg(node, QString::fromStdString(p["onnx_op"].get<std::string>())));
        }
        return 0;
    } catch (const std::bad_alloc&) {
        printErr(Cli::tr("kiln-import: out of memory"));
        return 1;
    } catch (const std::exception& e) {
        printErr(Cli::tr("kiln-import: internal error: %1").arg(QString::fromUtf8(e.what())));
        return 1;
    }
}
