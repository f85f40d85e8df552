// SPDX-License-Identifier: Apache-2.0
// kiln-eval: evaluates trained weights of a project on a split of its data (or other data in the
// project's format) with the training pipeline and forward pass, and prints the report: a text
// summary, or --json with every figure; --samples-csv writes the per-sample records; --explain
// writes Grad-CAM or saliency overlays of the split's samples as PNG files instead. The model's
// outputs are stored beside the weights, as the studio stores them, and read back when the same
// weights are evaluated on unchanged data (--no-cache runs the model anyway). Exit 0 on success,
// 2 on bad input (the message names the file, field or node), 1 on other failures.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QTranslator>

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "engine/api/evaluation.h"
#include "engine/api/evaluation_cache.h"
#include "engine/api/explanation.h"
#include "engine/io/project.h"

namespace {
using namespace kiln;
using namespace kiln::engine;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

using app::printErr;
using app::printOut;


int fail(const Error& e, const io::Project* project = nullptr) {
    return app::reportError(QStringLiteral("kiln-eval"), e, project);
}

QString num(double v, int decimals = 4) {
    return std::isfinite(v) ? QString::number(v, 'f', decimals) : Cli::tr("n/a");
}

QString pad(const QString& s, int width) { return s.rightJustified(width); }

// The loss and training.metrics over the split, one line ("" without metrics).
QStringList metricLines(const api::Predictions& p) {
    if (p.metrics.empty()) return {};
    QStringList parts;
    for (const auto& [name, value] : p.metrics) parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name), num(value, 6));
    return {Cli::tr("Loss: %1   Metrics: %2").arg(num(p.loss, 6), parts.join(QStringLiteral("   ")))};
}

QString classificationText(const api::ClassificationReport& r, const api::Predictions& p) {
    QStringList lines;
    lines << Cli::tr("Evaluated %1 samples of %2 with %3").arg(r.samples).arg(QString::fromStdString(p.split), QString::fromStdString(p.weightsPath));
    lines << Cli::tr("Accuracy: %1   Log loss: %2   Macro AUC: %3   Calibration error (ECE): %4")
                 .arg(num(r.accuracy), num(r.logLoss), num(r.macroAuc), num(r.expectedCalibrationError));
    lines << metricLines(p);
    int nameWidth = 12;
    for (const auto& n : r.classNames) nameWidth = std::max(nameWidth, int(QString::fromStdString(n).size()));
    lines << QString();
    lines << Cli::tr("Confusion matrix (rows: true class, columns: predicted):");
    int cell = 6;
    for (auto c : r.confusion) cell = std::max(cell, int(QString::number(c).size()) + 1);
    QString header = QString(nameWidth, QLatin1Char(' '));
    for (int64_t c = 0; c < r.numClasses; ++c) header += pad(QString::number(c), cell);
    lines << header;
    for (int64_t t = 0; t < r.numClasses; ++t) {
        QString row = QString::fromStdString(r.classNames[size_t(t)]).leftJustified(nameWidth).left(nameWidth);
        for (int64_t c = 0; c < r.numClasses; ++c) row += pad(QString::number(r.count(t, c)), cell);
        lines << row + QStringLiteral("   (%1)").arg(t);
    }
    lines << QString();
    lines << QString(nameWidth, QLatin1Char(' ')) + pad(Cli::tr("precision"), 11) + pad(Cli::tr("recall"), 9) + pad(Cli::tr("f1"), 9) +
                 pad(Cli::tr("support"), 9) + pad(Cli::tr("AUC"), 9) + pad(Cli::tr("AP"), 9);
    for (size_t c = 0; c < r.perClass.size(); ++c) {
        const auto& f = r.perClass[c];
        lines << QString::fromStdString(f.name).leftJustified(nameWidth).left(nameWidth) + pad(num(f.precision), 11) + pad(num(f.recall), 9) +
                     pad(num(f.f1), 9) + pad(QString::number(f.support), 9) + pad(num(r.roc[c].auc), 9) +
                     pad(num(r.pr[c].averagePrecision), 9);
    }
    lines << Cli::tr("macro avg").leftJustified(nameWidth).left(nameWidth) + pad(num(r.macro.precision), 11) + pad(num(r.macro.recall), 9) +
                 pad(num(r.macro.f1), 9) + pad(QString::number(r.macro.support), 9);
    lines << Cli::tr("weighted avg").leftJustified(nameWidth).left(nameWidth) + pad(num(r.weighted.precision), 11) +
                 pad(num(r.weighted.recall), 9) + pad(num(r.weighted.f1), 9) + pad(QString::number(r.weighted.support), 9);
    int wrong = 0;
    for (const auto& s : r.records) wrong += s.correct() ? 0 : 1;
    if (wrong > 0) {
        lines << QString();
        lines << Cli::tr("Most confidently wrong:");
        for (size_t i = 0; i < r.records.size() && i < 10 && !r.records[i].correct(); ++i) {
            const auto& s = r.records[i];
            lines << Cli::tr("  %1: true %2, predicted %3 with confidence %4 (%5)")
                         .arg(s.index)
                         .arg(QString::fromStdString(r.classNames[size_t(s.trueClass)]),
                              QString::fromStdString(r.classNames[size_t(s.predicted)]), num(s.confidence),
                              QString::fromStdString(s.source));
        }
    }
    return lines.join(QLatin1Char('\n'));
}

QString regressionText(const api::RegressionReport& r, const api::Predictions& p) {
    QStringList lines;
    lines << Cli::tr("Evaluated %1 samples of %2 with %3").arg(r.samples).arg(QString::fromStdString(p.split), QString::fromStdString(p.weightsPath));
    lines << Cli::tr("MAE: %1   MSE: %2   RMSE: %3   R2: %4").arg(num(r.mae, 6), num(r.mse, 6), num(r.rmse, 6), num(r.r2, 6));
    lines << metricLines(p);
    lines << Cli::tr("Largest errors:");
    for (size_t i = 0; i < r.records.size() && i < 10; ++i)
        lines << Cli::tr("  %1: squared error %2 (%3)").arg(r.records[i].index).arg(num(r.records[i].loss, 6), QString::fromStdString(r.records[i].source));
    return lines.join(QLatin1Char('\n'));
}

struct ExplainRequest {
    api::ExplainMethod method = api::ExplainMethod::GradCam;
    std::string layer;
    std::optional<int64_t> cls;
    QString dir;
    float opacity = 0.5f;
    int64_t limit = 0;  // 0: every sample
};

// Writes one overlay per sample, <dir>/<index>.png, and <dir>/overlays.csv listing them.
int explainSplit(const io::Project& project, const std::string& projectPath, const api::EvaluationOptions& options,
                 const ExplainRequest& request, bool json) {
    if (!QDir().mkpath(request.dir))
        return fail(Error(ErrorCode::FileWrite, "cannot create the overlay folder")
                        .withFile(request.dir.toStdString())
                        .with("path", request.dir.toStdString())
                        .with("reason", "cannot create the folder"));
    ThreadPool pool(options.threads);
    auto explainer = api::Explainer::create(project, options.weights, pool);
    if (!explainer.ok()) return fail(explainer.error(), &project);
    std::string csv = "index,source,true_class,predicted_class,explained_class,score,file\n";
    nlohmann::json records = nlohmann::json::array();
    const QDir dir(request.dir);
    int64_t written = 0;
    const auto& shape = (*explainer)->inputShape();
    Status st = api::forEachSample(project, projectPath, options, [&](const api::SampleInput& s) -> Result<bool> {
        KILN_ASSIGN(auto heat, (*explainer)->explain(s.data.data(), request.method, request.layer, request.cls));
        const auto picture = api::pictureRgb(s.data.data(), shape[1], shape[2], shape[3]);
        const QString name = QStringLiteral("%1.png").arg(s.index, 5, 10, QLatin1Char('0'));
        const std::string path = dir.filePath(name).toStdString();
        KILN_TRY(api::writePng(path, api::overlayRgb(picture, heat, request.opacity), shape[1], shape[2]));
        std::string source = s.source;
        std::replace(source.begin(), source.end(), '"', '\'');
        csv += std::to_string(s.index) + ",\"" + source + "\"," + std::to_string(s.label) + "," +
               std::to_string(heat.predictedClass) + "," + std::to_string(heat.explainedClass) + "," +
               std::to_string(heat.score) + "," + name.toStdString() + "\n";
        records.push_back({{"index", s.index}, {"source", s.source}, {"true_class", s.label},
                           {"predicted_class", heat.predictedClass}, {"explained_class", heat.explainedClass},
                           {"score", heat.score}, {"file", path}});
        ++written;
        return request.limit == 0 || written < request.limit;
    });
    if (!st.ok()) return fail(st.error(), &project);
    if (Status w = io::writeFileAtomic(dir.filePath(QStringLiteral("overlays.csv")).toStdString(), csv); !w.ok())
        return fail(w.error());
    if (json) printOut(QString::fromStdString(nlohmann::json{{"overlays", records}}.dump()));
    else printOut(Cli::tr("Wrote %n overlay(s) to %1", nullptr, int(written)).arg(QDir::toNativeSeparators(request.dir)));
    return 0;
}

// The model's outputs for `options`: the stored ones when these weights were evaluated on the same
// data and model before (and `useStored`), else computed and stored for next time. Which of the
// two is said on stderr, so that the report on stdout is the same either way. A key that cannot
// be made (missing weights) leaves the error to predict(), which names it.
engine::Result<api::Predictions> predictStored(const io::Project& project, const std::string& projectPath,
                                               const api::EvaluationOptions& options, bool useStored) {
    auto key = api::evaluationCacheKey(project, projectPath, options);
    if (key.ok() && useStored) {
        if (auto cached = api::loadCachedPredictions(*key)) {
            // As this run names them, not as the run that stored them.
            auto fresh = api::resolveWeights(options.weights);
            if (fresh.ok()) cached->predictions.weightsPath = *fresh;
            cached->predictions.split = options.split == "val" ? std::string("validation") : options.split;
            printErr(Cli::tr("kiln-eval: read the stored predictions of %1 from %2 (--no-cache evaluates again)")
                         .arg(QString::fromStdString(cached->created),
                              QDir::toNativeSeparators(QString::fromStdString(api::evaluationCachePath(*key)))));
            return std::move(cached->predictions);
        }
    }
    auto p = api::predict(project, projectPath, options);
    if (p.ok() && key.ok()) {
        if (Status st = api::storeCachedPredictions(*key, *p); st.ok())
            printErr(Cli::tr("kiln-eval: evaluated and stored the predictions in %1")
                         .arg(QDir::toNativeSeparators(QString::fromStdString(api::evaluationCachePath(*key)))));
        else
            printErr(Cli::tr("kiln-eval: the predictions could not be stored (the report is complete): %1")
                         .arg(app::ErrorText::describe(st.error())));
    }
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-eval"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Evaluates trained weights of a Kiln project on a split of its data."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"), Cli::tr("The project file (*.kiln)."));
    QCommandLineOption weightsOpt(QStringLiteral("weights"), Cli::tr("The weights (safetensors), or a run folder."), QStringLiteral("W"));
    QCommandLineOption splitOpt(QStringLiteral("split"),
                                Cli::tr("test, val, train, or a folder/file of other data in the project's format (default: test)."),
                                QStringLiteral("SPLIT"), QStringLiteral("test"));
    QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("Print the report as JSON."));
    QCommandLineOption csvOpt(QStringLiteral("samples-csv"), Cli::tr("Write every sample's record, most confidently wrong first, to this CSV file."),
                              QStringLiteral("FILE"));
    QCommandLineOption binsOpt(QStringLiteral("calibration-bins"), Cli::tr("Number of reliability bins (default: 10)."), QStringLiteral("N"),
                               QStringLiteral("10"));
    QCommandLineOption batchOpt(QStringLiteral("batch-size"), Cli::tr("Batch size (default: the project's)."), QStringLiteral("B"));
    QCommandLineOption threadsOpt(QStringLiteral("threads"), Cli::tr("CPU threads (default: all cores)."), QStringLiteral("N"));
    QCommandLineOption explainOpt(QStringLiteral("explain"),
                                  Cli::tr("Write explanation overlays instead of the report: gradcam or saliency."), QStringLiteral("METHOD"));
    QCommandLineOption layerOpt(QStringLiteral("layer"),
                                Cli::tr("Grad-CAM: the node whose activations are explained (default: the last convolution)."),
                                QStringLiteral("NODE"));
    QCommandLineOption classOpt(QStringLiteral("class"), Cli::tr("The class to explain (default: the predicted one)."), QStringLiteral("C"));
    QCommandLineOption overlaysOpt(QStringLiteral("overlays"), Cli::tr("The folder for the overlay pictures (with --explain)."),
                                   QStringLiteral("DIR"));
    QCommandLineOption opacityOpt(QStringLiteral("opacity"), Cli::tr("Opacity of the heat map over the picture, 0 to 1 (default: 0.5)."),
                                  QStringLiteral("A"), QStringLiteral("0.5"));
    QCommandLineOption maxSamplesOpt(QStringLiteral("max-samples"), Cli::tr("Explain at most this many samples (default: all)."),
                                     QStringLiteral("N"));
    QCommandLineOption noCacheOpt(QStringLiteral("no-cache"),
                                  Cli::tr("Run the model even when stored predictions of these weights and data exist (and store the new ones)."));
    parser.addOptions({weightsOpt, splitOpt, jsonOpt, csvOpt, binsOpt, batchOpt, threadsOpt, explainOpt, layerOpt, classOpt,
                       overlaysOpt, opacityOpt, maxSamplesOpt, noCacheOpt});
    const QCommandLineOption pluginOpt = app::pluginOption();
    parser.addOption(pluginOpt);
    parser.process(app);
    if (int rc = app::loadPlugins(QStringLiteral("kiln-eval"), parser.values(pluginOpt)); rc != 0) return rc;
    if (parser.positionalArguments().size() != 1) {
        printErr(Cli::tr("kiln-eval: give exactly one project file (see --help)."));
        return 2;
    }
    if (!parser.isSet(weightsOpt)) {
        printErr(Cli::tr("kiln-eval: --weights is required (a safetensors file or a run folder)."));
        return 2;
    }
    auto intOption = [&](const QCommandLineOption& o, int64_t minimum, int64_t& target) -> bool {
        bool ok = false;
        qlonglong v = parser.value(o).toLongLong(&ok);
        if (!ok || v < minimum) {
            printErr(Cli::tr("kiln-eval: --%1 needs an integer of at least %2, got \"%3\"").arg(o.names().first()).arg(minimum).arg(parser.value(o)));
            return false;
        }
        target = v;
        return true;
    };
    int64_t bins = 10, batch = 0, threads = 0;
    if (!intOption(binsOpt, 1, bins)) return 2;
    if (parser.isSet(batchOpt) && !intOption(batchOpt, 1, batch)) return 2;
    if (parser.isSet(threadsOpt) && !intOption(threadsOpt, 1, threads)) return 2;
    ExplainRequest explain;
    if (parser.isSet(explainOpt)) {
        const auto method = api::parseExplainMethod(parser.value(explainOpt).toStdString());
        if (!method) {
            printErr(Cli::tr("kiln-eval: --explain needs gradcam or saliency, got \"%1\"").arg(parser.value(explainOpt)));
            return 2;
        }
        explain.method = *method;
        if (!parser.isSet(overlaysOpt)) {
            printErr(Cli::tr("kiln-eval: --explain needs --overlays DIR, the folder for the pictures."));
            return 2;
        }
        explain.dir = parser.value(overlaysOpt);
        explain.layer = parser.value(layerOpt).toStdString();
        if (parser.isSet(classOpt)) {
            int64_t c = 0;
            if (!intOption(classOpt, 0, c)) return 2;
            explain.cls = c;
        }
        if (parser.isSet(maxSamplesOpt) && !intOption(maxSamplesOpt, 1, explain.limit)) return 2;
        bool ok = false;
        const double a = parser.value(opacityOpt).toDouble(&ok);
        if (!ok || a < 0 || a > 1) {
            printErr(Cli::tr("kiln-eval: --opacity needs a number from 0 to 1, got \"%1\"").arg(parser.value(opacityOpt)));
            return 2;
        }
        explain.opacity = float(a);
    } else {
        for (const auto* o : {&layerOpt, &classOpt, &overlaysOpt, &maxSamplesOpt})
            if (parser.isSet(*o)) {
                printErr(Cli::tr("kiln-eval: --%1 only applies with --explain").arg(o->names().first()));
                return 2;
            }
    }

    try {
        const std::string projectPath = parser.positionalArguments().first().toStdString();
        auto project = io::loadProject(projectPath);
        if (!project.ok()) return fail(project.error());
        api::EvaluationOptions options;
        options.weights = parser.value(weightsOpt).toStdString();
        const QString split = parser.value(splitOpt);
        const bool named = split == QLatin1String("test") || split == QLatin1String("val") ||
                           split == QLatin1String("validation") || split == QLatin1String("train");
        // Other data is named relative to the current folder, as on any command line.
        options.split = (named ? split : QFileInfo(split).absoluteFilePath()).toStdString();
        options.threads = int(threads);
        if (batch > 0) options.batchSize = batch;
        if (parser.isSet(explainOpt)) return explainSplit(*project, projectPath, options, explain, parser.isSet(jsonOpt));
        auto predictions = predictStored(*project, projectPath, options, !parser.isSet(noCacheOpt));
        if (!predictions.ok()) return fail(predictions.error(), &project.value());
        auto report = api::evaluate(*predictions, int(bins));
        if (!report.ok()) return fail(report.error());

        // Table data: the samples' feature values go with their records (file values, in the
        // model inputs' column order).
        std::optional<api::SampleFeatures> features;
        if (parser.isSet(csvOpt) || parser.isSet(jsonOpt)) {
            auto read = api::tableFeatures(*project, projectPath, options);
            if (!read.ok()) return fail(read.error(), &project.value());
            features = std::move(read.value());
        }
        const api::SampleFeatures* shownFeatures = features ? &*features : nullptr;
        if (parser.isSet(csvOpt)) {
            const auto& records = report->classification ? report->classification->records : report->regression->records;
            const auto& names = report->classification ? report->classification->classNames : std::vector<std::string>{};
            const std::string path = parser.value(csvOpt).toStdString();
            if (Status st = io::writeFileAtomic(path, api::recordsCsv(records, names, shownFeatures)); !st.ok())
                return fail(st.error());
        }
        if (parser.isSet(jsonOpt)) {
            nlohmann::json out = report->classification ? api::reportJson(*report->classification, 20, shownFeatures)
                                                        : api::reportJson(*report->regression, 20, shownFeatures);
            out["split"] = predictions->split;
            out["weights"] = predictions->weightsPath;
            out["loss"] = predictions->loss;
            out["metrics"] = nlohmann::json::object();
            for (const auto& [name, value] : predictions->metrics) out["metrics"][name] = value;
            printOut(QString::fromStdString(out.dump()));
        } else {
            printOut(report->classification ? classificationText(*report->classification, *predictions)
                                            : regressionText(*report->regression, *predictions));
        }
        return 0;
    } catch (const std::bad_alloc&) {
        printErr(Cli::tr("kiln-eval: out of memory"));
        return 1;
    } catch (const std::exception& ex) {
        printErr(Cli::tr("kiln-eval: internal error: %1").arg(QString::fromUtf8(ex.what())));
        return 1;
    }
}
