// SPDX-License-Identifier: Apache-2.0
// Measures how long the GUI thread's event loop goes without turning: a 1 ms timer whose longest
// gap between two ticks is the longest stall, and the GUI thread's own CPU time in that gap (its
// work, without the time it waited for a core on a busy machine).
#pragma once

#include <QElapsedTimer>
#include <QFile>
#include <QString>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <ctime>

namespace kiln::test {

inline qint64 threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// /proc/loadavg as it reads, for the test's log.
inline QString loadAverage() {
    QFile f(QStringLiteral("/proc/loadavg"));
    return f.open(QIODevice::ReadOnly) ? QString::fromLatin1(f.readAll()).trimmed() : QString();
}

// More runnable threads than the cores can serve: then a thread waits for a core, which no code of
// the program can prevent, and wall-clock stalls say little.
inline bool machineOversubscribed() {
    return loadAverage().section(QLatin1Char(' '), 0, 0).toDouble() > 2.0 * QThread::idealThreadCount();
}

class EventLoopWatchdog {
public:
    EventLoopWatchdog() {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] { tick(); });
        m_clock.start();
    }

    // Starts (or restarts) measuring from now: worst values are cleared.
    void start() {
        reset();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    // Clears the worst values and counts from now, e.g. right before the action measured.
    void reset() {
        m_last = m_clock.elapsed();
        m_lastCpu = threadCpuMs();
        m_worst = m_worstCpu = m_worstAt = m_ticks = 0;
    }

    qint64 longestStallMs() const { return m_worst; }
    qint64 longestStallAtMs() const { return m_worstAt; }  // since the watchdog was made
    qint64 longestBusyMs() const { return m_worstCpu; }
    qint64 ticks() const { return m_ticks; }
    qint64 elapsedMs() const { return m_clock.elapsed(); }

private:
    void tick() {
        const qint64 now = m_clock.elapsed();
        const qint64 cpu = threadCpuMs();
        m_worstCpu = std::max(m_worstCpu, cpu - m_lastCpu);
        m_lastCpu = cpu;
        if (now - m_last > m_worst) {
            m_worst = now - m_last;
            m_worstAt = now;
        }
        if (now - m_last > 30 && qEnvironmentVariableIsSet("KILN_STALL_LOG"))
            qInfo("stall %lld ms at %lld", now - m_last, now);
        m_last = now;
        ++m_ticks;
    }

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0, m_lastCpu = 0, m_worst = 0, m_worstCpu = 0, m_worstAt = 0, m_ticks = 0;
};

}  // namespace kiln::test
