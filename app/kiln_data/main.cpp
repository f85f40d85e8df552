// SPDX-License-Identifier: Apache-2.0
// kiln-data: looks into data sets (inspect), converts them (IDX / image folder / CSV index ->
// TFRecord and TFRecord -> PNG class folder) and measures the input pipeline (bench).
// Exit 0 on success, 2 on bad usage or bad data (the message names the file), 1 otherwise.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QLocale>
#include <QTranslator>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "engine/core/json_checked.h"
#include "engine/data/convert.h"
#include "engine/data/pipeline.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord_source.h"

namespace {
using namespace kiln;
using namespace kiln::engine;
using namespace kiln::engine::data;
using nlohmann::json;
namespace fs = std::filesystem;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

using app::printErr;
using app::printOut;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

int fail(const Error& e) {
    return app::reportError(QStringLiteral("kiln-data"), e);
}

int usage(const QString& message) {
    printErr(QStringLiteral("kiln-data: ") + message);
    printErr(Cli::tr("Run \"kiln-data --help\" for the commands and options."));
    return 2;
}

// Peak resident memory of this process in bytes (Linux), 0 when unknown.
int64_t peakRss() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
    return 0;
}

bool isRecordPath(const std::string& path) {
    std::string n = fs::path(path).filename().string();
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        for (const auto& e : fs::directory_iterator(path, ec)) {
            std::string f = e.path().filename().string();
            std::transform(f.begin(), f.end(), f.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (f.find(".tfrec") != std::string::npos && f.find(".txt") == std::string::npos) return true;
        }
        return false;
    }
    return n.find(".tfrec") != std::string::npos;
}

struct RecordSet {
    std::vector<std::string> files;
    TfRecordCompression compression = TfRecordCompression::None;
    std::vector<TfFeatureSpec> features;  // pictures and numbers (what the pipeline batches)
};

Result<RecordSet> openRecords(const std::string& path, const QString& compressionOption) {
    RecordSet r;
    KILN_ASSIGN(r.files, TfRecordSource::listFiles(path));
    if (compressionOption.isEmpty() || compressionOption == QLatin1String("auto")) {
        r.compression = TfRecordSource::guessCompression(r.files.front());
    } else {
        KILN_ASSIGN(r.compression, parseTfRecordCompression(compressionOption == QLatin1String("none")
                                                                ? ""
                                                                : compressionOption.toStdString()));
    }
    KILN_ASSIGN(r.features, TfRecordSource::inferFeatures(r.files.front(), r.compression));
    return r;
}

// What a scan of a data set found.
struct Survey {
    int64_t samples = 0;
    std::map<std::string, int64_t> shapes;  // "column [H,W,C]" -> count
    std::vector<int64_t> classCounts;
    std::vector<BadSample> bad;
};

void addShapes(Survey& s, const std::vector<ColumnSpec>& specs, Sample& sample) {
    for (size_t c = 0; c < specs.size(); ++c) {
        if (specs[c].text) continue;
        ++s.shapes[specs[c].name + " " + valueShape(sample.values[c]).toString()];
    }
}

// Loads and decodes every sample (or the first `limit`) on all cores.
Result<Survey> surveySource(const SampleSource& src, int64_t limit) {
    const int64_t n = limit >= 0 ? std::min(limit, src.size()) : src.size();
    const auto specs = src.columnSpecs();
    const int threads = static_cast<int>(std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
    std::vector<Survey> parts(static_cast<size_t>(threads));
    std::vector<std::optional<Error>> errors(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    std::atomic<int64_t> next{0};
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            Survey& mine = parts[static_cast<size_t>(t)];
            Sample s;
            for (int64_t i = next++; i < n; i = next++) {
                Status st = src.load(i, s);
                for (size_t c = 0; st.ok() && c < specs.size(); ++c) {
                    SampleValue& v = s.values[c];
                    if (v.kind != SampleValue::Kind::Encoded) continue;
                    auto img = decodeImage(v.encoded, s.origin);
                    if (!img.ok()) {
                        st = std::move(img.error());
                        break;
                    }
                    v.image = img.value();
                    v.kind = SampleValue::Kind::Image;
                }
                if (!st.ok()) {
                    if (!isBadSampleError(st.error())) {
                        errors[static_cast<size_t>(t)] = st.error();
                        next = n;
                        return;
                    }
                    mine.bad.push_back(BadSample{i, st.error().file.empty() ? src.origin(i) : st.error().file,
                                                 st.error().param("reason")});
                    continue;
                }
                ++mine.samples;
                addShapes(mine, specs, s);
            }
        });
    for (auto& t : pool) t.join();
    for (auto& e : errors)
        if (e) return *e;
    Survey all;
    for (auto& p : parts) {
        all.samples += p.samples;
        for (auto& [k, v] : p.shapes) all.shapes[k] += v;
        all.bad.insert(all.bad.end(), p.bad.begin(), p.bad.end());
    }
    std::sort(all.bad.begin(), all.bad.end(),
              [](const BadSample& a, const BadSample& b) { return a.index < b.index; });
    std::vector<float> labels = src.labels();
    if (limit >= 0 && static_cast<int64_t>(labels.size()) > n) labels.resize(static_cast<size_t>(n));
    for (float l : labels) {
        if (l < 0) continue;
        const auto k = static_cast<size_t>(l);
        if (all.classCounts.size() <= k) all.classCounts.resize(k + 1, 0);
        ++all.classCounts[k];
    }
    return all;
}

Result<Survey> surveyRecords(const TfRecordSource& src, int64_t limit) {
    Survey all;
    const auto specs = src.columnSpecs();
    int label = -1;
    for (size_t c = 0; c < specs.size(); ++c)
        if (!specs[c].image && specs[c].shape.rank() == 0 && (label < 0 || specs[c].name == "label"))
            label = static_cast<int>(c);
    Sample s;
    for (int f = 0;
         f < src.fileCount() && (limit < 0 || all.samples + static_cast<int64_t>(all.bad.size()) < limit);
         ++f) {
        KILN_ASSIGN(auto reader, src.openFile(f));
        for (int64_t i = 0; limit < 0 || all.samples + static_cast<int64_t>(all.bad.size()) < limit; ++i) {
            KILN_ASSIGN(bool got, reader->next(s));
            if (!got) break;
            bool bad = false;
            for (size_t c = 0; c < specs.size(); ++c) {
                SampleValue& v = s.values[c];
                if (v.kind != SampleValue::Kind::Encoded) continue;
                auto img = decodeImage(v.encoded, s.origin);
                if (!img.ok()) {
                    all.bad.push_back(BadSample{i, s.origin, img.error().param("reason")});
                    bad = true;
                    break;
                }
                v.image = img.value();
                v.kind = SampleValue::Kind::Image;
            }
            if (bad) continue;
            ++all.samples;
            addShapes(all, specs, s);
            if (label >= 0) {
                const float l = s.values[static_cast<size_t>(label)].values[0];
                if (l >= 0) {
                    const auto k = static_cast<size_t>(l);
                    if (all.classCounts.size() <= k) all.classCounts.resize(k + 1, 0);
                    ++all.classCounts[k];
                }
            }
        }
    }
    return all;
}

int inspect(const std::string& path, const QCommandLineParser& parser, bool jsonOut, int64_t limit) {
    json out;
    out["path"] = path;
    std::vector<ColumnSpec> specs;
    Survey survey;
    std::vector<std::string> classNames;
    if (isRecordPath(path)) {
        auto set = openRecords(path, parser.value(QStringLiteral("compression")));
        if (!set.ok()) return fail(set.error());
        auto src = TfRecordSource::open(set->files, set->features, set->compression);
        if (!src.ok()) return fail(src.error());
        out["kind"] = "tfrecord";
        out["files"] = set->files;
        out["compression"] = std::string(tfRecordCompressionName(set->compression)).empty()
                                 ? "none"
                                 : tfRecordCompressionName(set->compression);
        specs = (*src)->columnSpecs();
        auto s = surveyRecords(**src, limit);
        if (!s.ok()) return fail(s.error());
        survey = std::move(s.value());
        std::ifstream in(classNamesPath(set->files.front()));
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) classNames.push_back(line);
    } else {
        auto src = openSource(path);
        if (!src.ok()) return fail(src.error());
        out["kind"] = (*src)->kind();
        specs = (*src)->columnSpecs();
        if ((*src)->kind() == "image-folder") {
            auto splits = ImageFolderSource::openSplits(path);
            if (splits.ok() && !splits->empty()) {
                json js = json::object();
                for (const auto& [name, s] : *splits) js[name] = s->size();
                out["splits"] = js;
            }
        }
        auto s = surveySource(**src, limit);
        if (!s.ok()) return fail(s.error());
        survey = std::move(s.value());
    }
    for (const auto& c : specs)
        if (!c.classNames.empty()) classNames = c.classNames;
    out["samples"] = survey.samples;
    out["bad_count"] = survey.bad.size();
    json cols = json::array();
    for (const auto& c : specs)
        cols.push_back({{"name", c.name}, {"shape", c.shape.dims()}, {"image", c.image}});
    out["columns"] = cols;
    json classes = json::array();
    for (size_t k = 0; k < survey.classCounts.size(); ++k)
        classes.push_back({{"index", k},
                           {"name", k < classNames.size() ? classNames[k] : std::to_string(k)},
                           {"count", survey.classCounts[k]}});
    out["classes"] = classes;
    json shapes = json::object();
    for (const auto& [k, v] : survey.shapes) shapes[k] = v;
    out["shapes"] = shapes;
    json bad = json::array();
    for (const auto& b : survey.bad)
        bad.push_back({{"index", b.index}, {"path", b.path}, {"reason", b.reason}});
    out["bad"] = bad;

    if (jsonOut) {
        printOut(qs(out.dump(2)));
        return 0;
    }
    printOut(Cli::tr("Data: %1").arg(qs(path)));
    printOut(Cli::tr("Kind: %1").arg(qs(out["kind"].get<std::string>())));
    if (out.contains("splits"))
        for (const auto& [name, n] : out["splits"].items())
            printOut(Cli::tr("Split %1: %2 samples").arg(qs(name)).arg(n.get<int64_t>()));
    printOut(Cli::tr("Samples: %1 readable, %2 bad").arg(survey.samples).arg(survey.bad.size()));
    printOut(Cli::tr("Columns:"));
    for (const auto& c : specs)
        printOut(QStringLiteral("  %1 %2%3")
                     .arg(qs(c.name), c.image ? Cli::tr("picture") : qs(c.shape.toString()),
                          c.classNames.empty()
                              ? QString()
                              : Cli::tr(" (%n classes)", nullptr, static_cast<int>(c.classNames.size()))));
    if (!survey.classCounts.empty()) {
        printOut(Cli::tr("Classes:"));
        for (const auto& c : classes)
            printOut(QStringLiteral("  %1 %2: %3")
                         .arg(c["index"].get<int64_t>())
                         .arg(qs(c["name"].get<std::string>()))
                         .arg(c["count"].get<int64_t>()));
    }
    printOut(Cli::tr("Sample shapes:"));
    for (const auto& [k, v] : survey.shapes) printOut(Cli::tr("  %1 (%2 samples)").arg(qs(k)).arg(v));
    if (!survey.bad.empty()) {
        printOut(Cli::tr("Bad files:"));
        for (const auto& b : survey.bad) printOut(QStringLiteral("  %1: %2").arg(qs(b.path), qs(b.reason)));
    }
    return 0;
}

int convert(const std::string& src, const std::string& dst, const QCommandLineParser& parser, int64_t limit,
            int shards) {
    ConvertOptions o;
    o.limit = limit;
    o.shards = shards;
    const QString comp = parser.value(QStringLiteral("compression"));
    std::string d = dst;
    std::transform(d.begin(), d.end(), d.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool toRecords = d.find(".tfrec") != std::string::npos;
    Result<ConvertReport> report = Error(ErrorCode::Internal, "not run");
    if (isRecordPath(src)) {
        if (toRecords)
            return usage(Cli::tr(
                "The source is already TFRecord; convert it to a folder (a destination without .tfrecord)."));
        auto files = TfRecordSource::listFiles(src);
        if (!files.ok()) return fail(files.error());
        TfRecordCompression c = TfRecordSource::guessCompression(files->front());
        if (!comp.isEmpty() && comp != QLatin1String("auto")) {
            auto parsed = parseTfRecordCompression(comp == QLatin1String("none") ? "" : comp.toStdString());
            if (!parsed.ok()) return fail(parsed.error());
            c = parsed.value();
        }
        auto features = TfRecordSource::inferFeatures(files->front(), c, true);
        if (!features.ok()) return fail(features.error());
        auto source = TfRecordSource::open(*files, *features, c);
        if (!source.ok()) return fail(source.error());
        report = convertToImageFolder(**source, dst, o);
    } else {
        auto source = openSource(src);
        if (!source.ok()) return fail(source.error());
        if (toRecords) {
            if (!comp.isEmpty() && comp != QLatin1String("auto")) {
                auto parsed =
                    parseTfRecordCompression(comp == QLatin1String("none") ? "" : comp.toStdString());
                if (!parsed.ok()) return fail(parsed.error());
                o.compression = parsed.value();
            }
            report = convertToTfRecord(**source, dst, o);
        } else {
            report = convertToImageFolder(**source, dst, o);
        }
    }
    if (!report.ok()) return fail(report.error());
    for (const auto& f : report->files) printOut(Cli::tr("Wrote %1").arg(qs(f)));
    printOut(Cli::tr("%n sample(s) converted", nullptr, static_cast<int>(report->written)));
    if (!report->bad.empty()) {
        printErr(Cli::tr("%n bad file(s) left out:", nullptr, static_cast<int>(report->bad.size())));
        for (const auto& b : report->bad) printErr(QStringLiteral("  %1: %2").arg(qs(b.path), qs(b.reason)));
    }
    return 0;
}

Result<TransformList> transformsFrom(const QString& value) {
    if (value.isEmpty()) return TransformList::preset("none");
    const std::string v = value.toStdString();
    if (v.front() == '[') {
        auto parsed = parseJsonChecked(v, JsonLimits{}, "--transforms");
        if (!parsed)
            return Error(ErrorCode::ConfigError, "--transforms is not valid JSON: " + parsed.error().message)
                .with("field", "--transforms");
        try {
            return TransformList::fromJson(parsed.value(), "--transforms");
        } catch (const json::exception& e) {
            return Error(ErrorCode::ConfigError, std::string("--transforms: ") + e.what()).with("field", "--transforms");
        }
    }
    std::error_code ec;
    if (fs::is_regular_file(v, ec)) {
        auto parsed = readJsonFileChecked(v);
        if (!parsed) return std::move(parsed.error());
        const json& j = parsed.value();
        try {
            return TransformList::fromJson(j.is_object() && j.contains("transforms") ? j["transforms"] : j, v);
        } catch (const json::exception& e) {
            return Error(ErrorCode::ConfigError, v + ": " + e.what()).withFile(v).with("field", "transforms");
        }
    }
    return TransformList::preset(v);
}

int bench(const std::string& path, const QCommandLineParser& parser, const PipelineOptions& opts, int epochs,
          int64_t maxBatches, bool jsonOut) {
    auto transforms = transformsFrom(parser.value(QStringLiteral("transforms")));
    if (!transforms.ok()) return fail(transforms.error());
    Result<std::unique_ptr<Pipeline>> pipeline = Error(ErrorCode::Internal, "not built");
    std::string kind;
    int64_t size = -1;
    if (isRecordPath(path)) {
        auto set = openRecords(path, parser.value(QStringLiteral("compression")));
        if (!set.ok()) return fail(set.error());
        auto src = TfRecordSource::open(set->files, set->features, set->compression);
        if (!src.ok()) return fail(src.error());
        kind = "tfrecord";
        pipeline =
            Pipeline::create(std::shared_ptr<const RecordSource>(*src), std::move(transforms.value()), opts);
    } else {
        auto src = openSource(path);
        if (!src.ok()) return fail(src.error());
        kind = (*src)->kind();
        size = (*src)->size();
        if (transforms->needsFit()) {
            std::vector<int64_t> all(static_cast<size_t>(size));
            for (int64_t i = 0; i < size; ++i) all[static_cast<size_t>(i)] = i;
            Status st = transforms->fit(**src, all);
            if (!st.ok()) return fail(st.error());
        }
        pipeline =
            Pipeline::create(std::shared_ptr<const SampleSource>(*src), std::move(transforms.value()), opts);
    }
    if (!pipeline.ok()) return fail(pipeline.error());
    Pipeline& p = **pipeline;
    json runs = json::array();
    Batch batch;
    for (int e = 0; e < epochs; ++e) {
        Status st = p.startEpoch(e);
        if (!st.ok()) return fail(st.error());
        int64_t n = 0;
        for (;;) {
            if (maxBatches >= 0 && n >= maxBatches) break;
            auto r = p.next(batch);
            if (!r.ok()) return fail(r.error());
            if (!r.value()) break;
            ++n;
        }
        const PipelineStats s = p.stats();
        p.cancel();  // stops the workers when the epoch was cut short
        runs.push_back({{"epoch", e},
                        {"samples", s.samples},
                        {"batches", s.batches},
                        {"seconds", s.seconds},
                        {"samples_per_second", s.samplesPerSecond},
                        {"wait_fraction", s.waitFraction},
                        {"skipped", s.skipped},
                        {"cache_hits", s.cacheHits}});
        if (!jsonOut)
            printOut(
                Cli::tr("Epoch %1: %2 samples in %3 s = %4 samples/s (consumer waited %5 %); %6 bad skipped")
                    .arg(e + 1)
                    .arg(s.samples)
                    .arg(s.seconds, 0, 'f', 2)
                    .arg(s.samplesPerSecond, 0, 'f', 1)
                    .arg(100.0 * s.waitFraction, 0, 'f', 0)
                    .arg(s.skipped));
    }
    json shapes = json::object();
    for (size_t c = 0; c < p.outputNames().size(); ++c)
        shapes[p.outputNames()[c]] = p.outputShapes()[c].dims();
    json bad = json::array();
    for (const auto& b : p.badSamples())
        bad.push_back({{"index", b.index}, {"path", b.path}, {"reason", b.reason}});
    const int64_t rss = peakRss();
    if (jsonOut) {
        json out = {{"path", path},
                    {"kind", kind},
                    {"size", size},
                    {"workers", opts.workers},
                    {"batch_size", opts.batchSize},
                    {"prefetch", opts.prefetch},
                    {"epochs", runs},
                    {"shapes", shapes},
                    {"bad", bad},
                    {"peak_rss_bytes", rss}};
        printOut(qs(out.dump(2)));
    } else {
        for (size_t c = 0; c < p.outputNames().size(); ++c)
            printOut(Cli::tr("Column %1: %2 per sample")
                         .arg(qs(p.outputNames()[c]), qs(p.outputShapes()[c].toString())));
        for (const auto& b : p.badSamples())
            printOut(Cli::tr("Bad file %1: %2").arg(qs(b.path), qs(b.reason)));
        printOut(Cli::tr("Peak memory: %1 MiB").arg(static_cast<double>(rss) / (1024.0 * 1024.0), 0, 'f', 1));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-data"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr(
        "Looks into, converts and benchmarks Kiln data sets.\n\n"
        "Commands:\n"
        "  inspect PATH        kind, sample count, classes, sample shapes and bad files\n"
        "  convert SRC DST     IDX, image folder or CSV index to TFRecord (DST ends in .tfrecord),\n"
        "                      or any of them (TFRecord too) to a PNG folder with one subfolder per class\n"
        "  bench PATH          speed of the input pipeline on PATH"));
    const QCommandLineOption helpOpt({QStringLiteral("h"), QStringLiteral("help")},
                                     Cli::tr("Shows this help."));
    const QCommandLineOption versionOpt({QStringLiteral("v"), QStringLiteral("version")},
                                        Cli::tr("Shows the version."));
    const QCommandLineOption jsonOpt(QStringLiteral("json"), Cli::tr("inspect, bench: print JSON."));
    const QCommandLineOption limitOpt(
        QStringLiteral("limit"), Cli::tr("inspect, convert: only the first N samples."), QStringLiteral("N"));
    const QCommandLineOption compressionOpt(
        QStringLiteral("compression"),
        Cli::tr("TFRecord compression: none, gzip or zlib (reading: auto by default)."), QStringLiteral("C"));
    const QCommandLineOption shardsOpt(QStringLiteral("shards"),
                                       Cli::tr("convert: number of TFRecord files to write."),
                                       QStringLiteral("N"), QStringLiteral("1"));
    const QCommandLineOption workersOpt(QStringLiteral("workers"), Cli::tr("bench: worker threads."),
                                        QStringLiteral("N"), QStringLiteral("2"));
    const QCommandLineOption batchOpt(QStringLiteral("batch-size"), Cli::tr("bench: batch size."),
                                      QStringLiteral("B"), QStringLiteral("32"));
    const QCommandLineOption prefetchOpt(QStringLiteral("prefetch"),
                                         Cli::tr("bench: batches prepared ahead."), QStringLiteral("N"),
                                         QStringLiteral("2"));
    const QCommandLineOption shuffleOpt(QStringLiteral("shuffle-buffer"),
                                        Cli::tr("bench: shuffle buffer in samples."), QStringLiteral("N"),
                                        QStringLiteral("0"));
    const QCommandLineOption epochsOpt(QStringLiteral("epochs"), Cli::tr("bench: epochs to run."),
                                       QStringLiteral("N"), QStringLiteral("1"));
    const QCommandLineOption batchesOpt(QStringLiteral("max-batches"),
                                        Cli::tr("bench: stop each epoch after N batches."),
                                        QStringLiteral("N"));
    const QCommandLineOption cacheOpt(QStringLiteral("cache"),
                                      Cli::tr("bench: cache after the fixed transforms: memory or file."),
                                      QStringLiteral("KIND"));
    const QCommandLineOption seedOpt(QStringLiteral("seed"), Cli::tr("bench: random seed."),
                                     QStringLiteral("S"), QStringLiteral("0"));
    const QCommandLineOption strictOpt(QStringLiteral("strict"),
                                       Cli::tr("bench: stop at the first bad file instead of skipping it."));
    const QCommandLineOption transformsOpt(
        QStringLiteral("transforms"),
        Cli::tr("bench: a preset (none, unit, imagenet-train, imagenet-eval), a JSON file or a JSON list."),
        QStringLiteral("T"));
    parser.addOptions({helpOpt, versionOpt, jsonOpt, limitOpt, compressionOpt, shardsOpt, workersOpt,
                       batchOpt, prefetchOpt, shuffleOpt, epochsOpt, batchesOpt, cacheOpt, seedOpt, strictOpt,
                       transformsOpt});
    parser.addPositionalArgument(QStringLiteral("command"), Cli::tr("inspect, convert or bench."));
    parser.addPositionalArgument(QStringLiteral("paths"), Cli::tr("The data set(s)."),
                                 QStringLiteral("PATH..."));

    if (!parser.parse(QCoreApplication::arguments())) return usage(parser.errorText());
    if (parser.isSet(helpOpt)) {
        printOut(parser.helpText());
        return 0;
    }
    if (parser.isSet(versionOpt)) {
        printOut(QStringLiteral("kiln-data ") + QCoreApplication::applicationVersion());
        return 0;
    }
    const QStringList args = parser.positionalArguments();
    if (args.isEmpty()) return usage(Cli::tr("No command given (inspect, convert or bench)."));
    const QString command = args.first();

    auto number = [&](const QCommandLineOption& o, int64_t minimum, int64_t fallback, bool* ok) -> int64_t {
        *ok = true;
        if (!parser.isSet(o)) return fallback;
        bool good = false;
        const qlonglong v = parser.value(o).toLongLong(&good);
        if (!good || v < minimum) {
            *ok = false;
            usage(Cli::tr("--%1 needs a whole number of at least %2, not \"%3\".")
                      .arg(o.names().last())
                      .arg(minimum)
                      .arg(parser.value(o)));
            return 0;
        }
        return v;
    };

    try {
        bool ok = true;
        const int64_t limit = number(limitOpt, 0, -1, &ok);
        if (!ok) return 2;
        if (parser.isSet(compressionOpt)) {
            const QString c = parser.value(compressionOpt).toLower();
            if (c != QLatin1String("none") && c != QLatin1String("gzip") && c != QLatin1String("zlib") &&
                c != QLatin1String("auto"))
                return usage(Cli::tr("--compression must be none, gzip or zlib, not \"%1\".")
                                 .arg(parser.value(compressionOpt)));
        }
        if (command == QLatin1String("inspect")) {
            if (args.size() != 2) return usage(Cli::tr("inspect needs exactly one PATH."));
            return inspect(args[1].toStdString(), parser, parser.isSet(jsonOpt), limit);
        }
        if (command == QLatin1String("convert")) {
            if (args.size() != 3) return usage(Cli::tr("convert needs SRC and DST."));
            const int64_t shards = number(shardsOpt, 1, 1, &ok);
            if (!ok) return 2;
            return convert(args[1].toStdString(), args[2].toStdString(), parser, limit,
                           static_cast<int>(shards));
        }
        if (command == QLatin1String("bench")) {
            if (args.size() != 2) return usage(Cli::tr("bench needs exactly one PATH."));
            PipelineOptions o;
            o.workers = static_cast<int>(number(workersOpt, 1, 2, &ok));
            if (!ok) return 2;
            o.batchSize = number(batchOpt, 1, 32, &ok);
            if (!ok) return 2;
            o.prefetch = static_cast<int>(number(prefetchOpt, 1, 2, &ok));
            if (!ok) return 2;
            o.shuffleBuffer = number(shuffleOpt, 0, 0, &ok);
            if (!ok) return 2;
            o.seed = static_cast<uint64_t>(number(seedOpt, 0, 0, &ok));
            if (!ok) return 2;
            o.strict = parser.isSet(strictOpt);
            if (parser.isSet(cacheOpt)) {
                const QString c = parser.value(cacheOpt);
                if (c == QLatin1String("memory"))
                    o.cache = PipelineOptions::Cache::Memory;
                else if (c == QLatin1String("file"))
                    o.cache = PipelineOptions::Cache::File;
                else
                    return usage(Cli::tr("--cache must be memory or file, not \"%1\".").arg(c));
            }
            const int64_t epochs = number(epochsOpt, 1, 1, &ok);
            if (!ok) return 2;
            const int64_t maxBatches = number(batchesOpt, 1, -1, &ok);
            if (!ok) return 2;
            return bench(args[1].toStdString(), parser, o, static_cast<int>(epochs), maxBatches,
                         parser.isSet(jsonOpt));
        }
        return usage(Cli::tr("Unknown command \"%1\" (inspect, convert or bench).").arg(command));
    } catch (const std::exception& e) {
        return fail(Error(ErrorCode::Internal, e.what()));
    }
}
