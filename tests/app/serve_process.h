// SPDX-License-Identifier: Apache-2.0
// Shared by the tests that run kiln-serve as a program: a free loopback port, and the server
// started on one and waited for until a model's status answers over REST.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include <httplib.h>

#include "app_test_util.h"

namespace kiln::test {

// kiln-serve of this build.
inline QString serveProgram() { return program("kiln_serve/kiln-serve"); }

// A loopback TCP port that was free a moment ago (0 when none could be had).
inline int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        return 0;
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

// One kiln-serve process with its REST port, and a client for that port.
struct ServeProcess {
    QProcess process;
    int port = 0;  // the REST port; start() picks one when 0
    std::unique_ptr<httplib::Client> client;

    // Starts kiln-serve on `port` (a free one when 0) with `args` (plus --port=0, no gRPC, unless `args`
    // give a --port) in `environment` (this process's when empty) and waits up to `waitMs` until
    // GET `readyPath` (a model's status, "/v1/models/NAME") answers 200. False when the program
    // does not start, ends meanwhile or does not answer in time. Its output goes to the test's.
    bool start(const QStringList& args, const std::string& readyPath,
               const QProcessEnvironment& environment = QProcessEnvironment(), int waitMs = 15000) {
        if (port == 0) port = freePort();
        QStringList all = {QStringLiteral("--rest_api_port=%1").arg(port)};
        const bool grpc = std::any_of(args.begin(), args.end(), [](const QString& a) { return a.startsWith(QStringLiteral("--port=")); });
        if (!grpc) all << QStringLiteral("--port=0");
        all += args;
        if (!environment.isEmpty()) process.setProcessEnvironment(environment);
        process.setProcessChannelMode(QProcess::ForwardedOutputChannel);
        process.start(serveProgram(), all);
        if (!process.waitForStarted(10000)) return false;
        client = std::make_unique<httplib::Client>("127.0.0.1", port);
        client->set_read_timeout(30, 0);
        for (int waited = 0; waited < waitMs; waited += 50) {
            if (auto r = client->Get(readyPath); r && r->status == 200) return true;
            if (process.state() != QProcess::Running) return false;
            QTest::qWait(50);
        }
        return false;
    }

    // Ends the server with SIGTERM (if it still runs) and returns its exit code (-2: crashed).
    int stop() {
        if (process.state() == QProcess::Running) {
            process.terminate();
            process.waitForFinished(10000);
        }
        return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    }
};

}  // namespace kiln::test
