// SPDX-License-Identifier: Apache-2.0
// api::loadStartupPlugins, as the studio calls it before its window opens: the user's plugin
// folder, KILN_PLUGIN_PATH and the remembered paths all load, in that order, a failure does not stop
// the rest, and every failure comes back with the path it concerns.
// kiln-test-libs: kiln_api
#include <QtTest>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/api/plugins.h"

using namespace kiln::engine;

namespace {

const std::string kPluginDir = KILN_TEST_PLUGIN_DIR;

}  // namespace

class TestPlugins : public QObject {
    Q_OBJECT
private slots:
    void loadsAllAndReportsEachFailure() {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        // The user's folder holds the GroupNorm example.
        const std::filesystem::path userFolder = data.path().toStdString() + "/kiln/plugins";
        std::filesystem::create_directories(userFolder);
        std::filesystem::copy_file(kPluginDir + "/group_norm.so", userFolder / "group_norm.so");
        qputenv("XDG_DATA_HOME", data.path().toUtf8());
        // KILN_PLUGIN_PATH names a plugin of another ABI version and one with no entry point.
        qputenv("KILN_PLUGIN_PATH", QByteArray::fromStdString(kPluginDir + "/bad/wrong_abi.so:" + kPluginDir +
                                                              "/bad/no_entry.so"));
        // The remembered paths: the losses example, after a library that is gone.
        const std::string gone = data.path().toStdString() + "/gone.so";
        const std::vector<Error> errors = api::loadStartupPlugins({gone, kPluginDir + "/huber_fbeta.so"});

        // Everything that could load did, past the failures before it.
        QVERIFY(api::findPluginOp("example.GroupNorm").has_value());
        QVERIFY(api::findPluginLoss("example.Huber").has_value());
        QVERIFY(api::findPluginMetric("example.FBeta").has_value());

        QCOMPARE(errors.size(), size_t{3});
        // Each failure names its library: the one that is gone as not found, the other two as
        // plugin errors (another ABI version, no entry point).
        std::map<std::string, ErrorCode> codes;
        for (const Error& e : errors) {
            QVERIFY2(!e.message.empty(), e.toString().c_str());
            codes[std::filesystem::path(e.param("path")).filename().string()] = e.code;
        }
        const std::map<std::string, ErrorCode> expected{{"gone.so", ErrorCode::FileNotFound},
                                                        {"no_entry.so", ErrorCode::PluginError},
                                                        {"wrong_abi.so", ErrorCode::PluginError}};
        QVERIFY(codes == expected);

        // A second call loads nothing twice and reports the same failures.
        QCOMPARE(api::loadStartupPlugins({}).size(), size_t{3});
        qunsetenv("KILN_PLUGIN_PATH");
        qunsetenv("XDG_DATA_HOME");
    }
};

QTEST_GUILESS_MAIN(TestPlugins)
#include "tst_plugins.moc"
