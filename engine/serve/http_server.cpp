// SPDX-License-Identifier: Apache-2.0
// Boost.Beast wiring. Each connection lives on one I/O thread's io_context and reads one request
// at a time (pipelined requests wait in its buffer, so answers keep their order); a complete
// request goes to the bounded worker queue, and the worker posts the response back to the
// connection's thread. A small plain :predict call for a batching version is read on the I/O
// thread instead and queued in the batcher, which posts the response back. Nothing on an I/O thread
// waits for another thread.
#include "engine/serve/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "engine/serve/json_tensor.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/reply_scope.h"

namespace kiln::engine::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

// After an error answer the connection stops sending and reads (and drops) what the client is
// still sending for at most this long, so that the client gets to read the answer instead of a
// reset caused by unread data.
constexpr auto kLingerTime = std::chrono::milliseconds(2000);
constexpr size_t kLingerBytes = size_t(8) << 20;
// Time allowed for writing an error answer before the connection is dropped.
constexpr auto kErrorWriteTime = std::chrono::milliseconds(2000);
constexpr size_t kReadChunk = 16384;
// Bodies up to this size may be read on the event loop (RestApi::handleAsync, one-pass reader
// only): under a millisecond, against the two thread hand-offs a worker costs.
constexpr size_t kInlineBodyBytes = size_t(256) << 10;

// A fixed set of threads running jobs from a queue of bounded length.
class WorkQueue {
public:
    WorkQueue(int threads, size_t capacity) : m_capacity(capacity) {
        for (int i = 0; i < std::max(1, threads); ++i) m_threads.emplace_back([this] { loop(); });
    }
    ~WorkQueue() { stop(); }

    // False when every thread is busy and `capacity` jobs are already waiting (or the queue is stopped).
    bool tryPush(std::function<void()> job) {
        {
            std::lock_guard lock(m_mutex);
            if (m_stopped || m_jobs.size() >= m_capacity + m_idle) return false;
            m_jobs.push_back(std::move(job));
        }
        m_cv.notify_one();
        return true;
    }

    // Drops waiting jobs and joins the threads once their running jobs return.
    void stop() {
        std::deque<std::function<void()>> dropped;
        {
            std::lock_guard lock(m_mutex);
            m_stopped = true;
            dropped.swap(m_jobs);
        }
        m_cv.notify_all();
        dropped.clear();
        for (auto& t : m_threads)
            if (t.joinable()) t.join();
    }

private:
    void loop() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(m_mutex);
                ++m_idle;
                m_cv.wait(lock, [this] { return m_stopped || !m_jobs.empty(); });
                --m_idle;
                if (m_stopped) return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            job();
        }
    }

    const size_t m_capacity;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::function<void()>> m_jobs;
    bool m_stopped = false;
    size_t m_idle = 0;  // threads waiting for a job
    std::vector<std::thread> m_threads;
};

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The path of a request target: the query dropped, %XX decoded ('+' stays: it is not a space in a path).
std::string decodePath(std::string_view target) {
    target = target.substr(0, target.find('?'));
    std::string out;
    out.reserve(target.size());
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == '%' && i + 2 < target.size() && hexValue(target[i + 1]) >= 0 && hexValue(target[i + 2]) >= 0) {
            out += static_cast<char>(hexValue(target[i + 1]) * 16 + hexValue(target[i + 2]));
            i += 2;
        } else {
            out += target[i];
        }
    }
    return out;
}

std::string_view view(beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

struct HttpServer::Impl {
    class Connection;

    Impl(HttpHandler h, HttpOptions o) : handler(std::move(h)), options(std::move(o)) {}

    void accept();
    // ReplyScope's flush for replies deferred on a batch thread: posts them to `context` (an
    // io_context) in one handler, then counts them answered in `server` (this Impl).
    static void postReplies(void* context, void* server, std::vector<std::function<void()>>&& replies);

    HttpHandler handler;
    // Requests the REST API starts on the event loop and answers from a batch thread (null with a
    // plain handler); every other request goes to the workers.
    std::function<bool(const HttpRequest&, RestApi::Reply&)> asyncHandler;
    std::atomic<int> asyncPending{0};  // started that way and not yet answered
    HttpOptions options;
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    std::vector<std::thread> ioThreads;
    std::unique_ptr<tcp::acceptor> acceptor;
    std::unique_ptr<asio::steady_timer> acceptRetry;
    std::unique_ptr<WorkQueue> workers;
    std::atomic<int> connections{0};  // served connections open now
    std::atomic<int> rejecting{0};    // connections being turned away with 503
    std::atomic<bool> stopping{false};
    size_t nextContext = 0;
    // Every open connection, so that stop() can reach the idle ones.
    std::mutex liveMutex;
    std::unordered_map<const Connection*, std::weak_ptr<Connection>> live;
};

class HttpServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(Impl& server, asio::io_context& context, tcp::socket socket, bool rejected)
        : m_server(server), m_context(context), m_stream(std::move(socket)), m_deadline(m_stream.get_executor()),
          m_rejected(rejected) {}
    ~Connection() {
        {
            std::lock_guard lock(m_server.liveMutex);
            m_server.live.erase(this);
        }
        (m_rejected ? m_server.rejecting : m_server.connections).fetch_sub(1);
    }

    asio::any_io_executor streamExecutor() { return m_stream.get_executor(); }

    void start() {
        if (m_server.stopping) return close();
        if (m_rejected) {
            sendError(http::status::service_unavailable,
                      "Too many connections: the server holds its limit of " + std::to_string(m_server.options.maxConnections) +
                          " open connections; retry later",
                      11);
            return;
        }
        beginRequest();
    }

    // The server is stopping: a connection between requests or still reading one closes now;
    // one whose request is running answers it (with Connection: close) and then closes.
    void stopNow() {
        if (m_state != State::Working && m_state != State::Writing) close();
    }

private:
    enum class State { Idle, Reading, Working, Writing, Lingering };

    const HttpOptions& opts() const { return m_server.options; }

    // Waits for the next request. An empty buffer means an idle connection, closed quietly after
    // the idle timeout; from its first byte on a request must be complete within timeoutMs.
    void beginRequest() {
        m_parser.emplace();
        m_parser->header_limit(static_cast<std::uint32_t>(std::min<size_t>(opts().maxHeaderBytes, UINT32_MAX)));
        m_parser->body_limit(opts().maxBodyBytes);
        m_scanned = 0;
        m_lines = 0;
        m_lineStart = 0;
        m_requestLineDone = false;
        m_checkedHeader = false;
        m_sentContinue = false;
        if (m_buffer.size() > 0) {  // pipelined: the request has begun already
            m_state = State::Reading;
            m_stream.expires_never();
            startDeadline();
            parse();
            return;
        }
        m_state = State::Idle;
        m_stream.expires_after(std::chrono::milliseconds(opts().idleTimeoutMs));
        m_stream.async_read_some(m_buffer.prepare(kReadChunk),
                                 [self = shared_from_this()](beast::error_code ec, size_t n) { self->onFirstBytes(ec, n); });
    }

    void onFirstBytes(beast::error_code ec, size_t n) {
        if (ec || n == 0) return close();  // idle timeout, the client closed, or stop()
        m_buffer.commit(n);
        m_state = State::Reading;
        m_stream.expires_never();
        // Most requests arrive whole in their first read: the deadline is armed only for one
        // that needs more reads (before the next one starts, on this thread).
        m_deadlineArmed = false;
        m_parsing = true;
        parse();
        m_parsing = false;
        if (m_state == State::Reading && !m_deadlineArmed) startDeadline();
    }

    // The stream's own timeouts close the socket; the request deadline must leave it open for
    // the 408 answer, so it has its own timer that only cancels the pending read.
    void startDeadline() {
        m_deadlineArmed = true;
        m_timedOut = false;
        m_deadline.expires_after(std::chrono::milliseconds(opts().timeoutMs));
        m_deadline.async_wait([self = shared_from_this(), generation = ++m_generation](beast::error_code ec) {
            if (ec || generation != self->m_generation) return;
            self->m_timedOut = true;
            beast::error_code ignored;
            self->m_stream.socket().cancel(ignored);
        });
    }

    void stopDeadline() {
        ++m_generation;
        m_deadline.cancel();
    }

    void readMore() {
        if (m_parsing && !m_deadlineArmed) startDeadline();  // the request did not come whole
        m_stream.async_read_some(m_buffer.prepare(kReadChunk),
                                 [self = shared_from_this()](beast::error_code ec, size_t n) { self->onRead(ec, n); });
    }

    void onRead(beast::error_code ec, size_t n) {
        if (m_timedOut)
            return sendError(http::status::request_timeout,
                             "The request was not received within " + std::to_string(opts().timeoutMs) + " ms", 11);
        if (ec == asio::error::eof || (!ec && n == 0)) {
            // The client stopped sending in the middle of a request: nobody is left to answer.
            return close();
        }
        if (ec) return close();
        m_buffer.commit(n);
        parse();
    }

    // Checks the request line and the number of header lines on the raw bytes as they arrive
    // (the parser itself looks at a header only once it is complete), then feeds the parser.
    void parse() {
        if (!m_parser->is_header_done() && !checkHeaderBytes()) return;
        while (m_buffer.size() > 0) {
            beast::error_code ec;
            const size_t used = m_parser->put(m_buffer.data(), ec);
            m_buffer.consume(used);
            if (ec == http::error::need_more) break;
            if (ec) return parseError(ec);
            if (m_parser->is_header_done() && !m_checkedHeader && !checkHeader()) return;
            if (m_parser->is_done()) return dispatch();
            if (used == 0) break;
        }
        if (m_parser->is_header_done() && !m_sentContinue) {
            // A client that sent "Expect: 100-continue" waits for this before sending the body.
            m_sentContinue = true;
            const auto expect = m_parser->get().find(http::field::expect);
            if (expect != m_parser->get().end() && iequals(view(expect->value()), "100-continue")) {
                static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
                asio::async_write(m_stream, asio::buffer(kContinue), [self = shared_from_this()](beast::error_code ec, size_t) {
                    if (self->m_timedOut) return self->onRead(ec, 0);
                    if (ec) return self->close();
                    self->readMore();
                });
                return;
            }
        }
        readMore();
    }

    // False after answering: the request line is too long or there are too many header lines.
    // Scans each byte once however slowly the header arrives.
    bool checkHeaderBytes() {
        const auto data = m_buffer.data();
        const char* p = static_cast<const char*>(data.data());
        const size_t size = data.size();
        const size_t maxLine = opts().maxRequestLineBytes + 2;  // + CR LF
        for (; m_scanned < size; ++m_scanned) {
            if (p[m_scanned] != '\n') continue;
            const size_t lineLength = m_scanned + 1 - m_lineStart;
            m_lineStart = m_scanned + 1;
            if (!m_requestLineDone) {
                m_requestLineDone = true;
                if (lineLength > maxLine) return requestLineTooLong();
            } else if (lineLength <= 2) {
                m_scanned = size;  // the blank line that ends the header: the rest is body
                break;
            } else if (++m_lines > opts().maxHeaderCount) {
                tooManyFields();
                return false;
            }
        }
        if (!m_requestLineDone && size > maxLine) return requestLineTooLong();
        return true;
    }

    bool requestLineTooLong() {
        sendError(http::status::uri_too_long,
                  "The request line is longer than the limit of " + std::to_string(opts().maxRequestLineBytes) + " bytes", 11);
        return false;
    }

    void tooManyFields() {
        sendError(http::status::request_header_fields_too_large,
                  "The request has more than " + std::to_string(opts().maxHeaderCount) + " header fields", 11);
    }

    // The complete header, as parsed (folded lines and the like counted right).
    bool checkHeader() {
        m_checkedHeader = true;
        const auto& h = m_parser->get();
        if (std::distance(h.begin(), h.end()) > opts().maxHeaderCount) {
            tooManyFields();
            return false;
        }
        return true;
    }

    void parseError(beast::error_code ec) {
        if (ec == http::error::header_limit)
            return sendError(http::status::request_header_fields_too_large,
                             "The request line and header fields are larger than the limit of " +
                                 std::to_string(opts().maxHeaderBytes) + " bytes",
                             11);
        if (ec == http::error::body_limit)
            return sendError(http::status::payload_too_large,
                             "The request body is larger than the limit of " + std::to_string(opts().maxBodyBytes) + " bytes", 11);
        sendError(http::status::bad_request, "Malformed HTTP request", 11);
    }

    // Hands the complete request to a worker, or answers 503 when the queue is full.
    void dispatch() {
        stopDeadline();
        m_state = State::Working;
        auto& req = m_parser->get();
        m_keepAlive = req.keep_alive();
        m_version = req.version();
        HttpRequest request;
        request.method = std::string(view(req.method_string()));
        m_head = request.method == "HEAD";
        if (m_head) request.method = "GET";
        request.path = decodePath(view(req.target()));
        request.body = std::move(req.body());
        if (auto origin = req.find(http::field::origin); origin != req.end()) request.origin = std::string(view(origin->value()));
        m_parser.reset();
        auto self = shared_from_this();
        if (startAsync(request)) return;
        auto job = [self, request = std::move(request)] {
            RestResponse response;
            try {
                response = self->m_server.handler(request);
            } catch (const std::exception& e) {
                response = {500, errorBody(std::string("Internal error: ") + e.what())};
            }
            asio::post(self->m_stream.get_executor(),
                       [self, response = std::move(response)]() mutable { self->respond(std::move(response)); });
        };
        if (!m_server.workers->tryPush(std::move(job)))
            respond({503, errorBody("The server is overloaded: " + std::to_string(opts().maxQueuedRequests) +
                                    " requests are already waiting for a worker; retry later")});
    }

    // A small request the REST API can take without a worker: parsed here, run by a batch
    // thread, whose reply is posted back to this connection's event loop.
    bool startAsync(const HttpRequest& request) {
        Impl& server = m_server;
        if (!server.asyncHandler || request.body.size() > kInlineBodyBytes) return false;
        // Counted before `stopping` is read: stop() sees the count or this call sees `stopping`.
        server.asyncPending.fetch_add(1);
        if (server.stopping) {
            server.asyncPending.fetch_sub(1);
            return false;
        }
        RestApi::Reply reply = [self = shared_from_this(), &server](RestResponse response, std::shared_ptr<void> hold) mutable {
            // Every reference moves into the handler posted to the event loop, so none is dropped on
            // the batch thread. A batch thread finishing a merged run defers its replies
            // (ReplyScope), and the event loop then gets them all in one post.
            asio::io_context& context = self->m_context;
            std::function<void()> deliver = [self = std::move(self), response = std::move(response),
                                             hold = std::move(hold)]() mutable {
                self->respond(std::move(response));
                hold.reset();
            };
            if (ReplyScope::defer(&context, &postReplies, &server, deliver)) return;
            asio::post(context, std::move(deliver));
            server.asyncPending.fetch_sub(1);
        };
        bool taken = false;
        try {
            taken = server.asyncHandler(request, reply);
        } catch (const std::exception&) {
            taken = false;  // before the request was taken: the worker path answers it
        }
        if (!taken) server.asyncPending.fetch_sub(1);
        return taken;
    }

    void respond(RestResponse r) {
        ++m_served;
        const bool keep = m_keepAlive && m_served < opts().keepAliveMaxRequests && !m_server.stopping;
        write(std::move(r), keep, 11);
    }

    // Answers a request that could not be read, then closes the connection.
    void sendError(http::status status, const std::string& message, int version) {
        stopDeadline();
        m_parser.reset();
        m_closing = true;
        write({static_cast<int>(status), errorBody(message)}, false, version);
    }

    // The status line and header fields are written into a buffer the connection keeps, and sent
    // with the body in one gathered write: no response object, field list or serializer per
    // request. The fields are those Beast's prepare_payload() gives a string body.
    void write(RestResponse r, bool keepAlive, int defaultVersion) {
        m_state = State::Writing;
        const unsigned version = m_version ? m_version : static_cast<unsigned>(defaultVersion);
        std::string& head = m_responseHead;
        head.clear();
        head += version >= 11 ? "HTTP/1.1 " : "HTTP/1.0 ";
        appendNumber(head, static_cast<uint64_t>(r.status));
        head += ' ';
        head += view(http::obsolete_reason(static_cast<http::status>(r.status)));
        head += "\r\nContent-Type: ";
        head += r.contentType;
        if (opts().cors)
            head +=
                "\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: POST, GET"
                "\r\nAccess-Control-Allow-Headers: Content-Type";
        if (version >= 11 && !keepAlive) head += "\r\nConnection: close";
        if (version < 11 && keepAlive) head += "\r\nConnection: keep-alive";
        head += "\r\nContent-Length: ";
        appendNumber(head, r.body.size());
        head += "\r\n\r\n";
        m_responseBody = std::move(r.body);
        if (m_head) m_responseBody.clear();  // Content-Length still tells the GET body's size
        m_head = false;
        const std::array<asio::const_buffer, 2> buffers{asio::buffer(m_responseHead), asio::buffer(m_responseBody)};
        const size_t total = m_responseHead.size() + m_responseBody.size();
        // An answer that fits the socket's send buffer (nearly all of them) is written at once,
        // without an asynchronous operation, its completion hand-off and a write timer; the rest
        // of one that does not is written asynchronously under the timeout.
        size_t written = 0;
        if (!m_closing) {
            beast::error_code ec;
            written = m_stream.socket().write_some(buffers, ec);
            if (ec == asio::error::would_block || ec == asio::error::try_again) {
                written = 0;
            } else if (ec) {
                return close();
            } else if (written == total) {
                // The next read starts on a later turn of the event loop, after the answers
                // around this one are out, by when the client may have sent its next request: a
                // read started at once would nearly always find nothing and cost a system call.
                asio::post(m_stream.get_executor(), [self = shared_from_this(), keepAlive] { self->afterWrite(keepAlive); });
                return;
            }
        }
        m_stream.expires_after(m_closing ? std::chrono::milliseconds(kErrorWriteTime)
                                         : std::chrono::milliseconds(opts().timeoutMs));
        beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(buffers);
        rest.consume(written);
        asio::async_write(m_stream, rest, [self = shared_from_this(), keepAlive](beast::error_code ec, size_t) {
            if (ec) return self->close();
            self->afterWrite(keepAlive);
        });
    }

    // The answer is out: the next request, or the end of the connection.
    void afterWrite(bool keepAlive) {
        if (m_server.stopping) return close();
        if (m_closing || !keepAlive) return linger();
        beginRequest();
    }

    static void appendNumber(std::string& out, uint64_t n) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
        out.append(digits, end);
    }

    // Stops sending, then drops what the client still sends until it closes or kLingerTime passes.
    void linger() {
        m_state = State::Lingering;
        beast::error_code ignored;
        m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        m_buffer.clear();
        m_stream.expires_after(kLingerTime);
        drain();
    }

    void drain() {
        m_stream.async_read_some(m_buffer.prepare(kReadChunk), [self = shared_from_this()](beast::error_code ec, size_t n) {
            self->m_drained += n;
            if (ec || n == 0 || self->m_drained > kLingerBytes) return self->close();
            self->drain();
        });
    }

    void close() {
        stopDeadline();
        beast::error_code ignored;
        m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        m_stream.close();
    }

    Impl& m_server;
    asio::io_context& m_context;  // the event loop this connection lives on
    beast::tcp_stream m_stream;
    asio::steady_timer m_deadline;  // of the request being read
    unsigned m_generation = 0;      // tells a stale deadline from the current one
    bool m_timedOut = false;
    bool m_deadlineArmed = false;  // for the request being read
    bool m_parsing = false;        // inside the first parse of a request's bytes
    beast::flat_buffer m_buffer;
    std::optional<http::request_parser<http::string_body>> m_parser;
    const bool m_rejected;
    // Scan state of the raw header bytes of the request being read.
    size_t m_scanned = 0;
    size_t m_lineStart = 0;
    int m_lines = 0;
    bool m_requestLineDone = false;
    bool m_checkedHeader = false;
    bool m_sentContinue = false;
    // The request being answered.
    bool m_keepAlive = false;
    bool m_head = false;
    unsigned m_version = 0;
    int m_served = 0;
    bool m_closing = false;
    // The response being written (the head's buffer is reused by the next one).
    std::string m_responseHead;
    std::string m_responseBody;
    State m_state = State::Idle;
    size_t m_drained = 0;
};

void HttpServer::Impl::postReplies(void* context, void* server, std::vector<std::function<void()>>&& replies) {
    const auto count = static_cast<int>(replies.size());
    asio::post(*static_cast<asio::io_context*>(context), [replies = std::move(replies)]() mutable {
        for (auto& reply : replies) {
            reply();
            reply = nullptr;  // its references go now, before the next connection's reply
        }
    });
    // After the post, as for a single reply: stop() keeps the event loops running until then.
    static_cast<Impl*>(server)->asyncPending.fetch_sub(count);
}

void HttpServer::Impl::accept() {
    asio::io_context& target = *contexts[nextContext];
    nextContext = (nextContext + 1) % contexts.size();
    acceptor->async_accept(target, [this, context = &target](beast::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
        if (ec) {
            // Out of file descriptors or memory: retrying at once would spin; pending
            // connections wait in the backlog meanwhile.
            acceptRetry->expires_after(std::chrono::milliseconds(100));
            acceptRetry->async_wait([this](beast::error_code e) {
                if (!e) accept();
            });
            return;
        }
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        // Answers are first written with a plain write_some (Connection::write), which must
        // return would_block instead of waiting when the send buffer is full.
        socket.non_blocking(true, ignored);
        if (connections.fetch_add(1) < options.maxConnections) {
            auto c = std::make_shared<Connection>(*this, *context, std::move(socket), false);
            {
                std::lock_guard lock(liveMutex);
                live.emplace(c.get(), c);
            }
            asio::post(c->streamExecutor(), [c] { c->start(); });
        } else {
            connections.fetch_sub(1);
            // Turned-away connections are answered too, unless even they pile up.
            if (rejecting.fetch_add(1) < options.maxConnections) {
                auto c = std::make_shared<Connection>(*this, *context, std::move(socket), true);
                {
                    std::lock_guard lock(liveMutex);
                    live.emplace(c.get(), c);
                }
                asio::post(c->streamExecutor(), [c] { c->start(); });
            } else {
                rejecting.fetch_sub(1);
                socket.close(ignored);
            }
        }
        accept();
    });
}

HttpServer::HttpServer(RestApi& api, Metrics* metrics, const ModelManager* manager, HttpOptions options) {
    const std::string metricsPath = options.metricsPath;
    HttpHandler handler = [&api, metrics, manager, metricsPath](const HttpRequest& req) {
        if (req.method == "GET" && req.path == metricsPath && metrics)
            return RestResponse{200, metrics->render(manager), "text/plain; version=0.0.4"};
        return api.handle(req.method, req.path, req.body, req.origin);
    };
    m_impl = std::make_unique<Impl>(std::move(handler), std::move(options));
    m_impl->asyncHandler = [&api](const HttpRequest& req, RestApi::Reply& reply) {
        return api.handleAsync(req.method, req.path, req.body, reply);
    };
}

HttpServer::HttpServer(HttpHandler handler, HttpOptions options)
    : m_impl(std::make_unique<Impl>(std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() { stop(); }

Result<int> HttpServer::start() {
    Impl& s = *m_impl;
    const HttpOptions& o = s.options;
    const int ioThreads = std::max(1, o.ioThreads);
    for (int i = 0; i < ioThreads; ++i) {
        s.contexts.push_back(std::make_unique<asio::io_context>(1));
        s.guards.push_back(asio::make_work_guard(*s.contexts.back()));
    }
    beast::error_code ec;
    const auto address = asio::ip::make_address(o.bindAddress, ec);
    auto cannotBind = [&](const std::string& why) {
        Error e(ErrorCode::InvalidArgument, "cannot bind the REST API to " + o.bindAddress + ":" + std::to_string(o.port) + " (" + why + ")");
        s.guards.clear();
        s.acceptRetry.reset();
        s.acceptor.reset();
        s.contexts.clear();
        return std::move(e.with("address", o.bindAddress).with("port", std::to_string(o.port)));
    };
    if (ec) return cannotBind("not an IP address");
    s.acceptor = std::make_unique<tcp::acceptor>(*s.contexts[0]);
    s.acceptRetry = std::make_unique<asio::steady_timer>(*s.contexts[0]);
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(o.port));
    s.acceptor->open(endpoint.protocol(), ec);
    if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) s.acceptor->bind(endpoint, ec);
    if (ec) return cannotBind(ec == asio::error::address_in_use ? "in use" : "not an address of this machine: " + ec.message());
    s.acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return cannotBind(ec.message());
    const int port = s.acceptor->local_endpoint().port();
    s.workers = std::make_unique<WorkQueue>(o.threads, o.maxQueuedRequests);
    s.accept();
    for (auto& ctx : s.contexts) s.ioThreads.emplace_back([c = ctx.get()] { c->run(); });
    return port;
}

void HttpServer::stop() {
    Impl& s = *m_impl;
    if (s.contexts.empty()) return;
    // No new connections; idle ones close, running requests are answered. Then the event loops
    // stop, queued jobs are dropped, and destroying the loops frees whatever is left.
    s.stopping = true;
    asio::post(*s.contexts[0], [&s] {
        beast::error_code ignored;
        s.acceptor->close(ignored);
        s.acceptRetry->cancel();
    });
    // Collected first: a connection may end (and take the lock in its destructor) meanwhile.
    std::vector<std::shared_ptr<Impl::Connection>> open;
    {
        std::lock_guard lock(s.liveMutex);
        for (auto& [raw, weak] : s.live)
            if (auto c = weak.lock()) open.push_back(std::move(c));
    }
    for (auto& c : open) asio::post(c->streamExecutor(), [c] { c->stopNow(); });
    open.clear();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.options.timeoutMs) + kErrorWriteTime;
    while ((s.connections > 0 || s.rejecting > 0) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // Requests waiting in a batcher are answered through the event loops, which must still run
    // then; a batcher answers every request it holds (run, timed out or refused at unload).
    while (s.asyncPending > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (auto& ctx : s.contexts) ctx->stop();
    for (auto& t : s.ioThreads)
        if (t.joinable()) t.join();
    s.ioThreads.clear();
    if (s.workers) s.workers->stop();
    s.guards.clear();
    s.acceptRetry.reset();
    s.acceptor.reset();
    s.contexts.clear();
    s.workers.reset();
}

}  // namespace kiln::engine::serve
