// SPDX-License-Identifier: Apache-2.0
// kiln-serve against the official TF Serving Python client over gRPC: GetModelStatus,
// GetModelMetadata (SignatureDefMap in an Any) and Predict on a two-input model, with outputs
// equal to the engine's own plan; a broadcast past the element budget and a message past the
// receive limit are refused.
#include <QtTest>

#include <QProcess>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/serve/serve_test_util.h"
#include "tests/python_env.h"

using nlohmann::json;

namespace {
QString binary() { return QStringLiteral(KILN_BINARY_DIR "/app/kiln_serve/kiln-serve"); }

// A loopback TCP port that was free a moment ago (0 when none could be had).
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        return 0;
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

}  // namespace

class TestServeClient : public QObject {
    Q_OBJECT

private slots:
    void grpcClient() {
        if (!QFileInfo::exists(binary())) QSKIP("kiln-serve is not built");
        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment (tools/py_env.sh) is not available");
        QTemporaryDir dir;
        const std::string base = dir.filePath("tower").toStdString();
        QVERIFY(kiln::test::makeVersion("two_tower", base, 4, 17));

        const int grpcPort = freePort();
        const int restPort = freePort();
        QVERIFY(grpcPort > 0 && restPort > 0);
        QProcess server;
        server.setProcessChannelMode(QProcess::ForwardedOutputChannel);
        server.start(binary(), {QStringLiteral("--port=%1").arg(grpcPort), QStringLiteral("--rest_api_port=%1").arg(restPort),
                                QStringLiteral("--model_name=tower"), QStringLiteral("--model_base_path=") + dir.filePath("tower"),
                                QStringLiteral("--max_request_elements=1000000"),
                                QStringLiteral("--grpc_max_receive_message_bytes=1048576")});
        QVERIFY(server.waitForStarted(10000));

        const int64_t batch = 3;
        const auto a = kiln::test::sampleValues(batch * 15, 31), b = kiln::test::sampleValues(batch * 15, 32);
        const auto want = kiln::test::referenceOutputs("two_tower", 17, {a, b}, batch)[0];
        auto rows = [&](const std::vector<float>& v, int64_t width) {
            json out = json::array();
            for (int64_t i = 0; i < batch; ++i) out.push_back(std::vector<float>(v.begin() + i * width, v.begin() + (i + 1) * width));
            return out;
        };
        const json inputs = {{"tower_a", rows(a, 15)}, {"tower_b", rows(b, 15)}};
        const json expected = {{"malignant", rows(want, 1)}};

        QProcess client;
        client.start(python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/tst_serve_client.py"),
                              QStringLiteral("--target=127.0.0.1:%1").arg(grpcPort), QStringLiteral("--model=tower"),
                              QStringLiteral("--inputs=") + QString::fromStdString(inputs.dump()),
                              QStringLiteral("--expected=") + QString::fromStdString(expected.dump())});
        QVERIFY(client.waitForFinished(300000));
        const QString out = QString::fromLocal8Bit(client.readAllStandardOutput());
        const QString err = QString::fromLocal8Bit(client.readAllStandardError());
        server.terminate();
        server.waitForFinished(10000);
        QCOMPARE(server.exitCode(), 0);
        QVERIFY2(client.exitCode() == 0, qPrintable(out + err.right(3000)));
        const json report = json::parse(out.trimmed().split(QLatin1Char('\n')).last().toStdString());
        QCOMPARE(report["status"], json::parse(R"([[4, "AVAILABLE"]])"));
        QCOMPARE(report["metadata"]["unpacked"], json(true));
        QCOMPARE(report["metadata"]["version"], json(4));
        QCOMPARE(report["metadata"]["inputs"]["tower_a"], json::parse("[-1, 15]"));
        QCOMPARE(report["metadata"]["outputs"]["malignant"], json::parse("[-1, 1]"));
        QCOMPARE(report["metadata"]["dtypes"], json::parse(R"(["float32"])"));
        QCOMPARE(report["metadata"]["method_name"], json("tensorflow/serving/predict"));
        QCOMPARE(report["predict_version"], json(4));
        QCOMPARE(report["bad_input"], json("INVALID_ARGUMENT"));
        QCOMPARE(report["unknown_model"], json("NOT_FOUND"));
        QCOMPARE(report["broadcast"][0], json("INVALID_ARGUMENT"));
        QCOMPARE(report["broadcast"][1],
                 json("the request has a batch of 65536 with 30 input values each, more than the limit of 1000000 values per request"));
        QCOMPARE(report["huge_message"], json("RESOURCE_EXHAUSTED"));
        QVERIFY(report["max_abs_diff"].get<double>() < 1e-5);
    }
};

QTEST_GUILESS_MAIN(TestServeClient)
#include "tst_serve_client.moc"
