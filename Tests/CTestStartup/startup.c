#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "ctest_startup.h"

/* Runs when the test process loads, before any test. */

static void put(const char *text, size_t length) {
    while (length > 0) {
        ssize_t n = write(STDERR_FILENO, text, length);
        if (n <= 0) return;
        text += n;
        length -= (size_t)n;
    }
}

static void put_number(long value) {
    char digits[24];
    int at = (int)sizeof digits;
    unsigned long rest = value < 0 ? (unsigned long)-value : (unsigned long)value;
    do { digits[--at] = (char)('0' + rest % 10); rest /= 10; } while (rest > 0 && at > 1);
    if (value < 0) digits[--at] = '-';
    put(digits + at, sizeof digits - (size_t)at);
}

/* A signal that ends the process without a crash report (the Swift runtime reports only crashes)
   names itself and its sender before it does: a run that ends this way otherwise shows nothing
   but the tests that never ended. Only async-signal-safe calls: write, open, read, close, raise. */
static void report_and_end(int number, siginfo_t *info, void *context) {
    (void)context;
    static const char head[] = "\n*** The test process was sent signal ";
    put(head, sizeof head - 1);
    put_number(number);
    static const char by[] = " by pid ";
    put(by, sizeof by - 1);
    put_number(info->si_pid);
    char path[40] = "/proc/";
    char digits[16];
    int at = (int)sizeof digits;
    long pid = info->si_pid;
    do { digits[--at] = (char)('0' + pid % 10); pid /= 10; } while (pid > 0 && at > 0);
    size_t used = 6;
    memcpy(path + used, digits + at, sizeof digits - (size_t)at);
    used += sizeof digits - (size_t)at;
    memcpy(path + used, "/cmdline", 9);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char command[512];
        ssize_t n = read(fd, command, sizeof command);
        close(fd);
        for (ssize_t i = 0; i < n; i++) if (command[i] == 0) command[i] = ' ';
        static const char as[] = " (";
        put(as, sizeof as - 1);
        if (n > 0) put(command, (size_t)n);
        put(")", 1);
    }
    put("\n", 1);
    signal(number, SIG_DFL);
    raise(number);
}

__attribute__((constructor)) static void prepare_test_process(void) {
    /* SIGPIPE is ignored from the first instruction on. SwiftNIO ignores it too, but only once its
       first socket is made, and a libcurl transfer on a handle without CURLOPT_NOSIGNAL saves and
       later restores whatever disposition it found: if it found the default, a test's write to a
       peer that has gone (a daemon that closed a raw socket, a child that exited before reading
       its standard input) would end the whole run silently. EPIPE is what every test expects. */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report_and_end;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    int ending[] = { SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ, SIGXCPU };
    for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++) sigaction(ending[i], &action, NULL);
}
