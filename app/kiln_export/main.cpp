// SPDX-License-Identifier: Apache-2.0
// kiln-export: writes a trained model into a model repository (<base>/<name>/<version>/ with
// ONNX, SavedModel and Kiln's own files) after checking that the exported ONNX model reproduces
// Kiln's outputs. Exit 0 on success, 2 on bad input (a node a requested format cannot express
// included), 1 on other failures (parity included).
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QLocale>
#include <QTranslator>

#include <cstdio>
#include <exception>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "app/kiln_export/export_job.h"

namespace {
using namespace kiln;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

using app::printErr;
using app::printOut;

// The int8 report: the metric of both models on the compared split, the drop, the agreement of
// their predictions and the size saving.
void printQuantization(const app::QuantizationSummary& q) {
    const auto& r = q.report;
    const QString split = QString::fromStdString(r.split);
    for (const auto& f : q.files) {
        const auto& c = f.comparison;
        const QString file = QString::fromStdString(f.file);
        if (r.classification) {
            printOut(Cli::tr("Int8 %1: accuracy %2% (float %3%), drop %4 points, on %5 samples (%6 data)")
                         .arg(file)
                         .arg(100.0 * c.int8Metric, 0, 'f', 2)
                         .arg(100.0 * r.floatMetric, 0, 'f', 2)
                         .arg(100.0 * (r.floatMetric - c.int8Metric), 0, 'f', 2)
                         .arg(r.samples)
                         .arg(split));
            printOut(Cli::tr("Int8 %1: top-1 agreement with the float model %2%").arg(file).arg(100.0 * c.agreement, 0, 'f', 2));
        } else {
            printOut(Cli::tr("Int8 %1: mean squared error %2 (float %3) on %4 samples (%5 data)")
                         .arg(file)
                         .arg(c.int8Metric, 0, 'g', 4)
                         .arg(r.floatMetric, 0, 'g', 4)
                         .arg(r.samples)
                         .arg(split));
        }
        if (f.int8Io) {
            // The grids a caller converts with: q = round(x / scale) + zero_point.
            for (const auto* list : {&f.inputs, &f.outputs})
                for (const auto& e : *list)
                    printOut((list == &f.inputs ? Cli::tr("Int8 %1: input %2 is int8, scale %3, zero point %4")
                                                : Cli::tr("Int8 %1: output %2 is int8, scale %3, zero point %4"))
                                 .arg(file)
                                 .arg(QString::fromStdString(e.name))
                                 .arg(e.params.scale, 0, 'g', 6)
                                 .arg(e.params.zeroPoint));
        }
        const double ratio = f.floatBytes > 0 ? double(f.int8Bytes) / double(f.floatBytes) : 0.0;
        printOut(Cli::tr("Int8 %1: %2 bytes, %3 %4 bytes (%5% of the float size), calibrated on %6 training samples")
                     .arg(file)
                     .arg(f.int8Bytes)
                     .arg(QString::fromStdString(f.floatFile))
                     .arg(f.floatBytes)
                     .arg(100.0 * ratio, 0, 'f', 1)
                     .arg(r.calibrationSamples));
        if (r.percentile > 0.0)
            printOut(Cli::tr("Int8 %1: ranges clipped to the %2th percentile of |x|").arg(file).arg(r.percentile));
    }
}


}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-export"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Exports a trained Kiln model to a model repository (ONNX, TensorFlow SavedModel, TensorFlow Lite, Kiln)."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"), Cli::tr("The project file (*.kiln)."));
    QCommandLineOption weightsOpt(QStringLiteral("weights"), Cli::tr("Trained weights (a run's weights.safetensors)."), QStringLiteral("FILE"));
    QCommandLineOption baseOpt(QStringLiteral("base"), Cli::tr("Repository root; the model goes to BASE/NAME/VERSION."), QStringLiteral("DIR"));
    QCommandLineOption nameOpt(QStringLiteral("name"), Cli::tr("Model name (default: the project's name)."), QStringLiteral("NAME"));
    QCommandLineOption versionOpt(QStringLiteral("version-number"), Cli::tr("Version number (default: the highest existing + 1)."), QStringLiteral("N"));
    QCommandLineOption formatsOpt(QStringList{QStringLiteral("formats"), QStringLiteral("format")},
                                  Cli::tr("Comma-separated formats: onnx, savedmodel, kiln, tflite (TensorFlow Lite, float32)."),
                                  QStringLiteral("LIST"), QStringLiteral("onnx,savedmodel,kiln"));
    QCommandLineOption threadsOpt(QStringLiteral("threads"), Cli::tr("CPU threads (default: all cores)."), QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("Print the result as one JSON line."));
    QCommandLineOption quantizeOpt(QStringLiteral("quantize"),
                                   Cli::tr("none, or int8: also write model.int8.onnx (int8 QDQ) with the onnx format and model.int8.tflite (full integer, float inputs and outputs) with tflite, calibrated on training samples, and report their accuracy against the float model."),
                                   QStringLiteral("TYPE"), QStringLiteral("none"));
    QCommandLineOption calibrationOpt(QStringLiteral("calibration-samples"),
                                      Cli::tr("Training samples whose value ranges calibrate int8 quantisation (default: %1).")
                                          .arg(engine::api::kDefaultCalibrationSamples),
                                      QStringLiteral("N"), QString::number(engine::api::kDefaultCalibrationSamples));
    QCommandLineOption calibrationMethodOpt(QStringLiteral("calibration"),
                                            Cli::tr("How int8 ranges are calibrated: minmax (each value's smallest and largest value, the default) or percentile (clipped to the --calibration-percentile of |x|, so that rare outliers do not coarsen the grid)."),
                                            QStringLiteral("METHOD"), QStringLiteral("minmax"));
    QCommandLineOption percentileOpt(QStringLiteral("calibration-percentile"),
                                     Cli::tr("The percentile of |x| that bounds each range with --calibration percentile (50 to 100, default: %1).")
                                         .arg(engine::api::kDefaultCalibrationPercentile),
                                     QStringLiteral("P"), QString::number(engine::api::kDefaultCalibrationPercentile));
    QCommandLineOption int8IoOpt(QStringLiteral("int8-io"),
                                 Cli::tr("With --quantize int8 and the tflite format: model.int8.tflite takes and returns int8 tensors (their scales and zero points are in the file and in kiln-model.json) instead of float32."));
    parser.addOptions({weightsOpt, baseOpt, nameOpt, versionOpt, formatsOpt, threadsOpt, jsonOpt, quantizeOpt, calibrationOpt,
                       calibrationMethodOpt, percentileOpt, int8IoOpt});
    const QCommandLineOption pluginOpt = app::pluginOption();
    parser.addOption(pluginOpt);
    // "--version N" selects the model version; a bare "--version" prints the program's version.
    QStringList args = app.arguments();
    for (int k = 1; k + 1 < args.size(); ++k)
        if (args[k] == QLatin1String("--version") && !args[k + 1].startsWith(QLatin1Char('-'))) args[k] = QStringLiteral("--version-number");
    parser.process(args);
    if (int rc = app::loadPlugins(QStringLiteral("kiln-export"), parser.values(pluginOpt)); rc != 0) return rc;

    auto usage = [&](const QString& why) {
        printErr(QStringLiteral("kiln-export: ") + why);
        return 2;
    };
    if (parser.positionalArguments().size() != 1) return usage(Cli::tr("give exactly one project file"));
    if (!parser.isSet(weightsOpt)) return usage(Cli::tr("--weights is required"));
    if (!parser.isSet(baseOpt)) return usage(Cli::tr("--base is required"));
    app::ExportJobRequest req;
    req.project = parser.positionalArguments().first().toStdString();
    req.weights = parser.value(weightsOpt).toStdString();
    req.base = parser.value(baseOpt).toStdString();
    req.name = parser.value(nameOpt).toStdString();
    req.formats = parser.value(formatsOpt).toStdString();
    req.kilnVersion = KILN_VERSION;
    bool ok = true;
    if (parser.isSet(versionOpt)) {
        req.version = parser.value(versionOpt).toLongLong(&ok);
        if (!ok || req.version <= 0) return usage(Cli::tr("the version must be a positive whole number"));
    }
    req.threads = parser.value(threadsOpt).toInt(&ok);
    if (!ok || req.threads < 0) return usage(Cli::tr("--threads must be a whole number >= 0"));
    req.quantize = parser.value(quantizeOpt).toStdString();
    if (req.quantize != "none" && req.quantize != "int8")
        return usage(Cli::tr("--quantize must be none or int8"));
    req.calibrationSamples = parser.value(calibrationOpt).toLongLong(&ok);
    if (!ok || req.calibrationSamples <= 0) return usage(Cli::tr("--calibration-samples must be a positive whole number"));
    if (parser.isSet(calibrationOpt) && req.quantize == "none")
        return usage(Cli::tr("--calibration-samples needs --quantize int8"));
    const QString method = parser.value(calibrationMethodOpt);
    if (method != QLatin1String("minmax") && method != QLatin1String("percentile"))
        return usage(Cli::tr("--calibration must be minmax or percentile"));
    if ((parser.isSet(calibrationMethodOpt) || parser.isSet(percentileOpt)) && req.quantize == "none")
        return usage(Cli::tr("--calibration and --calibration-percentile need --quantize int8"));
    if (parser.isSet(percentileOpt) && method != QLatin1String("percentile"))
        return usage(Cli::tr("--calibration-percentile needs --calibration percentile"));
    if (method == QLatin1String("percentile")) {
        req.calibrationPercentile = parser.value(percentileOpt).toDouble(&ok);
        if (!ok || req.calibrationPercentile < 50.0 || req.calibrationPercentile > 100.0)
            return usage(Cli::tr("--calibration-percentile must be a number from 50 to 100"));
    }
    req.int8Io = parser.isSet(int8IoOpt);
    if (req.int8Io && req.quantize == "none") return usage(Cli::tr("--int8-io needs --quantize int8"));
    if (req.int8Io && req.formats.find("tflite") == std::string::npos) return usage(Cli::tr("--int8-io needs the tflite format"));

    try {
        auto result = app::runExportJob(req);
        if (!result.ok()) {
            printErr(QStringLiteral("kiln-export: ") + app::ErrorText::describe(result.error()));
            // A node the requested format has no operator for is a request this model cannot take.
            if (result.error().code == engine::ErrorCode::Unsupported && !result.error().node.empty()) return 2;
            return app::ErrorText::exitCode(result.error());
        }
        const auto& repo = result->repo;
        if (parser.isSet(jsonOpt)) {
            nlohmann::json j = {{"version_dir", repo.versionDir}, {"version", repo.version}, {"name", result->name},
                                {"files", repo.files}, {"parity_checked", repo.parityChecked},
                                {"warnings", repo.warnings}};
            if (repo.parityChecked)
                j["parity"] = {{"max_abs_diff", repo.parity.maxAbsDiff}, {"batch", repo.parity.batch},
                               {"source", result->paritySource}, {"passed", repo.parity.passed}};
            if (result->quantization) j["quantization"] = app::quantizationJson(*result->quantization);
            printOut(QString::fromStdString(j.dump()));
            return 0;
        }
        printOut(QString::fromStdString(repo.versionDir));
        if (repo.parityChecked) {
            printOut(Cli::tr("Parity: largest difference %1 over %2 samples (%3 data), within tolerance")
                         .arg(repo.parity.maxAbsDiff, 0, 'g', 3)
                         .arg(repo.parity.batch)
                         .arg(QString::fromStdString(result->paritySource)));
            if (!result->parityNote.empty())
                printOut(Cli::tr("Note: synthetic inputs were used because %1").arg(QString::fromStdString(result->parityNote)));
        } else {
            printOut(Cli::tr("Parity: not checked (ONNX was not exported)"));
        }
        if (result->quantization) printQuantization(*result->quantization);
        for (const auto& w : repo.warnings) printErr(Cli::tr("kiln-export: warning: %1").arg(QString::fromStdString(w)));
        return 0;
    } catch (const std::bad_alloc&) {
        printErr(Cli::tr("kiln-export: out of memory"));
        return 1;
    } catch (const std::exception& e) {
        printErr(Cli::tr("kiln-export: internal error: %1").arg(QString::fromUtf8(e.what())));
        return 1;
    }
}
