// SPDX-License-Identifier: Apache-2.0
// kiln-serve's HTTP layer over real sockets on 127.0.0.1: request line, header and body limits
// (chunked too), the per-request deadline against a slow client, the connection limit, 503 on a
// full worker queue, keep-alive limits, pipelining order, Expect: 100-continue and stopping.
// kiln-test-libs: kiln_serve
// kiln-test-serial
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/serve/http_server.h"

using namespace kiln::engine::serve;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Response {
    int status = 0;
    std::string statusLine;
    std::map<std::string, std::string> headers;  // names in lower case
    std::string body;
    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
    std::string error() const {
        const json j = json::parse(body, nullptr, false);
        return j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : std::string();
    }
};

// A blocking HTTP/1.1 client on a plain socket, so that tests control every byte and its timing.
class Client {
public:
    explicit Client(int port) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        const int one = 1;
        ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    ~Client() { close(); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    bool connected() const { return m_connected; }
    void close() {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

    // False once the peer no longer takes data (MSG_NOSIGNAL: no SIGPIPE).
    bool send(const std::string& data) {
        size_t off = 0;
        while (off < data.size()) {
            const ssize_t n = ::send(m_fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
            if (n <= 0) return false;
            off += static_cast<size_t>(n);
        }
        return true;
    }

    // The next response, or nothing when the connection ends or timeoutMs passes first.
    std::optional<Response> read(int timeoutMs = 5000) {
        const auto until = Clock::now() + std::chrono::milliseconds(timeoutMs);
        size_t end;
        while ((end = m_buf.find("\r\n\r\n")) == std::string::npos)
            if (!fill(until)) return std::nullopt;
        Response r;
        const std::string head = m_buf.substr(0, end);
        m_buf.erase(0, end + 4);
        size_t lineEnd = head.find("\r\n");
        const std::string statusLine = head.substr(0, lineEnd);
        if (statusLine.size() < 12) return std::nullopt;
        r.status = std::stoi(statusLine.substr(9, 3));
        r.statusLine = statusLine;
        while (lineEnd != std::string::npos) {
            const size_t start = lineEnd + 2;
            lineEnd = head.find("\r\n", start);
            const std::string line = head.substr(start, lineEnd == std::string::npos ? std::string::npos : lineEnd - start);
            const size_t colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string name = line.substr(0, colon);
            for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
        }
        const size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
        while (m_buf.size() < length)
            if (!fill(until)) return std::nullopt;
        r.body = m_buf.substr(0, length);
        m_buf.erase(0, length);
        return r;
    }

    // Every byte until the server ends the connection (or timeoutMs passes).
    std::string readAll(int timeoutMs = 5000) {
        const auto until = Clock::now() + std::chrono::milliseconds(timeoutMs);
        while (fill(until)) {
        }
        return std::exchange(m_buf, std::string());
    }

    // What arrives, read `chunk` at a time with a pause between reads, until at least `bytes` are
    // here and nothing more comes for 100 ms, the connection ends, or timeoutMs passes.
    std::string readSlowly(size_t bytes, size_t chunk, std::chrono::milliseconds pause, int timeoutMs) {
        const auto until = Clock::now() + std::chrono::milliseconds(timeoutMs);
        std::string out;
        std::vector<char> tmp(chunk);
        while (Clock::now() < until) {
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) {
                if (out.size() >= bytes) break;
                continue;
            }
            const ssize_t n = ::recv(m_fd, tmp.data(), chunk, 0);
            if (n <= 0) break;
            out.append(tmp.data(), static_cast<size_t>(n));
            std::this_thread::sleep_for(pause);
        }
        return out;
    }

    // True when the server ends the connection (EOF or reset) within timeoutMs.
    bool closedWithin(int timeoutMs) {
        const auto until = Clock::now() + std::chrono::milliseconds(timeoutMs);
        for (;;) {
            const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
            if (left <= 0) return false;
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, left) <= 0) continue;
            char tmp[4096];
            const ssize_t n = ::recv(m_fd, tmp, sizeof tmp, 0);
            if (n <= 0) return true;
        }
    }

private:
    bool fill(Clock::time_point until) {
        const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
        if (left <= 0) return false;
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, left) <= 0) return false;
        char tmp[65536];
        const ssize_t n = ::recv(m_fd, tmp, sizeof tmp, 0);
        if (n <= 0) return false;
        m_buf.append(tmp, static_cast<size_t>(n));
        return true;
    }

    int m_fd = -1;
    bool m_connected = false;
    std::string m_buf;
};

// A body of n bytes whose every byte depends on its position.
std::string bigBody(size_t n) {
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    return s;
}

std::string get(const std::string& path, const std::string& extra = {}) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n";
}

}  // namespace

class TestHttpServer : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<HttpServer> m_server;
    int m_port = 0;
    std::atomic<int> m_started{0};  // handler calls begun

    // Serves with a handler that echoes method, path and body size, and sleeps N ms on /slow/N.
    void start(HttpOptions options) {
        m_server.reset();
        m_started = 0;
        options.bindAddress = "127.0.0.1";
        options.port = 0;
        m_server = std::make_unique<HttpServer>(
            [this](const HttpRequest& req) {
                ++m_started;
                if (req.path.rfind("/slow/", 0) == 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(req.path.substr(6))));
                if (req.path.rfind("/big/", 0) == 0) return RestResponse{200, bigBody(std::stoul(req.path.substr(5)))};
                json j = {{"method", req.method}, {"path", req.path}, {"body_bytes", req.body.size()}};
                return RestResponse{200, j.dump()};
            },
            options);
        auto port = m_server->start();
        QVERIFY2(port.ok(), port.ok() ? "" : port.error().message.c_str());
        m_port = port.value();
    }

    // A GET on a fresh connection answered with 200 within timeoutMs.
    bool served(const std::string& path, int timeoutMs = 2000) {
        Client c(m_port);
        if (!c.connected() || !c.send(get(path))) return false;
        auto r = c.read(timeoutMs);
        return r && r->status == 200 && json::parse(r->body)["path"] == path;
    }

private slots:
    void cleanup() { m_server.reset(); }

    void servesAndDecodesPath() {
        start({});
        Client c(m_port);
        QVERIFY(c.send(get("/v1/models/my%20model?x=1")));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(r->header("content-type"), std::string("application/json"));
        QCOMPARE(json::parse(r->body)["path"], json("/v1/models/my model"));
        // Same connection, a POST with a Content-Length body.
        QVERIFY(c.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
        r = c.read();
        QVERIFY(r);
        QCOMPARE(json::parse(r->body)["body_bytes"], json(5));
        QCOMPARE(json::parse(r->body)["method"], json("POST"));
    }

    // The head of an answer: the status line with its reason, Content-Type and Content-Length,
    // Connection only where the version needs it; HEAD gets the GET's Content-Length and no body;
    // with CORS on, the three Access-Control fields.
    void responseHead() {
        start({});
        Client c(m_port);
        QVERIFY(c.send(get("/h")));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->statusLine, std::string("HTTP/1.1 200 OK"));
        QCOMPARE(r->headers.size(), size_t(2));
        QCOMPARE(r->header("content-type"), std::string("application/json"));
        QCOMPARE(r->header("content-length"), std::to_string(r->body.size()));
        const std::string getLength = r->header("content-length");
        QVERIFY(c.send("HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        QCOMPARE(c.readAll(), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                                  getLength + "\r\n\r\n");

        // HTTP/1.0 asking to keep the connection: told so, and a second request is served on it.
        Client old(m_port);
        QVERIFY(old.send("GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
        r = old.read();
        QVERIFY(r);
        QCOMPARE(r->statusLine, std::string("HTTP/1.0 200 OK"));
        QCOMPARE(r->header("connection"), std::string("keep-alive"));
        QVERIFY(old.send("GET /k2 HTTP/1.0\r\n\r\n"));
        r = old.read();
        QVERIFY(r);
        QCOMPARE(json::parse(r->body)["path"], json("/k2"));
        QVERIFY(r->headers.count("connection") == 0);
        QVERIFY(old.closedWithin(3000));

        // An answer the server writes itself.
        Client bad(m_port);
        QVERIFY(bad.send("NOT HTTP\r\n\r\n"));
        r = bad.read();
        QVERIFY(r);
        QCOMPARE(r->statusLine, std::string("HTTP/1.1 400 Bad Request"));
        QCOMPARE(r->header("connection"), std::string("close"));
        QCOMPARE(r->header("content-length"), std::to_string(r->body.size()));

        HttpOptions cors;
        cors.cors = true;
        start(cors);
        Client d(m_port);
        QVERIFY(d.send(get("/c")));
        r = d.read();
        QVERIFY(r);
        QCOMPARE(r->header("access-control-allow-origin"), std::string("*"));
        QCOMPARE(r->header("access-control-allow-methods"), std::string("POST, GET"));
        QCOMPARE(r->header("access-control-allow-headers"), std::string("Content-Type"));
        QCOMPARE(r->headers.size(), size_t(5));
    }

    void oversizedHeaderLine() {
        HttpOptions o;
        o.maxHeaderBytes = 4096;
        start(o);
        Client c(m_port);
        QVERIFY(c.send(get("/", "X-Big: " + std::string(8000, 'a') + "\r\n")));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 431);
        QCOMPARE(r->header("content-type"), std::string("application/json"));
        QVERIFY2(r->error().find("limit of 4096 bytes") != std::string::npos, r->body.c_str());
        QVERIFY(c.closedWithin(3000));
        // A header just under the limit is fine.
        Client ok(m_port);
        QVERIFY(ok.send(get("/", "X-Big: " + std::string(3900, 'a') + "\r\n")));
        r = ok.read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
    }

    void oversizedRequestLine() {
        HttpOptions o;
        o.maxRequestLineBytes = 1024;
        start(o);
        Client c(m_port);
        // No line end yet: the limit applies before the line is complete.
        QVERIFY(c.send("GET /" + std::string(2000, 'a')));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 414);
        QVERIFY2(r->error().find("limit of 1024 bytes") != std::string::npos, r->body.c_str());
        QVERIFY(c.closedWithin(3000));
        QVERIFY(served("/" + std::string(900, 'b')));
    }

    void tooManyHeaders() {
        HttpOptions o;
        o.maxHeaderCount = 20;
        start(o);
        auto fields = [](int n) {
            std::string s;
            for (int i = 0; i < n; ++i) s += "X-Field-" + std::to_string(i) + ": 1\r\n";
            return s;
        };
        {
            Client c(m_port);
            // Host plus 19: exactly at the limit.
            QVERIFY(c.send(get("/", fields(19))));
            auto r = c.read();
            QVERIFY(r);
            QCOMPARE(r->status, 200);
        }
        Client c(m_port);
        // 50 fields, and the header never ends: refused as soon as the 21st line arrives.
        QVERIFY(c.send("GET / HTTP/1.1\r\nHost: x\r\n" + fields(50)));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 431);
        QVERIFY2(r->error().find("more than 20 header fields") != std::string::npos, r->body.c_str());
        QVERIFY(c.closedWithin(3000));
    }

    void chunkedBodyOverLimit() {
        HttpOptions o;
        o.maxBodyBytes = 1024;
        start(o);
        {
            // Under the limit, in three chunks: decoded and served.
            Client c(m_port);
            QVERIFY(c.send(
                "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "100\r\n" +
                std::string(256, 'a') + "\r\n200\r\n" + std::string(512, 'b') + "\r\n0\r\n\r\n"));
            auto r = c.read();
            QVERIFY(r);
            QCOMPARE(r->status, 200);
            QCOMPARE(json::parse(r->body)["body_bytes"], json(768));
        }
        Client c(m_port);
        // Chunks adding up past the limit, and a body that never ends: 413 comes anyway.
        const auto t0 = Clock::now();
        QVERIFY(c.send(
            "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            "200\r\n" +
            std::string(512, 'a') +
            "\r\n"
            "1000\r\n" +
            std::string(1000, 'b')));
        auto r = c.read(3000);
        QVERIFY(r);
        QCOMPARE(r->status, 413);
        QVERIFY2(msSince(t0) < 1500, qPrintable(QString::number(msSince(t0))));
        QVERIFY2(r->error().find("larger than the limit of 1024 bytes") != std::string::npos, r->body.c_str());
        QVERIFY(c.closedWithin(4000));
        // A declared length over the limit is refused before any body byte is sent.
        Client d(m_port);
        QVERIFY(d.send("POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"));
        r = d.read(3000);
        QVERIFY(r);
        QCOMPARE(r->status, 413);
    }

    void slowClientCutAtDeadline() {
        HttpOptions o;
        o.timeoutMs = 1000;
        start(o);
        Client slow(m_port);
        QVERIFY(slow.connected());
        std::atomic<bool> stop{false}, sending{true};
        const auto t0 = Clock::now();
        // One byte every 100 ms of a request that would take 10 s to arrive.
        std::thread sender([&] {
            const std::string request = get("/", "X-Pad: " + std::string(80, 'p') + "\r\n");
            for (char ch : request) {
                if (stop || !slow.send(std::string(1, ch))) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            sending = false;
        });
        // Meanwhile other clients are served promptly.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        for (int i = 0; i < 3; ++i) {
            const auto t = Clock::now();
            QVERIFY(served("/normal"));
            QVERIFY2(msSince(t) < 500, qPrintable(QString::number(msSince(t))));
        }
        QVERIFY(sending);
        auto r = slow.read(4000);
        const double cutAfter = msSince(t0);
        stop = true;
        sender.join();
        QVERIFY(r);
        QCOMPARE(r->status, 408);
        QVERIFY2(cutAfter > 900 && cutAfter < 2500, qPrintable(QString::number(cutAfter)));
        QVERIFY(slow.closedWithin(3000));
    }

    void connectionLimit() {
        HttpOptions o;
        o.maxConnections = 4;
        start(o);
        std::vector<std::unique_ptr<Client>> open;
        for (int i = 0; i < 4; ++i) {
            open.push_back(std::make_unique<Client>(m_port));
            QVERIFY(open.back()->send(get("/keep")));
            auto r = open.back()->read();
            QVERIFY(r);
            QCOMPARE(r->status, 200);
        }
        Client extra(m_port);
        QVERIFY(extra.connected());
        auto r = extra.read(3000);
        QVERIFY(r);
        QCOMPARE(r->status, 503);
        QVERIFY2(r->error().find("Too many connections") != std::string::npos, r->body.c_str());
        QVERIFY(extra.closedWithin(4000));
        // The open ones still work; once one closes, a new connection is served.
        QVERIFY(open[0]->send(get("/again")));
        r = open[0]->read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        open[1]->close();
        bool ok = false;
        for (int i = 0; i < 40 && !ok; ++i) {
            ok = served("/after");
            if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        QVERIFY(ok);
    }

    void overloadGets503() {
        HttpOptions o;
        o.threads = 1;
        o.maxQueuedRequests = 1;
        start(o);
        Client running(m_port), queued(m_port), refused(m_port);
        QVERIFY(running.send(get("/slow/1500")));
        for (int i = 0; i < 200 && m_started == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QCOMPARE(m_started.load(), 1);
        QVERIFY(queued.send(get("/slow/10")));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const auto t0 = Clock::now();
        QVERIFY(refused.send(get("/slow/10")));
        auto r = refused.read(3000);
        QVERIFY(r);
        QCOMPARE(r->status, 503);
        QVERIFY2(msSince(t0) < 500, qPrintable(QString::number(msSince(t0))));
        QCOMPARE(r->header("content-type"), std::string("application/json"));
        QVERIFY2(r->error().find("overloaded") != std::string::npos, r->body.c_str());
        // The two accepted requests complete.
        r = running.read(5000);
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        r = queued.read(5000);
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        // The refused connection stays usable.
        QVERIFY(refused.send(get("/later")));
        r = refused.read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
    }

    void keepAliveLimits() {
        HttpOptions o;
        o.keepAliveMaxRequests = 3;
        o.idleTimeoutMs = 500;
        start(o);
        Client c(m_port);
        for (int i = 1; i <= 3; ++i) {
            QVERIFY(c.send(get("/k" + std::to_string(i))));
            auto r = c.read();
            QVERIFY(r);
            QCOMPARE(r->status, 200);
            QCOMPARE(r->header("connection") == "close", i == 3);
        }
        QVERIFY(c.closedWithin(3000));
        // An idle connection is closed after the idle timeout, not before.
        Client idle(m_port);
        QVERIFY(idle.send(get("/i")));
        QVERIFY(idle.read());
        const auto t0 = Clock::now();
        QVERIFY(idle.closedWithin(3000));
        QVERIFY2(msSince(t0) > 400 && msSince(t0) < 2000, qPrintable(QString::number(msSince(t0))));
        // HTTP/1.0 without keep-alive: one request.
        Client once(m_port);
        QVERIFY(once.send("GET /once HTTP/1.0\r\n\r\n"));
        auto r = once.read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QVERIFY(once.closedWithin(3000));
    }

    // An answer larger than the socket's send buffer is written partly at once and the rest as
    // the client reads it, while the event loop goes on serving others; it arrives whole, and
    // the connection then serves its next request.
    void largeAnswerToASlowReader() {
        HttpOptions o;
        o.threads = 2;
        start(o);
        const size_t size = size_t(24) << 20;
        Client slow(m_port);
        QVERIFY(slow.send(get("/big/" + std::to_string(size))));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server's send buffer fills
        const auto t0 = Clock::now();
        QVERIFY(served("/other"));
        QVERIFY2(msSince(t0) < 1000, "the event loop waited for the slow reader");
        auto r = slow.read(20000);
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(r->body.size(), size);
        QVERIFY(r->body == bigBody(size));
        QVERIFY(slow.send(get("/after")));
        auto next = slow.read();
        QVERIFY(next);
        QCOMPARE(QString::fromStdString(json::parse(next->body)["path"].get<std::string>()), QStringLiteral("/after"));

        // Two pipelined large answers read slowly: each is written partly at once and the rest
        // as the client drains it, and other connections are served meanwhile.
        const size_t part = size_t(8) << 20;
        Client drip(m_port);
        QVERIFY(drip.send(get("/big/" + std::to_string(part)) + get("/big/" + std::to_string(part))));
        std::atomic<bool> done{false};
        std::string received;
        std::thread reader([&] {
            received = drip.readSlowly(size_t(2) * part, 256 << 10, std::chrono::milliseconds(2), 30000);
            done = true;
        });
        double worst = 0;
        for (int probe = 0; probe < 30 && !done; ++probe) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const auto t = Clock::now();
            const bool ok = served("/probe", 3000);
            worst = std::max(worst, msSince(t));
            if (!ok) worst = 1e9;
        }
        reader.join();
        QVERIFY2(worst < 1000, qPrintable(QStringLiteral("a probe took %1 ms").arg(worst)));
        const size_t second = received.find("HTTP/1.1 200", 100);
        QVERIFY(received.rfind("HTTP/1.1 200", 0) == 0 && second != std::string::npos);
        QVERIFY(received.size() >= second + part);
        QVERIFY(received.compare(received.size() - part, part, bigBody(part)) == 0);
    }

    void pipelinedInOrder() {
        HttpOptions o;
        o.threads = 4;
        start(o);
        Client c(m_port);
        // The first takes longest: answers must still come in request order.
        QVERIFY(c.send(get("/slow/300") + get("/a") + "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz" + get("/c")));
        for (const char* path : {"/slow/300", "/a", "/b", "/c"}) {
            auto r = c.read();
            QVERIFY(r);
            QCOMPARE(r->status, 200);
            QCOMPARE(json::parse(r->body)["path"], json(path));
        }
    }

    void expectContinue() {
        start({});
        Client c(m_port);
        QVERIFY(c.send("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"));
        auto interim = c.read(2000);
        QVERIFY(interim);
        QCOMPARE(interim->status, 100);
        QVERIFY(c.send("abcd"));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(json::parse(r->body)["body_bytes"], json(4));
    }

    void stopAnswersRunningRequests() {
        start({});
        Client idle(m_port), busy(m_port);
        QVERIFY(idle.send(get("/first")));
        QVERIFY(idle.read());
        QVERIFY(busy.send(get("/slow/600")));
        for (int i = 0; i < 200 && m_started < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QCOMPARE(m_started.load(), 2);
        // The running request is answered before stop() returns; the idle connection does not
        // hold it up (its idle timeout is 60 s).
        const auto t0 = Clock::now();
        m_server->stop();
        const double took = msSince(t0);
        QVERIFY2(took > 300 && took < 2000, qPrintable(QString::number(took)));
        auto r = busy.read(100);
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(r->header("connection"), std::string("close"));
        QVERIFY(busy.closedWithin(1000));
        QVERIFY(idle.closedWithin(1000));
        Client late(m_port);
        QVERIFY(!late.connected());
    }

    void malformedRequest() {
        start({});
        Client c(m_port);
        QVERIFY(c.send("GARBAGE\r\n\r\n"));
        auto r = c.read();
        QVERIFY(r);
        QCOMPARE(r->status, 400);
        QCOMPARE(r->error(), std::string("Malformed HTTP request"));
        QVERIFY(c.closedWithin(3000));
    }
};

QTEST_GUILESS_MAIN(TestHttpServer)
#include "tst_http_server.moc"
