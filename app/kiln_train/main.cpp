// SPDX-License-Identifier: Apache-2.0
// kiln-train: trains a Kiln project headless — progress on the terminal, weights and a run
// summary in the run directory, an optional final JSON line. Exit 0 on success, 2 on bad input
// (the message names the file and line, or the node), 1 on other failures.
#include <unistd.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>

#include "app/common/error_text.h"
#include "engine/io/project.h"
#include "engine/ops/summary.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#endif

namespace {
using namespace kiln;
using namespace kiln::engine;
using nlohmann::json;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

void printErr(const QString& s) { std::fprintf(stderr, "%s\n", s.toLocal8Bit().constData()); }
void printOut(const QString& s) { std::fprintf(stdout, "%s\n", s.toLocal8Bit().constData()); }

int fail(const Error& e, const io::Project* project = nullptr) {
    Error located = project ? io::locate(e, *project) : e;
    printErr(QStringLiteral("kiln-train: ") + app::ErrorText::describe(located));
    return app::ErrorText::exitCode(located);
}

QString formatDuration(double seconds) {
    auto s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
    if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString metricsText(const std::vector<train::MetricValue>& ms, const QString& prefix = {}) {
    QString out;
    for (const auto& m : ms) out += QStringLiteral(" - %1%2: %3").arg(prefix, QString::fromStdString(m.name)).arg(m.value, 0, 'f', 4);
    return out;
}

json evalJson(const train::EvalResult& r) {
    json j = {{"loss", r.loss}};
    for (const auto& m : r.metrics) j[m.name] = m.value;
    return j;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-train"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("kiln"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        QCoreApplication::installTranslator(&translator);

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Trains a Kiln project without the graphical interface."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"), Cli::tr("The project file (*.kiln)."));
    QCommandLineOption epochsOpt(QStringLiteral("epochs"), Cli::tr("Number of epochs (overrides the project)."), QStringLiteral("N"));
    QCommandLineOption batchOpt(QStringLiteral("batch-size"), Cli::tr("Batch size (overrides the project)."), QStringLiteral("B"));
    QCommandLineOption seedOpt(QStringLiteral("seed"), Cli::tr("Random seed (overrides the project)."), QStringLiteral("S"));
    QCommandLineOption deviceOpt(QStringLiteral("device"), Cli::tr("Device: cpu or cuda:N."), QStringLiteral("DEVICE"), QStringLiteral("cpu"));
    QCommandLineOption runDirOpt(QStringLiteral("run-dir"), Cli::tr("Directory for weights and the run summary."), QStringLiteral("DIR"));
    QCommandLineOption weightsOpt(QStringLiteral("weights"), Cli::tr("Start from these weights (safetensors)."), QStringLiteral("FILE"));
    QCommandLineOption threadsOpt(QStringLiteral("threads"), Cli::tr("CPU threads (default: all cores)."), QStringLiteral("N"));
    QCommandLineOption summaryOpt(QStringLiteral("summary"), Cli::tr("Print the model summary and exit."));
    QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("End with one line of JSON holding the results."));
    QCommandLineOption quietOpt(QStringLiteral("quiet"), Cli::tr("Print no progress."));
    parser.addOptions({epochsOpt, batchOpt, seedOpt, deviceOpt, runDirOpt, weightsOpt, threadsOpt, summaryOpt, jsonOpt, quietOpt});
    parser.process(app);
    if (parser.positionalArguments().size() != 1) {
        printErr(Cli::tr("kiln-train: give exactly one project file (see --help)."));
        return 2;
    }

    try {
        const std::string projectPath = parser.positionalArguments().first().toStdString();
        auto project = io::loadProject(projectPath);
        if (!project.ok()) return fail(project.error());
        auto model = ops::analyzeModel(project->graph);
        if (!model.ok()) return fail(model.error(), &project.value());
        auto config = train::parseTrainingConfig(project->training, project->graph);
        if (!config.ok()) return fail(config.error().withFile(projectPath), &project.value());

        auto intOption = [&](const QCommandLineOption& o, int64_t minimum, auto& target) -> bool {
            if (!parser.isSet(o)) return true;
            bool ok = false;
            qlonglong v = parser.value(o).toLongLong(&ok);
            if (!ok || v < minimum) {
                printErr(Cli::tr("kiln-train: --%1 needs an integer of at least %2, got \"%3\"")
                             .arg(o.names().first()).arg(minimum).arg(parser.value(o)));
                return false;
            }
            target = static_cast<std::remove_reference_t<decltype(target)>>(v);
            return true;
        };
        int threads = 0;
        if (!intOption(epochsOpt, 0, config->epochs) || !intOption(batchOpt, 1, config->batchSize) ||
            !intOption(seedOpt, 0, config->seed) || !intOption(threadsOpt, 1, threads))
            return 2;

        const bool jsonOut = parser.isSet(jsonOpt);
        if (parser.isSet(summaryOpt)) {
            auto s = ops::summarize(*model, config->batchSize);
            if (jsonOut) printOut(QString::fromStdString(ops::summaryJson(s).dump()));
            else printOut(QString::fromStdString(ops::summaryText(s, project->name.empty() ? QFileInfo(QString::fromStdString(projectPath)).baseName().toStdString() : project->name)));
            return 0;
        }

        auto device = Device::parse(parser.value(deviceOpt).toStdString());
        if (!device.ok()) return fail(device.error());
        if (!device->isCpu()) {
#ifdef KILN_HAVE_CUDA
            if (cuda::deviceCount() <= device->index)
                return fail(Error(ErrorCode::DeviceUnavailable, device->toString() + " is not available: " + cuda::unavailableReason())
                                .with("device", device->toString()));
#endif
            return fail(Error(ErrorCode::Unsupported, "training on " + device->toString() +
                                                          " is not available in this build; use --device cpu")
                            .with("what", device->toString()));
        }

        auto data = train::loadData(project->data, projectPath, config->seed);
        if (!data.ok()) return fail(data.error().withFile(data.error().file.empty() ? projectPath : data.error().file), &project.value());

        ThreadPool pool(threads);
        auto trainer = train::Trainer::create(*model, *config, std::move(data.value()), pool);
        if (!trainer.ok()) return fail(trainer.error(), &project.value());
        if (parser.isSet(weightsOpt)) {
            Status st = train::loadWeights((*trainer)->params(), parser.value(weightsOpt).toStdString());
            if (!st.ok()) return fail(st.error());
        }

        const bool tty = isatty(fileno(stdout)) && !parser.isSet(quietOpt);
        const bool quiet = parser.isSet(quietOpt);
        auto lastPrint = std::chrono::steady_clock::now();
        auto onEvent = [&](const train::TrainEvent& e) {
            if (quiet) return;
            if (e.kind == train::TrainEvent::Kind::Begin) {
                printOut(Cli::tr("Training %1 for %2 epoch(s), %3 steps per epoch, on %4 (%5 threads)")
                             .arg(QString::fromStdString(project->name.empty() ? projectPath : project->name))
                             .arg(e.epochs).arg(e.stepsPerEpoch).arg(QString::fromStdString(device->toString()))
                             .arg(pool.size()));
            } else if (e.kind == train::TrainEvent::Kind::Step && tty) {
                auto now = std::chrono::steady_clock::now();
                if (e.step != e.stepsPerEpoch && now - lastPrint < std::chrono::milliseconds(100)) return;
                lastPrint = now;
                const int width = 28;
                int filled = static_cast<int>(width * e.step / std::max<int64_t>(1, e.stepsPerEpoch));
                QString bar = QString(filled, QLatin1Char('=')) + (filled < width ? QStringLiteral(">") : QString()) +
                              QString(std::max(0, width - filled - 1), QLatin1Char(' '));
                std::fprintf(stdout, "\r%s", Cli::tr("Epoch %1/%2 [%3] %4/%5 - loss: %6%7 - %8 samples/s - ETA %9")
                                                 .arg(e.epoch).arg(e.epochs).arg(bar).arg(e.step).arg(e.stepsPerEpoch)
                                                 .arg(e.loss, 0, 'f', 4).arg(metricsText(e.metrics))
                                                 .arg(e.samplesPerSecond, 0, 'f', 0).arg(formatDuration(e.etaSeconds))
                                                 .toLocal8Bit().constData());
                std::fflush(stdout);
            } else if (e.kind == train::TrainEvent::Kind::Epoch) {
                if (tty) std::fprintf(stdout, "\r\033[K");
                QString line = Cli::tr("Epoch %1/%2 - %3 s - loss: %4%5").arg(e.epoch).arg(e.epochs)
                                   .arg(e.elapsedSeconds, 0, 'f', 1).arg(e.loss, 0, 'f', 4).arg(metricsText(e.metrics));
                if (e.validation)
                    line += QStringLiteral(" - val_loss: %1").arg(e.validation->loss, 0, 'f', 4) +
                            metricsText(e.validation->metrics, QStringLiteral("val_"));
                line += Cli::tr(" - %1 samples/s").arg(e.samplesPerSecond, 0, 'f', 0);
                printOut(line);
                std::fflush(stdout);
            }
        };
        auto result = (*trainer)->fit(onEvent);
        if (!result.ok()) return fail(result.error(), &project.value());

        // Run directory: weights, summary, configuration snapshot and results.
        QString runDir = parser.value(runDirOpt);
        if (runDir.isEmpty()) {
            QString base = QString::fromStdString(project->name.empty() ? "run" : project->name);
            runDir = QDir::current().filePath(QStringLiteral("runs/%1-%2").arg(base, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
        }
        if (!QDir().mkpath(runDir))
            return fail(Error(ErrorCode::FileWrite, "cannot create the run directory").withFile(runDir.toStdString()));
        const std::string dir = runDir.toStdString();
        Status st = train::saveWeights((*trainer)->params(), dir + "/weights.safetensors", {{"project", projectPath}});
        if (!st.ok()) return fail(st.error());

        const auto& hist = result->history;
        json out = {{"epochs", hist.size()}, {"seconds", result->seconds}, {"samples_per_s", result->samplesPerSecond}};
        if (!hist.empty()) {
            out["train_loss"] = hist.back().train.loss;
            for (const auto& m : hist.back().train.metrics) out["train_" + m.name] = m.value;
            if (hist.back().validation) {
                out["val_loss"] = hist.back().validation->loss;
                for (const auto& m : hist.back().validation->metrics) out["val_" + m.name] = m.value;
            }
        }
        if (result->test) {
            out["test_loss"] = result->test->loss;
            for (const auto& m : result->test->metrics) out["test_" + m.name] = m.value;
        }
        json history = json::array();
        for (const auto& h : hist) {
            json e = {{"epoch", h.epoch}, {"train", evalJson(h.train)}, {"seconds", h.seconds}, {"samples_per_s", h.samplesPerSecond}};
            if (h.validation) e["validation"] = evalJson(*h.validation);
            history.push_back(std::move(e));
        }
        json run = {{"format", "kiln-run"},
                    {"version", 1},
                    {"project", projectPath},
                    {"device", device->toString()},
                    {"threads", pool.size()},
                    {"seed", config->seed},
                    {"batch_size", config->batchSize},
                    {"results", out},
                    {"history", history},
                    {"summary", ops::summaryJson(ops::summarize(*model, config->batchSize))},
                    {"project_snapshot", json::parse(io::serializeProject(*project))}};
        st = io::writeFileAtomic(dir + "/run.json", run.dump(2) + "\n");
        if (!st.ok()) return fail(st.error());

        if (!quiet) {
            if (result->test) printOut(Cli::tr("Test - loss: %1%2").arg(result->test->loss, 0, 'f', 4).arg(metricsText(result->test->metrics)));
            printOut(Cli::tr("Weights and run summary written to %1").arg(runDir));
        }
        if (jsonOut) {
            out["run_dir"] = dir;
            printOut(QString::fromStdString(out.dump()));
        }
        return 0;
    } catch (const std::bad_alloc&) {
        printErr(Cli::tr("kiln-train: out of memory"));
        return 1;
    } catch (const std::exception& ex) {
        printErr(Cli::tr("kiln-train: internal error: %1").arg(QString::fromUtf8(ex.what())));
        return 1;
    }
}
