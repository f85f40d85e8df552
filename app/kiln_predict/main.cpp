// SPDX-License-Identifier: Apache-2.0
// kiln-predict: runs trained weights of a project on pictures, folders of pictures, a CSV index,
// TFRecord files or new rows of a csv table, through the project's own evaluation transforms
// (a table's columns, categories and standardisation), and prints each sample's
// top classes (or regression values) as text, --json or --csv. Exit 0 on success, 2 on bad input
// (the message names the file), 1 on other failures.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDirIterator>
#include <QFileInfo>
#include <QLocale>
#include <QTranslator>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <numeric>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "engine/api/evaluation.h"
#include "engine/data/sources.h"
#include "engine/io/project.h"

namespace {
using namespace kiln;
using namespace kiln::engine;
using nlohmann::json;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

using app::printErr;
using app::printOut;


int fail(const Error& e, const io::Project* project = nullptr) {
    return app::reportError(QStringLiteral("kiln-predict"), e, project);
}

QString csvField(const QString& s) {
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) return s;
    return QLatin1Char('"') + QString(s).replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-predict"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Predicts with trained weights of a Kiln project."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"), Cli::tr("The project file (*.kiln)."));
    parser.addPositionalArgument(QStringLiteral("inputs"),
                                 Cli::tr("Pictures or folders of pictures (image folder projects), or one CSV index, TFRecord file or folder, or CSV file of table rows."),
                                 QStringLiteral("INPUTS..."));
    QCommandLineOption weightsOpt(QStringLiteral("weights"), Cli::tr("The weights (safetensors), or a run folder."), QStringLiteral("W"));
    QCommandLineOption topOpt(QStringLiteral("top-k"), Cli::tr("Number of classes listed per sample (default: 1)."), QStringLiteral("K"),
                              QStringLiteral("1"));
    QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("Print the predictions as JSON."));
    QCommandLineOption csvOpt(QStringLiteral("csv"), Cli::tr("Print the predictions as CSV."));
    QCommandLineOption threadsOpt(QStringLiteral("threads"), Cli::tr("CPU threads (default: all cores)."), QStringLiteral("N"));
    parser.addOptions({weightsOpt, topOpt, jsonOpt, csvOpt, threadsOpt});
    const QCommandLineOption pluginOpt = app::pluginOption();
    parser.addOption(pluginOpt);
    parser.process(app);
    if (int rc = app::loadPlugins(QStringLiteral("kiln-predict"), parser.values(pluginOpt)); rc != 0) return rc;
    const QStringList args = parser.positionalArguments();
    if (args.size() < 2) {
        printErr(Cli::tr("kiln-predict: give a project file and at least one input (see --help)."));
        return 2;
    }
    if (!parser.isSet(weightsOpt)) {
        printErr(Cli::tr("kiln-predict: --weights is required (a safetensors file or a run folder)."));
        return 2;
    }
    if (parser.isSet(jsonOpt) && parser.isSet(csvOpt)) {
        printErr(Cli::tr("kiln-predict: choose one of --json and --csv."));
        return 2;
    }
    bool ok = false;
    const int topK = parser.value(topOpt).toInt(&ok);
    if (!ok || topK < 1) {
        printErr(Cli::tr("kiln-predict: --top-k needs an integer of at least 1, got \"%1\"").arg(parser.value(topOpt)));
        return 2;
    }
    int threads = 0;
    if (parser.isSet(threadsOpt)) {
        threads = parser.value(threadsOpt).toInt(&ok);
        if (!ok || threads < 1) {
            printErr(Cli::tr("kiln-predict: --threads needs an integer of at least 1, got \"%1\"").arg(parser.value(threadsOpt)));
            return 2;
        }
    }

    // Pictures (files, or folders searched recursively in name order) or one data file.
    std::vector<std::string> pictures;
    std::string dataPath;
    for (qsizetype i = 1; i < args.size(); ++i) {
        const QFileInfo info(args[i]);
        if (!info.exists()) {
            printErr(Cli::tr("kiln-predict: %1: no such file or folder").arg(args[i]));
            return 2;
        }
        if (info.isFile() && data::ImageFolderSource::isImageFile(args[i].toStdString())) {
            pictures.push_back(args[i].toStdString());
            continue;
        }
        if (info.isDir()) {
            QStringList found;
            QDirIterator it(args[i], QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString f = it.next();
                if (data::ImageFolderSource::isImageFile(f.toStdString())) found << f;
            }
            std::sort(found.begin(), found.end());
            if (!found.isEmpty()) {
                for (const auto& f : found) pictures.push_back(f.toStdString());
                continue;
            }
        }
        if (!dataPath.empty()) {
            printErr(Cli::tr("kiln-predict: %1: give one CSV index, TFRecord or table rows input at a time").arg(args[i]));
            return 2;
        }
        dataPath = args[i].toStdString();
    }
    if (!dataPath.empty() && !pictures.empty()) {
        printErr(Cli::tr("kiln-predict: %1: pictures and a data file cannot be mixed").arg(QString::fromStdString(dataPath)));
        return 2;
    }

    try {
        const std::string projectPath = args.first().toStdString();
        auto project = io::loadProject(projectPath);
        if (!project.ok()) return fail(project.error());
        api::EvaluationOptions options;
        options.weights = parser.value(weightsOpt).toStdString();
        options.threads = threads;
        if (!pictures.empty()) options.imageFiles = pictures;
        else options.split = std::filesystem::absolute(dataPath).string();
        options.labelsOptional = true;  // rows of a table are predicted without their label column
        auto p = api::predict(*project, projectPath, options);
        if (!p.ok()) return fail(p.error(), &project.value());

        const bool classes = p->classification();
        const std::vector<double> probs = classes ? p->probabilities() : std::vector<double>{};
        const int64_t k = classes ? p->numClasses() : p->width;
        auto className = [&](int64_t c) {
            return static_cast<int64_t>(p->classNames.size()) == k ? p->classNames[size_t(c)] : std::to_string(c);
        };
        json rows = json::array();
        QStringList text;
        if (parser.isSet(csvOpt)) {
            QString header = QStringLiteral("source");
            if (classes)
                for (int r = 1; r <= std::min<int64_t>(topK, k); ++r) header += QStringLiteral(",class_%1,probability_%1").arg(r);
            else
                for (int64_t j = 0; j < k; ++j) header += QStringLiteral(",value_%1").arg(j);
            text << header;
        }
        for (int64_t i = 0; i < p->samples; ++i) {
            const QString source = QString::fromStdString(p->sources[size_t(i)]);
            json row = {{"source", p->sources[size_t(i)]}};
            QString csv = csvField(source), human = source + QLatin1Char(':');
            if (classes) {
                std::vector<int64_t> order(static_cast<size_t>(k));
                std::iota(order.begin(), order.end(), 0);
                const double* pr = probs.data() + i * k;
                std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pr[a] > pr[b]; });
                json top = json::array();
                for (int64_t r = 0; r < std::min<int64_t>(topK, k); ++r) {
                    const int64_t c = order[size_t(r)];
                    top.push_back({{"class", className(c)}, {"index", c}, {"probability", pr[c]}});
                    csv += QLatin1Char(',') + csvField(QString::fromStdString(className(c))) + QLatin1Char(',') + QString::number(pr[c], 'g', 9);
                    human += QStringLiteral(" %1 (%2)").arg(QString::fromStdString(className(c))).arg(pr[c], 0, 'f', 4);
                }
                row["predicted"] = className(order.front());
                row["top_k"] = top;
            } else {
                json values = json::array();
                for (int64_t j = 0; j < k; ++j) {
                    const float v = p->outputs[size_t(i * k + j)];
                    values.push_back(v);
                    csv += QLatin1Char(',') + QString::number(v, 'g', 9);
                    human += QLatin1Char(' ') + QString::number(v, 'g', 6);
                }
                row["values"] = values;
            }
            rows.push_back(row);
            text << (parser.isSet(csvOpt) ? csv : human);
        }
        if (parser.isSet(jsonOpt)) {
            json out = {{"weights", p->weightsPath}, {"samples", p->samples}, {"task", classes ? "classification" : "regression"},
                        {"predictions", rows}};
            if (classes) out["classes"] = [&] {
                json names = json::array();
                for (int64_t c = 0; c < k; ++c) names.push_back(className(c));
                return names;
            }();
            printOut(QString::fromStdString(out.dump()));
        } else {
            printOut(text.join(QLatin1Char('\n')));
        }
        return 0;
    } catch (const std::bad_alloc&) {
        printErr(Cli::tr("kiln-predict: out of memory"));
        return 1;
    } catch (const std::exception& ex) {
        printErr(Cli::tr("kiln-predict: internal error: %1").arg(QString::fromUtf8(ex.what())));
        return 1;
    }
}
