// SPDX-License-Identifier: Apache-2.0
// The text-format reader and the ModelServerConfig / BatchingParameters files: the documented
// forms parse, and every kind of mistake is an error with the right line and column.
// kiln-test-libs: kiln_serve
#include <QtTest>

#include "engine/serve/model_config.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;

class TestModelConfig : public QObject {
    Q_OBJECT

private slots:
    void goodConfig() {
        const char* text = R"(# two models
model_config_list {
  config {
    name: "mnist"
    base_path: "/models/mnist"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 42 versions: 43 } }
    version_labels { key: "stable" value: 42 }
    version_labels { key: "canary" value: 43 }
  }
  config: {
    name: 'tower'  # single quotes work too
    base_path: "/models/" "tower"
    model_version_policy: { latest: { num_versions: 2 } }
  },
  config < name: "all" base_path: "/m/all" model_version_policy { all {} } >
}
)";
        auto cfg = parseModelServerConfig(text, "models.config");
        QVERIFY2(cfg.ok(), cfg.ok() ? "" : cfg.error().toString().c_str());
        QCOMPARE(cfg->models.size(), size_t(3));
        const ModelConfig& m = cfg->models[0];
        QCOMPARE(m.name, std::string("mnist"));
        QCOMPARE(m.basePath, std::string("/models/mnist"));
        QCOMPARE(m.policy.kind, VersionPolicy::Kind::Specific);
        QCOMPARE(m.policy.versions, (std::vector<int64_t>{42, 43}));
        QCOMPARE(m.versionLabels.at("stable"), int64_t(42));
        QCOMPARE(m.versionLabels.at("canary"), int64_t(43));
        QCOMPARE(m.line, 3);
        QCOMPARE(cfg->models[1].basePath, std::string("/models/tower"));
        QCOMPARE(cfg->models[1].policy.kind, VersionPolicy::Kind::Latest);
        QCOMPARE(cfg->models[1].policy.numVersions, 2u);
        QCOMPARE(cfg->models[2].policy.kind, VersionPolicy::Kind::All);
    }

    void defaultsAndLists() {
        auto cfg = parseModelServerConfig("model_config_list { config { name: \"a\" base_path: \"/a\" "
                                          "model_version_policy { specific { versions: [1, 2, 0x10] } } } }");
        QVERIFY(cfg.ok());
        QCOMPARE(cfg->models[0].policy.versions, (std::vector<int64_t>{1, 2, 16}));
        auto latest0 = parseModelServerConfig("model_config_list { config { name: \"a\" base_path: \"/a\" "
                                              "model_version_policy { latest { num_versions: 0 } } } }");
        QVERIFY(latest0.ok());
        QCOMPARE(latest0->models[0].policy.numVersions, 1u);  // 0 means 1
        auto plain = parseModelServerConfig("model_config_list { config { name: \"a\" base_path: \"/a\" } }");
        QVERIFY(plain.ok());
        QCOMPARE(plain->models[0].policy.kind, VersionPolicy::Kind::Latest);
        QCOMPARE(plain->models[0].policy.numVersions, 1u);
        auto escaped = parseModelServerConfig(R"(model_config_list { config { name: "a\x41\101" base_path: "/a\tb" } })");
        QVERIFY(escaped.ok());
        QCOMPARE(escaped->models[0].name, std::string("aAA"));
        QCOMPARE(escaped->models[0].basePath, std::string("/a\tb"));
    }

    void badConfig_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("reason");
        QTest::newRow("unknown top") << "model_list {}" << 1 << 1 << "unknown field \"model_list\"";
        QTest::newRow("unknown field") << "model_config_list {\n  config {\n    nme: \"a\"\n  }\n}" << 3 << 5 << "unknown field \"nme\" in config";
        QTest::newRow("missing brace") << "model_config_list {\n  config {\n    name: \"a\"\n" << 4 << 1 << "missing '}'";
        QTest::newRow("unterminated string") << "model_config_list {\n config { name: \"abc\n }}" << 2 << 17 << "unterminated string";
        QTest::newRow("missing colon") << "model_config_list { config { name \"a\" } }" << 1 << 35 << "expected ':' or '{' after \"name\"";
        QTest::newRow("unquoted string") << "model_config_list { config { name: abc base_path: \"/x\" } }" << 1 << 30 << "needs a quoted string";
        QTest::newRow("bad version") << "model_config_list { config { name: \"a\" base_path: \"/a\"\n model_version_policy { specific { versions: 4x } } } }"
                                     << 2 << 36 << "needs an integer";
        QTest::newRow("negative version") << "model_config_list { config { name: \"a\" base_path: \"/a\"\n model_version_policy { specific { versions: -3 } } } }"
                                          << 2 << 36 << "must be between 0";
        QTest::newRow("two policies") << "model_config_list { config { name: \"a\" base_path: \"/a\"\n model_version_policy { all {} latest {} } } }"
                                      << 2 << 2 << "exactly one of latest, all, specific";
        QTest::newRow("unknown policy") << "model_config_list { config { name: \"a\" base_path: \"/a\"\n model_version_policy { newest {} } } }"
                                        << 2 << 25 << "unknown version policy \"newest\"";
        QTest::newRow("duplicate model") << "model_config_list {\n config { name: \"a\" base_path: \"/a\" }\n config { name: \"a\" base_path: \"/b\" } }"
                                         << 3 << 2 << "model \"a\" is configured twice (first on line 2)";
        QTest::newRow("escape name") << "model_config_list { config { name: \"../etc\" base_path: \"/a\" } }" << 1 << 30 << "is not allowed";
        QTest::newRow("dotdot name") << "model_config_list { config { name: \"..\" base_path: \"/a\" } }" << 1 << 30 << "is not allowed";
        QTest::newRow("no base path") << "model_config_list {\n config { name: \"a\" } }" << 2 << 2 << "needs a base_path";
        QTest::newRow("platform") << "model_config_list { config { name: \"a\" base_path: \"/a\" model_platform: \"pytorch\" } }" << 1 << 56
                                  << "model_platform \"pytorch\" is not supported";
        QTest::newRow("bad label") << "model_config_list { config { name: \"a\" base_path: \"/a\"\n version_labels { key: \"a-b\" value: 1 } } }" << 2 << 2
                                   << "may only use letters";
        QTest::newRow("duplicate field") << "model_config_list { config { name: \"a\" name: \"b\" base_path: \"/a\" } }" << 1 << 40 << "given twice";
        QTest::newRow("stray char") << "model_config_list { config { name: \"a\" } $ }" << 1 << 42 << "unexpected character '$'";
        QTest::newRow("empty") << "# nothing\n" << 1 << 1 << "lists no models";
        QTest::newRow("custom") << "custom_model_config {}" << 1 << 1 << "custom_model_config is not supported";
        QTest::newRow("bad escape") << "model_config_list { config { name: \"a\\q\" } }" << 1 << 36 << "unknown escape";
        QTest::newRow("huge int") << "model_config_list { config { name: \"a\" base_path: \"/a\" model_version_policy { specific { versions: 99999999999999999999 } } } }"
                                  << 1 << 90 << "out of range";
    }

    void badConfig() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, reason);
        auto cfg = parseModelServerConfig(text.toStdString(), "models.config");
        QVERIFY(!cfg.ok());
        const Error& e = cfg.error();
        QCOMPARE(e.code, ErrorCode::ParseError);
        QCOMPARE(e.file, std::string("models.config"));
        if (e.message.find(reason.toStdString()) == std::string::npos) QFAIL(e.message.c_str());
        QCOMPARE(e.line, line);
        QCOMPARE(e.column, column);
        // The one-line form starts with file:line.
        QVERIFY(e.toString().rfind("models.config:" + std::to_string(line), 0) == 0);
    }

    void deepNesting() {
        std::string text;
        for (int i = 0; i < 10000; ++i) text += "a {";
        auto r = parseTextFormat(text);
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("nested too deeply") != std::string::npos);
    }

    void batching() {
        auto p = parseBatchingParameters("max_batch_size { value: 16 }\nbatch_timeout_micros { value: 500 }\n"
                                         "max_enqueued_batches { value: 100 }\nnum_batch_threads { value: 2 }\n"
                                         "allowed_batch_sizes: 4 allowed_batch_sizes: 16\n");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        QCOMPARE(p->maxBatchSize, int64_t(16));
        QCOMPARE(p->batchTimeoutMicros, int64_t(500));
        QCOMPARE(p->numBatchThreads, int64_t(2));
        QCOMPARE(p->allowedBatchSizes, (std::vector<int64_t>{4, 16}));
        auto bare = parseBatchingParameters("max_batch_size: 8 batch_timeout_micros: 0");
        QVERIFY(bare.ok());
        QCOMPARE(bare->maxBatchSize, int64_t(8));
        auto bad = parseBatchingParameters("max_batch_size { value: 0 }");
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().line, 1);
        QCOMPARE(bad.error().column, 18);
        auto unknown = parseBatchingParameters("\nmax_batch { value: 3 }");
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().line, 2);
        QVERIFY(unknown.error().message.find("unknown batching parameter \"max_batch\"") != std::string::npos);
        QVERIFY(!parseBatchingParameters("max_batch_size { value: 8 } allowed_batch_sizes: 4").ok());
    }

    void files() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.config").toStdString();
        auto missing = loadModelServerConfig(path);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("model_config_list {\n  config { name: \"x\" base_path: \"/x\" }\n  oops\n}\n");
        f.close();
        auto bad = loadModelServerConfig(path);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().file, path);
        QCOMPARE(bad.error().line, 4);
    }

    void safeNames() {
        QVERIFY(isSafeModelName("mnist"));
        QVERIFY(isSafeModelName("my.model-2"));
        QVERIFY(!isSafeModelName(""));
        QVERIFY(!isSafeModelName("."));
        QVERIFY(!isSafeModelName(".."));
        QVERIFY(!isSafeModelName("a/b"));
        QVERIFY(!isSafeModelName("a\\b"));
        QVERIFY(!isSafeModelName(std::string("a\0b", 3)));
        QVERIFY(!isSafeModelName("a\nb"));
        QVERIFY(!isSafeModelName(std::string(300, 'a')));
    }
};

QTEST_GUILESS_MAIN(TestModelConfig)
#include "tst_model_config.moc"
